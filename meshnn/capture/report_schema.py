"""The report folder's fixed parts: the database's tables, ``config.json`` and ``cluster_descriptor.yaml``.

The tables are ttnn's (tt-metal's report writer, with the ``device_tensors``, ``report_metadata``,
``source_files`` and ``tensor_lifetime`` tables of the newest reports and its graph importer): the
column set ttnn-visualizer 0.108.0 reads.  It needs ``operations``, ``operation_arguments``,
``tensors``, ``input_tensors``, ``output_tensors``, ``buffers`` and both
``*_tensor_comparison_records`` to exist; the rest are filled when meshnn has something to say
(``nodes`` and ``edges`` stay empty: meshnn records no graph of Python calls; ``errors`` holds a row
for each op, and each ``from_torch``, that raised).  ``source_files`` holds each file a stack trace
starts in, with its text, as ttnn's writer stores them for the visualizer's Source button.

Layers: imports nothing of meshnn.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

TABLES = (
    "devices (device_id int, num_y_cores int, num_x_cores int, num_y_compute_cores int, num_x_compute_cores int, "
    "worker_l1_size int, l1_num_banks int, l1_bank_size int, address_at_first_l1_bank int, "
    "address_at_first_l1_cb_buffer int, num_banks_per_storage_core int, num_compute_cores int, "
    "num_storage_cores int, total_l1_memory int, total_l1_for_tensors int, total_l1_for_interleaved_buffers int, "
    "total_l1_for_sharded_buffers int, cb_limit int)",
    "operations (operation_id int UNIQUE, name text, duration float)",
    "operation_arguments (operation_id int, name text, value text)",
    "tensors (tensor_id int UNIQUE, shape text, dtype text, layout text, memory_config text, device_id int, "
    "address int, buffer_type int)",
    "device_tensors (tensor_id int, device_id int, address int)",
    "buffers (operation_id int, device_id int, address int, max_size_per_bank int, buffer_type int, buffer_layout int)",
    "captured_graph (operation_id int, captured_graph text)",
    "nodes (operation_id int, unique_id int, node_operation_id int, name text)",
    "edges (operation_id int, source_unique_id int, sink_unique_id int, source_output_index int, "
    "sink_input_index int, key int)",
    "report_metadata (key text UNIQUE, value text)",
    "errors (operation_id int, operation_name text, error_type text, error_message text, stack_trace text, "
    "timestamp text)",
    "source_files (id INTEGER PRIMARY KEY, path text UNIQUE NOT NULL, contents text)",
    "stack_traces (operation_id int, stack_trace text, source_file_id int REFERENCES source_files(id))",
    "tensor_lifetime (tensor_id int UNIQUE, producer_operation_id int, last_use_operation_id int, "
    "deallocate_operation_id int, producer_source_file text, producer_source_line int, last_use_source_file text, "
    "last_use_source_line int)",
    "input_tensors (operation_id int, input_index int, tensor_id int)",
    "output_tensors (operation_id int, output_index int, tensor_id int)",
    "local_tensor_comparison_records (tensor_id int, golden_tensor_id int, matches int, desired_pcc float, "
    "actual_pcc float)",
    "global_tensor_comparison_records (tensor_id int, golden_tensor_id int, matches int, desired_pcc float, "
    "actual_pcc float)",
    "buffer_pages (operation_id int, device_id int, address int, core_y int, core_x int, bank_id int, "
    "page_index int, page_address int, page_size int, buffer_type int)",
)
INSERTS = {
    "devices": 18,
    "operation_arguments": 3,
    "tensors": 8,
    "device_tensors": 3,
    "buffers": 6,
    "captured_graph": 2,
    "input_tensors": 3,
    "output_tensors": 3,
    "buffer_pages": 10,
    "source_files": 3,
}
"""Tables filled with plain ``INSERT INTO t VALUES (...)`` and their column counts."""


def _connect(path: Path) -> sqlite3.Connection:
    """A connection that commits without waiting for the disk (``synchronous = OFF``): each op's
    commit is still atomic, so a process that dies leaves a readable report; only a power loss
    could lose the last ops.  (Waiting for the disk cost ~30 ms an op, most of a report's cost.)"""
    connection = sqlite3.connect(path, check_same_thread=False)
    connection.execute("PRAGMA synchronous = OFF")
    return connection


def open_database(path: Path) -> tuple[sqlite3.Connection, int]:
    """``db.sqlite`` at ``path`` and the next operation id: a report database already there is
    continued (as ttnn's writer continues one; a table it lacks is added), anything else is
    replaced by a new one."""
    if path.exists():
        connection = _connect(path)
        try:
            (last,) = connection.execute("SELECT max(operation_id) FROM operations").fetchone()
            _create_tables(connection)
            return connection, (last or 0) + 1
        except sqlite3.DatabaseError:
            connection.close()
            path.unlink()
    connection = _connect(path)
    _create_tables(connection)
    return connection, 1


def _create_tables(connection: sqlite3.Connection) -> None:
    with connection:
        for table in TABLES:
            connection.execute(f"CREATE TABLE IF NOT EXISTS {table}")
        connection.execute(
            "CREATE INDEX IF NOT EXISTS idx_stack_traces_source_file_id ON stack_traces (source_file_id)"
        )


def insert(connection: sqlite3.Connection, table: str, rows: list[tuple]) -> None:
    if rows:
        marks = ", ".join("?" * INSERTS[table])
        connection.executemany(f"INSERT OR IGNORE INTO {table} VALUES ({marks})", rows)


def write_config(path: Path, config: dict[str, Any]) -> None:
    """``config.json``: the ttnn CONFIG the report was written under (paths as text)."""
    values = {key: str(value) if isinstance(value, Path) else value for key, value in config.items()}
    path.write_text(json.dumps(values, indent=4) + "\n")
