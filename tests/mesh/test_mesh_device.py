"""MeshDevice: opening, queries, submeshes, reshape, closing (test_multi_device.py cases)."""

from __future__ import annotations

import pytest

from meshnn.device.arch import Arch
from meshnn.device.buffer import BufferType
from meshnn.device.core import CoreCoord
from meshnn.errors import DeviceClosedError, MeshnnError
from meshnn.mesh import (
    DeviceLocalBufferConfig,
    MeshBuffer,
    MeshCoordinate,
    MeshShape,
    ReplicatedBufferConfig,
    close_mesh_device,
    open_mesh_device,
)


def test_open_close_and_reopen():
    """test_mesh_device_open_close_explicit / test_multi_device_subset_mesh."""
    for shape in [(2, 2), (1, 2)]:
        mesh = open_mesh_device(MeshShape(*shape), system="t3k")
        assert mesh.get_num_devices() == shape[0] * shape[1]
        close_mesh_device(mesh)
        assert not mesh.is_open()
        with pytest.raises(DeviceClosedError, match="closed"):
            mesh.mesh_command_queue()
    with open_mesh_device(MeshShape(1, 2), system="t3k") as mesh:
        assert mesh.is_open()
    assert not mesh.is_open()


@pytest.mark.parametrize(("shape", "count"), [((1, 4), 4), ((8, 1), 8), ((8, 4), 32), ((3, 2), 6)])
def test_galaxy_meshes(shape, count):
    """test_multi_device_open_close_galaxy_mesh."""
    with open_mesh_device(MeshShape(*shape), system="galaxy") as mesh:
        assert mesh.get_num_devices() == count and len(mesh.get_devices()) == count
        assert mesh.get_device_ids() == list(range(count))
        assert mesh.compute_with_storage_grid_size() == CoreCoord(8, 9)
        assert mesh.get_memory_view(BufferType.L1).num_banks == 72


def test_queries():
    with open_mesh_device(system="t3k") as mesh:
        assert mesh.shape == MeshShape(2, 4) and (mesh.num_rows, mesh.num_cols) == (2, 4)
        assert mesh.arch() is Arch.WORMHOLE_B0 and str(mesh.arch()) == "Arch.WORMHOLE_B0"
        assert mesh.dram_grid_size() == CoreCoord(12, 1)
        assert (mesh.core_grid.x, mesh.core_grid.y) == (8, 8)
        assert mesh.get_device_id(MeshCoordinate(1, 2)) == 6
        assert mesh.get_device(MeshCoordinate(1, 2)).coord == MeshCoordinate(1, 2)
        assert mesh.local_coords() == list(mesh.shape.coords())
    with open_mesh_device(MeshShape(1, 1), system="p150") as mesh:
        assert mesh.arch() is Arch.BLACKHOLE and mesh.dram_grid_size() == CoreCoord(8, 1)


def test_local_coordinates_and_rows():
    """is_local / local_row: a device's coordinate (or its tuple) answers at once, row-major; one
    outside the mesh, or of another rank, still raises."""
    with open_mesh_device(system="t3k") as mesh:
        assert [mesh.local_row(c) for c in mesh.shape.coords()] == list(range(8))
        assert mesh.is_local(MeshCoordinate(1, 3)) and mesh.is_local((0, 2))
        for outside in (MeshCoordinate(2, 0), MeshCoordinate(0, 4)):
            with pytest.raises(MeshnnError, match="out of bounds"):
                mesh.is_local(outside)
            with pytest.raises(MeshnnError, match="out of bounds"):
                mesh.local_row(outside)
        with pytest.raises(MeshnnError, match="dimensions do not match"):
            mesh.is_local(MeshCoordinate(0, 0, 1))


def test_submeshes_share_the_parents_allocator_and_close_first():
    mesh = open_mesh_device(MeshShape(2, 4), system="t3k")
    left, right = mesh.create_submeshes(MeshShape(2, 2))
    assert left.get_device_ids() == [0, 1, 4, 5] and right.get_device_ids() == [2, 3, 6, 7]
    config = DeviceLocalBufferConfig(4096)
    a = MeshBuffer.create(ReplicatedBufferConfig(4096), config, left)
    b = MeshBuffer.create(ReplicatedBufferConfig(4096), config, right)
    c = MeshBuffer.create(ReplicatedBufferConfig(4096), config, mesh)
    assert len({a.address(), b.address(), c.address()}) == 3  # never the same memory
    row = mesh.create_submesh(MeshShape(1, 4), MeshCoordinate(1, 0))
    assert row.get_device_ids() == [4, 5, 6, 7]
    with pytest.raises(MeshnnError, match="does not fit"):
        mesh.create_submesh(MeshShape(2, 2), MeshCoordinate(1, 3))
    with pytest.raises(MeshnnError, match="not divisible"):
        mesh.create_submeshes(MeshShape(2, 3))
    mesh.close()
    assert not left.is_open() and not a.is_allocated() and not b.is_allocated() and not c.is_allocated()


def test_reshape_keeps_the_devices_and_needs_no_live_buffers():
    mesh = open_mesh_device(MeshShape(2, 4), system="t3k")
    mesh.reshape(MeshShape(1, 8))
    assert mesh.shape == MeshShape(1, 8) and mesh.get_device_ids() == list(range(8))
    buffer = MeshBuffer.create(ReplicatedBufferConfig(4096), DeviceLocalBufferConfig(4096), mesh)
    with pytest.raises(MeshnnError, match="no live buffers"):
        mesh.reshape(MeshShape(2, 4))
    with pytest.raises(MeshnnError, match="sizes differ"):
        mesh.reshape(MeshShape(2, 2))
    buffer.deallocate()
    mesh.reshape(MeshShape(8, 1))
    assert mesh.num_rows == 8
    mesh.close()


def test_bad_open_arguments():
    with pytest.raises(MeshnnError, match="no devices"):
        open_mesh_device(MeshShape(0, 2))
    with pytest.raises(MeshnnError, match="num_command_queues"):
        open_mesh_device(MeshShape(1, 1), num_command_queues=3, system="n150")
    with pytest.raises(MeshnnError, match="l1_small_size"):
        open_mesh_device(MeshShape(1, 1), l1_small_size=-1, system="n150")
    with pytest.raises(TypeError):
        open_mesh_device(8)
