"""The cross-core statistics of a sharded norm by the stage of tt-metal's sharded program
(meshnn.perf.norm_stats): the plain norm gathers and multicasts back; a distributed norm's pre stage
gathers without the multicast back; its post stage only multicasts the combined stats."""

from __future__ import annotations

import pytest

from meshnn.perf import BufferType, Layout, MemoryLayout, OpDesc, OpFamily, TensorDesc, predict
from meshnn.perf.latency import op_latency
from meshnn.perf.norm_stats import POST, PRE, multicast_ns, sharded_stats_ns
from meshnn.perf.systems import machine

WS = dict(buffer=BufferType.L1, memory=MemoryLayout.WIDTH_SHARDED)
GALAXY = machine("galaxy", (1, 1))
FULL = op_latency("wormhole_b0").sharded_norm_stats_ns


def _stage(code: str, width: int = 2048, *, rows: int = 32, name: str = "") -> OpDesc:
    x, stats = TensorDesc((1, 1, rows, width), **WS), TensorDesc((1, 1, rows, 32), **WS)
    weight = TensorDesc((1, 1, width // 32, 32), layout=Layout.ROW_MAJOR)
    if code == POST:
        return OpDesc(OpFamily.NORM, (x, weight, stats), (x,), op_code=code, core_grid=(2, 8), name=name)
    return OpDesc(OpFamily.NORM, (x,), (stats,), op_code=code, core_grid=(2, 8), name=name)


def test_a_multicast_grows_with_its_bytes():
    assert 0 < multicast_ns(GALAXY, 2048) < multicast_ns(GALAXY, 4096) < FULL


def test_the_plain_norm_pays_the_whole_exchange():
    assert sharded_stats_ns(_stage("LayerNormDeviceOperation"), GALAXY) == FULL


def test_the_pre_stage_gathers_without_the_multicast_back():
    one_tile = multicast_ns(GALAXY, 2048)
    assert sharded_stats_ns(_stage(PRE), GALAXY) == pytest.approx(FULL - one_tile)
    assert sharded_stats_ns(_stage(PRE, rows=64), GALAXY) == pytest.approx(FULL - multicast_ns(GALAXY, 4096))


def test_the_post_stage_only_multicasts_the_combined_stats():
    assert sharded_stats_ns(_stage(POST), GALAXY) == pytest.approx(multicast_ns(GALAXY, 2048))
    layer = _stage(POST, name="ttnn.layer_norm_post_all_gather")  # E[x] and E[x^2]
    assert sharded_stats_ns(layer, GALAXY) == pytest.approx(multicast_ns(GALAXY, 4096))


def test_interleaved_stages_have_no_cross_core_statistics():
    x = TensorDesc((1, 1, 32, 2048))
    assert sharded_stats_ns(OpDesc(OpFamily.NORM, (x,), (x,), op_code=PRE), GALAXY) == 0.0


def test_the_two_stages_together_cost_less_than_two_plain_norms():
    pre, post = (predict(_stage(c), "galaxy", mesh_shape=(1, 1), traced=True).kernel_ns for c in (PRE, POST))
    plain = predict(_stage("LayerNormDeviceOperation"), "galaxy", mesh_shape=(1, 1), traced=True).kernel_ns
    assert post < pre < plain
