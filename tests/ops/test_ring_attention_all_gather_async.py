"""``ttnn.experimental.ring_attention_all_gather_async`` (issue 30; ring attention's K and V
gather): each input gathered along the sequence over ``cluster_axis``, exactly, but for each
device's own slice, which the op leaves unwritten as tt-metal's kernels do (a persistent output
keeps its old values there, a fresh one zeros); a list is one program; tt-metal's checks refuse
bad calls before anything is written; the perf model times it as an all-gather."""

from __future__ import annotations

import pytest
import torch

import meshnn as ttnn

from .test_strided_all_gather_async import BF16, BFP8, TILE, sems

OP = ttnn.experimental.ring_attention_all_gather_async
CASES = [((1, 2), 1), ((1, 8), 1), ((2, 4), 1), ((2, 4), 0), ((8, 4), 0)]
IDS = ["1x2", "1x8", "2x4-rows", "2x4-cols", "8x4-cols"]


def heads(mesh, full, axis, dtype=BF16):
    """``full`` [1, H, S, D]: the sequence split over ``axis``, the heads over the other axis."""
    dims = [None, None]
    dims[axis], dims[1 - axis] = 2, 1
    mapper = ttnn.ShardTensor2dMesh(mesh, dims=dims, mesh_shape=tuple(mesh.shape))
    return ttnn.from_torch(full, dtype=dtype, layout=TILE, device=mesh, mesh_mapper=mapper)


def buffers(mesh, full, axis, fill, dtype=BF16):
    """Persistent outputs [1, H / other, S, D] holding ``fill``."""
    dims = [None, None]
    dims[1 - axis] = 1
    mapper = ttnn.ShardTensor2dMesh(mesh, dims=dims, mesh_shape=tuple(mesh.shape))
    return ttnn.from_torch(torch.full(full.shape, fill), dtype=dtype, layout=TILE, device=mesh, mesh_mapper=mapper)


def check(mesh, out, full, axis, local):
    """Each device: its heads' whole sequence, but its own slice ``local`` (the old value there)."""
    ring, other = mesh.shape[axis], mesh.shape[1 - axis]
    chunks = torch.chunk(full.float(), other, dim=1)
    width = full.shape[2] // ring
    for index, device in enumerate(ttnn.get_device_tensors(out)):
        r, c = divmod(index, mesh.shape[1])
        member, group = (c, r) if axis == 1 else (r, c)
        want = chunks[group].clone()
        want[:, :, member * width : (member + 1) * width] = local
        assert torch.equal(ttnn.to_torch(device).float(), want)


@pytest.mark.parametrize(("shape", "axis"), CASES, ids=IDS)
def test_every_slice_but_the_devices_own_is_gathered_exactly(open_mesh, shape, axis):
    mesh = open_mesh(shape)
    full = [torch.randn(1, 2 * mesh.shape[1 - axis], 64 * mesh.shape[axis], 64).bfloat16() for _ in range(2)]
    inputs = [heads(mesh, f, axis) for f in full]
    outs = OP(inputs, [buffers(mesh, f, axis, 7.0) for f in full], 2, multi_device_global_semaphore=sems(mesh),
              cluster_axis=axis, mesh_device=mesh, topology=ttnn.Topology.Linear)  # fmt: skip
    for out, f in zip(outs, full, strict=True):
        check(mesh, out, f, axis, 7.0)
    fresh = OP(inputs, [], 2, multi_device_global_semaphore=sems(mesh), cluster_axis=axis, mesh_device=mesh,
               topology=ttnn.Topology.Ring)  # fmt: skip
    for out, f in zip(fresh, full, strict=True):
        check(mesh, out, f, axis, 0.0)


@pytest.mark.parametrize("dtype", [BF16, BFP8], ids=["bfloat16", "bfloat8_b"])
def test_slices_of_part_of_a_tile_are_gathered_by_values(open_mesh, dtype):
    mesh = open_mesh((1, 2))
    full = torch.randn(1, 2, 96, 64).bfloat16()  # 48 rows a device: not whole tiles
    x = heads(mesh, full, 1, dtype)
    rounded = ttnn.to_torch(ttnn.get_device_tensors(ttnn.all_gather(x, 2, cluster_axis=1))[0])
    (out,) = OP([x], [buffers(mesh, full, 1, 5.0, dtype)], 2, multi_device_global_semaphore=sems(mesh),
                cluster_axis=1, mesh_device=mesh, topology=ttnn.Topology.Linear)  # fmt: skip
    check(mesh, out, rounded, 1, 5.0)


def test_block_floats_keep_their_values_and_a_list_is_one_program(open_mesh):
    mesh = open_mesh((1, 8))
    full = [torch.randn(1, 2 * (i + 1), 256, 64) for i in range(3)]  # three specs
    inputs = [heads(mesh, f, 1, BFP8) for f in full]
    outputs, s = [buffers(mesh, f, 1, 0.0, BFP8) for f in full], sems(mesh)
    before = mesh.num_program_cache_entries()
    outs = OP(inputs, outputs, 2, multi_device_global_semaphore=s, cluster_axis=1, mesh_device=mesh,
              topology=ttnn.Topology.Ring)  # fmt: skip
    assert mesh.num_program_cache_entries() == before + 1  # one program for the three inputs
    for out, t in zip(outs, inputs, strict=True):
        assert out.dtype == BFP8
        rounded = ttnn.to_torch(ttnn.experimental.all_gather_async(t, None, 2, sems(mesh), cluster_axis=1)
                                .cpu(), mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0))  # fmt: skip
        check(mesh, out, rounded[:1], 1, 0.0)


def _call(mesh, inputs, outputs=None, **kwargs):
    options = dict(multi_device_global_semaphore=sems(mesh), cluster_axis=1, mesh_device=mesh,
                   topology=ttnn.Topology.Linear)  # fmt: skip
    return OP(inputs, [] if outputs is None else outputs, 2, **{**options, **kwargs})


def test_tt_metals_checks_refuse_bad_calls_before_anything_is_written(open_mesh):
    mesh = open_mesh((1, 8))
    full = torch.randn(1, 2, 256, 64)
    x, buffer = heads(mesh, full, 1), buffers(mesh, full, 1, 3.0)
    before = ttnn.to_torch(ttnn.get_device_tensors(buffer)[0])
    with pytest.raises(ValueError, match="greater than 0"):
        _call(mesh, [])
    with pytest.raises(TypeError, match="list"):
        _call(mesh, x)
    rm = ttnn.from_torch(full, dtype=BF16, layout=ttnn.ROW_MAJOR_LAYOUT, device=mesh,
                         mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=2))  # fmt: skip
    with pytest.raises(ValueError, match="tiled"):
        _call(mesh, [x, rm], [buffer, buffer])
    with pytest.raises(ValueError, match="same dtype"):
        _call(mesh, [x, heads(mesh, full, 1, BFP8)], [buffer, buffer])
    with pytest.raises(ValueError, match="Number of output tensors"):
        _call(mesh, [x, x], [buffer])
    short = buffers(mesh, torch.zeros(1, 2, 128, 64), 1, 0.0)
    with pytest.raises(ValueError, match="too small"):
        _call(mesh, [x], [short])
    with pytest.raises(ttnn.NotImplementedByMeshnn, match="wider"):
        _call(mesh, [x], [buffers(mesh, torch.zeros(1, 2, 512, 64), 1, 0.0)])
    with pytest.raises(ValueError, match="num_links"):
        _call(mesh, [x], [buffer], num_links=0)
    with pytest.raises(ValueError, match="more than one device"):
        _call(mesh, [x], [buffer], cluster_axis=0)
    with pytest.raises(ValueError, match="2 semaphores"):
        _call(mesh, [x], [buffer], multi_device_global_semaphore=sems(mesh, 1))
    assert torch.equal(ttnn.to_torch(ttnn.get_device_tensors(buffer)[0]), before)


def test_the_perf_model_times_it_as_an_all_gather(open_mesh):
    mesh = open_mesh((2, 4))
    full = torch.randn(1, 4, 128, 64)
    with ttnn.perf_capture() as capture:
        _call(mesh, [heads(mesh, full, 1)])
    entries = [e for r in capture.recorders for e in r.records if e.desc.family is ttnn.perf.OpFamily.ALL_GATHER]
    assert entries and entries[0].desc.op_code == "RingAttentionAllGatherAsyncDeviceOperation"
    assert entries[0].prediction.link_bytes > 0 and entries[0].prediction.total_ns > 0
