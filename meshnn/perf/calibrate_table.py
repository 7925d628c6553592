"""The calibration's tables as a person reads them: the measured rows beside the model (per row and
per family), and a run predicted with the measured times where they matched."""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from meshnn.perf.calibrate import CalibratedOp, RowCheck, family_errors
from meshnn.perf.desc import TensorDesc
from meshnn.perf.systems import Machine


def _shapes(inputs: Sequence[TensorDesc], outputs: Sequence[TensorDesc]) -> str:
    text = " @ ".join("x".join(map(str, t.shape)) for t in inputs[:2])
    return f"{text} -> {'x'.join(map(str, outputs[0].shape))}" if outputs else text


def _us(ns: float | None) -> str:
    return "-" if ns is None else f"{ns / 1e3:,.1f}"


def _pct(error: float | None) -> str:
    return "-" if error is None else f"{100 * error:+.0f}%"


def _table(header: Sequence[str], rows: list[Sequence[str]], right: set[int]) -> list[str]:
    body = [list(header), *map(list, rows)]
    widths = [max(len(r[i]) for r in body) for i in range(len(header))]
    lines = []
    for r in body:
        cells = (c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True)))
        lines.append("  ".join(cells).rstrip())
    lines.insert(1, "-" * len(lines[0]))
    return lines


def format_checks(checks: Sequence[RowCheck], target: Machine, *, limit: int = 60) -> str:
    """Each measured row (the first ``limit``) beside the model, then the errors per family."""
    header = ("line", "op", "shapes", "device", "cores (meas/model)", "measured us", "model us", "error")
    rows = []
    for c in checks[:limit]:
        r = c.row
        cores = f"{r.cores or '-'}/{c.model_cores or '-'}"
        model = _us(c.model_ns) if c.model_ns is not None else f"({c.why})"
        rows.append((str(r.line), r.op_code, _shapes(r.inputs, r.outputs), str(r.device), cores,
                     _us(r.kernel_ns), model, _pct(c.error)))  # fmt: skip
    system = target.system
    lines = [f"measured rows beside the model on {system.name} ({system.spec.description}), mesh {target.mesh_shape}"]
    lines += _table(header, rows, {0, 3, 5, 6, 7})
    if len(checks) > limit:
        lines.append(f"... {len(checks) - limit} more rows")
    families = family_errors(checks)
    lines += ["", "the model's error per family (model / measured - 1)"]
    fam_rows = [(f.family, str(f.rows), _us(f.measured_ns), _us(f.model_ns), _pct(f.median_error), _pct(f.total_error))
                for f in families]  # fmt: skip
    lines += _table(("family", "rows", "measured us", "model us", "median", "of the sum"), fam_rows, {1, 2, 3, 4, 5})
    timed = [c.error for c in checks if c.error is not None]
    if timed:
        within = sum(abs(e) <= 0.15 for e in timed)
        median = 100 * statistics.median(map(abs, timed))
        lines.append(f"{len(timed)} of {len(checks)} rows timed; median |error| {median:.0f}%, {within} within 15%")
    return "\n".join(lines)


def format_calibrated(ops: Sequence[CalibratedOp], target: Machine, *, limit: int = 80) -> str:
    """A run's ops with the time used for each and where it came from, then the totals by source."""
    header = ("#", "op", "shapes", "source", "model us", "measured us", "used us")
    rows = [(str(o.index), o.desc.op_code, _shapes(o.desc.inputs, o.desc.outputs), o.source, _us(o.model_ns),
             _us(o.measured_ns), _us(o.used_ns)) for o in ops[:limit]]  # fmt: skip
    lines = [f"the run predicted on {target.system.name}, mesh {target.mesh_shape}: measured where it matched"]
    lines += _table(header, rows, {0, 4, 5, 6})
    if len(ops) > limit:
        lines.append(f"... {len(ops) - limit} more ops")
    measured = sum(o.used_ns for o in ops if o.source == "measured")
    scaled = sum(o.used_ns for o in ops if o.source.startswith("model x"))
    model = sum(o.used_ns for o in ops if o.source == "model")
    gaps = sum(o.gap_ns for o in ops)
    matched = sum(o.source == "measured" for o in ops)
    alone = sum(o.model_ns for o in ops) + gaps
    lines.append(
        f"{matched} of {len(ops)} ops measured: kernels {_us(measured)} us measured + {_us(scaled)} us model scaled "
        f"by its family's measured ratio + {_us(model)} us model; gaps {_us(gaps)} us (the model's); "
        f"total {_us(measured + scaled + model + gaps)} us (the model alone: {_us(alone)} us)"
    )
    return "\n".join(lines)
