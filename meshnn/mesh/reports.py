"""``ttnn.reports`` (``meshnn.reports`` too): device facts and the live buffer list of a mesh.

Layers: the mesh layer (a mesh's allocator and registry).
"""

from __future__ import annotations

from meshnn.errors import MeshnnTypeError
from meshnn.mesh.mesh_device import MeshDevice


def _checked(device: object, op: str) -> MeshDevice:
    if not isinstance(device, MeshDevice):
        raise MeshnnTypeError(f"reports.{op}: device must be a MeshDevice, got {type(device).__name__}")
    return device


def get_device_info(device: MeshDevice) -> dict[str, int]:
    """The L1 figures of one device of ``device`` (every device of a mesh is alike)."""
    return _checked(device, "get_device_info").allocator.device_info()


def get_buffers(device: MeshDevice) -> list[dict[str, object]]:
    """Every live buffer, by buffer type then address: address, type, layout, max size per bank."""
    rows = []
    for buffer in _checked(device, "get_buffers").live_buffers():
        layout = buffer.layout
        banks = device.get_memory_view(layout.buffer_type).num_banks
        pages = layout.shard.pages_per_shard if layout.shard is not None else -(-layout.num_pages // max(banks, 1))
        rows.append(
            {
                "address": buffer.address(),
                "type": str(layout.buffer_type),
                "layout": str(layout.memory_layout),
                "device_id": device.get_device_ids()[0],
                "max_size_per_bank": pages * layout.page_size,
            }
        )
    return rows


def get_buffer_pages(device: MeshDevice) -> list[dict[str, object]]:
    """One row per page of every live buffer (its address, type, page index and page size), as
    ttnn's ``reports.get_buffer_pages`` lists them: the count grows exactly when pages are allocated."""
    rows = []
    for buffer in _checked(device, "get_buffer_pages").live_buffers():
        layout = buffer.layout
        address, kind = buffer.address(), str(layout.buffer_type)
        for page in range(layout.num_pages):
            rows.append({"address": address, "type": kind, "page_index": page, "page_size": layout.page_size})
    return rows
