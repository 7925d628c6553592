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
from meshnn.mesh.timeline_text import made_where, plural, short_bytes, step_label

COLORS = {"outside": "#4c78a8", "op": "#f58518", "peak": "#d62728", "free": "#eeeeee"}
"""Blocks made outside ops (weights), by ops, by the op that set the peak; free space."""
CATEGORIES = {"outside": "made outside ops (weights, inputs)", "op": "op outputs", "peak": "made by the op at the peak"}
DTYPE_COLORS = ("#4c78a8", "#f58518", "#54a24b", "#b279a2", "#e45756", "#72b7b2", "#eeca3b", "#9d755d")
"""Colours of the blocks of :func:`plot_memory`, one per dtype seen."""
CALLOUT_ROWS = (1.2, 1.5, 1.8)
"""Heights (the lane is 0 to 1) of the labels of blocks too narrow to hold their own."""
MAX_CALLOUTS = 12


class Block(NamedTuple):
    """One buffer in an address map: its offset from the bank's base, bytes per bank, its name
    (one or two lines), its colour and what the colour means (the legend's entry)."""

    offset: int
    size: int
    name: str
    color: str
    meaning: str = ""


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


def _fitted(text: str, chars: int) -> str:
    """``text``'s lines cut to ``chars`` characters (an ellipsis where cut)."""
    return "\n".join(line if len(line) <= chars else line[: max(chars - 1, 1)] + "\u2026" for line in text.split("\n"))


def address_map(axis: Any, blocks: list[Block], bank_size: int, title: str) -> None:
    """One lane: the bank's address space (zoomed on the occupied part), each block labelled: in the
    block when its name fits there (cut to its width), else above the lane with a line to it (the
    largest first, the peak's own blocks always); a legend of what the colours mean."""
    lo, hi = 0, bank_size
    if blocks:
        lo, hi = min(b.offset for b in blocks), max(b.offset + b.size for b in blocks)
        margin = max((hi - lo) // 40, 1)
        lo, hi = max(0, lo - margin), min(bank_size, hi + margin)
    unit, scale = unit_of(hi - lo)
    inches = axis.figure.get_figwidth() * axis.get_position().width
    axis.broken_barh([(lo / scale, (hi - lo) / scale)], (0, 1), facecolors=COLORS["free"])
    narrow = []
    for block in blocks:
        start, width = block.offset / scale, block.size / scale
        axis.broken_barh([(start, width)], (0, 1), facecolors=block.color, edgecolors="white", lw=0.6)
        chars = int(block.size / (hi - lo) * inches * 72 / (6.5 * 0.6))  # 6.5 pt characters across the block
        if chars >= 8:
            text = _fitted(f"{block.name}\n{short_bytes(block.size)}", chars)
            axis.text(start + width / 2, 0.5, text, ha="center", va="center", fontsize=6.5, color="white", clip_on=True)
        else:
            narrow.append(block)
    _callouts(axis, narrow, scale, (lo / scale, hi / scale))
    axis.set_xlim(lo / scale, hi / scale)
    axis.set_ylim(0, CALLOUT_ROWS[-1] + 0.3 if narrow else 1.05)
    axis.set_yticks([])
    axis.set_xlabel(f"offset from the allocator's base, per bank ({unit}; free space light grey)", fontsize=8)
    axis.set_title(title, fontsize=8.5, loc="left")
    legend = {b.meaning: b.color for b in blocks if b.meaning}
    if legend:
        from matplotlib.patches import Patch

        handles = [Patch(color=c, label=m) for m, c in legend.items()] + [Patch(color=COLORS["free"], label="free")]
        axis.legend(
            handles=handles,
            loc="lower right",
            bbox_to_anchor=(1.0, 1.0),
            fontsize=6.5,
            ncol=len(handles),
            frameon=False,
            borderaxespad=0.1,
        )


def _callouts(axis: Any, narrow: list[Block], scale: int, span: tuple[float, float]) -> None:
    """Labels above the lane for blocks too narrow to hold one: the peak's blocks and the largest
    others, up to :data:`MAX_CALLOUTS`, spread along the lane in address order, each with a line."""
    chosen = sorted(narrow, key=lambda b: (b.color != COLORS["peak"], -b.size))[:MAX_CALLOUTS]
    chosen.sort(key=lambda b: b.offset)
    width = span[1] - span[0]
    for i, block in enumerate(chosen):
        centre = (block.offset + block.size / 2) / scale
        slot = span[0] + width * (i + 0.5) / max(len(chosen), 1)  # evenly spread, in address order
        height = CALLOUT_ROWS[i % len(CALLOUT_ROWS)]
        text = f"{block.name.replace(chr(10), ' ')}, {short_bytes(block.size)}"
        axis.annotate(
            text,
            (centre, 1.0),
            xytext=(slot, height),
            ha="center",
            va="bottom",
            fontsize=6,
            color=block.color if block.color != COLORS["free"] else "black",
            arrowprops={"arrowstyle": "-", "color": block.color, "lw": 0.7},
        )


def _live_blocks(mesh: MeshDevice, buffer_type: BufferType) -> list[Block]:
    """The live buffers of one type, named by their tensors, coloured by dtype."""
    manager = mesh.allocator.manager(buffer_type)
    blocks = []
    for buffer in mesh.live_buffers():
        if buffer.buffer_type() is not buffer_type:
            continue
        size = manager.free_list.allocation_size(buffer.address()) or 0
        label = buffer_label(buffer)
        name = label or f"{buffer.device_local_size()} B"
        blocks.append(Block(buffer.address() - manager.base, size, name, "", label.split()[-1] if label else ""))
    return blocks


def _by_dtype(lanes: list[list[Block]]) -> list[list[Block]]:
    """Every lane's blocks coloured by dtype, one colour per dtype across the picture."""
    kinds = sorted({b.meaning for lane in lanes for b in lane})
    colours = {k: DTYPE_COLORS[i % len(DTYPE_COLORS)] for i, k in enumerate(kinds)}
    return [
        [b._replace(color=colours[b.meaning], meaning=f"{b.meaning} tensors" if b.meaning else "other buffers")
         for b in lane]
        for lane in lanes
    ]  # fmt: skip


def _devices_line(n: int) -> str:
    if n == 1:
        return "one device"
    return (
        f"all {n} devices hold the same buffers at the same addresses (lock-step), so one lane per buffer type "
        "shows every device"
    )


def plot_memory(mesh_device: MeshDevice, path: str | pathlib.Path) -> pathlib.Path:
    """A PNG of each buffer type's address space now: one lane per type (lock-step: every device
    the same), blocks named by their tensors, sizes in KiB / MiB per bank."""
    _open_mesh("plot_memory", mesh_device)
    target = _target("plot_memory", path)
    plt = _pyplot()
    types = [t for t in BufferType if t in mesh_device.allocator.managers]
    types = [t for t in types if t in REPORTED or _live_blocks(mesh_device, t)]
    figure, axes = plt.subplots(len(types), 1, figsize=(13, 1.9 * len(types) + 0.65), squeeze=False)
    n = mesh_device.get_num_devices()
    lanes = _by_dtype([_live_blocks(mesh_device, t) for t in types])
    for axis, buffer_type, blocks in zip(axes[:, 0], types, lanes, strict=True):
        view = mesh_device.get_memory_view(buffer_type)
        title = (
            f"{buffer_type.name}: {view.num_banks} banks x {short_bytes(view.total_bytes_per_bank)}; allocated "
            f"{short_bytes(view.total_bytes_allocated_per_bank)} per bank, largest free block "
            f"{short_bytes(view.largest_contiguous_bytes_free_per_bank)}"
        )
        address_map(axis, blocks, view.total_bytes_per_bank, title)
    shape = "x".join(str(d) for d in mesh_device.shape)
    figure.suptitle(
        f"memory of the {shape} mesh on {mesh_device.system.name}\n{_devices_line(n)}; blocks named by their "
        "tensors (a device's shard and its dtype), sizes per bank",
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
    every = max(1, -(-len(steps) // 40))  # at most 40 labels
    shown = steps[::every]
    axis.set_xticks([s.index for s in shown], [step_label(s) for s in shown], rotation=60, ha="right", fontsize=6.5)
    axis.set_xlim(-0.5, max(x, default=0) + 0.5)
    every_text = "" if every == 1 else f" (every {every}th labelled)"
    axis.set_xlabel(
        f"step{every_text}: each op, and each run of allocations and frees between ops, at its line", fontsize=8
    )
    axis.set_ylabel(f"{kind} per bank ({unit})", fontsize=8)
    axis.legend(loc="lower right", fontsize=7)


def _peak_blocks(timeline: MeshTimeline, kind: str) -> tuple[list[Block], str]:
    """The buffers live at the peak of one buffer type, named by the variable and line that made
    them (else by the op and tensor), coloured by who made them."""
    peak = timeline.peak(kind)
    if peak is None:
        return [], f"{kind}: nothing allocated"
    base = timeline.banks[kind][2]
    blocks = []
    for life in timeline.live_at(peak.seq, kind):
        at_peak = life.born == peak.step and life.made_by is not None
        category = "peak" if at_peak else "op" if life.made_by else "outside"
        where = made_where(life)
        name = f"{where[0]}\n{where[1]}\n{life.label or life.name}" if where else life.name
        blocks.append(Block(life.address - base, life.size, name, COLORS[category], CATEGORIES[category]))
    title = (
        f"{kind} at its peak (step {peak.step}): {plural(len(blocks), 'buffer')}, each named by the line that "
        f"made it; largest free block {short_bytes(peak.largest_free)}"
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
    heights = [h for _ in kinds for h in (3.2, 2.0)]
    figure, axes = plt.subplots(
        len(heights),
        1,
        figsize=(13, sum(heights) + 1.4),
        gridspec_kw={"height_ratios": heights},
        squeeze=False,
        layout="constrained",
    )
    for i, kind in enumerate(kinds):
        _usage(axes[2 * i, 0], timeline, kind)
        blocks, title = _peak_blocks(timeline, kind)
        address_map(axes[2 * i + 1, 0], blocks, timeline.banks[kind][1], title)
    n = timeline.num_devices
    mode = "planned, nothing computed" if not timeline.executes else "executed"
    figure.suptitle(
        f"memory timeline of the {timeline.mesh_name} mesh on {timeline.system} ({mode}): "
        f"{plural(len(timeline.steps), 'step')}\n{_devices_line(n)}"
        + (f"; nothing allocated in {', '.join(unused)}" if unused else ""),
        fontsize=9,
    )
    figure.savefig(target, dpi=110)
    plt.close(figure)
    return target
