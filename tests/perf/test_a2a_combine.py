"""all_to_all_combine timed from its program's serial chain (meshnn.perf.a2a_combine)."""

from __future__ import annotations

import numpy as np

from meshnn.perf import CollectiveConfig, Layout, OpDesc, OpFamily, TensorDesc, Topology, machine, predict
from meshnn.perf.a2a_combine import CombineLoad, combine_attributes, combine_load, combine_load_of
from meshnn.perf.hardware import arch_perf
from meshnn.perf.latency import op_latency

COMBINE = OpFamily.ALL_TO_ALL_COMBINE
HIDDEN = 7168


def _desc(load: CombineLoad | None, tokens: int = 32) -> OpDesc:
    data = TensorDesc((1, tokens, 1, HIDDEN), "BFLOAT16", Layout.ROW_MAJOR)
    out = TensorDesc((8, tokens // 4, 1, HIDDEN), "BFLOAT16", Layout.ROW_MAJOR)
    attributes = () if load is None else combine_attributes(load)
    config = CollectiveConfig(Topology.LINEAR, cluster_axis=1, num_links=1)
    return OpDesc(COMBINE, (data,), (out,), collective=config, attributes=attributes)


def _us(load: CombineLoad | None) -> float:
    return predict(_desc(load), machine("t3k", (2, 4)), traced=True).kernel_ns / 1e3


def test_combine_load_counts_each_cores_walk_and_sends():
    # a group of 2 devices (mesh indices 0, 1), 2 tokens each, k 2, experts 0..3: device 0 holds 0 and 1
    owner = np.array([0, 0, 1, 1])
    ids = np.array([[[0, 1], [2, 3]], [[0, 2], [3, 2]]])  # (source device, token, k)
    load = combine_load(owner, ids, (0, 1), 2, local_reduce=False)
    # walked source-major, 2 tokens a core: core 0 walks device 0's tokens, core 1 device 1's.  Device 0 sends
    # 2 pages for (0, t0) (local) and 1 for (1, t0): cores (2, 2, 0), (2, 1, 1); device 1 sends 2 for (0, t1),
    # 1 for (1, t0), 2 for (1, t1): cores (2, 2, 2), (2, 3, 0)
    assert load.cores == ((2, 1, 1), (2, 2, 0), (2, 2, 2), (2, 3, 0))
    assert load.experts == 4
    reduced = combine_load(owner, ids, (0, 1), 2, local_reduce=True)
    assert reduced.cores == ((2, 1, 0), (2, 1, 1), (2, 2, 0))


def test_attributes_round_trip():
    load = CombineLoad(((8, 6, 6), (8, 6, 0)), 32)
    assert combine_load_of(_desc(load)) == load
    assert combine_load_of(_desc(None)) is None


def test_each_walked_token_costs_a_waited_metadata_read():
    arch = arch_perf("wormhole_b0")
    trip_us = arch.cycles_ns(op_latency("wormhole_b0").read_trip_cycles(in_dram=True)) / 1e3
    base = _us(CombineLoad(((8, 0, 0),), 32))
    more = _us(CombineLoad(((108, 0, 0),), 32))
    assert abs((more - base) - 100 * trip_us) < 1e-6


def test_a_page_through_the_fabric_costs_more_than_a_local_one():
    local = _us(CombineLoad(((32, 20, 0),), 32))
    remote = _us(CombineLoad(((32, 20, 20),), 32))
    assert remote > local > _us(CombineLoad(((32, 0, 0),), 32)) > 0


def test_the_slowest_core_is_timed():
    one = _us(CombineLoad(((32, 20, 20),), 32))
    assert _us(CombineLoad(((32, 20, 20), (32, 25, 0), (32, 1, 1)), 32)) == max(
        one, _us(CombineLoad(((32, 25, 0),), 32))
    )


def test_without_the_routing_the_top_k_bound_is_timed():
    assert _us(None) != _us(CombineLoad(((32, 20, 20),), 32))
    assert _us(None) > 0
