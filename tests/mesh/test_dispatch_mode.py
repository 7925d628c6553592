"""tt-metal 2026's dispatch-mode calls: asynchronous slow dispatch is a flag of a Slow Dispatch
queue (refused in Fast Dispatch); a manual Fast Dispatch session needs Slow Dispatch, one session at
a time and a Galaxy or Blackhole cluster, and restores the asynchronous flag when it ends."""

from __future__ import annotations

import pytest

import meshnn as ttnn
from meshnn.mesh import dispatch_mode


@pytest.fixture
def slow(monkeypatch):
    monkeypatch.setenv("TT_METAL_SLOW_DISPATCH_MODE", "1")


def test_fast_dispatch_refuses_the_slow_dispatch_switches(open_mesh, monkeypatch):
    monkeypatch.delenv("TT_METAL_SLOW_DISPATCH_MODE", raising=False)
    mesh = open_mesh((1, 1))
    with pytest.raises(ttnn.MeshnnError, match="Fast Dispatch is disabled"):
        ttnn.enable_asynchronous_slow_dispatch(mesh)
    with pytest.raises(ttnn.MeshnnError, match="Fast Dispatch queue"):
        dispatch_mode.is_asynchronous_slow_dispatch_enabled(mesh)
    with pytest.raises(ttnn.MeshnnError, match="Slow Dispatch mode"):
        dispatch_mode.initialize_fast_dispatch(mesh)


def test_the_asynchronous_flag_is_per_mesh_and_survives_a_fast_dispatch_session(open_mesh, slow):
    mesh, other = open_mesh((8, 4)), open_mesh((1, 1), system="galaxy")
    assert not dispatch_mode.is_asynchronous_slow_dispatch_enabled(mesh)
    ttnn.enable_asynchronous_slow_dispatch(mesh)
    assert dispatch_mode.is_asynchronous_slow_dispatch_enabled(mesh)
    assert not dispatch_mode.is_asynchronous_slow_dispatch_enabled(other)
    with dispatch_mode.setup_fast_dispatch(mesh):
        with pytest.raises(ttnn.MeshnnError, match="Fast Dispatch queue"):
            dispatch_mode.is_asynchronous_slow_dispatch_enabled(mesh)
        with pytest.raises(ttnn.MeshnnError, match="already manually initialized"):
            dispatch_mode.initialize_fast_dispatch(other)
    assert dispatch_mode.is_asynchronous_slow_dispatch_enabled(mesh)
    ttnn.disable_asynchronous_slow_dispatch(mesh)
    assert not dispatch_mode.is_asynchronous_slow_dispatch_enabled(mesh)


def test_a_session_ends_even_when_its_block_raises(open_mesh, slow):
    mesh = open_mesh((1, 1), system="p150")
    with pytest.raises(KeyError), dispatch_mode.setup_fast_dispatch(mesh):
        raise KeyError("in the block")
    with dispatch_mode.setup_fast_dispatch(mesh):  # the first session ended: a second may start
        pass
    with pytest.raises(ttnn.MeshnnError, match="after initializing it"):
        dispatch_mode.terminate_fast_dispatch(mesh)


def test_only_galaxy_and_blackhole_clusters_take_a_manual_session(open_mesh, slow):
    mesh = open_mesh((2, 4))  # a T3000
    with pytest.raises(ttnn.MeshnnError, match="only supported on Galaxy and Blackhole"):
        dispatch_mode.initialize_fast_dispatch(mesh)
    with pytest.raises(ttnn.MeshnnError, match="after initializing it"):
        dispatch_mode.terminate_fast_dispatch(mesh)


def test_ttnn_device_names_them(open_mesh):
    from meshnn.compat import ttnn_device

    assert ttnn_device.setup_fast_dispatch is dispatch_mode.setup_fast_dispatch
    assert ttnn_device.enable_asynchronous_slow_dispatch is ttnn.enable_asynchronous_slow_dispatch
    assert ttnn_device.IsProgramRealtimeProfilerActive() is False
    handle = ttnn_device.RegisterProgramRealtimeProfilerCallback(lambda record: None)
    assert isinstance(handle, int) and handle >= 1
    ttnn_device.UnregisterProgramRealtimeProfilerCallback(handle)
    ttnn_device.UnregisterProgramRealtimeProfilerCallback(handle)  # an unknown handle is ignored
    with pytest.raises(TypeError, match="callable"):
        ttnn_device.RegisterProgramRealtimeProfilerCallback(3)
