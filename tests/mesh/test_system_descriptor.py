"""``ttnn._ttnn.multi_device.SystemMeshDescriptor``: the simulated system's mesh shape, this
process's part of it (all of it in one process; a rank's rows under MPI) and its row-major device
ids; a coordinate outside the system is refused."""

from __future__ import annotations

import pytest

import meshnn as ttnn
from meshnn.distributed import context
from meshnn.mesh.system_descriptor import SystemMeshDescriptor


@pytest.mark.parametrize(("system", "shape"), [("t3k", (2, 4)), ("galaxy", (8, 4)), ("n150", (1, 1))])
def test_one_process_holds_the_whole_system(monkeypatch, system, shape):
    monkeypatch.setenv("MESHNN_SYSTEM", system)
    descriptor = ttnn._ttnn.multi_device.SystemMeshDescriptor()
    assert descriptor.shape() == ttnn.MeshShape(*shape) == descriptor.local_shape()
    assert descriptor.all_local() and descriptor.shape().mesh_size() == shape[0] * shape[1]
    last = ttnn.MeshCoordinate(shape[0] - 1, shape[1] - 1)
    assert descriptor.is_local(last) and descriptor.get_device_id(last) == shape[0] * shape[1] - 1
    assert descriptor.get_device_id(ttnn.MeshCoordinate(0, shape[1] - 1)) == shape[1] - 1


def test_a_rank_holds_its_rows(monkeypatch):
    monkeypatch.setenv("MESHNN_SYSTEM", "galaxy")

    class TwoRanks:
        rank, world_size = 1, 2

    monkeypatch.setattr("meshnn.mesh.system_descriptor.get_context", lambda: TwoRanks())
    descriptor = SystemMeshDescriptor()
    assert descriptor.shape() == ttnn.MeshShape(8, 4) and descriptor.local_shape() == ttnn.MeshShape(4, 4)
    assert not descriptor.all_local()
    assert not descriptor.is_local(ttnn.MeshCoordinate(3, 0)) and descriptor.is_local(ttnn.MeshCoordinate(4, 0))
    assert descriptor.get_device_id(ttnn.MeshCoordinate(4, 1)) == 17
    with pytest.raises(ttnn.MeshnnError, match="remote"):
        descriptor.get_device_id(ttnn.MeshCoordinate(0, 0))
    assert context.get_context().world_size == 1  # (the process's own context is untouched)


def test_a_coordinate_outside_the_system_is_refused(monkeypatch):
    monkeypatch.setenv("MESHNN_SYSTEM", "t3k")
    descriptor = SystemMeshDescriptor()
    with pytest.raises(ValueError, match="outside the system mesh"):
        descriptor.get_device_id(ttnn.MeshCoordinate(2, 0))
    with pytest.raises(TypeError, match="coord"):
        descriptor.is_local(3)
