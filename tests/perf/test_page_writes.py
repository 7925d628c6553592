"""A unary op or typecast writes its output a page at a time, each page flushed before the next: its
DRAM-interleaved output takes at least its bytes at the system's page-write rate, whatever the page size
(:func:`meshnn.perf.traffic.page_write_ns`); its reads share the DRAM as before."""

from __future__ import annotations

import pytest

from meshnn.perf import BufferType, Layout, MemoryLayout, OpDesc, OpFamily, TensorDesc, predict
from meshnn.perf.hardware import BLACKHOLE, WORMHOLE_B0
from meshnn.perf.latency import WORMHOLE_B0 as WH_LATENCY
from meshnn.perf.page_programs import PAGE_FIGURES
from meshnn.perf.systems import machine
from meshnn.perf.tile_ops import TYPECAST_PROGRAM_ATTRIBUTE, TypecastProgram, blocked_typecast_cycles
from meshnn.perf.traffic import page_write_ns
from meshnn.perf.transpose_hc import WRITE_BARRIER

Q = (1, 8, 4096, 128)  # a 70B layer's q at 4096 tokens on a Galaxy chip


def _cast(source: str, dest: str, **where) -> OpDesc:
    return OpDesc(OpFamily.TYPECAST, (TensorDesc(Q, source),), (TensorDesc(Q, dest, **where),))


def test_the_rate_is_wormholes_at_the_systems_dram_speed():
    assert WORMHOLE_B0.dram_page_write_bytes_per_s == 86.6e9
    assert BLACKHOLE.dram_page_write_bytes_per_s is None
    out = TensorDesc(Q, "BFLOAT16")
    assert page_write_ns(machine("n150"), [out]) == pytest.approx(out.nbytes / 86.6e9 * 1e9)
    assert page_write_ns(machine("galaxy", (8, 4)), [out]) == pytest.approx(out.nbytes / (86.6e9 * 14 / 12) * 1e9)
    assert page_write_ns(machine("p150"), [out]) == 0.0
    sharded = TensorDesc(Q, "BFLOAT16", buffer=BufferType.L1, memory=MemoryLayout.HEIGHT_SHARDED)
    assert page_write_ns(machine("n150"), [sharded]) == 0.0


def test_writing_the_larger_tiles_takes_longer_than_reading_them():
    """The same bytes move both ways; bfloat8_b -> bfloat16 writes 2 KiB pages (measured 85.0 us against
    65.6 on a Galaxy), which the writes' rate bounds, not the reads'."""
    widen = predict(_cast("BFLOAT8_B", "BFLOAT16"), "galaxy", mesh_shape=(8, 4), traced=True)
    narrow = predict(_cast("BFLOAT16", "BFLOAT8_B"), "galaxy", mesh_shape=(8, 4), traced=True)
    assert widen.dram_bytes == narrow.dram_bytes
    assert widen.kernel_ns > 1.4 * narrow.kernel_ns
    assert widen.memory_ns == pytest.approx(page_write_ns(machine("galaxy", (8, 4)), [TensorDesc(Q, "BFLOAT16")]))


def test_blackhole_writes_share_the_interleaved_rate_as_before():
    widen = predict(_cast("BFLOAT8_B", "BFLOAT16"), "p150", traced=True)
    narrow = predict(_cast("BFLOAT16", "BFLOAT8_B"), "p150", traced=True)
    assert widen.kernel_ns == pytest.approx(narrow.kernel_ns, rel=0.2)


def test_the_2025_sub_grid_typecast_reads_its_block_then_writes_it_each_tile_waited():
    """typecast_program_factory.cpp's sub_core_grids factory before tt-metal #41547 (2026-04-10): one output block of a
    core's tiles, pushed whole, so its waited reads come before its waited writes."""
    x = TensorDesc((1, 1, 32, 16384), "BFLOAT8_B", Layout.TILE, BufferType.DRAM, MemoryLayout.INTERLEAVED)
    y = TensorDesc((1, 1, 32, 16384), "BFLOAT16", Layout.TILE, BufferType.DRAM, MemoryLayout.INTERLEAVED)
    today = OpDesc(OpFamily.TYPECAST, (x,), (y,), core_grid=(32, 1))
    mark = ((TYPECAST_PROGRAM_ATTRIBUTE, TypecastProgram.SUBGRID_BLOCK.value),)
    dated = OpDesc(OpFamily.TYPECAST, (x,), (y,), core_grid=(32, 1), attributes=mark)
    galaxy = machine("galaxy", (1, 1))
    read = WH_LATENCY.tile_round_trip_cycles + 1088 / 30
    write = PAGE_FIGURES.write_issue_cycles + 2048 / 30 + WRITE_BARRIER.cycles()
    assert blocked_typecast_cycles(dated, galaxy, 16, 10.0) == pytest.approx(16 * (read + write) + 10.0)
    old = predict(dated, galaxy, traced=True)
    assert old.compute_ns == pytest.approx(galaxy.system.arch.cycles_ns(16 * (read + write)), rel=0.01)
    assert old.kernel_ns > predict(today, galaxy, traced=True).kernel_ns  # its waits, not the DRAM, bound it
