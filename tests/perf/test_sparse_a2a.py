"""The pages all_to_all_dispatch and all_to_all_combine really send (meshnn/perf/sparse_a2a.py), counted
by hand on small routings, and the dispatch timed from them."""

from __future__ import annotations

import numpy as np
import pytest

from meshnn.perf import CollectiveConfig, OpDesc, OpFamily, Topology, predict
from meshnn.perf.desc import Layout, TensorDesc
from meshnn.perf.sparse_a2a import Routing, routing_attributes, routing_loads, routing_of

D, C = OpFamily.ALL_TO_ALL_DISPATCH, OpFamily.ALL_TO_ALL_COMBINE
GROUP = (0, 1, 2, 3)
OWNER = np.array([0, 1, 2, 3, 4, 5, 6, 7])  # expert e on device e: 4..7 outside the group (another row)


def _ids(rows: list[list[list[int]]]) -> np.ndarray:
    return np.array(rows, dtype=np.int64)


def test_dispatch_sends_a_token_once_per_device_and_never_outside_the_group():
    # device 0's one token picks experts 1, 1 (twice), 5 (another row): one page, to device 1
    ids = _ids([[[1, 1, 5]], [[1, 1, 1]], [[1, 1, 1]], [[1, 1, 1]]])
    got = routing_loads(D, OWNER, ids, GROUP, 1, ring=False)
    # line: devices 0 -> 1 east (link 0 east), 2 -> 1 and 3 -> 1 west (link 2 west carries 3's, link 1 west 2's and 3's)
    assert got == Routing(lane_pages=2, core_pages=1, core_tokens=1)


def test_a_ring_takes_the_shorter_way_and_alternates_its_ties():
    # device 0 sends two tokens to device 2 (the antipode of a ring of 4): one each way
    ids = _ids([[[2], [2]], [[1], [1]], [[2], [2]], [[3], [3]]])  # the others keep theirs local
    ring = routing_loads(D, OWNER, ids, GROUP, 1, ring=True)
    line = routing_loads(D, OWNER, ids, GROUP, 1, ring=False)
    assert ring.lane_pages == 1 and line.lane_pages == 2
    assert ring.core_pages == line.core_pages == 2


def test_lanes_split_the_tokens_between_cores():
    ids = _ids([[[3], [3], [3], [3]], [[1]] * 4, [[2]] * 4, [[3]] * 4])
    assert routing_loads(D, OWNER, ids, GROUP, 1, ring=False).lane_pages == 4
    assert routing_loads(D, OWNER, ids, GROUP, 2, ring=False) == Routing(2, 2, 2)  # 2 tokens a core


def test_combine_sends_a_page_per_local_expert_back_unless_reduced():
    # every token picks experts 0 and 0 and 1: device 0 holds two of its picks, device 1 one
    ids = _ids([[[0, 0, 1]]] * 4)
    full = routing_loads(C, OWNER, ids, GROUP, 1, ring=False)
    reduced = routing_loads(C, OWNER, ids, GROUP, 1, ring=False, local_reduce=True)
    assert (full.core_pages, reduced.core_pages) == (8, 4)  # device 0: 2 pages for each of the 4 tokens
    assert full.core_tokens == 4  # a core walks every token of the group


def test_routing_travels_in_attributes():
    routing = Routing(3, 4, 5)
    desc = OpDesc(D, (TensorDesc((8, 1, 1, 7168)),), (TensorDesc((32, 1, 1, 7168)),),
                  attributes=routing_attributes(routing))  # fmt: skip
    assert routing_of(desc) == routing
    assert routing_of(OpDesc(D, desc.inputs, desc.outputs)) is None


def _dispatch(lane_pages: int, topology: Topology = Topology.LINEAR):
    token = TensorDesc((8, 1, 1, 7168), layout=Layout.ROW_MAJOR)
    out = TensorDesc((32, 1, 1, 7168), layout=Layout.ROW_MAJOR)
    config = CollectiveConfig(topology, cluster_axis=1, num_links=1, peers=8)
    desc = OpDesc(D, (token,), (out,), collective=config, attributes=routing_attributes(Routing(lane_pages, 8, 8)))
    return predict(desc, "t3k", mesh_shape=(2, 4), traced=True)


@pytest.mark.parametrize("pages", [1, 24])
def test_the_dispatch_is_timed_from_its_busiest_lane(pages):
    got = _dispatch(pages)
    assert got.link_bytes == pages * 7168 * 2
    assert got.kernel_ns > 0


def test_more_pages_on_the_lane_cost_more_and_the_launch_is_paid_once():
    one, many = _dispatch(1), _dispatch(24)
    assert many.link_ns == pytest.approx(24 * one.link_ns)
    assert many.fixed_ns == one.fixed_ns


def test_the_first_tie_of_a_core_goes_positive():
    """The init semaphore each core sends first took the antipode's negative way (moe_utils.hpp)."""
    from meshnn.perf.sparse_a2a import _directions

    go, hops = _directions(np.array([0, 0, 0, 1]), np.array([2, 2, 2, 3]), np.array([0, 0, 0, 0]), 4, True)
    assert go.tolist() == [1, -1, 1, 1] and hops.tolist() == [2, 2, 2, 2]
