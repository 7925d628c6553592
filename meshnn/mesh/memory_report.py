"""Memory reports of a mesh: a per-device table and ttnn's memory-state dump (the pictures are
:mod:`meshnn.mesh.memory_plot`'s).

Sizes in the table are bytes per bank (what one allocation costs on every bank of its type);
"largest free" is the largest contiguous free block, the figure that decides whether the next
lock-step allocation fits.  Every device of a mesh shows the same numbers: that is lock-step.
"""

from __future__ import annotations

import pathlib

from meshnn.device.bank import MemoryView
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


def device_ranges(ids: list[int]) -> str:
    """``0-7``, ``0-3, 5``: device ids as runs."""
    runs: list[list[int]] = []
    for i in ids:
        if runs and i == runs[-1][-1] + 1:
            runs[-1].append(i)
        else:
            runs.append([i])
    return ", ".join(str(r[0]) if len(r) == 1 else f"{r[0]}-{r[-1]}" for r in runs)


def plural(count: int, noun: str) -> str:
    """``1 device``, ``8 devices``."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def _groups(rows: list[dict[str, object]], figures: list[str]) -> list[list[dict[str, object]]]:
    """The rows grouped by identical figures, in the order of each group's first device."""
    groups: dict[tuple, list[dict[str, object]]] = {}
    for row in rows:
        groups.setdefault(tuple(row[c] for c in figures), []).append(row)
    return list(groups.values())


def _cell(column: str, value: object) -> str:
    if isinstance(value, int) and not column.endswith("buffers"):
        return format_bytes(value)
    return str(value)


def memory_report(mesh_device: MeshDevice) -> str:
    """The memory table, as text (bytes per bank): one row per group of devices holding the same
    figures, so a lock-step mesh is one row with its device count (a row per device only where
    devices differ)."""
    rows = memory_rows(mesh_device)
    figures = list(rows[0])[2:]
    columns = ["devices", "coords", *figures]
    cells = []
    for group in _groups(rows, figures):
        ids = [int(r["device"]) for r in group]  # type: ignore[call-overload]
        coords = str(group[0]["coord"]) if len(group) == 1 else f"{group[0]['coord']}..{group[-1]['coord']}"
        cells.append([f"{device_ranges(ids)} ({plural(len(ids), 'device')})", coords])
        cells[-1] += [_cell(c, group[0][c]) for c in figures]
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(columns)]
    lines = [
        "  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(columns, widths, strict=True)))
    ]
    lines += [
        "  ".join(v.ljust(w) if i < 2 else v.rjust(w) for i, (v, w) in enumerate(zip(row, widths, strict=True)))
        for row in cells
    ]
    if len(cells) == 1 and len(rows) > 1:
        lines.append(f"every device: identical allocations (lock-step), so one row stands for all {len(rows)}")
    elif len(cells) > 1:
        lines.append(f"devices DIFFER: {len(cells)} groups of devices hold different allocations")
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


def get_memory_view(mesh_device: MeshDevice, buffer_type: BufferType) -> MemoryView:
    """``ttnn.get_memory_view``: the allocator state of one buffer type (the same on every device)."""
    if not isinstance(mesh_device, MeshDevice):
        raise MeshnnTypeError(f"get_memory_view: mesh_device must be a MeshDevice, got {type(mesh_device).__name__}")
    return mesh_device.get_memory_view(buffer_type)
