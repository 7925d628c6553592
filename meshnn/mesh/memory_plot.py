"""Pictures of mesh memory that a person reads at a glance (PNG, through matplotlib, imported only
when a picture is asked for: ``pip install 'meshnn[plot]'``).

- :func:`plot_memory`: the address space of each buffer type now, ONE lane per buffer type (every
  device of a lock-step mesh holds the same buffers, so one lane stands for all of them), each
  block named by its tensor (``4096x1024 bfp8``) and its size, the axis in KiB / MiB.
- :func:`plot_timeline`: a :class:`~meshnn.mesh.memory_timeline.MeshTimeline`, one lane per buffer
  type: the bytes allocated after each op and the peak inside it, the highest peak marked with the
  op that set it, and under it the address map at that moment, blocks named.

Layers: imports :mod:`meshnn.errors`, :mod:`meshnn.device` and the mesh layer.
"""

from __future__ import annotations

import pathlib
from typing import Any, NamedTuple

from meshnn.device.buffer import BufferType
from meshnn.errors import MeshnnError, MeshnnTypeError, MeshnnValueError
from meshnn.mesh.labels import buffer_label
from meshnn.mesh.memory_report import REPORTED, _open_mesh
from meshnn.mesh.memory_timeline import BETWEEN, MeshTimeline
from meshnn.mesh.mesh_device import MeshDevice
from meshnn.mesh.timeline_text import short_bytes

COLORS = {"outside": "#4c78a8", "op": "#f58518", "peak": "#d62728", "free": "#eeeeee"}
"""Blocks made outside ops (weights), by ops, by the op that set the peak; free space."""


class Block(NamedTuple):
    """One buffer in an address map: its offset from the bank's base, bytes per bank, its name."""

    offset: int
    size: int
    name: str
    color: str


def _pyplot() -> Any:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as error:
        raise MeshnnError("plotting needs matplotlib: pip install 'meshnn[plot]'") from error
    return plt


def _target(op: str, path: object) -> pathlib.Path:
    if not isinstance(path, str | pathlib.Path):
        raise MeshnnTypeError(f"{op}: path must be a str or a path, got {path!r}")
    return pathlib.Path(path)


UNITS = (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10), ("B", 1))


def unit_of(size: float) -> tuple[str, int]:
    """The binary unit (name, bytes) in which ``size`` reads best (at least 1 of it)."""
    return next(((name, scale) for name, scale in UNITS if size >= scale), UNITS[-1])


def address_map(axis: Any, blocks: list[Block], bank_size: int, title: str) -> None:
    """One lane: the bank's address space (zoomed on the occupied part), blocks named when wide."""
    lo, hi = 0, bank_size
    if blocks:
        lo, hi = min(b.offset for b in blocks), max(b.offset + b.size for b in blocks)
        margin = max((hi - lo) // 40, 1)
        lo, hi = max(0, lo - margin), min(bank_size, hi + margin)
    unit, scale = unit_of(hi - lo)
    axis.broken_barh([(lo / scale, (hi - lo) / scale)], (0, 1), facecolors=COLORS["free"])
    for block in blocks:
        start, width = block.offset / scale, block.size / scale
        axis.broken_barh([(start, width)], (0, 1), facecolors=block.color, edgecolors="white", lw=0.6)
        if block.size >= (hi - lo) * 0.045:
            text = f"{block.name}\n{short_bytes(block.size)}"
            axis.text(start + width / 2, 0.5, text, ha="center", va="center", fontsize=6.5, color="white", clip_on=True)
    axis.set_xlim(lo / scale, hi / scale)
    axis.set_ylim(0, 1)
    axis.set_yticks([])
    axis.set_xlabel(f"offset from the allocator's base, per bank ({unit}; free space light grey)", fontsize=8)
    axis.set_title(title, fontsize=8.5, loc="left")


def _live_blocks(mesh: MeshDevice, buffer_type: BufferType) -> list[Block]:
    manager = mesh.allocator.manager(buffer_type)
    blocks = []
    for buffer in mesh.live_buffers():
        if buffer.buffer_type() is not buffer_type:
            continue
        size = manager.free_list.allocation_size(buffer.address()) or 0
        name = buffer_label(buffer) or f"{buffer.device_local_size()} B"
        blocks.append(Block(buffer.address() - manager.base, size, name, COLORS["outside"]))
    return blocks


def plot_memory(mesh_device: MeshDevice, path: str | pathlib.Path) -> pathlib.Path:
    """A PNG of each buffer type's address space now: one lane per type (lock-step: every device
    the same), blocks named by their tensors, sizes in KiB / MiB per bank."""
    _open_mesh("plot_memory", mesh_device)
    target = _target("plot_memory", path)
    plt = _pyplot()
    types = [t for t in BufferType if t in mesh_device.allocator.managers]
    types = [t for t in types if t in REPORTED or _live_blocks(mesh_device, t)]
    figure, axes = plt.subplots(len(types), 1, figsize=(13, 1.6 * len(types) + 0.6), squeeze=False)
    n = mesh_device.get_num_devices()
    for axis, buffer_type in zip(axes[:, 0], types, strict=True):
        view = mesh_device.get_memory_view(buffer_type)
        title = (
            f"{buffer_type.name}: {view.num_banks} banks x {short_bytes(view.total_bytes_per_bank)}; allocated "
            f"{short_bytes(view.total_bytes_allocated_per_bank)} per bank, largest free block "
            f"{short_bytes(view.largest_contiguous_bytes_free_per_bank)}"
        )
        address_map(axis, _live_blocks(mesh_device, buffer_type), view.total_bytes_per_bank, title)
    shape = "x".join(str(d) for d in mesh_device.shape)
    figure.suptitle(
        f"memory of the {shape} mesh on {mesh_device.system.name}\nall {n} devices hold the same buffers at the "
        f"same addresses (lock-step), so one lane per buffer type shows every device",
        fontsize=9,
    )
    figure.tight_layout()
    figure.savefig(target, dpi=110)
    plt.close(figure)
    return target


def _usage(axis: Any, timeline: MeshTimeline, kind: str) -> None:
    """Allocated after each step and the peak inside it; the highest peak marked and named."""
    steps = [s for s in timeline.steps if kind in s.lanes]
    peak = timeline.peak(kind)
    unit, scale = unit_of(peak.per_bank if peak is not None else 1)
    x = [s.index for s in steps]
    after = [s.lanes[kind].allocated / scale for s in steps]
    inside = [s.lanes[kind].peak / scale for s in steps]
    axis.fill_between(x, after, step="post", color=COLORS["outside"], alpha=0.35, label="allocated after the op")
    axis.step(x, inside, where="post", color=COLORS["op"], lw=1, label="peak inside the op")
    if peak is not None:
        where = "between ops" if peak.op == BETWEEN else f"ttnn.{peak.op}"
        axis.plot([peak.step], [peak.per_bank / scale], "o", color=COLORS["peak"])
        axis.annotate(
            f"peak {short_bytes(peak.per_bank)} per bank ({short_bytes(peak.per_device)} per device)\n"
            f"at step {peak.step}: {where}",
            (peak.step, peak.per_bank / scale),
            xytext=(0.98, 0.95) if 2 * peak.step < len(timeline.steps) else (0.02, 0.95),
            textcoords="axes fraction",
            va="top",
            ha="right" if 2 * peak.step < len(timeline.steps) else "left",
            fontsize=8,
            color=COLORS["peak"],
            arrowprops={"arrowstyle": "->", "color": COLORS["peak"], "lw": 0.8},
        )
        axis.set_ylim(0, peak.per_bank / scale * 1.35)
    if 0 < len(steps) <= 40:
        names = [s.op if s.op != BETWEEN else f"(+{len(s.born)} -{len(s.freed)})" for s in steps]
        axis.set_xticks(x, names, rotation=60, ha="right", fontsize=6.5)
    axis.set_xlabel("step: one per op; (+born -freed) between ops: from_torch, deallocate", fontsize=8)
    axis.set_ylabel(f"{kind} per bank ({unit})", fontsize=8)
    axis.legend(loc="lower right", fontsize=7)


def _peak_blocks(timeline: MeshTimeline, kind: str) -> tuple[list[Block], str]:
    peak = timeline.peak(kind)
    if peak is None:
        return [], f"{kind}: nothing allocated"
    base = timeline.banks[kind][2]
    blocks = []
    for life in timeline.live_at(peak.seq, kind):
        at_peak = life.born == peak.step and life.made_by is not None
        color = COLORS["peak"] if at_peak else COLORS["op"] if life.made_by else COLORS["outside"]
        blocks.append(Block(life.address - base, life.size, life.name, color))
    title = (
        f"{kind} at its peak (step {peak.step}): {len(blocks)} buffers; blue: made outside ops (weights), orange: "
        f"op outputs, red: made by the op at the peak; largest free block {short_bytes(peak.largest_free)}"
    )
    return blocks, title


def plot_timeline(timeline: MeshTimeline | None, path: str | pathlib.Path) -> pathlib.Path:
    """A PNG of ``timeline``: per buffer type, its usage over the ops and its address map at the peak."""
    if not isinstance(timeline, MeshTimeline):
        raise MeshnnValueError(f"plot_timeline needs a mesh's timeline (no mesh was seen?), got {timeline!r}")
    target = _target("plot_timeline", path)
    plt = _pyplot()
    kinds = [k for k in timeline.types if timeline.peak(k) is not None]
    unused = [k for k in timeline.types if timeline.peak(k) is None]
    if not kinds:
        raise MeshnnValueError(f"the timeline of the {timeline.mesh_name} mesh allocated nothing: no picture to draw")
    heights = [h for _ in kinds for h in (3.0, 1.0)]
    figure, axes = plt.subplots(
        len(heights), 1, figsize=(13, sum(heights) + 1.4), gridspec_kw={"height_ratios": heights}, squeeze=False
    )
    for i, kind in enumerate(kinds):
        _usage(axes[2 * i, 0], timeline, kind)
        blocks, title = _peak_blocks(timeline, kind)
        address_map(axes[2 * i + 1, 0], blocks, timeline.banks[kind][1], title)
    n = timeline.num_devices
    mode = "planned, nothing computed" if not timeline.executes else "executed"
    figure.suptitle(
        f"memory timeline of the {timeline.mesh_name} mesh on {timeline.system} ({mode}): {len(timeline.steps)} "
        f"steps\nall {n} devices hold the same buffers at the same addresses (lock-step), so one lane per "
        "buffer type shows every device" + (f"; nothing allocated in {', '.join(unused)}" if unused else ""),
        fontsize=9,
    )
    figure.tight_layout()
    figure.savefig(target, dpi=110)
    plt.close(figure)
    return target
