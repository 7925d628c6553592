"""``ttnn.reports``: device facts and the live buffer list of a mesh."""

from __future__ import annotations

import meshnn


def get_device_info(device: meshnn.MeshDevice) -> dict[str, int]:
    """The L1 figures of one device of ``device`` (every device of a mesh is alike)."""
    return device.allocator.device_info()


def get_buffers(device: meshnn.MeshDevice) -> list[dict[str, object]]:
    """Every live buffer, by buffer type then address: address, type, layout, max size per bank."""
    rows = []
    for buffer in device.live_buffers():
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
