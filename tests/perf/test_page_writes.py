"""A unary op or typecast writes its output a page at a time, each page flushed before the next: its
DRAM-interleaved output takes at least its bytes at the system's page-write rate, whatever the page size
(:func:`meshnn.perf.traffic.page_write_ns`); its reads share the DRAM as before."""

from __future__ import annotations

import pytest

from meshnn.perf import BufferType, MemoryLayout, OpDesc, OpFamily, TensorDesc, predict
from meshnn.perf.hardware import BLACKHOLE, WORMHOLE_B0
from meshnn.perf.systems import machine
from meshnn.perf.traffic import page_write_ns

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
