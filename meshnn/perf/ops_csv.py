"""The ops-perf CSV in tt-metal's profiler format (``ops_perf_results_*.csv``), one row per device per
op, with predicted durations where the profiler writes measured ones.

Columns are the ones tt-perf-report 1.4.1 reads (and a few it passes through), in tt-metal's order
[tt-metal: tools/tracy/process_ops_logs.py ``OPS_CSV_HEADER``]: each tensor as a 7-column block of
``"padded[logical]"`` dims W, Z, Y, X (dims -4..-1, 1 when the rank is smaller), layout, dtype and
``DEV_{id}_{BUFFER}_{LAYOUT}``; every comma inside a field becomes ``;``; ``GLOBAL CALL COUNT`` is
``(op << 10) | device``.  ``HOST START TS`` is the op's predicted start on its device (ns), which
keeps each device's rows in order when tt-perf-report sorts by it.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from meshnn.perf.desc import MatmulProgram, OpDesc, TensorDesc
from meshnn.perf.prediction import Prediction
from meshnn.perf.recorder import Record, Recorder

HEAD = (
    "OP CODE",
    "OP TYPE",
    "GLOBAL CALL COUNT",
    "DEVICE ID",
    "DEVICE ARCH",
    "ATTRIBUTES",
    "MATH FIDELITY",
    "CORE COUNT",
    "AVAILABLE WORKER CORE COUNT",
    "HOST START TS",
    "HOST END TS",
    "HOST DURATION [ns]",
    "OP TO OP LATENCY [ns]",
    "DEVICE FW DURATION [ns]",
    "DEVICE KERNEL DURATION [ns]",
)
TAIL = ("PM IDEAL [ns]", "PM COMPUTE [ns]", "PM BANDWIDTH [ns]")
BLOCK = ("W_PAD[LOGICAL]", "Z_PAD[LOGICAL]", "Y_PAD[LOGICAL]", "X_PAD[LOGICAL]", "LAYOUT", "DATATYPE", "MEMORY")
START_OFFSET_NS = 1_000_000
"""Host timestamps start here, as a profiler's would not start at zero."""


def header(inputs: int, outputs: int) -> list[str]:
    """The column names for ``inputs`` input and ``outputs`` output tensor slots."""
    blocks = [f"INPUT_{i}_{c}" for i in range(inputs) for c in BLOCK]
    blocks += [f"OUTPUT_{i}_{c}" for i in range(outputs) for c in BLOCK]
    return [*HEAD, *blocks, *TAIL]


def _dims(tensor: TensorDesc) -> list[str]:
    padded = (1, 1, 1, 1, *tensor.shape)[-4:]
    logical = (1, 1, 1, 1, *(tensor.logical_shape or tensor.shape))[-4:]
    return [f"{p}[{q}]" for p, q in zip(padded, logical, strict=True)]


def tensor_cells(tensor: TensorDesc | None, device: int) -> list[str]:
    """The 7 cells of one tensor slot (empty for a slot this op does not have)."""
    if tensor is None:
        return [""] * len(BLOCK)
    return [*_dims(tensor), tensor.layout.name, tensor.dtype, f"DEV_{device}_{tensor.memory_name}"]


OP_CHAIN = "op_chain"
"""The attribute naming an op's unary SFPU ops (``UnaryOpType::SILU``, space-separated): tt-metal's unary ops
print their ``op_chain`` of ``UnaryWithParam``; read back by :func:`meshnn.perf.calibrate.desc_of`."""


def attributes(desc: OpDesc, prediction: Prediction) -> str:
    """The op's attributes as the profiler prints them: ``{'k': 'v'; 'k2': 'v2'}``."""
    items: list[tuple[str, str]] = []
    if prediction.fidelity is not None:
        items.append(("compute_kernel_config", f"ComputeKernelConfig(math_fidelity={prediction.fidelity.name})"))
    if desc.matmul is not None and desc.matmul.program is not MatmulProgram.DEFAULT:
        items.append(("program_config", desc.matmul.program.value))
    if desc.collective is not None:
        c = desc.collective
        items += [("dim", str(c.dim)), ("topology", f"Topology::{c.topology.value}")]
        items += [("cluster_axis", str(c.cluster_axis)), ("num_links", str(c.num_links or ""))]
    if desc.unary_ops:  # the SFPU ops a unary chains or a binary / matmul fuses, as ttnn names them
        items.append((OP_CHAIN, " ".join(f"UnaryOpType::{op.upper()}" for op in desc.unary_ops)))
    items += list(desc.attributes)
    items.append(("predicted_bound", prediction.bound.value))
    return "{" + "; ".join(f"'{k}': '{v}'" for k, v in items) + "}"


def _row(entry: Record, slot: int, recorder: Recorder, slots: tuple[int, int]) -> list[object]:
    p, device, start = entry.prediction, entry.devices[slot], entry.start_ns[slot]
    arch = recorder.machine.system.arch.arch.value
    begin = START_OFFSET_NS + round(start)
    kernel = round(p.kernel_ns)
    cells: list[object] = [entry.desc.op_code, "tt_dnn_device", ((entry.index + 1) << 10) | device, device, arch]
    cells += [attributes(entry.desc, p), p.fidelity.name if p.fidelity else "", p.cores]
    cells += [recorder.machine.system.compute_cores, begin, begin + kernel, kernel, round(p.gap_ns), kernel, kernel]
    for i in range(slots[0]):
        cells += tensor_cells(entry.desc.inputs[i] if i < len(entry.desc.inputs) else None, device)
    for i in range(slots[1]):
        cells += tensor_cells(entry.desc.outputs[i] if i < len(entry.desc.outputs) else None, device)
    cells += [round(max(p.compute_ns, p.memory_ns)), round(p.compute_ns), round(p.memory_ns)]
    return [str(c).replace(",", ";") for c in cells]


def ops_perf_csv(recorder: Recorder) -> str:
    """The CSV text: one row per device per op, ops in record order, devices in id order."""
    records = recorder.records
    slots = (
        max([2, *(len(r.desc.inputs) for r in records)]),
        max([1, *(len(r.desc.outputs) for r in records)]),
    )
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header(*slots))
    for entry in records:
        for slot in sorted(range(len(entry.devices)), key=lambda i: entry.devices[i]):
            writer.writerow(_row(entry, slot, recorder, slots))
    return out.getvalue()


def write_ops_perf_csv(recorder: Recorder, path: str | Path) -> Path:
    """Write :func:`ops_perf_csv` to ``path`` (tt-metal names it ``ops_perf_results_<name>.csv``)."""
    target = Path(path)
    target.write_text(ops_perf_csv(recorder))
    return target
