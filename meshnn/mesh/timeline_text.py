"""A mesh's memory timeline as text: a header that says lock-step once, a row per step (op), and
each buffer type's peak with the op that set it and the buffers live then.

Sizes print in binary units (KiB, MiB, GiB) per bank, with the device's figure beside the peak.

Layers: imports :mod:`meshnn.errors` and the mesh layer's timeline.
"""

from __future__ import annotations

from meshnn.errors import format_bytes
from meshnn.mesh.memory_timeline import BETWEEN, BufferLife, MeshTimeline, Peak, Step

TOP_BUFFERS = 5
"""Largest buffers named under each peak."""


def short_bytes(size: int) -> str:
    """``1.5 MiB``, ``960 B``: :func:`format_bytes` with at most three significant digits."""
    text = format_bytes(size)
    number, _, unit = text.partition(" ")
    if unit == "B":
        return text
    value = float(number)
    return f"{value:.3g} {unit}" if value < 100 else f"{value:.0f} {unit}"


def plural(count: int, noun: str) -> str:
    """``1 device``, ``8 devices``."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def header(timeline: MeshTimeline) -> list[str]:
    """What the figures are: the mesh, lock-step said once, the banks of each buffer type."""
    n = timeline.num_devices
    kind = "planned (nothing computed)" if not timeline.executes else "executed"
    banks = "; ".join(
        f"{t}: {timeline.banks[t][0]} banks x {short_bytes(timeline.banks[t][1])}"
        for t in timeline.types
        if t in timeline.banks
    )
    return [
        f"memory timeline of the {timeline.mesh_name} mesh on {timeline.system} ({plural(n, 'device')}), {kind}",
        f"lock-step: all {n} devices hold the same buffers at the same addresses, so each figure stands for "
        f"every device"
        if n > 1
        else "one device",
        f"sizes are per bank ({banks}); a device's figure is the bank's times its banks",
    ]


def step_name(step: Step) -> str:
    if step.op == BETWEEN:
        return f"(between ops: +{len(step.born)} / -{len(step.freed)} buffers)"
    return f"ttnn.{step.op}" + (" FAILED" if step.failed else "")


def step_rows(timeline: MeshTimeline) -> list[str]:
    """A row per step: its op, and per buffer type allocated / peak / largest free block."""
    types = timeline.types
    head = f"{'step':>5}  {'op':40}" + "".join(
        f"  {t + ' allocated':>14} {'peak':>10} {'largest free':>13}" for t in types
    )
    rows = [head]
    for step in timeline.steps:
        cells = ""
        for t in types:
            lane = step.lanes.get(t)
            if lane is None:
                cells += f"  {'':>14} {'':>10} {'':>13}"
                continue
            mark = "*" if (peak := timeline.peaks.get(t)) is not None and peak.step == step.index else " "
            cells += (
                f"  {short_bytes(lane.allocated):>14} {short_bytes(lane.peak) + mark:>10} "
                f"{short_bytes(lane.largest_free):>13}"
            )
        rows.append(f"{step.index:>5}  {step_name(step)[:40]:40}{cells}")
    rows.append("(* the step that set the peak of that buffer type)")
    return rows


def peak_lines(timeline: MeshTimeline, peak: Peak) -> list[str]:
    """The peak of one buffer type, the op that set it, and the largest buffers live then."""
    live = timeline.live_at(peak.seq, peak.buffer_type)
    where = "between ops" if peak.op == BETWEEN else f"ttnn.{peak.op}"
    lines = [
        f"{peak.buffer_type} peak: {short_bytes(peak.per_bank)} per bank ({short_bytes(peak.per_device)} per device, "
        f"{peak.num_banks} banks) at step {peak.step}, {where}; largest free block then "
        f"{short_bytes(peak.largest_free)}; {len(live)} buffers live"
    ]
    for life in sorted(live, key=lambda b: -b.size)[:TOP_BUFFERS]:
        lines.append(f"    {short_bytes(life.size):>10} per bank at {life.address:>11}  {describe(life)}")
    return lines


def made_where(life: BufferLife) -> tuple[str, str] | None:
    """Who made a buffer, in the user's words, and where: ``("h = ttnn.rms_norm", "model.py:19")``
    (the variable its line assigns and the op), ``("w", "model.py:7")`` (made outside ops); None
    when no line of the user's is known."""
    if life.site is None:
        return None
    variable = life.site.assigned
    op = f"ttnn.{life.made_by}" if life.made_by else ""
    head = f"{variable} = {op}" if variable and op else variable or op or "made"
    return head, life.site.short


def describe(life: BufferLife) -> str:
    born = "before the timeline" if life.born < 0 else f"step {life.born}"
    where = made_where(life)
    return f"{life.name} (from {born}{f': {where[0]} at {where[1]}' if where else ''})"


def step_label(step: Step) -> str:
    """A step as an axis label: ``rms_norm model.py:19``, ``2 new, 1 freed model.py:30``."""
    if step.op == BETWEEN:
        parts = [f"{len(step.born)} new" if step.born else "", f"{len(step.freed)} freed" if step.freed else ""]
        what = ", ".join(p for p in parts if p) or "nothing"
    else:
        what = step.op.rsplit(".", 1)[-1] + (" FAILED" if step.failed else "")
    return f"{what} {step.site.short}" if step.site is not None else what


def timeline_report(timeline: MeshTimeline, *, steps: bool = True) -> str:
    """The whole report of one mesh: header, the step rows (``steps``), the peaks."""
    lines = header(timeline)
    if steps:
        lines += step_rows(timeline)
    for kind in timeline.types:
        peak = timeline.peak(kind)
        lines += peak_lines(timeline, peak) if peak is not None else [f"{kind}: nothing allocated"]
    return "\n".join(lines)


def recorders_by_timeline(timelines: list[MeshTimeline], capture: object) -> dict[int, object]:
    """Each timeline's recorder of predicted times (by mesh id), from a performance-model capture
    (duck-typed: its ``recorders``, one per mesh that ran an op, in the order of their first ops,
    each with ``machine.mesh_shape``), matched in that order and checked by shape."""
    with_ops = [t for t in timelines if any(s.op_id is not None for s in t.steps)]
    found = {}
    for timeline, recorder in zip(with_ops, getattr(capture, "recorders", None) or [], strict=False):
        shape = tuple(getattr(getattr(recorder, "machine", None), "mesh_shape", ()))
        if shape in (timeline.shape, (1, *timeline.shape)):
            found[timeline.mesh_id] = recorder
    return found


def predicted_line(recorder: object) -> str:
    """A recorder's predicted device time (duck-typed: ``total_ns()``, ``totals()``, ``len``)."""
    if recorder is None:
        return "predicted device time: not available (no op of this mesh in the performance-model capture)"
    totals = recorder.totals()  # type: ignore[attr-defined]
    kernels = max((t.kernel_ns for t in totals), default=0.0)
    gaps = max((t.gap_ns for t in totals), default=0.0)
    return (
        f"predicted device time: {recorder.total_ns() / 1e6:,.3f} ms on the slowest device "  # type: ignore[attr-defined]
        f"({plural(len(recorder), 'op')} timed; kernels {kernels / 1e6:,.3f} ms, op-to-op gaps {gaps / 1e6:,.3f} ms)"  # type: ignore[arg-type]
    )


def mesh_summary(timeline: MeshTimeline, recorder: object = None, *, times: bool = True) -> list[str]:
    """A mesh's peaks per device and the ops that set them; its predicted device time (``times``)."""
    ops = sum(1 for s in timeline.steps if s.op_id is not None)
    n = timeline.num_devices
    failed = [s for s in timeline.steps if s.failed]
    lines = [
        f"mesh {timeline.mesh_name} on {timeline.system} "
        + (f"({n} devices in lock-step: every figure is every device's)" if n > 1 else "(1 device)")
        + f": {plural(ops, 'op')}"
        + (f", ttnn.{failed[-1].op} at step {failed[-1].index} FAILED" if failed else "")
    ]
    for kind in timeline.types:
        peak = timeline.peak(kind)
        if peak is None:
            lines.append(f"  {kind:5} nothing allocated")
            continue
        bank_size = timeline.banks[kind][1]
        where = "between ops" if peak.op == BETWEEN else f"ttnn.{peak.op}"
        lines.append(
            f"  {kind:5} peak {short_bytes(peak.per_device):>10} per device ({short_bytes(peak.per_bank)} per bank x "
            f"{peak.num_banks} banks, {100 * peak.per_bank / bank_size:.1f}% of a bank) at step {peak.step}: {where}"
        )
    if times:
        lines.append("  " + predicted_line(recorder))
    return lines
