"""An element-wise binary program whose operands are all L1 shards of its own cores starts as a data-movement
program does plus its compute kernel's start (``compute_start_cycles``), not with the generic launch fitted on DRAM
streams; a fused silu costs its counted SFPU issue slots (``SILU_SLOTS``, 32 cycles each a tile)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from meshnn.perf import BufferType, MemoryLayout, OpDesc, OpFamily, TensorDesc, predict
from meshnn.perf.calibrate import desc_of
from meshnn.perf.latency import op_latency
from meshnn.perf.measured import MeasuredRow, attributes_of
from meshnn.perf.ops_csv import attributes
from meshnn.perf.page_programs import launch_cycles
from meshnn.perf.tile_ops import is_local_binary
from meshnn.perf.traffic import SILU_SLOTS

WS = dict(buffer=BufferType.L1, memory=MemoryLayout.WIDTH_SHARDED)


def _binary(memory: dict, unary: tuple[str, ...] = (), op_code: str = "") -> OpDesc:
    x = TensorDesc((1, 1, 32, 512), "BFLOAT8_B", **memory)
    return OpDesc(OpFamily.BINARY, (x, x), (x,), unary_ops=unary, core_grid=(16, 1), op_code=op_code)


def test_a_local_binary_starts_as_a_data_movement_program_and_its_compute_kernel():
    local = predict(_binary(WS), "galaxy", traced=True)
    start = op_latency("wormhole_b0").compute_start_cycles
    assert local.cores == 16
    assert local.fixed_ns == pytest.approx(launch_cycles(16) + start)  # 1 GHz: a cycle a nanosecond
    assert local.fixed_ns < 1000.0


def test_dram_operands_or_other_programs_keep_the_generic_launch():
    assert predict(_binary({}), "galaxy", traced=True).fixed_ns == 2000.0
    rotary = _binary(WS, op_code="RotaryEmbeddingLlamaFusedQKDeviceOperation")
    assert not is_local_binary(rotary)
    assert is_local_binary(_binary(WS, op_code="BinaryNgDeviceOperation"))


def test_a_fused_silu_costs_its_issue_slots_a_tile():
    plain = predict(_binary(WS), "galaxy", traced=True)
    silu = predict(_binary(WS, ("silu",)), "galaxy", traced=True)
    assert silu.compute_ns - plain.compute_ns == pytest.approx(SILU_SLOTS * 32)  # one tile a core
    assert 1300.0 < silu.compute_ns < 1700.0


def test_the_ops_csv_keeps_an_ops_unary_chain():
    desc = _binary(WS, ("silu",), "BinaryDeviceOperation")
    text = attributes(desc, predict(desc, "galaxy", traced=True))
    assert "'op_chain': 'UnaryOpType::SILU'" in text
    read = attributes_of(text)
    assert read["op_chain"] == "UnaryOpType::SILU"
    row = MeasuredRow(1, "BinaryDeviceOperation", 1, 0, None, 2000.0, None, None, 16, desc.inputs, desc.outputs, read)
    assert desc_of(row).unary_ops == ("silu",)
    assert desc_of(replace(row, attributes={})).unary_ops == ()
