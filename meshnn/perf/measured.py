"""Reading an ops-perf CSV that tt-metal's profiler wrote on hardware (``ops_perf_results_*.csv``):
one :class:`MeasuredRow` per device per op, with its tensors as the model describes them.

The columns are tt-metal's [tt-metal: tools/tracy/process_ops_logs.py ``OPS_CSV_HEADER``], as
tt-perf-report reads them: ``OP CODE``, ``OP TYPE`` (device ops are ``tt_dnn_device``; signposts and
host fallbacks are skipped), ``GLOBAL CALL COUNT`` (``(op << 10) | device`` on a mesh), ``DEVICE ID``,
``DEVICE ARCH``, ``ATTRIBUTES`` (``{'k': 'v'; ...}``, commas written as ``;``), ``MATH FIDELITY``,
``CORE COUNT``, ``OP TO OP LATENCY [ns]``, ``DEVICE KERNEL DURATION [ns]`` and each tensor's 7-column
block ``{INPUT|OUTPUT}_{i}_{W,Z,Y,X}_PAD[LOGICAL]`` (``"padded[logical]"``; plain integers in the
older v1 files, whose columns lack the ``_PAD[LOGICAL]`` suffix), ``_LAYOUT``, ``_DATATYPE`` and
``_MEMORY`` (``DEV_{id}_{BUFFER}_{LAYOUT}``).  Any column may be missing but ``OP CODE``; a row
without a kernel duration is kept with ``kernel_ns`` None.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass
from pathlib import Path

from meshnn.errors import MeshnnValueError
from meshnn.perf.desc import BufferType, Layout, MemoryLayout, TensorDesc, dtype_name

DIMS = ("W", "Z", "Y", "X")
_DIM = re.compile(r"^\s*(\d+)(?:\[(\d+)\])?\s*$")
_MEMORY = re.compile(r"^DEV_\d+_(DRAM|L1|L1_SMALL)_(INTERLEAVED|HEIGHT_SHARDED|WIDTH_SHARDED|BLOCK_SHARDED)$")
_ATTRIBUTE = re.compile(r"'([^']*)':\s*'([^']*)'")


@dataclass(frozen=True, slots=True)
class MeasuredRow:
    """One device's run of one op, as the profiler measured it (ns); ``line`` is its CSV line
    (the header is line 1)."""

    line: int
    op_code: str
    op_id: int
    device: int
    arch: str | None
    kernel_ns: float | None
    op_to_op_ns: float | None
    fidelity: str | None
    cores: int | None
    inputs: tuple[TensorDesc, ...]
    outputs: tuple[TensorDesc, ...]
    attributes: dict[str, str]

    def __hash__(self) -> int:
        return hash((self.line, self.op_code, self.device))


def _number(text: str | None) -> float | None:
    try:
        return float(text) if text not in (None, "") else None
    except ValueError:
        return None


def _dims(row: dict[str, str], prefix: str) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    """(padded, logical) shape of one tensor slot, or None for an empty slot."""
    padded, logical = [], []
    for dim in DIMS:
        cell = row.get(f"{prefix}_{dim}_PAD[LOGICAL]", row.get(f"{prefix}_{dim}", ""))
        match = _DIM.match(cell or "")
        if match is None:
            return None
        padded.append(int(match.group(1)))
        logical.append(int(match.group(2) or match.group(1)))
    return tuple(padded), tuple(logical)


def tensor_of(row: dict[str, str], prefix: str) -> TensorDesc | None:
    """The tensor of slot ``prefix`` (``INPUT_0``...), or None when the slot is empty or on the host."""
    dims = _dims(row, prefix)
    if dims is None:
        return None
    memory = _MEMORY.match(row.get(f"{prefix}_MEMORY", "") or "")
    buffer, layout = (BufferType.DRAM, MemoryLayout.INTERLEAVED) if memory is None else _placement(memory)
    try:
        dtype = dtype_name(row.get(f"{prefix}_DATATYPE") or "BFLOAT16")
    except MeshnnValueError:
        dtype = "BFLOAT16"
    tile = (row.get(f"{prefix}_LAYOUT") or "TILE").upper() != "ROW_MAJOR"
    return TensorDesc(dims[0], dtype, Layout.TILE if tile else Layout.ROW_MAJOR, buffer, layout, logical_shape=dims[1])


def _placement(match: re.Match) -> tuple[BufferType, MemoryLayout]:
    buffer = BufferType.DRAM if match.group(1) == "DRAM" else BufferType.L1
    return buffer, MemoryLayout[match.group(2)]


def attributes_of(text: str | None) -> dict[str, str]:
    """``{'k': 'v'; 'k2': 'v2'}`` as a dict (values as written)."""
    return dict(_ATTRIBUTE.findall(text or ""))


def _slots(header: list[str], kind: str) -> list[str]:
    found = sorted({int(m.group(1)) for c in header if (m := re.match(rf"^{kind}_(\d+)_", c))})
    return [f"{kind}_{i}" for i in found]


def read_ops_perf_csv(source: str | Path) -> list[MeasuredRow]:
    """The device rows of an ops-perf CSV (a path, or the CSV's text when it holds a newline)."""
    if isinstance(source, str) and "\n" in source:
        text = source
    else:
        try:
            text = Path(source).read_text()
        except (OSError, UnicodeDecodeError) as error:
            raise MeshnnValueError(f"cannot read the ops-perf CSV {str(source)!r}: {error}") from error
    reader = csv.DictReader(io.StringIO(text))
    header = list(reader.fieldnames or [])
    if "OP CODE" not in header:
        raise MeshnnValueError(f"not an ops-perf CSV (no 'OP CODE' column): {str(source)[:80]!r}")
    inputs, outputs = _slots(header, "INPUT"), _slots(header, "OUTPUT")
    rows = []
    for line, row in enumerate(reader, start=2):
        kind = (row.get("OP TYPE") or "tt_dnn_device").strip()
        if kind != "tt_dnn_device" or not (row.get("OP CODE") or "").strip():
            continue
        rows.append(_row(line, row, inputs, outputs))
    return rows


def _row(line: int, row: dict[str, str], inputs: list[str], outputs: list[str]) -> MeasuredRow:
    device = int(_number(row.get("DEVICE ID")) or 0)
    count = int(_number(row.get("GLOBAL CALL COUNT")) or line)
    op_id = count >> 10 if count & 1023 == device and count >= 1024 else count
    cores = _number(row.get("CORE COUNT"))
    return MeasuredRow(
        line=line,
        op_code=row["OP CODE"].strip(),
        op_id=op_id,
        device=device,
        arch=(row.get("DEVICE ARCH") or "").strip() or None,
        kernel_ns=_number(row.get("DEVICE KERNEL DURATION [ns]")),
        op_to_op_ns=_number(row.get("OP TO OP LATENCY [ns]")),
        fidelity=(row.get("MATH FIDELITY") or "").strip() or None,
        cores=int(cores) if cores else None,
        inputs=tuple(t for t in (tensor_of(row, p) for p in inputs) if t is not None),
        outputs=tuple(t for t in (tensor_of(row, p) for p in outputs) if t is not None),
        attributes=attributes_of(row.get("ATTRIBUTES")),
    )
