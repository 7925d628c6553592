"""The direct collectives (meshnn.perf.collectives: the Llama decode programs, which write straight
into their targets through the fabric's routers) are timed as one phase: an op's launch, the fabric's
latency per hop and the busiest link's bytes.  The Llama form of ``experimental.all_reduce_async`` (its
own buffer tensor) multicasts its whole tensor (tt-metal's all_reduce_async worker_writer.cpp), not a
reduce_scatter followed by an all_gather; its other forms, and ``ttnn.all_reduce``, keep the two
phases.  ``llama_reduce_scatter`` unicasts each slice to its device; ``all_gather_async`` on tt-metal's
Llama shapes multicasts each slice."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

import meshnn as ttnn
from meshnn.perf import (
    BufferType,
    CollectiveConfig,
    MemoryLayout,
    OpDesc,
    OpFamily,
    TensorDesc,
    Topology,
    arch_perf,
    predict,
)
from meshnn.perf.collectives import is_direct, is_llama_gather, is_multicast
from meshnn.perf.systems import Machine

from .published_ccl_ci import GALAXY_6U

MULTICAST = (("multicast", "True"),)


def _desc(shape, topology, attributes=()):
    x = TensorDesc(shape, "BFLOAT8_B")
    config = CollectiveConfig(topology, cluster_axis=1)
    return OpDesc(OpFamily.ALL_REDUCE, (x,), (x,), collective=config, attributes=attributes)


WH = arch_perf("wormhole_b0")


@pytest.mark.parametrize("topology", [Topology.LINEAR, Topology.RING])
def test_one_phase_starts_with_a_launch_and_the_fabric_hops(topology):
    """A multicast all_reduce pays an op's launch and the fabric's latency over its farthest target's
    hops; the two-phase one pays a reduce_scatter's and an all_gather's fitted start-ups."""
    one = predict(_desc((1, 1, 32, 2048), topology, MULTICAST), "t3k", mesh_shape=(1, 8), traced=True)
    two = predict(_desc((1, 1, 32, 2048), topology), "t3k", mesh_shape=(1, 8), traced=True)
    hops = 4 if topology is Topology.RING else 7
    assert one.fixed_ns == pytest.approx(WH.op_launch_ns + hops * WH.hop_latency_1d_ns)
    assert two.fixed_ns > one.fixed_ns
    assert any("multicasts" in note for note in one.notes)


def test_the_busiest_link_carries_the_whole_tensors_of_half_a_ring():
    """Bytes: N/2 whole tensors one way through a ring's busiest link, N-1 through a line's."""
    shape, whole = (1, 1, 32, 2048), 64 * 1088  # 64 bfloat8_b tiles
    ring = predict(_desc(shape, Topology.RING, MULTICAST), "t3k", mesh_shape=(1, 8), traced=True)
    line = predict(_desc(shape, Topology.LINEAR, MULTICAST), "t3k", mesh_shape=(1, 8), traced=True)
    assert ring.link_bytes == 4 * whole
    assert line.link_bytes == 7 * whole


def _rs(op_code, devices, topology):
    x, part = TensorDesc((1, 1, 32, 32 * 8 * devices)), TensorDesc((1, 1, 32, 32 * 8))
    config = CollectiveConfig(topology, cluster_axis=1, num_links=1)
    return OpDesc(OpFamily.REDUCE_SCATTER, (x,), (part,), op_code=op_code, collective=config)


ROUTES = [(4, Topology.RING, 3), (8, Topology.RING, 10), (4, Topology.LINEAR, 4), (8, Topology.LINEAR, 16)]


@pytest.mark.parametrize(("devices", "topology", "slices"), ROUTES)
def test_llama_reduce_scatter_unicasts_each_slice_the_shorter_way(devices, topology, slices):
    """A ring's link carries every distance up to N/2 that many times (ties go right), a line's middle
    link floor(N/2) x ceil(N/2) slices; the generic reduce_scatter keeps its two report phases."""
    llama = _rs("LlamaReduceScatterDeviceOperation", devices, topology)
    plain = _rs("", devices, topology)
    assert is_direct(llama) and not is_direct(plain)
    p = predict(llama, Machine(GALAXY_6U, (1, devices)), traced=True)
    assert p.link_bytes == slices * 8 * 2048  # slices of 8 bfloat16 tiles
    hops = devices // 2 if topology is Topology.RING else devices - 1
    assert p.fixed_ns == pytest.approx(WH.op_launch_ns + hops * WH.hop_latency_1d_ns)


def _gather(shape, memory, name="ttnn.experimental.all_gather_async", buffer=BufferType.L1):
    part = TensorDesc(shape, "BFLOAT8_B", buffer=buffer, memory=memory)
    whole = TensorDesc((*shape[:-1], shape[-1] * 4), "BFLOAT8_B", buffer=buffer, memory=memory)
    config = CollectiveConfig(Topology.LINEAR, cluster_axis=1, num_links=1)
    return OpDesc(OpFamily.ALL_GATHER, (part,), (whole,), name=name, collective=config)


def test_only_the_llama_shapes_of_all_gather_async_run_its_multicast_program():
    """tt-metal picks its Llama sharded all_gather for three shapes, sharded in L1 in and out, and only
    in all_gather_async (composite_common.cpp's use_all_gather_async_llama_sharded)."""
    width = MemoryLayout.WIDTH_SHARDED
    assert is_llama_gather(_gather((1, 1, 32, 960), width))
    assert is_llama_gather(_gather((1, 8, 32, 128), MemoryLayout.HEIGHT_SHARDED))
    assert not is_llama_gather(_gather((1, 1, 32, 960), width, name="ttnn.all_gather"))
    assert not is_llama_gather(_gather((1, 1, 32, 1024), width))
    assert not is_llama_gather(_gather((1, 1, 32, 960), MemoryLayout.INTERLEAVED, buffer=BufferType.DRAM))
    one = predict(_gather((1, 1, 32, 960), width), "galaxy", mesh_shape=(1, 4), traced=True)
    assert one.fixed_ns == pytest.approx(WH.op_launch_ns + 3 * WH.hop_latency_1d_ns)
    assert one.link_bytes == 3 * 30 * 1088  # a line's end link: the 3 other devices' 30 tiles


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


def _grid(x1, y1):
    return ttnn.CoreRangeSet([ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(x1, y1))])


def _width_sharded(cores, width):
    spec = ttnn.ShardSpec(cores, [32, width], ttnn.ShardOrientation.ROW_MAJOR)
    return ttnn.MemoryConfig(ttnn.TensorMemoryLayout.WIDTH_SHARDED, ttnn.BufferType.L1, spec)


def _on_rows(mesh, width, memory_config):
    """A (rows, cols, 32, width) bfloat16 tensor, one block per device."""
    values = np.random.default_rng(3).standard_normal((*tuple(mesh.shape), 32, width)).astype(np.float32)
    return ttnn.from_torch(
        values, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh, memory_config=memory_config,
        mesh_mapper=ttnn.ShardTensor2dMesh(mesh, dims=(0, 1), mesh_shape=tuple(mesh.shape)),
    )  # fmt: skip


def test_captured_llama_reduce_scatter_and_llama_shaped_all_gather_async_are_direct(open_mesh):
    """Under ``meshnn perf``'s capture, llama_reduce_scatter and an all_gather_async of the Llama
    binary-mult shape (32x960 a device, width-sharded in L1 in and out) are timed as direct programs,
    each a positive time under its report-fitted twin's."""
    mesh = open_mesh((2, 4))
    x = _on_rows(mesh, 512, _width_sharded(_grid(3, 1), 64))
    buffer = _on_rows(mesh, 512, _width_sharded(_grid(7, 0), 64))
    sem = ttnn.create_global_semaphore(mesh, _grid(6, 6), 0)
    part = _on_rows(mesh, 960, _width_sharded(_grid(5, 4), 32))
    gathered = _width_sharded(_grid(5, 3), 160)
    sems = [ttnn.create_global_semaphore(mesh, _grid(6, 6), 0) for _ in range(2)]
    with ttnn.perf_capture() as capture:
        ttnn.experimental.llama_reduce_scatter(x, buffer, 3, sem, ttnn.SubDeviceId(0), 1, mesh)
        ttnn.experimental.all_gather_async(part, 3, 1, mesh, ttnn.Topology.Linear, sems, memory_config=gathered)
    rs, ag = (record.desc for record in capture.recorder(mesh).records)
    assert is_direct(rs) and is_llama_gather(ag)
    for desc in (rs, ag):
        direct = predict(desc, "t3k", mesh_shape=(2, 4), traced=True).kernel_ns
        plain = predict(replace(desc, op_code="", name=""), "t3k", mesh_shape=(2, 4), traced=True).kernel_ns
        assert 0 < direct < plain


def test_a_direct_program_behind_another_collective_saves_no_launch_skew():
    """The launch-skew saving is the report's barrier wait; a direct program's start-up has none."""
    alone = _desc((1, 1, 32, 2048), Topology.RING, MULTICAST)
    behind = replace(alone, collective=replace(alone.collective, aligned=True))
    times = [predict(d, "t3k", mesh_shape=(1, 8), traced=True).kernel_ns for d in (alone, behind)]
    assert times[0] == times[1]
    plain = _desc((1, 1, 32, 2048), Topology.RING)
    plain_behind = replace(plain, collective=replace(plain.collective, aligned=True))
    assert (
        predict(plain_behind, "t3k", mesh_shape=(1, 8)).kernel_ns < predict(plain, "t3k", mesh_shape=(1, 8)).kernel_ns
    )
