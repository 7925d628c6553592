"""``ttnn.reports`` (``meshnn.reports`` too): device facts and the live buffer list of a mesh.

Layers: the mesh layer (a mesh's allocator and registry).
"""

from __future__ import annotations

from dataclasses import dataclass

from meshnn.device.buffer import BufferType, TensorMemoryLayout
from meshnn.errors import MeshnnTypeError
from meshnn.mesh.mesh_device import MeshDevice


def _checked(device: object, op: str) -> MeshDevice:
    if not isinstance(device, MeshDevice):
        raise MeshnnTypeError(f"reports.{op}: device must be a MeshDevice, got {type(device).__name__}")
    return device


@dataclass(frozen=True)
class DeviceInfo:
    """``ttnn.reports.DeviceInfo``: the core grid and L1 figures of one device (bytes, cores)."""

    num_y_cores: int
    num_x_cores: int
    num_y_compute_cores: int
    num_x_compute_cores: int
    worker_l1_size: int
    l1_num_banks: int
    l1_bank_size: int
    address_at_first_l1_bank: int
    address_at_first_l1_cb_buffer: int
    num_banks_per_storage_core: int
    num_compute_cores: int
    num_storage_cores: int
    total_l1_memory: int
    total_l1_for_tensors: int
    total_l1_for_interleaved_buffers: int
    total_l1_for_sharded_buffers: int
    cb_limit: int


def get_device_info(device: MeshDevice) -> DeviceInfo:
    """The L1 figures of one device of ``device`` (every device of a mesh is alike), as ttnn's
    ``DeviceInfo`` (attributes, not a dict)."""
    return DeviceInfo(**_checked(device, "get_device_info").allocator.device_info())


@dataclass(frozen=True)
class BufferInfo:
    """``ttnn.reports.BufferInfo``: one live buffer of a mesh, as ttnn's ``get_buffers`` lists it.
    ``max_size_per_bank``: bytes of the bank holding most of its pages (a shard's pages when sharded)."""

    device_id: int
    address: int
    max_size_per_bank: int
    buffer_type: BufferType
    buffer_layout: TensorMemoryLayout


def get_buffers(device: MeshDevice | list[MeshDevice]) -> list[BufferInfo]:
    """Every live buffer of ``device`` (or of each mesh of a list, in turn), by buffer type then
    address: ttnn's :class:`BufferInfo` rows."""
    devices = device if isinstance(device, list | tuple) else [device]
    rows = []
    for mesh in (_checked(d, "get_buffers") for d in devices):
        for buffer in mesh.live_buffers():
            layout = buffer.layout
            banks = mesh.get_memory_view(layout.buffer_type).num_banks
            pages = layout.shard.pages_per_core if layout.shard is not None else -(-layout.num_pages // max(banks, 1))
            size, device_id = pages * layout.page_size, mesh.get_device_ids()[0]
            rows.append(BufferInfo(device_id, buffer.address(), size, layout.buffer_type, layout.memory_layout))
    return rows


def get_buffer_pages(device: MeshDevice | list[MeshDevice]) -> list[dict[str, object]]:
    """Every page of every live L1 buffer (ttnn reports L1 pages only), per device: the buffer's
    address, the page's index, core, bank and address, and the page size in bytes."""
    devices = device if isinstance(device, list | tuple) else [device]
    rows = []
    for mesh in (_checked(d, "get_buffer_pages") for d in devices):
        grid_x = mesh.system.compute_grid[0]
        for buffer in mesh.live_buffers():
            layout = buffer.layout
            if layout.buffer_type is not BufferType.L1:
                continue
            view = buffer.get_device_buffer(mesh.local[0])
            for page in range(layout.num_pages):
                where = view.page_location(page)
                bank = where.bank_id if where.core is None else where.core.y * grid_x + where.core.x
                core = (bank % grid_x, bank // grid_x) if where.core is None else (where.core.x, where.core.y)
                for device_id in mesh.get_device_ids():
                    rows.append(
                        {
                            "device_id": device_id,
                            "address": buffer.address(),
                            "core_y": core[1],
                            "core_x": core[0],
                            "bank_id": bank,
                            "page_index": page,
                            "page_address": where.address,
                            "page_size": layout.page_size,
                            "buffer_type": layout.buffer_type,
                        }
                    )
    return rows
