"""A PNG of a mesh's predicted device time, op by op: what runs when, what bounds it, and what the
op-to-op gaps cost eager and traced.

Two panels (matplotlib is the optional ``plot`` extra, imported only here and only when a picture
is asked for):

- a timeline per device: each op's kernel as a bar from its predicted start, coloured by what
  bounds it (compute, DRAM, L1, Ethernet link, dispatch), the op-to-op gap before it in grey;
  devices whose timelines are the same share one lane (a lock-step mesh is one lane), so a lane of
  its own shows where devices differ (ops on a submesh, a collective waiting for its peers);
- the ops in order: each op's kernel time (coloured by its bound) with its eager gap stacked on
  it, a tick at its traced gap (the gap a traced replay leaves), the kernel's microseconds written
  on the bar; past :data:`MAX_BARS` ops, the slowest :data:`MAX_BARS` (still in order).

Times are microseconds, as tt-perf-report gives them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from meshnn.errors import MeshnnError
from meshnn.perf.prediction import Bound
from meshnn.perf.recorder import Record, Recorder

BOUND_COLORS = {
    Bound.COMPUTE: "#4c78a8",
    Bound.DRAM: "#f58518",
    Bound.L1: "#54a24b",
    Bound.LINK: "#e45756",
    Bound.DISPATCH: "#9d755d",
}
GAP_COLOR = "#c7c7c7"
MAX_BARS = 48
"""The most ops the per-op panel shows (the slowest, in order, when there are more)."""


def _pyplot() -> Any:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as error:  # pragma: no cover - depends on the environment
        raise MeshnnError("the time plot needs matplotlib: pip install 'meshnn[plot]'") from error
    return plt


def device_lanes(recorder: Recorder) -> list[tuple[list[int], list[tuple[Record, float]]]]:
    """Devices grouped by identical timelines: ``(devices, [(record, start ns)...])`` per lane."""
    per_device: dict[int, list[tuple[Record, float]]] = {}
    for entry in recorder.records:
        for device, start in zip(entry.devices, entry.start_ns, strict=True):
            per_device.setdefault(device, []).append((entry, start))
    lanes: dict[tuple, tuple[list[int], list[tuple[Record, float]]]] = {}
    for device in sorted(per_device):
        key = tuple((e.index, round(s, 3)) for e, s in per_device[device])
        lanes.setdefault(key, ([], per_device[device]))[0].append(device)
    return list(lanes.values())


def devices_text(devices: list[int]) -> str:
    """``device 3``, ``devices 0-7``, ``devices 0-3, 6``."""
    runs: list[list[int]] = []
    for d in devices:
        if runs and d == runs[-1][-1] + 1:
            runs[-1].append(d)
        else:
            runs.append([d])
    text = ", ".join(str(r[0]) if len(r) == 1 else f"{r[0]}-{r[-1]}" for r in runs)
    return f"device {text}" if len(devices) == 1 else f"devices {text}"


def short_name(entry: Record) -> str:
    """The op's ttnn name without ``ttnn.`` (else its op code without ``DeviceOperation``)."""
    return (entry.desc.name or entry.desc.op_code).removeprefix("ttnn.").removesuffix("DeviceOperation")


def _timeline(axis: Any, recorder: Recorder) -> None:
    lanes = device_lanes(recorder)
    end = max((s + e.prediction.kernel_ns for _, lane in lanes for e, s in lane), default=1.0) / 1e3
    for row, (_, lane) in enumerate(lanes):
        for entry, start in lane:
            p = entry.prediction
            begin, gap, kernel = start / 1e3, p.gap_ns / 1e3, p.kernel_ns / 1e3
            axis.barh(row, gap, left=begin - gap, height=0.6, color=GAP_COLOR)
            axis.barh(row, kernel, left=begin, height=0.6, color=BOUND_COLORS[p.bound], edgecolor="white", lw=0.4)
            if kernel >= end * 0.05:
                text = f"{entry.index} {short_name(entry)}\n{kernel:,.1f} us"
                axis.text(begin + kernel / 2, row, text, ha="center", va="center", fontsize=6.5, color="white")
    axis.set_yticks(range(len(lanes)), [devices_text(d) for d, _ in lanes], fontsize=8)
    axis.invert_yaxis()
    axis.set_xlim(0, end * 1.01)
    axis.set_xlabel("predicted time from the first op (us); grey: the op-to-op gap before each kernel", fontsize=8)
    same = "every device the same: one lane" if len(lanes) == 1 else f"{len(lanes)} lanes: devices differ"
    axis.set_title(f"timeline per device ({same}); each op numbered in order, its kernel time written", fontsize=9)


def _shown(records: tuple[Record, ...]) -> list[Record]:
    if len(records) <= MAX_BARS:
        return list(records)
    slowest = sorted(records, key=lambda e: -(e.prediction.kernel_ns + e.prediction.gap_ns))[:MAX_BARS]
    return sorted(slowest, key=lambda e: e.index)


def _per_op(axis: Any, recorder: Recorder, traced: Recorder) -> None:
    records = recorder.records
    shown = _shown(records)
    traced_gap = {e.index: e.prediction.gap_ns / 1e3 for e in traced.records}
    x = list(range(len(shown)))
    kernels = [e.prediction.kernel_ns / 1e3 for e in shown]
    gaps = [e.prediction.gap_ns / 1e3 for e in shown]
    axis.bar(x, kernels, color=[BOUND_COLORS[e.prediction.bound] for e in shown], width=0.75)
    axis.bar(x, gaps, bottom=kernels, color=GAP_COLOR, width=0.75)
    ticks = [k + traced_gap[e.index] for k, e in zip(kernels, shown, strict=True)]
    axis.scatter(x, ticks, marker="_", s=120, color="black", linewidths=1.4, zorder=3)
    top = max((k + g for k, g in zip(kernels, gaps, strict=True)), default=1.0)
    upright = len(shown) > 16
    for i, (k, g) in enumerate(zip(kernels, gaps, strict=True)):
        text = f"{k:,.1f} + {g:,.1f}" if upright else f"{k:,.1f}\n+ {g:,.1f}"
        axis.text(i, k + g + top * 0.01, text, ha="center", va="bottom", fontsize=6.5, rotation=90 * upright)
    names = [
        f"{e.index} {short_name(e)}" + ("" if len(e.devices) == recorder.machine.num_devices else " *") for e in shown
    ]
    axis.set_xticks(x, names, rotation=60, ha="right", fontsize=6.5)
    axis.set_xlim(-0.7, len(shown) - 0.3)
    axis.set_ylim(0, top * 1.3)
    axis.set_ylabel("us", fontsize=8)
    part = f"the {len(shown)} slowest of {len(records)} ops, in order" if len(shown) < len(records) else "every op"
    axis.set_title(
        f"{part}: kernel (coloured by its bound) + eager op-to-op gap (grey), in us as written; "
        "black tick: kernel + the traced gap" + ("; * ran on some devices only" if "*" in "".join(names) else ""),
        fontsize=9,
    )


def _legend(figure: Any, recorder: Recorder) -> None:
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    seen = {e.prediction.bound for e in recorder.records}
    handles = [Patch(color=BOUND_COLORS[b], label=f"{b.value} bound") for b in Bound if b in seen]
    handles.append(Patch(color=GAP_COLOR, label="op-to-op gap (eager)"))
    handles.append(Line2D([], [], color="black", marker="_", lw=0, markersize=12, label="with the traced gap"))
    figure.legend(handles=handles, loc="lower center", ncol=len(handles), fontsize=8, frameon=False)


def _title(recorder: Recorder, traced: Recorder, title: str | None) -> str:
    system = recorder.machine.system
    rows, cols = recorder.machine.mesh_shape
    eager_ns = recorder.retimed(traced=False).total_ns()
    head = title or f"Predicted device time on {system.name} ({system.spec.description}), mesh {rows}x{cols}"
    return (
        f"{head}\n{len(recorder)} ops: {recorder.total_ns() / 1e3:,.1f} us as recorded on the slowest device; "
        f"all eager {eager_ns / 1e3:,.1f} us, all traced {traced.total_ns() / 1e3:,.1f} us "
        "(meshnn's model, not a measurement)"
    )


def write_time_plot(recorder: Recorder, path: str | Path, *, title: str | None = None) -> Path:
    """Draw the recorder's ops (the module docstring's two panels) to the PNG at ``path``."""
    plt = _pyplot()
    traced = recorder.retimed(traced=True)
    lanes = len(device_lanes(recorder))
    heights = (1.2 + 0.45 * lanes, 4.2)
    figure, (timeline, per_op) = plt.subplots(
        2, 1, figsize=(14, sum(heights) + 2.0), gridspec_kw={"height_ratios": heights}, squeeze=True
    )
    _timeline(timeline, recorder)
    _per_op(per_op, recorder, traced)
    _legend(figure, recorder)
    figure.suptitle(_title(recorder, traced, title), fontsize=10)
    figure.tight_layout(rect=(0, 0.04, 1, 1))
    target = Path(path)
    figure.savefig(target, dpi=110)
    plt.close(figure)
    return target
