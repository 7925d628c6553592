"""Calibration from a measured profile: the model checked against an ops-perf CSV that tt-metal's
profiler wrote on hardware, and a run predicted with the measured times where they apply.

- :func:`check_rows`: every measured row rebuilt as the op the model times (its op code's family,
  its tensors, fidelity, program config and collective attributes; its ``CORE COUNT`` as the op's
  cores) and predicted on the system it ran on; the row's error is model / measured - 1.
  :func:`family_errors` sums them per family (median and time-weighted).
- :func:`calibrate_run`: the ops of a captured run (any system, mesh or batch) matched to the
  measured ops by their signature (op code, every tensor's padded shape, dtype, layout and memory,
  the math fidelity and the matmul program kind): a matched op takes the measured kernel time (the
  median of its measured runs; per run, the slowest device, or the devices' mean for a collective,
  as tt-perf-report merges them), an unmatched one the model's, scaled by its family's
  measured / model ratio where that family had matches.  Each op says which.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from meshnn.errors import MeshnnValueError
from meshnn.perf.desc import CollectiveConfig, MatmulConfig, MatmulProgram, OpDesc, OpFamily, TensorDesc, Topology
from meshnn.perf.fidelity import MathFidelity
from meshnn.perf.measured import MeasuredRow
from meshnn.perf.model import predict_kernel
from meshnn.perf.op_codes import canonical, family_of
from meshnn.perf.ops_csv import OP_CHAIN
from meshnn.perf.recorder import Recorder
from meshnn.perf.systems import Machine, machine

_SYSTEMS = {("wormhole_b0", 1): "n150", ("wormhole_b0", 2): "n300", ("wormhole_b0", 8): "t3k"}
_SYSTEMS.update({("wormhole_b0", 32): "galaxy", ("blackhole", 1): "p150", ("blackhole", 2): "p300"})
_PROGRAMS = {p.value: p for p in MatmulProgram if p is not MatmulProgram.DEFAULT}


def measured_machine(rows: Sequence[MeasuredRow], system: str | None = None) -> Machine:
    """The machine the rows ran on: ``system`` if given, else the one of their arch and device count
    (a line of its devices; a Galaxy 8x4)."""
    if system is not None:
        return machine(system)
    arch = next((r.arch for r in rows if r.arch), "wormhole_b0")
    devices = len({r.device for r in rows}) or 1
    name = _SYSTEMS.get((arch, devices))
    if name is None:
        raise MeshnnValueError(f"no simulated system has {devices} {arch} device(s): give --system")
    shape = (8, 4) if name == "galaxy" else (1, devices)
    return machine(name, shape)


def _program(text: str) -> MatmulConfig | None:
    kind = next((p for name, p in _PROGRAMS.items() if name in text), None)
    if kind is None:
        return None
    numbers = {k: int(v) for k, v in re.findall(r"(per_core_[MN]|in0_block_w)=(\d+)", text)}
    mcast_in0 = re.search(r"mcast_in0=(false|0)\b", text.lower()) is None
    return MatmulConfig(
        kind,
        per_core_m=numbers.get("per_core_M") or None,
        per_core_n=numbers.get("per_core_N") or None,
        mcast_in0=mcast_in0,
        in0_block_w=numbers.get("in0_block_w") or None,
    )


def _collective(attributes: dict[str, str]) -> CollectiveConfig:
    ring = "ring" in attributes.get("topology", "").lower()
    axis = attributes.get("cluster_axis", "")
    links = attributes.get("num_links", "")
    return CollectiveConfig(
        Topology.RING if ring else Topology.LINEAR,
        cluster_axis=int(axis) if axis.isdecimal() else None,
        num_links=int(links) if links.isdecimal() and int(links) > 0 else None,
        dim=int(attributes["dim"]) if attributes.get("dim", "").lstrip("-").isdecimal() else 0,
    )


def desc_of(row: MeasuredRow) -> OpDesc | None:
    """The op the model times for a measured row; None when its family is unknown or it has no tensor."""
    family = family_of(row.op_code)
    if family is None or not row.inputs:
        return None
    extra: dict[str, object] = {}
    if family is OpFamily.MATMUL:
        extra["matmul"] = _program(row.attributes.get("program_config", ""))
    elif family.is_collective:
        extra["collective"] = _collective(row.attributes)
    fidelity = None
    if row.fidelity and row.fidelity.lower() in {f.name.lower() for f in MathFidelity}:
        fidelity = MathFidelity.parse(row.fidelity)
    outputs = row.outputs or (() if family in (OpFamily.KV_UPDATE, OpFamily.KV_FILL) else row.inputs[:1])
    grid = (row.cores, 1) if row.cores else None
    if family is OpFamily.MATMUL and extra["matmul"] is None:
        grid = None  # no program config: ttnn picks one itself, and the model picks the same
    unary = tuple(op.lower() for op in re.findall(r"UnaryOpType::(\w+)", row.attributes.get(OP_CHAIN, "")))
    code = canonical(row.op_code)
    return OpDesc(
        family, row.inputs, outputs, op_code=code, fidelity=fidelity, core_grid=grid, unary_ops=unary, **extra
    )  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True)
class RowCheck:
    """One measured row against the model: ``model_ns`` None when the model cannot time it."""

    row: MeasuredRow
    family: OpFamily | None
    model_ns: float | None
    model_cores: int | None
    why: str = ""

    @property
    def error(self) -> float | None:
        if self.model_ns is None or not self.row.kernel_ns:
            return None
        return self.model_ns / self.row.kernel_ns - 1


def check_rows(rows: Iterable[MeasuredRow], target: Machine) -> list[RowCheck]:
    """Every row predicted on ``target`` beside its measured kernel time."""
    out = []
    for row in rows:
        desc = desc_of(row)
        if desc is None:
            out.append(RowCheck(row, family_of(row.op_code), None, None, "no model for this op code"))
            continue
        try:
            p = predict_kernel(desc, target)
        except (MeshnnValueError, ValueError, KeyError, IndexError, ZeroDivisionError) as error:
            out.append(RowCheck(row, desc.family, None, None, f"{type(error).__name__}: {error}"))
            continue
        out.append(RowCheck(row, desc.family, p.kernel_ns, p.cores))
    return out


@dataclass(frozen=True, slots=True)
class FamilyError:
    """A family's rows: how many were timed, the median error, and the error of their summed time."""

    family: str
    rows: int
    median_error: float
    total_error: float
    measured_ns: float
    model_ns: float


def family_errors(checks: Iterable[RowCheck]) -> list[FamilyError]:
    """Per family (rows the model timed and that have a measured duration), largest measured time first."""
    by: dict[str, list[RowCheck]] = {}
    for c in checks:
        if c.error is not None and c.family is not None:
            by.setdefault(c.family.name, []).append(c)
    out = []
    for name, group in by.items():
        measured = sum(c.row.kernel_ns or 0.0 for c in group)
        model = sum(c.model_ns or 0.0 for c in group)
        errors = [c.error for c in group if c.error is not None]
        out.append(FamilyError(name, len(group), statistics.median(errors), model / measured - 1, measured, model))
    return sorted(out, key=lambda f: -f.measured_ns)


Signature = tuple


def signature(op_code: str, inputs: Sequence[TensorDesc], outputs: Sequence[TensorDesc], extra: tuple) -> Signature:
    """What must agree for a measured op to stand for a run's op."""

    def key(t: TensorDesc) -> tuple:
        return (tuple((1, 1, 1, 1, *t.shape)[-4:]), t.dtype, t.layout.name, t.buffer.name, t.memory.name)

    return (canonical(op_code), tuple(map(key, inputs)), tuple(map(key, outputs)), extra)


def _extra(fidelity: MathFidelity | None, matmul: MatmulConfig | None) -> tuple:
    program = matmul.program if matmul is not None else MatmulProgram.DEFAULT
    return (fidelity.name if fidelity else "", "" if program is MatmulProgram.DEFAULT else program.value)


def measured_times(rows: Iterable[MeasuredRow]) -> dict[Signature, float]:
    """The measured kernel time of each op signature: per run the slowest device (a collective: the
    devices' mean), then the median over the runs."""
    runs: dict[tuple[Signature, int], list[float]] = {}
    for row in rows:
        desc = desc_of(row)
        if desc is None or row.kernel_ns is None:
            continue
        key = signature(row.op_code, row.inputs, row.outputs, _extra(desc.fidelity, desc.matmul))
        runs.setdefault((key, row.op_id), []).append(row.kernel_ns)
    per: dict[Signature, list[float]] = {}
    for (key, _), times in runs.items():
        collective = family_of(key[0]) in (OpFamily.ALL_GATHER, OpFamily.REDUCE_SCATTER, OpFamily.ALL_REDUCE)
        per.setdefault(key, []).append(statistics.fmean(times) if collective else max(times))
    return {key: statistics.median(times) for key, times in per.items()}


@dataclass(frozen=True, slots=True)
class CalibratedOp:
    """One op of a run: the model's kernel time, the measured one when it matched, the time used and
    where it came from (``measured``, ``model``, or ``model x F``: scaled by its family's ratio)."""

    index: int
    desc: OpDesc
    model_ns: float
    measured_ns: float | None
    used_ns: float
    gap_ns: float
    source: str


def family_ratios(ops: Iterable[CalibratedOp]) -> dict[OpFamily, float]:
    """Measured / model time per family, over the run's matched ops."""
    sums: dict[OpFamily, list[float]] = {}
    for op in ops:
        if op.measured_ns is not None and op.model_ns > 0:
            pair = sums.setdefault(op.desc.family, [0.0, 0.0])
            pair[0] += op.measured_ns
            pair[1] += op.model_ns
    return {family: measured / model for family, (measured, model) in sums.items()}


def calibrate_run(recorder: Recorder, measured: dict[Signature, float], *, scale: bool = True) -> list[CalibratedOp]:
    """The ops of ``recorder`` timed with the measured kernel times where their signatures match,
    the model's elsewhere (``scale``: times its family's measured / model ratio when it has one)."""
    first = []
    for record in recorder.records:
        p = record.prediction
        key = signature(
            record.desc.op_code, record.desc.inputs, record.desc.outputs, _extra(p.fidelity, record.desc.matmul)
        )
        hit = measured.get(key)
        used, source = (hit, "measured") if hit is not None else (p.kernel_ns, "model")
        first.append(CalibratedOp(record.index, record.desc, p.kernel_ns, hit, used, p.gap_ns, source))
    ratios = family_ratios(first) if scale else {}
    out = []
    for op in first:
        ratio = ratios.get(op.desc.family)
        if op.measured_ns is None and ratio is not None:
            op = replace(op, used_ns=op.model_ns * ratio, source=f"model x {ratio:.2f}")
        out.append(op)
    return out
