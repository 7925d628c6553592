"""Planning meshes (``open_mesh_device(..., execute=False)``): the same tensors, addresses and checks
as an executing mesh, no bytes anywhere, shape-only weights, and reads refused with a reason."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
import torch

import meshnn as ttnn

TILE, BF16, BFP8 = ttnn.TILE_LAYOUT, ttnn.bfloat16, ttnn.bfloat8_b
DRAM = ttnn.BufferType.DRAM


def views(mesh):
    return [mesh.get_memory_view(t).as_dict() for t in (ttnn.BufferType.DRAM, ttnn.BufferType.L1)]


def place(mesh, values, dtype=BF16, dim=1):
    return ttnn.from_torch(values, dtype=dtype, layout=TILE, device=mesh, mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim))


@pytest.fixture
def planning():
    with ttnn.open_mesh_device(ttnn.MeshShape(2, 4), execute=False) as mesh:
        yield mesh


def test_reads_are_refused_and_say_why(planning):
    tensor = place(planning, torch.empty(64, 256, device="meta"))
    composer = ttnn.ConcatMeshToTensor(planning, dim=1)
    for read in (
        lambda: ttnn.to_torch(tensor, mesh_composer=composer),
        lambda: ttnn.to_numpy(ttnn.get_device_tensors(tensor)[0]),
        lambda: ttnn.from_device(tensor),
        lambda: tensor.mesh_buffer().get_device_buffer((0, 0)).data(),
    ):
        with pytest.raises(ttnn.PlanningError, match="execute=False") as caught:
            read()
        assert isinstance(caught.value, RuntimeError)
    queue = planning.mesh_command_queue(0)
    out = np.empty(tensor.mesh_buffer().device_local_size(), np.uint8)
    with pytest.raises(ttnn.PlanningError, match="cannot read a MeshBuffer"):
        queue.enqueue_read_shards([ttnn.ShardDataTransfer(ttnn.MeshCoordinate(0, 0), out)], tensor.mesh_buffer())


def test_writes_are_checked_then_dropped(planning):
    tensor = place(planning, torch.empty(64, 256, device="meta"))
    queue, buffer = planning.mesh_command_queue(0), tensor.mesh_buffer()
    too_small = np.zeros(8, np.uint8)
    with pytest.raises(ttnn.MeshnnValueError, match="the region needs"):
        queue.enqueue_write_shards(buffer, [ttnn.ShardDataTransfer(ttnn.MeshCoordinate(0, 0), too_small)], True)
    enough = np.zeros(buffer.device_local_size(), np.uint8)
    queue.enqueue_write_shards(buffer, [ttnn.ShardDataTransfer(ttnn.MeshCoordinate(0, 0), enough)], True)


def test_meta_tensors_plan_at_the_addresses_real_values_get():
    """The same weights as meta tensors on a planning mesh and as values on an executing one: the
    same specs, topologies and addresses, op outputs included."""
    got = []
    for execute in (True, False):
        with ttnn.open_mesh_device(ttnn.MeshShape(2, 4), execute=execute) as mesh:
            make = torch.randn if execute else (lambda *shape: torch.empty(*shape, device="meta"))
            w = place(mesh, make(256, 512), BFP8)
            x = ttnn.from_torch(make(1, 1, 64, 256), dtype=BF16, layout=TILE, device=mesh)
            y = ttnn.matmul(x, w)
            z = ttnn.reallocate(ttnn.gelu(y))
            got.append(
                [(t.spec, t.tensor_topology().placements, t.buffer_address()) for t in (w, x, y, z)] + views(mesh)
            )
    assert got[0] == got[1]


def test_a_meta_tensor_on_an_executing_mesh_is_refused_before_anything_is_allocated():
    with ttnn.open_mesh_device(ttnn.MeshShape(2, 4)) as mesh:
        before = views(mesh)
        with pytest.raises(ttnn.PlanningError, match="meta tensor"):
            place(mesh, torch.empty(64, 256, device="meta"))
        host = ttnn.from_torch(torch.empty(64, 256, device="meta"), dtype=BF16, layout=TILE)
        with pytest.raises(ttnn.PlanningError, match="shape-only stand-in"):
            ttnn.to_device(host, mesh)
        assert views(mesh) == before
        with pytest.raises(ttnn.PlanningError, match="no values"):
            ttnn.to_torch(host)


def test_a_host_tensor_of_a_meta_tensor_goes_to_a_planning_mesh(planning):
    host = ttnn.from_torch(torch.empty(2, 64, 128, device="meta", dtype=torch.bfloat16), layout=TILE)
    assert host.dtype is BF16 and list(host.shape) == [2, 64, 128]
    on_device = ttnn.to_device(host, planning)
    assert on_device.buffer_address() > 0 and len(on_device.devices()) == 8


def test_a_broadcast_numpy_stand_in_is_zeros_when_executed_and_free_when_planned(planning):
    """``np.broadcast_to(np.float32(0), shape)``: no memory for its elements, real zeros to a mesh."""
    stand_in = np.broadcast_to(np.float32(0), (64, 256))
    planned = ttnn.from_torch(stand_in, dtype=BF16, layout=TILE, device=planning)
    with ttnn.open_mesh_device(ttnn.MeshShape(2, 4)) as mesh:
        executed = ttnn.from_torch(stand_in, dtype=BF16, layout=TILE, device=mesh)
        assert executed.buffer_address() == planned.buffer_address()
        values = ttnn.to_numpy(ttnn.get_device_tensors(executed)[3]).astype(np.float32)
        assert values.shape == (64, 256) and not values.any()


def test_host_memory_does_not_grow_with_the_tensors():
    """80 GiB of weights (2.5 GiB per device on a Galaxy) and ops on them, planned in a few MiB."""
    with ttnn.open_mesh_device(ttnn.MeshShape(8, 4), system="galaxy", execute=False) as mesh:
        tracemalloc.start()
        try:
            weights = [place(mesh, torch.empty(8192, 327680, device="meta", dtype=torch.bfloat16)) for _ in range(16)]
            x = ttnn.zeros((1, 1, 128, 8192), BF16, TILE, mesh)
            outs = [ttnn.gelu(ttnn.matmul(x, w)) for w in weights]
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        allocated = mesh.get_memory_view(DRAM).total_bytes_allocated_per_bank * 12
        assert allocated > 2.5 * 2**30 and len(outs) == 16
        assert peak < 8 * 2**20, peak


def test_the_planning_default_and_its_checks():
    with ttnn.planning():
        with ttnn.open_mesh_device(ttnn.MeshShape(1, 2)) as planned:
            assert planned.executes is False and "planning" in repr(planned)
        with ttnn.open_mesh_device(ttnn.MeshShape(1, 2), execute=True) as executed:
            assert executed.executes is True
    with ttnn.open_mesh_device(ttnn.MeshShape(1, 2)) as after:
        assert after.executes is True
    with pytest.raises(ttnn.MeshnnTypeError, match="execute"):
        ttnn.open_mesh_device(ttnn.MeshShape(1, 2), execute="no")


def test_value_ops_need_no_values_to_plan(planning):
    """embedding's ids are not read (their range is the one check a plan cannot make); zeros and
    full make no host values."""
    ids = ttnn.from_torch(torch.empty(1, 32, dtype=torch.int32, device="meta"), dtype=ttnn.uint32, device=planning)
    table = ttnn.from_torch(torch.empty(1000, 256, device="meta"), dtype=BF16, device=planning)
    picked = ttnn.embedding(ids, table)
    assert list(picked.shape) == [1, 32, 256]
    full = ttnn.full((1, 1, 64, 64), 3.0, BF16, TILE, planning)
    assert full.is_allocated()


def test_as_tensor_of_a_meta_tensor_plans_and_writes_no_cache(planning, tmp_path):
    cache = tmp_path / "weight"
    planned = ttnn.as_tensor(
        torch.empty(64, 64, device="meta"), dtype=BF16, layout=TILE, device=planning, cache_file_name=str(cache)
    )
    assert planned.is_allocated() and list(tmp_path.iterdir()) == []
