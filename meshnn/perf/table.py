"""The per-op table a person reads: op, shapes, dtypes, fidelity, cores, predicted time and bound,
then the totals per device."""

from __future__ import annotations

from meshnn.perf.desc import OpDesc, TensorDesc
from meshnn.perf.recorder import Recorder

SHORT_DTYPES = {
    "BFLOAT16": "BF16",
    "BFLOAT8_B": "BFP8",
    "BFLOAT4_B": "BFP4",
    "FLOAT32": "FP32",
    "UINT32": "U32",
    "INT32": "I32",
    "UINT16": "U16",
    "UINT8": "U8",
    "INT8": "I8",
    "FP8_E4M3": "FP8",
}

HEADER = ("#", "op", "shapes", "dtypes", "fidelity", "cores", "devices", "kernel us", "gap us", "bound")


def shape_text(tensor: TensorDesc) -> str:
    return "x".join(str(d) for d in tensor.shape)


def shapes_text(desc: OpDesc) -> str:
    """``1x32x4096 @ 4096x4096 -> 1x32x4096``: the first two inputs and the first output."""
    ins = " @ ".join(shape_text(t) for t in desc.inputs[:2])
    return f"{ins} -> {shape_text(desc.outputs[0])}" if desc.outputs else ins


def dtypes_text(desc: OpDesc) -> str:
    """``BF16 x BFP8 => BF16``, as tt-perf-report writes its Math Fidelity column."""
    ins = " x ".join(SHORT_DTYPES[t.dtype] for t in desc.inputs[:2])
    return f"{ins} => {SHORT_DTYPES[desc.outputs[0].dtype]}" if desc.outputs else ins


def _us(ns: float) -> str:
    return f"{ns / 1e3:,.1f}"


def rows(recorder: Recorder) -> list[tuple[str, ...]]:
    """One row per op (its devices share one prediction), as text."""
    out = []
    for entry in recorder.records:
        p = entry.prediction
        out.append(
            (
                str(entry.index),
                entry.desc.op_code,
                shapes_text(entry.desc),
                dtypes_text(entry.desc),
                p.fidelity.name if p.fidelity else "",
                str(p.cores),
                str(len(entry.devices)),
                _us(p.kernel_ns),
                _us(p.gap_ns),
                p.bound.value,
            )
        )
    return out


def format_table(recorder: Recorder) -> str:
    """The table of every recorded op and the per-device totals, as printable text."""
    body = [HEADER, *rows(recorder)]
    widths = [max(len(r[i]) for r in body) for i in range(len(HEADER))]
    right = {0, 5, 6, 7, 8}
    lines = []
    for r in body:
        cells = [c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True))]
        lines.append("  ".join(cells).rstrip())
    lines.insert(1, "-" * len(lines[0]))
    lines.append("")
    system = recorder.machine.system
    lines.append(f"predicted on {system.name} ({system.spec.description}), mesh {recorder.machine.mesh_shape}")
    for t in recorder.totals():
        lines.append(
            f"device {t.device}: {t.ops} ops, kernels {_us(t.kernel_ns)} us + gaps {_us(t.gap_ns)} us"
            f" = {_us(t.total_ns)} us"
        )
    return "\n".join(lines + notes(recorder))


def notes(recorder: Recorder, *, limit: int = 12) -> list[str]:
    """What the model noted about the ops (a clamped num_links, a ring run as a line, flash decode's
    split...), each once, with the first op it was said of."""
    seen: dict[str, int] = {}
    for entry in recorder.records:
        for note in entry.prediction.notes:
            seen.setdefault(note, entry.index)
    if not seen:
        return []
    shown = [f"  op {index}: {note}" for note, index in list(seen.items())[:limit]]
    more = [f"  ... {len(seen) - limit} more"] if len(seen) > limit else []
    return ["notes (each once, with the first op it applies to):", *shown, *more]
