"""How a device is opened, configured and recorded: DispatchCoreConfig with ttnn's defaults and
checks, the settings a mesh keeps, the single-device entry points (1x1 meshes), create_mesh_device,
the box at an offset, overlapped submeshes, enable_async, ttnn-level events and meshnn.reports."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import meshnn as ttnn

ROW, COL = ttnn.DispatchCoreAxis.ROW, ttnn.DispatchCoreAxis.COL
WORKER, ETH = ttnn.DispatchCoreType.WORKER, ttnn.DispatchCoreType.ETH


@pytest.mark.parametrize(
    ("system", "default"),
    [
        ("n150", (WORKER, ROW)),
        ("n300", (ETH, ROW)),
        ("t3k", (ETH, ROW)),
        ("galaxy", (WORKER, ROW)),
        ("p150", (WORKER, COL)),
    ],
)
def test_dispatch_core_config_defaults_follow_the_system(monkeypatch, system, default):
    monkeypatch.setenv("MESHNN_SYSTEM", system)
    config = ttnn.DispatchCoreConfig()
    assert (config.type, config.axis) == default
    assert ttnn.DispatchCoreConfig(axis=COL).type is WORKER  # COL is only supported on WORKER cores
    assert ttnn.DispatchCoreConfig(WORKER).axis is default[1]


def test_dispatch_core_config_refuses_what_ttnn_refuses(monkeypatch):
    with pytest.raises(ValueError, match="COL axis is not supported for ETH dispatch core type"):
        ttnn.DispatchCoreConfig(ETH, COL)
    with pytest.raises(ttnn.MeshnnValueError, match=r"Invalid dispatch core type: 'ETH'\. Valid values are"):
        ttnn.DispatchCoreConfig("ETH")
    with pytest.raises(ttnn.MeshnnValueError, match="Invalid dispatch core axis: 1"):
        ttnn.DispatchCoreConfig(axis=1)
    monkeypatch.setenv("MESHNN_SYSTEM", "p150")
    with pytest.raises(ttnn.MeshnnValueError, match="ROW dispatch core axis is not supported for blackhole"):
        ttnn.DispatchCoreConfig(WORKER, ROW)
    assert ttnn.DispatchCoreConfig(WORKER, ROW, ttnn.FabricTensixConfig.MUX).axis is ROW
    assert ttnn.DispatchCoreConfig(WORKER, COL) == ttnn.DispatchCoreConfig(axis=COL)


def test_a_mesh_records_what_it_was_opened_with(open_mesh):
    ttnn.set_fabric_config(ttnn.FabricConfig.FABRIC_1D_RING, num_planes=2)
    try:
        config = ttnn.DispatchCoreConfig(WORKER, COL)
        mesh = open_mesh(
            (2, 4), l1_small_size=2048, trace_region_size=60000, num_command_queues=2, dispatch_core_config=config
        )
    finally:
        ttnn.set_fabric_config(ttnn.FabricConfig.DISABLED)
    assert mesh.settings == ttnn.DeviceSettings(
        2048, 60000, 2, config, 0, ttnn.FabricConfig.FABRIC_1D_RING, (("num_planes", 2),)
    )
    assert mesh.fabric_config is ttnn.FabricConfig.FABRIC_1D_RING  # the fabric in force when it opened
    sub = mesh.create_submesh(ttnn.MeshShape(1, 2))
    assert sub.settings is mesh.settings
    default = open_mesh((1, 2)).settings.dispatch_core_config
    assert (default.type, default.axis) == (ETH, ROW)  # the system's default, recorded
    with pytest.raises(ttnn.MeshnnValueError, match=r"dispatch_core_config must be a ttnn\.DispatchCoreConfig"):
        open_mesh((1, 2), dispatch_core_config="COL")


def test_mesh_type_is_checked_and_recorded(open_mesh):
    """tt-metal's 2025 ``open_mesh_device(..., mesh_type=ttnn.MeshType.Ring)``: recorded; the mesh
    is the same row-major mesh (its devices, coordinates and addresses do not depend on it)."""
    assert [m.name for m in ttnn.MeshType] == ["RowMajor", "Ring", "Line"]
    ring = open_mesh((1, 8), mesh_type=ttnn.MeshType.Ring)
    assert ring.settings.mesh_type is ttnn.MeshType.Ring
    plain = open_mesh((1, 8))
    assert plain.settings.mesh_type is ttnn.MeshType.RowMajor
    assert ring.get_device_ids() == plain.get_device_ids()
    with pytest.raises(ttnn.MeshnnTypeError, match=r"mesh_type must be a ttnn\.MeshType"):
        open_mesh((1, 2), mesh_type=1)


def test_a_wormhole_row_config_is_refused_on_a_blackhole_mesh(open_mesh):
    row = ttnn.DispatchCoreConfig(WORKER, ROW)  # made for the default (Wormhole) system
    with pytest.raises(ttnn.MeshnnValueError, match="ROW dispatch core axis is not supported for blackhole"):
        open_mesh((1, 1), system="p150", dispatch_core_config=row)
    assert open_mesh((1, 1), system="p150").settings.dispatch_core_config.axis is COL


def test_set_fabric_config_records_its_options_and_checks_them():
    try:
        relaxed = ttnn.FabricReliabilityMode.RELAXED_INIT
        ttnn.set_fabric_config(ttnn.FabricConfig.FABRIC_2D_TORUS_XY, relaxed, None, ttnn.FabricTensixConfig.MUX)
        assert ttnn.get_fabric_config() is ttnn.FabricConfig.FABRIC_2D_TORUS_XY
        assert ttnn.mesh.system.fabric_options() == (
            ("reliability_mode", relaxed),
            ("fabric_tensix_config", ttnn.FabricTensixConfig.MUX),
        )
        with pytest.raises(ttnn.MeshnnTypeError, match=r"reliability_mode must be a ttnn\.FabricReliabilityMode"):
            ttnn.set_fabric_config(ttnn.FabricConfig.FABRIC_2D, "strict")
        with pytest.raises(ttnn.MeshnnTypeError, match="fabric_manager_mode"):
            ttnn.set_fabric_config(ttnn.FabricConfig.FABRIC_2D, fabric_manager_mode=ttnn.FabricUDMMode.ENABLED)
        assert ttnn.get_fabric_config() is ttnn.FabricConfig.FABRIC_2D_TORUS_XY  # a refused call changes nothing
        with pytest.raises(ttnn.MeshnnTypeError, match="num_planes"):
            ttnn.set_fabric_config(ttnn.FabricConfig.FABRIC_2D, num_planes=0)
        with pytest.raises(TypeError):
            ttnn.set_fabric_config(ttnn.FabricConfig.FABRIC_2D, fabric_mode=1)  # a misspelt option
    finally:
        ttnn.set_fabric_config(ttnn.FabricConfig.DISABLED)
    assert ttnn.mesh.system.fabric_options() == ()


def test_an_offset_opens_the_box_of_the_system_there(open_mesh):
    box = open_mesh((2, 2), system="t3k", offset=ttnn.MeshCoordinate(0, 1))
    assert box.get_device_ids() == [1, 2, 5, 6]
    line = open_mesh((1, 4), system="t3k", offset=ttnn.MeshCoordinate(1, 0))
    assert line.get_device_ids() == [4, 5, 6, 7]
    assert open_mesh((2, 2), system="t3k").get_device_ids() == [0, 1, 2, 3]  # no offset: ids from 0
    with pytest.raises(ttnn.MeshnnValueError, match=r"offset \(1, 0\): a 2x2 mesh there does not fit"):
        open_mesh((2, 2), system="t3k", offset=ttnn.MeshCoordinate(1, 0))


@pytest.mark.parametrize(("system", "arch"), [("t3k", "wormhole_b0"), ("n150", "wormhole_b0"), ("p300", "blackhole")])
def test_get_arch_name_is_the_systems_arch(monkeypatch, system, arch):
    monkeypatch.setenv("MESHNN_SYSTEM", system)
    assert ttnn.get_arch_name() == arch


def test_open_device_is_one_chip_as_a_1x1_mesh_and_reuses_an_open_one(monkeypatch):
    monkeypatch.setenv("MESHNN_SYSTEM", "t3k")
    device = ttnn.open_device(device_id=5, l1_small_size=4096)
    try:
        assert isinstance(device, ttnn.Device) and device.shape == ttnn.MeshShape(1, 1)
        assert device.get_device_ids() == [5] and device.settings.l1_small_size == 4096
        assert ttnn.open_device(device_id=5) is device  # already open: the same device
        other = ttnn.open_device(device_id=6)
        assert other is not device and other.get_device_ids() == [6]
        ttnn.close_device(other)
    finally:
        ttnn.close_device(device)
    assert not device.is_open()
    again = ttnn.open_device(device_id=5)
    assert again is not device and again.is_open()
    ttnn.close_device(again)
    with pytest.raises(TypeError):
        ttnn.open_device(5)  # keyword-only, as ttnn's binding
    with pytest.raises(ttnn.MeshnnValueError, match="device_id 8 is not a device of the simulated system 't3k'"):
        ttnn.open_device(device_id=8)


def test_create_device_opens_a_new_unit_mesh_each_time():
    first = ttnn.CreateDevice(0, 2, 2048)
    second = ttnn.CreateDevice(device_id=0)
    try:
        assert first is not second and first.num_command_queues == 2 and first.settings.l1_small_size == 2048
        tensor = ttnn.from_torch(np.ones((32, 32), np.float32), device=first)
        assert ttnn.to_numpy(tensor).sum() == 1024
    finally:
        ttnn.CloseDevice(first)
        ttnn.CloseDevice(second)
    assert not first.is_open() and not second.is_open()
    devices = ttnn.CreateDevices([3, 1])
    assert sorted(devices) == [1, 3] and devices[3].get_device_ids() == [3]
    ttnn.CloseDevices(devices)
    assert not any(d.is_open() for d in devices.values())
    with pytest.raises(ttnn.MeshnnValueError, match=r"device_ids \[1, 1\] name a device twice"):
        ttnn.CreateDevices([1, 1])
    with pytest.raises(ttnn.MeshnnTypeError, match="device_id must be an int"):
        ttnn.CreateDevice("0")


def test_manage_device_closes_the_device_however_the_block_ends():
    with pytest.raises(RuntimeError, match="inside"), ttnn.manage_device(device_id=2) as device:
        assert device.get_device_ids() == [2]
        raise RuntimeError("inside")
    assert not device.is_open()


def test_create_mesh_device_is_open_mesh_device_closed_at_the_end():
    with ttnn.create_mesh_device(ttnn.MeshShape(2, 4), l1_small_size=1024) as mesh:
        assert mesh.shape == ttnn.MeshShape(2, 4) and mesh.settings.l1_small_size == 1024
        ttnn.from_torch(np.ones((8, 32), np.float32), device=mesh, mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0))
    assert not mesh.is_open() and mesh.live_buffers() == []
    with pytest.raises(ValueError, match="inside"), ttnn.create_mesh_device(ttnn.MeshShape(1, 2)) as mesh:
        raise ValueError("inside")
    assert not mesh.is_open()


def test_overlapped_submeshes_share_the_allocator_so_they_never_collide(open_mesh):
    mesh = open_mesh((2, 4))
    first, second, row = mesh.create_overlapped_submeshes(
        [
            ttnn.MeshCoordinateRange(ttnn.MeshShape(2, 2)),
            ttnn.MeshCoordinateRange(ttnn.MeshCoordinate(0, 1), ttnn.MeshCoordinate(1, 2)),
            ttnn.MeshCoordinateRange(ttnn.MeshShape(1, 4)),
        ]
    )
    assert (first.shape, second.shape, row.shape) == (ttnn.MeshShape(2, 2), ttnn.MeshShape(2, 2), ttnn.MeshShape(1, 4))
    assert first.get_device_ids() == [0, 1, 4, 5] and second.get_device_ids() == [1, 2, 5, 6]
    tensors = [ttnn.from_torch(np.ones((1, 1024), np.float32), device=sub) for sub in (first, second, row)]
    addresses = [t.buffer_address() for t in tensors]
    assert len(set(addresses)) == 3  # device 1 is in all three: no two allocations share memory
    assert ttnn.to_numpy(ttnn.get_device_tensors(ttnn.add(tensors[1], tensors[1]))[0]).max() == 2
    with pytest.raises(ttnn.MeshnnValueError, match=r"coordinate_ranges\[0\].*not inside the mesh"):
        mesh.create_overlapped_submeshes([ttnn.MeshCoordinateRange(ttnn.MeshShape(3, 1))])
    with pytest.raises(ttnn.MeshnnTypeError, match=r"coordinate_ranges\[1\] must be a MeshCoordinateRange"):
        mesh.create_overlapped_submeshes([ttnn.MeshCoordinateRange(ttnn.MeshShape(1, 1)), (1, 1)])


def test_enable_async_is_accepted_and_recorded(open_mesh):
    mesh = open_mesh((1, 2))
    assert mesh.async_enabled is False
    mesh.enable_async(True)
    assert mesh.async_enabled is True
    with pytest.raises(ttnn.MeshnnTypeError, match="enable_async: enable must be a bool"):
        mesh.enable_async(1)


def test_wait_for_event_makes_the_other_queue_wait_not_the_host(open_mesh):
    mesh = open_mesh((1, 2), num_command_queues=2)
    buffer = ttnn.MeshBuffer.create(ttnn.ReplicatedBufferConfig(4096), ttnn.DeviceLocalBufferConfig(4096), mesh)
    running, release = threading.Event(), threading.Event()

    def held(ctx) -> None:
        running.set()
        release.wait(timeout=10)

    workload = ttnn.MeshWorkload(ttnn.Program(held, [buffer]), ttnn.MeshCoordinateRange(mesh.shape))
    busy = threading.Thread(target=mesh.mesh_command_queue(0).enqueue_mesh_workload, args=(workload,))
    busy.start()
    assert running.wait(timeout=10)
    event = ttnn.record_event(mesh, 0)  # behind the held workload
    assert event.cq_id == 0 and not event.is_completed()
    ttnn.wait_for_event(1, event)  # returns at once: cq 1 waits, the host does not
    mesh.mesh_command_queue(1).enqueue_write_mesh_buffer(buffer, np.full(4096, 7, np.uint8), blocking=False)
    assert not ttnn.event_query(event)
    release.set()
    busy.join(timeout=10)
    ttnn.synchronize_device(mesh)
    assert ttnn.event_query(event) and (buffer.slab() == 7).all()
    with pytest.raises(ttnn.MeshnnTypeError, match="wait_for_event: event must be a MeshEvent"):
        ttnn.wait_for_event(1, "event")
    with pytest.raises(ttnn.MeshnnValueError, match=r"not made by ttnn\.record_event"):
        ttnn.wait_for_event(1, mesh.mesh_command_queue(0).enqueue_record_event())
    with pytest.raises(ttnn.MeshnnValueError, match="cq_id 2"):
        ttnn.record_event(mesh, 2)
    with pytest.raises(ttnn.MeshnnTypeError, match=r"sub_device_ids must hold ttnn\.SubDeviceId"):
        ttnn.record_event(mesh, 0, [ttnn.MeshCoordinate(0, 0)])
    with pytest.raises(ttnn.MeshnnValueError, match=r"names SubDeviceId\(1\); the loaded sub-device manager has"):
        ttnn.record_event(mesh, 0, [ttnn.SubDeviceId(1)])  # the default manager: one sub-device
    assert ttnn.record_event(mesh, 0, [ttnn.SubDeviceId(0)]).cq_id == 0
    cores = [ttnn.CoreRangeSet({ttnn.CoreRange(ttnn.CoreCoord(0, y), ttnn.CoreCoord(3, y))}) for y in (0, 1)]
    manager = mesh.create_sub_device_manager([ttnn.SubDevice([c]) for c in cores], 3200)
    mesh.load_sub_device_manager(manager)
    event = ttnn.record_event(mesh, 0, [ttnn.SubDeviceId(1)])  # the loaded manager's second sub-device
    ttnn.synchronize_device(mesh)
    assert ttnn.event_query(event)
    mesh.clear_loaded_sub_device_manager()
    mesh.remove_sub_device_manager(manager)


def test_reports_answer_under_plain_meshnn(open_mesh):
    mesh = open_mesh((1, 2))
    tensor = ttnn.from_torch(np.ones((32, 32), np.float32), device=mesh, layout=ttnn.TILE_LAYOUT)
    rows = ttnn.reports.get_buffers(mesh)
    assert [row.address for row in rows] == [tensor.buffer_address()]
    # ttnn's BufferInfo: one 32x32 float32 tile, interleaved in DRAM, so 4096 bytes in its bank
    assert (rows[0].buffer_type, rows[0].buffer_layout) == (ttnn.BufferType.DRAM, ttnn.TensorMemoryLayout.INTERLEAVED)
    assert (rows[0].max_size_per_bank, rows[0].device_id) == (4096, mesh.get_device_ids()[0])
    assert ttnn.reports.get_buffers([mesh, mesh]) == rows + rows  # ttnn's overload: a list of meshes, each in turn
    with pytest.raises(ttnn.MeshnnTypeError, match=r"reports\.get_buffers: device must be a MeshDevice"):
        ttnn.reports.get_buffers([mesh, "mesh"])
    assert ttnn.reports.get_device_info(mesh).l1_num_banks == 64
    with pytest.raises(ttnn.MeshnnTypeError, match=r"reports\.get_buffers: device must be a MeshDevice"):
        ttnn.reports.get_buffers("mesh")


def test_set_fabric_config_takes_an_int_of_a_member_as_ttnn_converts_it():
    """tt-metal's Mixtral tests pass ``fabric_config: True`` to its conftest, which hands it to
    ``set_fabric_config``; the nanobind binding converts an int equal to a member's value."""
    try:
        ttnn.set_fabric_config(True)
        assert ttnn.get_fabric_config() is ttnn.FabricConfig.FABRIC_1D
        ttnn.set_fabric_config(ttnn.FabricConfig.FABRIC_2D.value)
        assert ttnn.get_fabric_config() is ttnn.FabricConfig.FABRIC_2D
        with pytest.raises(ttnn.MeshnnValueError, match=r"no ttnn\.FabricConfig value"):
            ttnn.set_fabric_config(len(ttnn.FabricConfig))
        with pytest.raises(ttnn.MeshnnTypeError, match=r"needs a ttnn\.FabricConfig"):
            ttnn.set_fabric_config("FABRIC_1D")
        assert ttnn.get_fabric_config() is ttnn.FabricConfig.FABRIC_2D  # refused calls change nothing
    finally:
        ttnn.set_fabric_config(ttnn.FabricConfig.DISABLED)
