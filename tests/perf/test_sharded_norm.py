"""A norm whose rows are split across cores (width-sharded input) pays the sharded program's cross-core
statistics (``sharded_norm_stats_ns``): DeepSeek MLA's q_norm and kv_norm on a TG chip, 7.33 and 6.68 us
measured, were 2.2 and 2.1 us without it."""

from __future__ import annotations

from meshnn.perf import BufferType, MemoryLayout, OpDesc, OpFamily, TensorDesc, predict
from meshnn.perf.latency import op_latency
from meshnn.perf.systems import machine
from meshnn.perf.tile_ops import local_binary_launch_ns

WS = dict(buffer=BufferType.L1, memory=MemoryLayout.WIDTH_SHARDED)


def _norm(memory: dict, grid: tuple[int, int]) -> OpDesc:
    x = TensorDesc((1, 1, 32, 1536), **memory)
    return OpDesc(OpFamily.NORM, (x,), (x,), fidelity="LoFi", core_grid=grid)


def test_a_width_sharded_norm_adds_its_statistics_exchange():
    split = predict(_norm(WS, (2, 8)), "galaxy", traced=True)
    stats = op_latency("wormhole_b0").sharded_norm_stats_ns
    assert split.cores == 16
    assert split.fixed_ns == 2000.0 + stats
    assert 0.85 * 7330 <= split.kernel_ns <= 1.15 * 7330


def test_rows_kept_on_one_core_or_other_ops_do_not():
    rows = predict(_norm(dict(buffer=BufferType.L1), (2, 8)), "galaxy", traced=True)
    assert rows.cores == 1 and rows.fixed_ns == 2000.0
    x = TensorDesc((1, 1, 32, 1536), **WS)
    binary = predict(OpDesc(OpFamily.BINARY, (x, x), (x,), core_grid=(2, 8)), "galaxy", traced=True)
    assert binary.fixed_ns == local_binary_launch_ns(machine("galaxy"), 16)  # its own launch, no statistics
