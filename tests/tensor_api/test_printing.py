"""``str(tensor)`` and ``ttnn.set_printoptions`` as ttnn prints: golden strings of the real ttnn
(tests/golden/ttnn_print.json), the profiles, scientific notation, deallocated, 0-d and mesh tensors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

import meshnn as ttnn
from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.tensor import printing

GOLDEN = json.loads((Path(__file__).parent.parent / "golden" / "ttnn_print.json").read_text())["strings"]


@pytest.fixture(autouse=True)
def default_options():
    yield
    printing.OPTIONS[0] = printing.PrintOptions()


@pytest.mark.parametrize("layout", ["ROW_MAJOR_LAYOUT", "TILE_LAYOUT"])
@pytest.mark.parametrize("dtype", ["float32", "uint16"])
def test_a_tensor_prints_as_the_real_ttnn_prints_it(open_mesh, dtype, layout):
    torch.manual_seed(0)
    shape = (2, 16, 64, 32)
    values = torch.rand(shape) if dtype == "float32" else torch.randint(0, 1024, shape, dtype=torch.int16)
    tensor = ttnn.from_torch(values, dtype=getattr(ttnn, dtype), layout=getattr(ttnn, layout), device=open_mesh((1, 1)))
    assert str(tensor) == GOLDEN[f"{dtype}/{layout}"]  # float32: scientific (the values span over 1000x)
    host = ttnn.from_torch(values, dtype=getattr(ttnn, dtype), layout=getattr(ttnn, layout))
    assert repr(host) == GOLDEN[f"{dtype}/{layout}"]


def test_profiles_precision_and_scientific_notation():
    tensor = ttnn.from_torch(torch.arange(16, dtype=torch.float32).reshape(4, 4) / 8)
    assert "..." not in str(tensor)  # a dimension of 4 is short enough
    assert str(tensor).startswith("ttnn.Tensor([[ 0.0000,  0.1250,  0.2500,  0.3750],\n             [ 0.5000,")
    ttnn.set_printoptions(profile="empty")
    assert str(tensor) == "ttnn.Tensor(..., shape=Shape([4, 4]), dtype=DataType::FLOAT32, layout=Layout::ROW_MAJOR)"
    wide = ttnn.from_torch(torch.arange(6, dtype=torch.float32).reshape(1, 6) * 1000 + 1)
    ttnn.set_printoptions(profile="Short", sci_mode=None, precision=2)  # 1 .. 5001: over 1000x apart
    assert str(wide).startswith("ttnn.Tensor([[ 1.00e+00,  1.00e+03,  ...,  4.00e+03,  5.00e+03]]")
    ttnn.set_printoptions(profile="full", sci_mode="false", precision=1)
    assert str(wide).startswith("ttnn.Tensor([[ 1.0, 1001.0, 2001.0, 3001.0, 4001.0, 5001.0]]")  # 4 columns: a floor


def test_zero_d_deallocated_and_mesh_tensors(open_mesh):
    mesh = open_mesh((1, 2))
    scalar = ttnn.from_torch(torch.ones((), dtype=torch.bfloat16), layout=ttnn.TILE_LAYOUT, device=open_mesh((1, 1)))
    assert str(scalar) == "ttnn.Tensor( 1.0000, shape=Shape([]), dtype=DataType::BFLOAT16, layout=Layout::TILE)"
    values = np.array([[1, -2], [3, 4]], np.int32)
    sharded = ttnn.from_torch(torch.from_numpy(values), device=mesh, mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0))
    assert str(sharded) == (
        "device_id: 0, MeshCoordinate([0, 0])\n"
        "ttnn.Tensor([[    1,    -2]], shape=Shape([1, 2]), dtype=DataType::INT32, layout=Layout::ROW_MAJOR)\n"
        "device_id: 1, MeshCoordinate([0, 1])\n"
        "ttnn.Tensor([[    3,     4]], shape=Shape([1, 2]), dtype=DataType::INT32, layout=Layout::ROW_MAJOR)"
    )
    ttnn.deallocate(sharded)
    assert str(sharded) == (
        "ttnn.Tensor(<buffer is not allocated>, shape=Shape([1, 2]), dtype=DataType::INT32, layout=Layout::ROW_MAJOR)"
    )


def test_set_printoptions_refuses_what_ttnn_refuses():
    with pytest.raises(MeshnnValueError, match="profile"):
        ttnn.set_printoptions(profile="long")
    with pytest.raises(MeshnnValueError, match="sci_mode must be None, bool, or str"):
        ttnn.set_printoptions(profile="short", sci_mode="maybe")
    with pytest.raises(MeshnnTypeError, match="precision"):
        ttnn.set_printoptions(profile="short", precision=2.5)
    assert printing.OPTIONS[0] == printing.PrintOptions()  # nothing changed
