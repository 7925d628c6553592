"""``ttnn.experimental.all_gather_concat`` against numpy: the 8 users of each of a row's 4 devices
gathered in member order, each user's first ``num_heads`` heads side by side, exact (a copy of
bfloat16 values), on 2x4 and 8x4 meshes, TILE and ROW_MAJOR inputs as tt-metal's test and model
give them; groups of another size (1x2, 1x8, the 8x4 columns) refused, as are ttnn's other
refusals, before anything is allocated.  Also ``all_gather_async`` into a persistent output
narrower than the gather (the same decode path's MLP gather).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import meshnn as ttnn
from meshnn.perf.collectives import is_llama_gather, predict_collective
from meshnn.perf.desc import OpFamily
from meshnn.perf.gather_concat import concat_tail_ns, gather
from tests.ops.reference import BF16

C = ttnn.CoreCoord
INPUT_CORES = ttnn.CoreRangeSet([ttnn.CoreRange(C(1, 0), C(3, 1)), ttnn.CoreRange(C(1, 2), C(2, 2))])


def height_sharded(heads, cores=INPUT_CORES):
    spec = ttnn.ShardSpec(cores, [heads, 128], ttnn.ShardOrientation.ROW_MAJOR)
    return ttnn.MemoryConfig(ttnn.TensorMemoryLayout.HEIGHT_SHARDED, ttnn.BufferType.L1, spec)


def out_config(num_heads):
    cores = ttnn.num_cores_to_corerangeset(num_heads, C(8, 8), row_wise=True)
    spec = ttnn.ShardSpec(cores, [32, 128], ttnn.ShardOrientation.ROW_MAJOR)
    return ttnn.MemoryConfig(ttnn.TensorMemoryLayout.WIDTH_SHARDED, ttnn.BufferType.L1, spec)


def place(mesh, values, layout, memory_config):
    return ttnn.from_torch(
        torch.from_numpy(values), dtype=BF16, layout=layout, device=mesh, memory_config=memory_config,
        mesh_mapper=ttnn.ShardTensor2dMesh(mesh, dims=(0, 1), mesh_shape=tuple(mesh.shape)),
    )  # fmt: skip


def inputs(mesh, heads, layout, rng):
    """(rows, cols x 8, heads, 128) bfloat16-exact values, 8 users a device; a staging buffer; a semaphore."""
    rows, cols = tuple(mesh.shape)
    values = rng.standard_normal((rows, cols * 8, heads, 128)).astype(np.float32)
    values = torch.from_numpy(values).bfloat16().float().numpy()
    shard_rows = 32 if layout == ttnn.TILE_LAYOUT else heads
    x = place(mesh, values, layout, height_sharded(shard_rows))
    buffer = place(mesh, np.zeros((rows, cols * 32, 32, 128), np.float32), ttnn.TILE_LAYOUT, ttnn.DRAM_MEMORY_CONFIG)
    sem = ttnn.create_global_semaphore(mesh, ttnn.CoreRangeSet([ttnn.CoreRange(C(0, 0), C(3, 3))]), 0)
    return values, x, buffer, sem


@pytest.mark.parametrize("shape", [(2, 4), (8, 4)], ids=["2x4", "8x4"])
@pytest.mark.parametrize(("heads", "layout"), [(8, ttnn.TILE_LAYOUT), (32, ttnn.ROW_MAJOR_LAYOUT)], ids=["tile", "rm"])
def test_each_device_gets_its_rows_users_heads_side_by_side(open_mesh, shape, heads, layout, rng):
    mesh = open_mesh(shape)
    values, x, buffer, sem = inputs(mesh, heads, layout, rng)
    got = ttnn.experimental.all_gather_concat(
        x, buffer, 1, cluster_axis=1, mesh_device=mesh, multi_device_global_semaphore=sem, num_links=3,
        num_heads=8, memory_config=out_config(8), topology=ttnn.Topology.Linear, subdevice_id=None,
    )  # fmt: skip
    assert tuple(got.shape) == (1, 1, 32, 1024) and got.layout == ttnn.TILE_LAYOUT and got.dtype == BF16
    assert got.memory_config() == out_config(8)
    for index, device in enumerate(ttnn.get_device_tensors(got)):
        row = index // shape[1]
        want = values[row, :, :8, :].reshape(32, 1024)  # user u = 8 m + b of the row, its 8 heads
        np.testing.assert_array_equal(ttnn.to_torch(device).float().numpy().reshape(32, 1024), want)


def test_heads_past_the_inputs_are_zero(open_mesh, rng):
    mesh = open_mesh((2, 4))
    values, x, buffer, sem = inputs(mesh, 8, ttnn.TILE_LAYOUT, rng)
    got = ttnn.experimental.all_gather_concat(x, buffer, 1, 1, mesh, sem, 12, out_config(12))
    first = ttnn.to_torch(ttnn.get_device_tensors(got)[0]).float().numpy().reshape(32, 12 * 128)
    np.testing.assert_array_equal(first[:, :1024], values[0, :, :8].reshape(32, 1024))
    assert not first[:, 1024:].any()


@pytest.mark.parametrize(("shape", "axis"), [((1, 2), 1), ((1, 8), 1), ((8, 4), 0)], ids=["1x2", "1x8", "8x4-cols"])
def test_a_group_of_other_than_4_devices_is_refused(open_mesh, shape, axis, rng):
    mesh = open_mesh(shape)
    rows, cols = shape
    x = place(mesh, np.zeros((rows, cols * 8, 8, 128), np.float32), ttnn.TILE_LAYOUT, height_sharded(32))
    sem = ttnn.create_global_semaphore(mesh, ttnn.CoreRangeSet([ttnn.CoreRange(C(0, 0), C(1, 1))]), 0)
    with pytest.raises(ttnn.MeshnnValueError, match="8 users from each of 4 devices"):
        ttnn.experimental.all_gather_concat(x, x, 1, axis, mesh, sem, 8, out_config(8))


def test_ttnns_refusals(open_mesh, rng):
    mesh = open_mesh((2, 4))
    _, x, buffer, sem = inputs(mesh, 8, ttnn.TILE_LAYOUT, rng)
    call = ttnn.experimental.all_gather_concat
    used = ttnn.get_memory_view(mesh, ttnn.BufferType.L1).total_bytes_allocated_per_bank
    other_cores = ttnn.CoreRangeSet([ttnn.CoreRange(C(0, 0), C(7, 0))])
    moved = place(mesh, np.zeros((2, 32, 8, 128), np.float32), ttnn.TILE_LAYOUT, height_sharded(32, other_cores))
    with pytest.raises(ttnn.MeshnnValueError, match="Unsupported input core ranges"):
        call(moved, buffer, 1, 1, mesh, sem, 8, out_config(8))
    with pytest.raises(ttnn.MeshnnValueError, match="memory layout"):
        call(buffer, buffer, 1, 1, mesh, sem, 8, out_config(8))
    with pytest.raises(ttnn.MeshnnValueError, match="cannot hold"):
        call(x, x, 1, 1, mesh, sem, 8, out_config(8))
    with pytest.raises(ttnn.MeshnnTypeError, match="num_heads"):
        call(x, buffer, 1, 1, mesh, sem, 8.0, out_config(8))
    with pytest.raises(ttnn.MeshnnTypeError, match="memory_config"):
        call(x, buffer, 1, 1, mesh, sem, 8, None)
    with pytest.raises(ttnn.MeshnnValueError, match="num_links"):
        call(x, buffer, 1, 1, mesh, sem, 8, out_config(8), num_links=0)
    ttnn.deallocate(moved)
    assert ttnn.get_memory_view(mesh, ttnn.BufferType.L1).total_bytes_allocated_per_bank == used


def test_the_perf_model_times_it_as_its_gather_then_its_concat(open_mesh, rng):
    """One AllGatherConcat row: the Llama multicast gather of the input heads over the 4 devices of a row, then the
    concat after the last packet (meshnn.perf.gather_concat)."""
    mesh = open_mesh((2, 4))
    _, x, buffer, sem = inputs(mesh, 8, ttnn.TILE_LAYOUT, rng)
    with ttnn.perf_capture() as capture:
        out = ttnn.experimental.all_gather_concat(x, buffer, 1, 1, mesh, sem, 8, out_config(8))
    recorder = capture.recorder(mesh)
    (record,) = [r for r in recorder.records if r.desc.name == "ttnn.experimental.all_gather_concat"]
    desc = record.desc
    assert (
        desc.family is OpFamily.ALL_GATHER and desc.op_code == "AllGatherConcat" and desc.collective.cluster_axis == 1
    )
    assert desc.outputs[0].nbytes == out.spec.compute_packed_buffer_size_bytes()
    stage = gather(desc, 4)
    assert is_llama_gather(stage) and stage.outputs[0].nbytes == 4 * desc.inputs[0].nbytes  # every device's heads
    alone = predict_collective(stage, recorder.machine)
    assert record.prediction.link_bytes == alone.link_bytes == 3 * desc.inputs[0].nbytes  # a line: 3 heads' tensors
    tail = concat_tail_ns(desc, recorder.machine, 4)
    assert record.prediction.kernel_ns == pytest.approx(alone.kernel_ns + tail) and tail > 0


def test_all_gather_async_into_a_narrower_buffer_keeps_the_leading_part(open_mesh, rng):
    """tt-metal accepts a persistent output narrower than the gather along its dim (<= ring x
    input): Llama-70B's decode MLP gathers 4 x 960 padded columns into its 3584-wide buffer."""
    mesh = open_mesh((2, 4))
    values = rng.standard_normal((2, 4, 32, 96)).astype(np.float32)
    values = torch.from_numpy(values).bfloat16().float().numpy()
    x = place(mesh, values, ttnn.TILE_LAYOUT, ttnn.DRAM_MEMORY_CONFIG)
    buffer = place(mesh, np.zeros((2, 4, 32, 320), np.float32), ttnn.TILE_LAYOUT, ttnn.DRAM_MEMORY_CONFIG)
    sems = [ttnn.create_global_semaphore(mesh, ttnn.CoreRangeSet([ttnn.CoreRange(C(0, 0), C(1, 1))]), 0)] * 2
    before = mesh.num_program_cache_entries()
    got = ttnn.experimental.all_gather_async(
        x, 3, cluster_axis=1, mesh_device=mesh, topology=ttnn.Topology.Linear, multi_device_global_semaphore=sems,
        persistent_output_tensor=buffer,
    )  # fmt: skip
    assert got is buffer and mesh.num_program_cache_entries() - before == 1
    for index, device in enumerate(ttnn.get_device_tensors(got)):
        row = index // 4
        whole = np.concatenate(list(values[row]), axis=-1)  # (32, 384): the row's four shards
        np.testing.assert_array_equal(ttnn.to_torch(device).float().numpy().reshape(32, 320), whole[:, :320])
    wrong = place(mesh, np.zeros((2, 4, 64, 320), np.float32), ttnn.TILE_LAYOUT, ttnn.DRAM_MEMORY_CONFIG)
    with pytest.raises(ttnn.MeshnnValueError, match="dimension 2 should be 32"):
        ttnn.experimental.all_gather_async(
            x, 3, cluster_axis=1, mesh_device=mesh, topology=ttnn.Topology.Linear,
            multi_device_global_semaphore=sems, persistent_output_tensor=wrong,
        )  # fmt: skip
