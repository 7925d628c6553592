"""A PNG of where the predicted time goes: for each device, one bar split by op code (kernel time)
plus the op-to-op gaps.  matplotlib is the optional ``plot`` extra, imported only here and only
when a picture is asked for."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from meshnn.errors import MeshnnError
from meshnn.perf.recorder import Recorder

GAP = "op-to-op gaps"


def time_by_op(recorder: Recorder) -> dict[int, dict[str, float]]:
    """Per device: kernel ns summed per op code, and the gaps under ``GAP``."""
    out: dict[int, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for entry in recorder.records:
        for device in entry.devices:
            out[device][entry.desc.op_code] += entry.prediction.kernel_ns
            out[device][GAP] += entry.prediction.gap_ns
    return {d: dict(v) for d, v in sorted(out.items())}


def _pyplot():
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as error:  # pragma: no cover - depends on the environment
        raise MeshnnError("the time plot needs matplotlib: pip install 'meshnn[plot]'") from error
    return plt


def write_time_plot(recorder: Recorder, path: str | Path, *, title: str | None = None) -> Path:
    """Draw the stacked bars of :func:`time_by_op` to the PNG at ``path``."""
    plt = _pyplot()
    data = time_by_op(recorder)
    codes = sorted(
        {c for per in data.values() for c in per if c != GAP},
        key=lambda c: -sum(per.get(c, 0.0) for per in data.values()),
    )
    codes.append(GAP)
    devices = list(data)
    fig, ax = plt.subplots(figsize=(9, 2.0 + 0.45 * max(len(devices), 1)))
    left = [0.0] * len(devices)
    for code in codes:
        widths = [data[d].get(code, 0.0) / 1e3 for d in devices]
        ax.barh([f"device {d}" for d in devices], widths, left=left, label=code)
        left = [a + b for a, b in zip(left, widths, strict=True)]
    ax.set_xlabel("predicted time (us)")
    system = recorder.machine.system
    ax.set_title(title or f"Where the time goes: {system.name}, mesh {recorder.machine.mesh_shape}")
    ax.invert_yaxis()
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.3), ncol=3, frameon=False)
    fig.tight_layout()
    target = Path(path)
    fig.savefig(target, dpi=110)
    plt.close(fig)
    return target
