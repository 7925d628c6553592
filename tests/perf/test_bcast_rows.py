"""The legacy row broadcast of before tt-metal #23626 (meshnn.perf.bcast_rows): BroadcastHeightMultiCore splits the
tile rows of ``a`` over its cores and waits for each tile's two reads; only ops marked so are timed so."""

from __future__ import annotations

import pytest

from meshnn.perf import BufferType, Layout, MemoryLayout, OpDesc, OpFamily, TensorDesc, predict
from meshnn.perf.bcast_rows import BinaryProgram, legacy_cycles, legacy_rows, legacy_split, marked, row_broadcast
from meshnn.perf.latency import WORMHOLE_B0 as WH_LATENCY
from meshnn.perf.systems import machine

WIDTH = 2304  # Qwen2.5-7B's QKV columns on a chip of an N300


def _bias_add(rows: int = 128, width: int = WIDTH, bias_rows: int = 1, **where) -> OpDesc:
    a = TensorDesc((1, 1, rows, width), "BFLOAT16", logical_shape=(1, 1, rows, width))
    b = TensorDesc((1, 1, 32, width), "BFLOAT16", logical_shape=(1, 1, bias_rows, width), **where)
    return OpDesc(OpFamily.BINARY, (a, b), (TensorDesc((1, 1, rows, width), "BFLOAT16"),))


def test_only_a_row_broadcast_of_interleaved_tiles_is_one():
    assert row_broadcast(_bias_add())
    assert not row_broadcast(_bias_add(rows=32, bias_rows=32))  # same shapes: the element-wise program
    assert row_broadcast(_bias_add(rows=32))  # a tile row of 32 logical rows: broadcast down it
    one_row = _bias_add(rows=32)
    a = TensorDesc((1, 1, 32, WIDTH), "BFLOAT16", logical_shape=(1, 1, 1, WIDTH))
    assert not row_broadcast(OpDesc(OpFamily.BINARY, (a, one_row.inputs[1]), one_row.outputs))  # both one row
    sharded = _bias_add(buffer=BufferType.L1, memory=MemoryLayout.WIDTH_SHARDED)
    assert not row_broadcast(sharded)  # the sharded programs are other factories
    rm = _bias_add(layout=Layout.ROW_MAJOR)
    assert not row_broadcast(rm)


def test_marking_leaves_other_ops_alone():
    same = _bias_add(rows=128, bias_rows=128)
    assert marked(same, BinaryProgram.BCAST_H_ROWS) is same
    mark = marked(_bias_add(), BinaryProgram.BCAST_H_ROWS)
    assert legacy_rows(mark) and not legacy_rows(_bias_add())
    assert marked(mark, BinaryProgram.BCAST_H_ROWS) == mark  # marking twice keeps one mark


def test_rows_not_tiles_are_split_over_cores():
    """128 rows are 4 tile rows: 4 cores, each with its row of 72 tiles; 64 tile rows over 64 cores, one each."""
    assert legacy_split(_bias_add(), 64) == (4, 72)
    assert legacy_split(_bias_add(rows=2048), 64) == (64, 72)
    assert legacy_split(_bias_add(rows=4096), 64) == (64, 144)


def test_each_tile_waits_for_two_reads_from_dram():
    n300 = machine("n300", (1, 2))
    desc = marked(_bias_add(), BinaryProgram.BCAST_H_ROWS)
    floor = 72 * 2 * WH_LATENCY.tile_round_trip_cycles  # 72 tiles, a tile of a and one of b each, waited for
    assert legacy_cycles(desc, n300, 72, 0.0) > floor
    dated = predict(desc, "n300", mesh_shape=(1, 2))
    today = predict(_bias_add(), "n300", mesh_shape=(1, 2))
    assert dated.cores == 4 and today.cores == 64
    assert dated.compute_ns == pytest.approx(n300.system.arch.cycles_ns(legacy_cycles(desc, n300, 72, 0.0)), rel=0.05)
    assert dated.kernel_ns > 5 * today.kernel_ns
    assert today.dram_bytes == dated.dram_bytes  # the same bytes move


def test_time_grows_with_the_row_width():
    narrow = predict(marked(_bias_add(width=1152), BinaryProgram.BCAST_H_ROWS), "n300", mesh_shape=(1, 2))
    wide = predict(marked(_bias_add(width=2304), BinaryProgram.BCAST_H_ROWS), "n300", mesh_shape=(1, 2))
    assert wide.compute_ns == pytest.approx(2 * narrow.compute_ns, rel=0.05)
