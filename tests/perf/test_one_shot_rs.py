"""The one-shot ring reduce_scatter's staging and the reduce_scatter's ramp (meshnn.perf.collectives)."""

from __future__ import annotations

import pytest

from meshnn.perf import CollectiveConfig, OpDesc, OpFamily, TensorDesc, Topology, machine, predict
from meshnn.perf.collectives import (
    DIRECT_RS_SHARD_BUDGET_BYTES,
    rs_most_workers_bytes,
    staging_readback_ns,
    staging_shard_bytes,
)
from meshnn.perf.hardware import arch_perf

KIB = 1024
WH = arch_perf("wormhole_b0")


def _rs_us(total: int, name: str = "ttnn.reduce_scatter") -> float:
    whole = TensorDesc((1, 1, 32, total // 64))
    part = TensorDesc((1, 1, 32, total // 64 // 8))
    config = CollectiveConfig(Topology.RING, cluster_axis=1)
    desc = OpDesc(OpFamily.REDUCE_SCATTER, (whole,), (part,), name=name, collective=config)
    return predict(desc, machine("t3k", (1, 8)), traced=True).kernel_ns / 1e3


def test_the_shard_is_two_halves_of_every_devices_chunks():
    assert staging_shard_bytes(256 * KIB, 8, 2048) == 512 * KIB  # 16 tiles a slice: 2 chunks of 8
    assert staging_shard_bytes(512 * KIB, 8, 2048) == 1024 * KIB
    # 17 tiles a slice round up to 3 chunks: over the budget though 2T is under it
    assert 2 * 272 * KIB < DIRECT_RS_SHARD_BUDGET_BYTES < staging_shard_bytes(272 * KIB, 8, 2048)


def test_readback_only_past_the_budget():
    assert staging_readback_ns(WH, 256 * KIB, 8, 1, 2048) == 0.0
    got = staging_readback_ns(WH, 512 * KIB, 8, 1, 2048)
    assert got == pytest.approx(WH.cycles_ns(7 / 8 * 512 * KIB / WH.noc_bytes_per_cycle))
    assert staging_readback_ns(WH, 512 * KIB, 8, 2, 2048) == pytest.approx(got / 2)


def test_only_ttnn_reduce_scatter_takes_the_one_shot_program():
    direct = _rs_us(512 * KIB)
    ring = _rs_us(512 * KIB, "ttnn.experimental.reduce_scatter_minimal_async")
    assert direct > ring  # 2.3x the bytes and the staging read back
    assert _rs_us(2048 * KIB) == _rs_us(2048 * KIB, "ttnn.experimental.reduce_scatter_minimal_async")


def test_the_ramp_stops_at_the_most_workers():
    assert rs_most_workers_bytes(arch_perf("blackhole"), Topology.RING) == 1024 * KIB
    assert rs_most_workers_bytes(WH, Topology.RING) == 50 * 1024 * KIB
    assert rs_most_workers_bytes(WH, Topology.LINEAR) == 4_000_000
