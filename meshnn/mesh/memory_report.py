"""Memory reports of a mesh: a per-device table, ttnn's memory-state dump, and a picture.

Sizes in the table are bytes per bank (what one allocation costs on every bank of its type);
"largest free" is the largest contiguous free block, the figure that decides whether the next
lock-step allocation fits.  Every device of a mesh shows the same numbers: that is lock-step.
"""

from __future__ import annotations

import pathlib

from meshnn.device.buffer import BufferType
from meshnn.errors import MeshnnError, MeshnnTypeError, format_bytes
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


def plot_memory(mesh_device: MeshDevice, path: str | pathlib.Path) -> pathlib.Path:
    """A PNG of each buffer type's address space: one horizontal bar per device, live blocks drawn
    where they sit (identical bars when lock-step holds), so fragmentation shows at a glance."""
    _open_mesh("plot_memory", mesh_device)
    if not isinstance(path, str | pathlib.Path):
        raise MeshnnTypeError(f"plot_memory: path must be a str or a path, got {path!r}")
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as error:
        raise MeshnnError("plotting needs matplotlib: pip install 'meshnn[plot]'") from error
    mesh_device.check_open()
    devices = mesh_device.get_devices()
    figure, axes = plt.subplots(
        len(REPORTED), 1, figsize=(11, 1.2 + 0.35 * len(devices) * len(REPORTED)), squeeze=False
    )
    for axis, buffer_type in zip(axes[:, 0], REPORTED, strict=True):
        manager = mesh_device.allocator.manager(buffer_type)
        base, size = manager.base, manager.bank_size
        spans = []
        for row, device in enumerate(devices):
            view = mesh_device.get_memory_view(buffer_type, device.coord)
            blocks = [(int(b["address"]), int(b["size"]), b["allocated"] == "yes") for b in view.block_table]
            used = [(a, n) for a, n, taken in blocks if taken]
            spans += used
            axis.broken_barh([(0, size)], (row - 0.4, 0.8), facecolors="#ececec")
            if used:
                lo, hi = min(a for a, _ in used), max(a + n for a, n in used)
                holes = [(a, n) for a, n, taken in blocks if not taken and lo <= a and a + n <= hi]
                axis.broken_barh(holes, (row - 0.4, 0.8), facecolors="#f0a35e")
            axis.broken_barh(used, (row - 0.4, 0.8), facecolors="#3b6ea8", edgecolors="white", linewidth=0.3)
        stats = mesh_device.get_memory_view(buffer_type)
        lo, hi = (0, size)
        if spans:  # zoom on the occupied part of the address space, where fragmentation shows
            lo, hi = min(a for a, _ in spans), max(a + n for a, n in spans)
            margin = max((hi - lo) // 20, 1)
            lo, hi = max(0, lo - margin), min(size, hi + margin)
        axis.set_title(
            f"{buffer_type.name}: {stats.num_banks} banks x {format_bytes(size)} from address {base}; allocated "
            f"{format_bytes(stats.total_bytes_allocated_per_bank)}, largest free block "
            f"{format_bytes(stats.largest_contiguous_bytes_free_per_bank)} per bank\nshowing offsets "
            f"{format_bytes(lo)} .. {format_bytes(hi)} (blue: live buffers, orange: free holes between them)",
            fontsize=8,
            loc="left",
        )
        axis.set_xlim(lo, hi)
        axis.set_yticks(range(len(devices)), [f"dev {d.device_id} {d.coord}" for d in devices], fontsize=7)
        axis.set_xlabel("offset from the allocator base (bytes per bank)", fontsize=8)
        axis.invert_yaxis()
    figure.tight_layout()
    target = pathlib.Path(path)
    figure.savefig(target, dpi=100)
    plt.close(figure)
    return target
