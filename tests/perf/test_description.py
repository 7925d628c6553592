"""The op description: packed sizes per dtype, validation, tt-metal op codes, ttnn's default fidelity."""

from __future__ import annotations

import pytest

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.perf import (
    CollectiveConfig,
    Layout,
    MathFidelity,
    MatmulConfig,
    MatmulProgram,
    OpDesc,
    OpFamily,
    TensorDesc,
    default_fidelity,
)


@pytest.mark.parametrize(
    ("dtype", "tile_bytes"),
    [("BFLOAT16", 2048), ("BFLOAT8_B", 1088), ("BFLOAT4_B", 576), ("FLOAT32", 4096), ("UINT32", 4096)],
)
def test_tiles_are_counted_in_the_packed_size(dtype, tile_bytes):
    t = TensorDesc((2, 1, 64, 96), dtype)
    assert t.tiles == 2 * 2 * 3
    assert t.nbytes == 12 * tile_bytes


def test_tile_dims_round_up_and_row_major_counts_elements():
    assert TensorDesc((1, 1, 7, 40)).tiles == 2  # one tile row, two tile columns
    assert TensorDesc((1, 1, 7, 40), "BFLOAT16", Layout.ROW_MAJOR).nbytes == 7 * 40 * 2
    assert TensorDesc((3, 40), "BFLOAT8_B", Layout.ROW_MAJOR).nbytes == 3 * 40 * 4  # ttnn keeps floats


def test_dtype_names_are_normalised():
    assert TensorDesc((32, 32), "bfloat8_b").dtype == "BFLOAT8_B"
    assert TensorDesc((32, 32), "DataType.BFLOAT4_B").dtype == "BFLOAT4_B"
    with pytest.raises(MeshnnValueError, match="unknown dtype"):
        TensorDesc((32, 32), "float64")
    with pytest.raises(MeshnnTypeError):
        TensorDesc((32, 32), 3)


def test_descriptions_are_validated():
    x = TensorDesc((32, 32))
    with pytest.raises(MeshnnValueError, match="at least one output"):
        OpDesc(OpFamily.MATMUL, (x, x), ())
    with pytest.raises(MeshnnValueError, match="at least one input"):
        OpDesc(OpFamily.UNARY, (), (x,))
    with pytest.raises(MeshnnValueError):
        TensorDesc(())
    assert OpDesc(OpFamily.KV_UPDATE, (x, x), ()).outputs == ()


def test_op_codes_are_tt_metal_names():
    x = TensorDesc((32, 32))
    assert OpDesc(OpFamily.MATMUL, (x, x), (x,)).op_code == "MatmulDeviceOperation"
    assert OpDesc(OpFamily.BINARY, (x, x), (x,)).op_code == "BinaryNgDeviceOperation"
    assert OpDesc(OpFamily.ALL_GATHER, (x,), (x,)).op_code == "AllGatherAsyncDeviceOperation"
    assert OpDesc(OpFamily.MATMUL, (x, x), (x,), op_code="MinimalMatmulOp").op_code == "MinimalMatmulOp"


def test_math_fidelity_is_ttnns_enum():
    assert [f.value for f in MathFidelity] == [0, 2, 3, 4]
    assert [f.phases for f in MathFidelity] == [1, 2, 3, 4]
    assert MathFidelity.parse("MathFidelity.HiFi2") is MathFidelity.HiFi2
    assert MathFidelity.parse("lofi") is MathFidelity.LoFi
    assert str(MathFidelity.HiFi4) == "MathFidelity.HiFi4"
    with pytest.raises(MeshnnValueError):
        MathFidelity.parse("HiFi5")


def test_default_fidelity_follows_ttnn():
    x = TensorDesc((32, 32))
    plain = OpDesc(OpFamily.MATMUL, (x, x), (x,))
    configured = OpDesc(OpFamily.MATMUL, (x, x), (x,), matmul=MatmulConfig(MatmulProgram.MULTICAST_2D, (8, 8)))
    gridded = OpDesc(OpFamily.MATMUL, (x, x), (x,), core_grid=(4, 4))
    assert default_fidelity(plain) is MathFidelity.HiFi2  # no program config, no core grid
    assert default_fidelity(configured) is MathFidelity.LoFi
    assert default_fidelity(gridded) is MathFidelity.LoFi
    assert default_fidelity(OpDesc(OpFamily.NORM, (x,), (x,))) is MathFidelity.HiFi4
    assert default_fidelity(OpDesc(OpFamily.SDPA, (x, x, x), (x,))) is MathFidelity.HiFi2
    assert default_fidelity(OpDesc(OpFamily.BINARY, (x, x), (x,))) is MathFidelity.LoFi
    assert default_fidelity(OpDesc(OpFamily.COPY, (x,), (x,))) is None
    assert default_fidelity(OpDesc(OpFamily.ALL_GATHER, (x,), (x,), collective=CollectiveConfig())) is None
    explicit = OpDesc(OpFamily.MATMUL, (x, x), (x,), fidelity="HiFi3")
    assert default_fidelity(explicit) is MathFidelity.HiFi3
