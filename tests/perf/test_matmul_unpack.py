"""A 2-D matmul with a sharded output runs one-row output subblocks, whose in1 tiles the unpacker streams one
a multiply: on Wormhole that unpack outlasts a bfloat16 HiFi2 or bfloat8_b LoFi multiply
(:func:`meshnn.perf.matmul.math_cycles_per_multiply`)."""

from __future__ import annotations

import pytest

from meshnn.perf import (
    BufferType,
    MathFidelity,
    MatmulConfig,
    MatmulProgram,
    MemoryLayout,
    OpDesc,
    OpFamily,
    TensorDesc,
)
from meshnn.perf.hardware import BLACKHOLE, WORMHOLE_B0
from meshnn.perf.matmul import math_cycles_per_multiply

F = MathFidelity
SHARDED = {"buffer": BufferType.L1, "memory": MemoryLayout.BLOCK_SHARDED}


def _desc(dtype: str, *, sharded_out: bool = True, program: MatmulProgram = MatmulProgram.MULTICAST_2D) -> OpDesc:
    out = TensorDesc((1, 1, 2048, 2048), dtype, **(SHARDED if sharded_out else {}))
    ins = (TensorDesc((1, 1, 2048, 2048), dtype, **SHARDED), TensorDesc((1, 1, 2048, 2048), dtype))
    return OpDesc(OpFamily.MATMUL, ins, (out,), matmul=MatmulConfig(program, (8, 8)))


@pytest.mark.parametrize(
    ("dtype", "fidelity", "cycles"),
    [
        ("BFLOAT16", F.HiFi2, 2048 / 54.0),  # the unpack of a 2 KiB in1 tile outlasts two phases
        ("BFLOAT16", F.HiFi4, 64.0),  # four phases outlast it
        ("BFLOAT8_B", F.LoFi, 1088 / 54.0),
        ("BFLOAT8_B", F.HiFi2, 32.0),
        ("BFLOAT4_B", F.LoFi, 16.0),
    ],
)
def test_wormhole_one_row_subblocks_wait_for_the_in1_unpack(dtype, fidelity, cycles):
    assert WORMHOLE_B0.row_subblock_unpack_bytes_per_cycle == 54.0
    assert math_cycles_per_multiply(_desc(dtype), WORMHOLE_B0, fidelity) == pytest.approx(cycles)


def test_only_a_two_d_program_with_a_sharded_output_on_wormhole_is_bound():
    assert math_cycles_per_multiply(_desc("BFLOAT16", sharded_out=False), WORMHOLE_B0, F.HiFi2) == 32.0
    one_d = _desc("BFLOAT16", program=MatmulProgram.MULTICAST_1D)
    assert math_cycles_per_multiply(one_d, WORMHOLE_B0, F.HiFi2) == 32.0
    assert BLACKHOLE.row_subblock_unpack_bytes_per_cycle is None
    assert math_cycles_per_multiply(_desc("BFLOAT16"), BLACKHOLE, F.HiFi2) == 32.0
