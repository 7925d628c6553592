"""Memory reports of a mesh: a per-device table and ttnn's memory-state dump (the pictures are
:mod:`meshnn.mesh.memory_plot`'s).

Sizes in the table are bytes per bank (what one allocation costs on every bank of its type);
"largest free" is the largest contiguous free block, the figure that decides whether the next
lock-step allocation fits.  Every device of a mesh shows the same numbers: that is lock-step.
"""

from __future__ import annotations

import pathlib

from meshnn.device.buffer import BufferType
from meshnn.errors import MeshnnTypeError, format_bytes
from meshnn.mesh.mesh_device import MeshDevice

REPORTED = (BufferType.DRAM, BufferType.L1)


def _open_mesh(op: str, mesh_device: object) -> MeshDevice:
    """``mesh_device`` checked to be an open MeshDevice."""
    if not isinstance(mesh_device, MeshDevice):
        raise MeshnnTypeError(f"{op}: mesh_device must be a MeshDevice, got {type(mesh_device).__name__}")
    mesh_device.check_open()
    return mesh_device


def memory_rows(mesh_device: MeshDevice) -> list[dict[str, object]]:
    """One dict per device: its DRAM and L1 figures (bytes per bank) and its live buffer count."""
    _open_mesh("memory_report", mesh_device)
    mesh_device.check_open()
    counts = mesh_device.buffer_counts()  # from a snapshot of the registry: O(1) work per buffer, none under a lock
    rows = []
    for device in mesh_device.get_devices():
        row: dict[str, object] = {"device": device.device_id, "coord": str(device.coord)}
        for buffer_type in REPORTED:
            view = mesh_device.get_memory_view(buffer_type, device.coord)
            name = buffer_type.name
            row |= {
                f"{name} allocated": view.total_bytes_allocated_per_bank,
                f"{name} free": view.total_bytes_free_per_bank,
                f"{name} largest free": view.largest_contiguous_bytes_free_per_bank,
                f"{name} buffers": counts[buffer_type],
            }
        rows.append(row)
    return rows


def memory_report(mesh_device: MeshDevice) -> str:
    """The per-device memory table, as text (bytes per bank)."""
    rows = memory_rows(mesh_device)
    columns = list(rows[0])
    cells = [
        [
            str(r[c]) if not isinstance(r[c], int) or c.endswith("buffers") or c == "device" else format_bytes(r[c])
            for c in columns
        ]
        for r in rows
    ]
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(columns)]
    lines = ["  ".join(c.rjust(w) for c, w in zip(columns, widths, strict=True))]
    lines += ["  ".join(v.rjust(w) for v, w in zip(row, widths, strict=True)) for row in cells]
    identical = len({tuple(r[c] for c in columns[2:]) for r in rows}) == 1
    lines.append("every device: identical allocations (lock-step)" if identical else "devices DIFFER")
    dram = mesh_device.get_memory_view(BufferType.DRAM).num_banks
    l1 = mesh_device.get_memory_view(BufferType.L1).num_banks
    lines.append(
        f"sizes are per bank, as ttnn's memory view gives them: a device has {dram} DRAM banks and {l1} L1 banks"
    )
    return "\n".join(lines)


def dump_device_memory_state(mesh_device: MeshDevice, prefix: str = "") -> list[pathlib.Path]:
    """Write ttnn-style memory-state files (one per buffer type) and return their paths."""
    _open_mesh("dump_device_memory_state", mesh_device)
    if not isinstance(prefix, str | pathlib.Path):
        raise MeshnnTypeError(f"dump_device_memory_state: prefix must be a str, got {prefix!r}")
    written = []
    for buffer_type in (BufferType.DRAM, BufferType.L1, BufferType.L1_SMALL, BufferType.TRACE):
        view = mesh_device.get_memory_view(buffer_type)
        path = pathlib.Path(f"{prefix}{buffer_type.name.lower()}_memory_usage.csv")
        lines = ["blockID,address,size,prevID,nextID,allocated"]
        lines += [
            ",".join(b[k] for k in ("blockID", "address", "size", "prevID", "nextID", "allocated"))
            for b in view.block_table
        ]
        lines.append(
            f"# num_banks={view.num_banks} total={view.total_bytes_per_bank} "
            f"allocated={view.total_bytes_allocated_per_bank} free={view.total_bytes_free_per_bank} "
            f"largest_free={view.largest_contiguous_bytes_free_per_bank}"
        )
        path.write_text("\n".join(lines) + "\n")
        written.append(path)
    return written
