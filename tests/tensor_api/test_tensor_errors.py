"""Misuse of tensors fails at once, with a meshnn error that says what and where; deallocation frees
the address on every device.

- a deallocated tensor names its shape and the ``file:line`` where it was deallocated;
- a tensor of a closed mesh says so; a tensor of one mesh cannot go to another (WrongMeshError);
- ``to_torch`` of a multi-shard tensor needs a composer (ttnn's message), a 1x1 mesh tensor does not;
- bad mapper arguments are refused before anything is allocated;
- ``ttnn.deallocate`` frees the MeshBuffer on every device (``force=False`` keeps one another live
  view uses), a device tensor nothing refers to frees its MeshBuffer, and deallocating a host
  tensor does nothing.
Every error is a :class:`ttnn.MeshnnError`, so also a ``RuntimeError``, as ttnn's TT_FATALs are.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest
import torch

import meshnn as ttnn

DRAM_BASE = 1_048_640  # Wormhole DRAM allocator base (golden allocator.json); block tables are relative to it
SHAPE = (1, 1, 32, 64)


def dram_state(mesh: ttnn.MeshDevice) -> list[dict]:
    """Every device's DRAM and L1 memory view, block tables included, and the live buffer count."""
    views = [
        ttnn.get_memory_view(mesh, buffer_type).as_dict() | {"coord": repr(c)}
        for c in mesh.shape.coords()
        for buffer_type in (ttnn.BufferType.DRAM, ttnn.BufferType.L1)
    ]
    return [*views, {"live_buffers": len(mesh.live_buffers())}]


def allocated_at(mesh: ttnn.MeshDevice, coord: ttnn.MeshCoordinate, address: int) -> bool:
    view = mesh.get_memory_view(ttnn.BufferType.DRAM, coord)
    return any(int(b["address"]) + DRAM_BASE == address and b["allocated"] == "yes" for b in view.block_table)


def device_tensor(mesh: ttnn.MeshDevice) -> ttnn.Tensor:
    values = torch.arange(np.prod(SHAPE), dtype=torch.float32).reshape(SHAPE)
    return ttnn.from_torch(values, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT, device=mesh)


def here() -> str:
    """``file:line`` of the caller's next line."""
    frame = inspect.currentframe().f_back
    return f"{frame.f_code.co_filename}:{frame.f_lineno + 1}"


USES = {
    "to_torch": lambda t, mesh: ttnn.to_torch(t),
    "Tensor.to_torch": lambda t, mesh: t.to_torch(),
    "to_numpy": lambda t, mesh: ttnn.to_numpy(t),
    "from_device": lambda t, mesh: ttnn.from_device(t),
    "cpu": lambda t, mesh: t.cpu(),
    "to_device": lambda t, mesh: ttnn.to_device(t, mesh),
    "buffer_address": lambda t, mesh: t.buffer_address(),
    "mesh_buffer": lambda t, mesh: t.mesh_buffer(),
    "get_device_tensors": lambda t, mesh: ttnn.get_device_tensors(t),
    "reshape": lambda t, mesh: ttnn.reshape(t, (1, 32, 64)),
    "typecast": lambda t, mesh: ttnn.typecast(t, ttnn.bfloat16),
    "to_layout": lambda t, mesh: ttnn.to_layout(t, ttnn.ROW_MAJOR_LAYOUT),
    "copy_device_to_host_tensor": lambda t, mesh: ttnn.copy_device_to_host_tensor(
        t, ttnn.allocate_tensor_on_host(t.spec, mesh)
    ),
}


@pytest.mark.parametrize("use", list(USES))
@pytest.mark.parametrize("how", ["ttnn.deallocate", "Tensor.deallocate", "through a view"])
def test_a_deallocated_tensor_names_its_shape_and_where_it_was_deallocated(open_mesh, use, how):
    mesh = open_mesh((2, 4))
    tensor = device_tensor(mesh)
    if how == "ttnn.deallocate":
        where = here()
        ttnn.deallocate(tensor)
    elif how == "Tensor.deallocate":
        where = here()
        tensor.deallocate()
    else:  # force=True (ttnn's default) frees the MeshBuffer every view shares (tt-metal #31145)
        view = ttnn.get_device_tensors(tensor)[3]
        where = here()
        ttnn.deallocate(view)
    assert not tensor.is_allocated()
    with pytest.raises(ttnn.DeallocatedError) as caught:
        USES[use](tensor, mesh)
    message = str(caught.value)
    assert "[1, 1, 32, 64]" in message and f"deallocated at {where}" in message
    assert isinstance(caught.value, RuntimeError)


@pytest.mark.parametrize("use", [u for u in USES if u != "copy_device_to_host_tensor"])
def test_a_tensor_of_a_closed_mesh_says_its_mesh_was_closed(open_mesh, use):
    mesh = open_mesh((1, 2))
    tensor = device_tensor(mesh)
    ttnn.close_mesh_device(mesh)
    assert not tensor.is_allocated()
    with pytest.raises(ttnn.DeviceClosedError, match=r"\[1, 1, 32, 64\].*closed"):
        USES[use](tensor, mesh)


def test_writing_to_a_closed_mesh_is_refused(open_mesh):
    mesh = open_mesh((1, 2))
    ttnn.close_mesh_device(mesh)
    host = ttnn.Tensor(np.zeros((4, 4), np.float32), ttnn.float32)
    with pytest.raises(ttnn.DeviceClosedError, match="closed"):
        ttnn.to_device(host, mesh)
    with pytest.raises(ttnn.DeviceClosedError, match="closed"):
        ttnn.allocate_tensor_on_device(host.spec, mesh)


def test_a_tensor_of_one_mesh_cannot_go_to_another(open_mesh):
    first, second = open_mesh((1, 2)), open_mesh((1, 2))
    tensor = device_tensor(first)
    before = dram_state(second)
    with pytest.raises(ttnn.WrongMeshError, match=r"\[1, 1, 32, 64\]") as caught:
        ttnn.to_device(tensor, second)
    assert isinstance(caught.value, ValueError) and isinstance(caught.value, ttnn.MeshnnError)
    assert dram_state(second) == before
    assert ttnn.to_device(tensor, first) is tensor  # its own mesh: already there


def no_composer_message(distribution: str) -> str:
    return (
        f"Can't convert a tensor distributed on {distribution} mesh to row-major logical tensor. "
        "Supply a mesh composer to concatenate multi-device shards."
    )


def test_to_torch_needs_a_composer_unless_every_multi_device_axis_is_a_shard(open_mesh):
    mesh = open_mesh((2, 4))
    values = torch.arange(8 * 4, dtype=torch.float32).reshape(8, 4)
    config = ttnn.MeshMapperConfig([ttnn.PlacementReplicate(), ttnn.PlacementShard(0)], ttnn.MeshShape(1, 4))
    host = ttnn.from_torch(
        values, dtype=ttnn.float32, mesh_mapper=ttnn.create_mesh_mapper(ttnn.MeshShape(1, 4), config)
    )
    replicated = ttnn.to_device(ttnn.Tensor(values.numpy(), ttnn.float32), mesh)  # a plain host tensor: replicated
    replicated_1d = ttnn.from_torch(
        values, dtype=ttnn.float32, device=mesh, mesh_mapper=ttnn.ReplicateTensorToMesh(mesh)
    )
    for tensor, distribution in (
        (replicated, "MeshShape([2, 4])"),
        (replicated_1d, "MeshShape([8])"),
    ):
        for convert in (ttnn.to_torch, lambda t: t.to_torch(), ttnn.to_numpy, lambda t: t.to_list()):
            with pytest.raises(ttnn.MeshnnError) as caught:
                convert(tensor)
            assert str(caught.value) == no_composer_message(distribution)
    composed = ttnn.to_torch(
        host, mesh_composer=ttnn.create_mesh_composer(ttnn.MeshShape(1, 4), ttnn.MeshComposerConfig([1, 0]))
    )
    assert torch.equal(composed, values)
    # Its only multi-device axis is a Shard: the topology gives the composer (tt-metal PR #53481).
    assert torch.equal(ttnn.to_torch(host), values) and torch.equal(host.to_torch(), values)


def test_a_1x1_mesh_tensor_needs_no_composer(open_mesh):
    """tt-metal #31136: Tensor.to_torch() of a 1x1 mesh tensor works as ttnn.to_torch does."""
    mesh = open_mesh((1, 1))
    tensor = device_tensor(mesh)
    expected = torch.arange(np.prod(SHAPE), dtype=torch.float32).reshape(SHAPE)
    assert torch.equal(ttnn.to_torch(tensor), expected) and torch.equal(tensor.to_torch(), expected)
    assert torch.equal(ttnn.to_torch(ttnn.from_device(tensor)), expected)


BAD_MAPPERS = {
    "wrong placements count": (
        lambda mesh: ttnn.create_mesh_mapper(mesh, ttnn.MeshMapperConfig([ttnn.PlacementShard(0)])),
        "does not match the number of placements",
    ),
    "duplicate dims": (
        lambda mesh: ttnn.create_mesh_mapper(
            mesh, ttnn.MeshMapperConfig([ttnn.PlacementShard(1), ttnn.PlacementShard(1)])
        ),
        "dims must be unique",
    ),
    "dim out of range": (
        lambda mesh: ttnn.create_mesh_mapper(
            mesh, ttnn.MeshMapperConfig([ttnn.PlacementShard(4), ttnn.PlacementReplicate()])
        ),
        "Invalid dimension index 4",
    ),
    "negative dim out of range": (lambda mesh: ttnn.ShardTensorToMesh(mesh, dim=-5), "Invalid dimension index -5"),
    "mesh_shape_override too large": (
        lambda mesh: ttnn.create_mesh_mapper(
            mesh, ttnn.MeshMapperConfig([ttnn.PlacementShard(0), ttnn.PlacementShard(1)], ttnn.MeshShape(3, 4))
        ),
        "more devices than the mesh",
    ),
    "2-D mapper larger than the mesh": (
        lambda mesh: ttnn.ShardTensor2dMesh(mesh, mesh_shape=(4, 4), dims=(0, 1)),
        "exceeds the mesh",
    ),
    "offset outside the mesh": (
        lambda mesh: ttnn.create_mesh_mapper(
            mesh,
            ttnn.MeshMapperConfig(
                [ttnn.PlacementReplicate(), ttnn.PlacementShard(1)], ttnn.MeshShape(2, 2), ttnn.MeshCoordinate(0, 3)
            ),
        ),
        "does not fit",
    ),
    "uneven chunks": (lambda mesh: ttnn.ShardTensorToMesh(mesh, dim=0), "Shard shape mismatch"),
}


@pytest.mark.parametrize("case", list(BAD_MAPPERS))
def test_bad_mapper_arguments_are_refused_before_anything_is_allocated(open_mesh, case):
    mesh = open_mesh((2, 4))
    keep = device_tensor(mesh)  # something live, so "unchanged" is not just "empty"
    before = dram_state(mesh)
    make_mapper, message = BAD_MAPPERS[case]
    values = torch.zeros(9, 4, 4, 8)  # dim 0: torch.chunk over 8 gives 2, 2, 2, 2, 1
    with pytest.raises(ttnn.MeshnnError, match=message) as caught:
        ttnn.from_torch(
            values, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh, mesh_mapper=make_mapper(mesh)
        )
    assert isinstance(caught.value, ValueError)
    assert dram_state(mesh) == before and keep.is_allocated()


@pytest.mark.parametrize("shape", [(1, 1), (2, 4), (8, 4)], ids=["1x1", "2x4", "8x4"])
def test_deallocate_frees_the_address_on_every_device(open_mesh, shape):
    mesh = open_mesh(shape)
    before = dram_state(mesh)
    tensor = ttnn.from_torch(
        torch.ones(8, 32 * mesh.get_num_devices()), device=mesh, mesh_mapper=ttnn.ShardTensorToMesh(mesh, 1)
    )
    address = tensor.buffer_address()
    assert all(allocated_at(mesh, c, address) for c in mesh.shape.coords())
    ttnn.deallocate(tensor)
    assert not tensor.is_allocated()
    assert not any(allocated_at(mesh, c, address) for c in mesh.shape.coords())
    assert dram_state(mesh) == before
    ttnn.deallocate(tensor)  # safe to repeat
    assert dram_state(mesh) == before
    assert device_tensor(mesh).buffer_address() == address  # and the address is reused


def test_deallocate_without_force_keeps_a_buffer_another_view_uses(open_mesh):
    mesh = open_mesh((2, 4))
    tensor = device_tensor(mesh)
    address = tensor.buffer_address()
    view = ttnn.reshape(tensor, (1, 32, 64))
    assert view.buffer_address() == address
    ttnn.deallocate(view, force=False)
    assert tensor.is_allocated() and view.is_allocated()
    assert torch.equal(
        ttnn.to_torch(ttnn.get_device_tensors(view)[0]).reshape(SHAPE),
        ttnn.to_torch(ttnn.get_device_tensors(tensor)[5]),
    )
    del tensor  # now the view is the only tensor left on the buffer
    ttnn.deallocate(view, force=False)
    assert not view.is_allocated()
    assert not any(allocated_at(mesh, c, address) for c in mesh.shape.coords())


def test_a_device_tensor_nothing_refers_to_frees_its_mesh_buffer(open_mesh):
    mesh = open_mesh((2, 4))
    before = dram_state(mesh)
    tensor = device_tensor(mesh)
    shards = ttnn.get_device_tensors(tensor)
    address = tensor.buffer_address()
    del tensor
    assert allocated_at(mesh, ttnn.MeshCoordinate(1, 3), address)  # the shards still view it
    del shards
    assert dram_state(mesh) == before
    assert mesh.live_buffers() == []


def test_deallocating_a_host_tensor_does_nothing():
    values = np.arange(12, dtype=np.float32).reshape(3, 4)
    host = ttnn.Tensor(values, ttnn.float32)
    ttnn.deallocate(host)
    host.deallocate(force=False)
    assert host.is_allocated() and host.storage_type() is ttnn.StorageType.HOST
    np.testing.assert_array_equal(host.to_numpy(), values)


def test_deallocate_and_friends_refuse_what_is_not_a_tensor():
    for call in (
        lambda: ttnn.deallocate(np.zeros(3)),
        lambda: ttnn.to_torch("tensor"),
        lambda: ttnn.get_device_tensors([1, 2]),
    ):
        with pytest.raises(ttnn.MeshnnError) as caught:
            call()
        assert isinstance(caught.value, TypeError)
