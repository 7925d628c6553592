"""The exchanges' link bytes and hops (meshnn/perf/exchange.py): point_to_point pays its route's
hops, broadcast one shard over the line, all_broadcast (N-1) shards, a barrier hops only, dispatch
min(k, N-1) shards, combine (N-1)/N of its output, all_to_all_async_generic N/4 shards
through the middle link; and a recorded op run carries its figures."""

from __future__ import annotations

import numpy as np
import pytest

import meshnn as ttnn
from meshnn.perf import CollectiveConfig, OpDesc, OpFamily, predict
from meshnn.perf.desc import TensorDesc

SHARD = TensorDesc((1, 1, 64, 1024))  # bfloat16: 128 KiB per device
F = OpFamily


def _predict(family: OpFamily, **config: object):
    desc = OpDesc(family, (SHARD,), (SHARD,), collective=CollectiveConfig(**config))  # type: ignore[arg-type]
    return predict(desc, "t3k", mesh_shape=(1, 8))


def test_link_bytes_follow_each_pattern():
    shard = SHARD.nbytes
    assert _predict(F.POINT_TO_POINT, hops=3).link_bytes == shard
    assert _predict(F.BROADCAST).link_bytes == shard
    assert _predict(F.ALL_BROADCAST).link_bytes == 7 * shard
    assert _predict(F.BARRIER).link_bytes == 0
    assert _predict(F.ALL_TO_ALL_DISPATCH, peers=2).link_bytes == 2 * shard
    assert _predict(F.ALL_TO_ALL_DISPATCH).link_bytes == 7 * shard  # every other device
    assert _predict(F.ALL_TO_ALL_COMBINE).link_bytes == int(7 / 8 * shard)
    assert _predict(F.ALL_TO_ALL).link_bytes == 2 * shard  # the middle link: 4 x 4 chunks of shard / 8


def test_hops_cost_start_up_and_bytes_cost_transfer():
    near, far = _predict(F.POINT_TO_POINT, hops=1), _predict(F.POINT_TO_POINT, hops=7)
    assert far.fixed_ns > near.fixed_ns and far.link_ns == near.link_ns
    assert _predict(F.ALL_BROADCAST).link_ns > 5 * _predict(F.BROADCAST).link_ns
    assert _predict(F.BROADCAST, hops=4).fixed_ns < _predict(F.BROADCAST).fixed_ns  # a sender mid-line
    barrier = _predict(F.BARRIER)
    assert barrier.link_ns == 0 and barrier.fixed_ns == _predict(F.BROADCAST).fixed_ns


@pytest.mark.parametrize("family", [f for f in OpFamily if f.is_exchange])
def test_one_device_moves_nothing(family):
    desc = OpDesc(family, (SHARD,), (SHARD,), collective=CollectiveConfig())
    assert predict(desc, "n150").link_bytes == 0


def test_a_point_to_point_run_records_its_hops():
    """perf_capture of a real call: the route's hops reach the model (7 along a 1x8 row, 1 on a ring)."""
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 8), system="t3k")
    try:
        tensor = ttnn.from_torch(np.zeros((8, 1, 32, 32), np.float32), dtype=ttnn.bfloat16, device=mesh,
                                 mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0))  # fmt: skip
        with ttnn.perf_capture() as capture:
            ttnn.point_to_point(tensor, ttnn.MeshCoordinate(0, 0), ttnn.MeshCoordinate(0, 7))
            ttnn.point_to_point(tensor, ttnn.MeshCoordinate(0, 0), ttnn.MeshCoordinate(0, 7),
                                topology=ttnn.Topology.Ring)  # fmt: skip
        line, ring = [r for r in capture.recorder(mesh).records if r.desc.family is F.POINT_TO_POINT]
        assert line.desc.collective.hops == 7 and ring.desc.collective.hops == 1
        assert line.prediction.fixed_ns > ring.prediction.fixed_ns
    finally:
        mesh.close()
