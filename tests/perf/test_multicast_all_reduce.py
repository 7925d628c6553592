"""The Llama form of ``experimental.all_reduce_async`` (its own buffer tensor) is timed as its program
runs: one phase in which every device multicasts its whole tensor along the line both ways, not a
reduce_scatter followed by an all_gather (tt-metal's all_reduce_async worker_writer.cpp); its other
forms, and ``ttnn.all_reduce``, keep the two phases."""

from __future__ import annotations

import numpy as np
import pytest

import meshnn as ttnn
from meshnn.perf import CollectiveConfig, OpDesc, OpFamily, TensorDesc, Topology, predict
from meshnn.perf.collectives import is_multicast
from meshnn.perf.fabric import fabric_perf

MULTICAST = (("multicast", "True"),)


def _desc(shape, topology, attributes=()):
    x = TensorDesc(shape, "BFLOAT8_B")
    config = CollectiveConfig(topology, cluster_axis=1)
    return OpDesc(OpFamily.ALL_REDUCE, (x,), (x,), collective=config, attributes=attributes)


@pytest.mark.parametrize("topology", [Topology.LINEAR, Topology.RING])
def test_one_phase_has_one_all_gather_start_up(topology):
    """A multicast all_reduce pays one all_gather start-up over its farthest target's hops; the
    two-phase one pays a reduce_scatter's and an all_gather's."""
    fabric = fabric_perf("wormhole_b0")
    ag = OpFamily.ALL_GATHER
    one = predict(_desc((1, 1, 32, 2048), topology, MULTICAST), "t3k", mesh_shape=(1, 8), traced=True)
    two = predict(_desc((1, 1, 32, 2048), topology), "t3k", mesh_shape=(1, 8), traced=True)
    hops = 4 if topology is Topology.RING else 7
    assert one.fixed_ns == pytest.approx(fabric.invocation_ns[ag] + hops * fabric.hop_ns[(ag, topology)])
    assert two.fixed_ns > one.fixed_ns
    assert any("multicasts" in note for note in one.notes)


def test_the_busiest_link_carries_the_whole_tensors_of_half_a_ring():
    """Bytes: N/2 whole tensors one way through a ring's busiest link, N-1 through a line's."""
    shape, whole = (1, 1, 32, 2048), 64 * 1088  # 64 bfloat8_b tiles
    ring = predict(_desc(shape, Topology.RING, MULTICAST), "t3k", mesh_shape=(1, 8), traced=True)
    line = predict(_desc(shape, Topology.LINEAR, MULTICAST), "t3k", mesh_shape=(1, 8), traced=True)
    assert ring.link_bytes == 4 * whole
    assert line.link_bytes == 7 * whole


def test_the_captured_llama_form_is_a_multicast_and_the_others_are_not(open_mesh):
    mesh = open_mesh((1, 8), system="t3k")
    rng = np.random.default_rng(5)
    x = ttnn.from_torch(
        rng.standard_normal((8, 1, 32, 64)).astype(np.float32),
        dtype=ttnn.bfloat16,
        layout=ttnn.TILE_LAYOUT,
        device=mesh,
        mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0),
    )
    grid = mesh.compute_with_storage_grid_size()
    cores = ttnn.CoreRangeSet([ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(grid.x - 1, grid.y - 1))])
    sem = ttnn.create_global_semaphore(mesh, cores, 0)
    scratch = ttnn.allocate_tensor_on_device(x.spec, mesh)
    with ttnn.perf_capture() as capture:
        ttnn.experimental.all_reduce_async(x, scratch, 1, mesh, sem)
        ttnn.experimental.all_reduce_async(x, 1, mesh, math_op=ttnn.ReduceType.Sum)
    llama, composite = (record.desc for record in capture.recorder(mesh).records)
    assert is_multicast(llama) and not is_multicast(composite)
    times = [predict(d, "t3k", mesh_shape=(1, 8), traced=True).kernel_ns for d in (llama, composite)]
    assert all(t > 0 for t in times) and times[0] < times[1]
