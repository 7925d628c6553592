"""``ttnn.database``: the report database's rows as records, and its helpers.

A report (``ttnn.CONFIG.enable_logging``, :mod:`meshnn.capture.report_writer`) is ``db.sqlite``
(:data:`SQLITE_DB_PATH`) in ``ttnn.CONFIG.report_path``, with the tables of
:mod:`meshnn.capture.report_schema`.  This module gives ttnn's records of its rows (a record of a
``SELECT *`` row: ``Operation(*row)``; :class:`Buffer` and :class:`BufferPage` turn their buffer type
into a ``ttnn.BufferType``), ttnn's module-wide connection (:data:`SQLITE_CONNECTION`, opened by
:func:`get_or_create_sqlite_db`, which a test resets to None to start over), and its insert and
query helpers over those tables.

Layers: imports :mod:`meshnn.device` (the buffer enums) and the report's schema, rows and sources.
"""

from __future__ import annotations

import dataclasses
import re
import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path

from meshnn.capture.report_rows import DEVICE_COLUMNS
from meshnn.capture.report_schema import open_database
from meshnn.capture.report_sources import ReportSources
from meshnn.device.buffer import BufferType, TensorMemoryLayout

SQLITE_DB_PATH = "db.sqlite"
TENSORS_PATH = "tensors"
GRAPHS_PATH = "graph"
CONFIG_PATH = "config.json"

SQLITE_CONNECTION: sqlite3.Connection | None = None
"""The connection every helper uses, opened by the first (ttnn keeps one per process)."""


Device = dataclasses.make_dataclass("Device", [("device_id", int), *((c, int) for c in DEVICE_COLUMNS)])
"""A ``devices`` row: ``device_id`` and ``ttnn.reports.DeviceInfo``'s figures (the report's columns)."""


@dataclasses.dataclass
class Operation:
    operation_id: int
    name: str
    duration: float | None


@dataclasses.dataclass
class Buffer:
    operation_id: int
    device_id: int
    address: int
    max_size_per_bank: int
    buffer_type: BufferType | None
    buffer_layout: TensorMemoryLayout | int | None

    def __post_init__(self) -> None:
        self.buffer_type = BufferType(self.buffer_type) if self.buffer_type is not None else None


@dataclasses.dataclass
class BufferPage:
    operation_id: int
    device_id: int
    address: int
    core_y: int
    core_x: int
    bank_id: int
    page_index: int
    page_address: int
    page_size: int
    buffer_type: BufferType | None

    def __post_init__(self) -> None:
        self.buffer_type = BufferType(self.buffer_type) if self.buffer_type is not None else None


@dataclasses.dataclass
class Tensor:
    tensor_id: int
    shape: str
    dtype: str
    layout: str
    memory_config: str | None
    device_id: int | None
    address: int | None
    buffer_type: BufferType | None

    def __post_init__(self) -> None:
        self.buffer_type = BufferType(self.buffer_type) if self.buffer_type is not None else None


@dataclasses.dataclass
class InputTensor:
    operation_id: int
    input_index: int
    tensor_id: int


@dataclasses.dataclass
class OutputTensor:
    operation_id: int
    output_index: int
    tensor_id: int


@dataclasses.dataclass
class TensorComparisonRecord:
    tensor_id: int
    golden_tensor_id: int
    matches: bool
    desired_pcc: float
    actual_pcc: float


@dataclasses.dataclass
class OperationArgument:
    operation_id: int
    name: str
    value: str


@dataclasses.dataclass
class ErrorRecord:
    operation_id: int
    operation_name: str
    error_type: str
    error_message: str
    stack_trace: str
    timestamp: str


def get_or_create_sqlite_db(report_path: str | Path) -> sqlite3.Connection:
    """:data:`SQLITE_CONNECTION`, opened on ``report_path / db.sqlite`` (the folder and the
    tables made when missing) when it is None."""
    global SQLITE_CONNECTION
    if SQLITE_CONNECTION is None:
        path = Path(report_path)
        path.mkdir(parents=True, exist_ok=True)
        SQLITE_CONNECTION = open_database(path / SQLITE_DB_PATH)[0]
    return SQLITE_CONNECTION


def get_cursor(report_path: str | Path) -> sqlite3.Cursor:
    return get_or_create_sqlite_db(report_path).cursor()


_FILE = re.compile(r'File "([^"]+)"')


def insert_stack_trace(report_path: str | Path, operation_id: int, stack_trace: Sequence[str]) -> None:
    """Store ``stack_trace`` (traceback lines, outermost first, ending in two trailer lines ttnn
    drops) innermost first, with the first file it names when that file can be read (its text
    in ``source_files``, once per file)."""
    db = get_or_create_sqlite_db(report_path)
    text = "\n".join(list(stack_trace[:-2])[::-1])
    named = _FILE.search(text)
    source = None
    if named is not None:
        source = ReportSources().source_file(db, str(Path(named.group(1)).expanduser().resolve()))
    db.execute(
        "INSERT INTO stack_traces (operation_id, stack_trace, source_file_id) VALUES (?, ?, ?)",
        (
            operation_id,
            text,
            source,
        ),
    )
    db.commit()


def insert_error(
    report_path: str | Path,
    operation_id: int,
    operation_name: str,
    error_type: str,
    error_message: str,
    stack_trace: str,
    timestamp: str,
) -> None:
    db = get_or_create_sqlite_db(report_path)
    row = (operation_id, operation_name, error_type, error_message, stack_trace, timestamp)
    db.execute("INSERT INTO errors VALUES (?, ?, ?, ?, ?, ?)", row)
    db.commit()


def _rows(report_path: str | Path, record: type, sql: str, *params: object) -> Iterator:
    for row in get_cursor(report_path).execute(sql, params).fetchall():
        yield record(*row)


def _one(report_path: str | Path, record: type, sql: str, *params: object) -> object | None:
    return next(_rows(report_path, record, sql, *params), None)


def query_device_by_id(report_path: str | Path, device_id: int) -> Device | None:
    return _one(report_path, Device, "SELECT * FROM devices WHERE device_id = ?", device_id)  # type: ignore[return-value]


def query_operation_by_id(report_path: str | Path, operation_id: int) -> Operation | None:
    return _one(report_path, Operation, "SELECT * FROM operations WHERE operation_id = ?", operation_id)  # type: ignore[return-value]


def query_operations(report_path: str | Path) -> Iterator[Operation]:
    return _rows(report_path, Operation, "SELECT * FROM operations")


def query_latest_operation(report_path: str | Path) -> Operation | None:
    return _one(report_path, Operation, "SELECT * FROM operations ORDER BY operation_id DESC LIMIT 1")  # type: ignore[return-value]


def query_operation_arguments(report_path: str | Path, operation_id: int) -> Iterator[OperationArgument]:
    return _rows(
        report_path, OperationArgument, "SELECT * FROM operation_arguments WHERE operation_id = ?", operation_id
    )


def query_stack_trace(report_path: str | Path, operation_id: int) -> str | None:
    row = (
        get_cursor(report_path)
        .execute("SELECT stack_trace FROM stack_traces WHERE operation_id = ?", (operation_id,))
        .fetchone()
    )
    return row[0] if row else None


def query_buffers(report_path: str | Path, operation_id: int) -> Iterator[Buffer]:
    return _rows(report_path, Buffer, "SELECT * FROM buffers WHERE operation_id = ?", operation_id)


def query_buffer_pages(report_path: str | Path, operation_id: int) -> Iterator[BufferPage]:
    return _rows(report_path, BufferPage, "SELECT * FROM buffer_pages WHERE operation_id = ?", operation_id)


def query_tensor_by_id(report_path: str | Path, tensor_id: int) -> Tensor | None:
    return _one(report_path, Tensor, "SELECT * FROM tensors WHERE tensor_id = ?", tensor_id)  # type: ignore[return-value]


def query_input_tensors(report_path: str | Path, operation_id: int) -> Iterator[InputTensor]:
    return _rows(report_path, InputTensor, "SELECT * FROM input_tensors WHERE operation_id = ?", operation_id)


def query_output_tensors(report_path: str | Path, operation_id: int) -> Iterator[OutputTensor]:
    return _rows(report_path, OutputTensor, "SELECT * FROM output_tensors WHERE operation_id = ?", operation_id)
