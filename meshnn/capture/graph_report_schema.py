"""The tables ``ttnn.graph_report.import_report`` writes: ttnn-visualizer's schema 3.1.

Schema 3.1 is the report database of the newest ttnn (tt-metal of 2026): the tables of a report
(``devices``, ``operations``, ``tensors``, ``buffers``, ``captured_graph``...) each with a ``rank``
column (0 by default), so the captures of several processes merge into one database, an
operation or tensor being told apart by its id and its rank; ``buffer_chunks`` (the pages of a
buffer on one core of one bank, in one row) in place of ``buffer_pages``; ``tensor_lifetime``,
``tensor_consumers`` and ``tensor_producers`` (each tensor's producer, consumers and free);
``report_metadata`` (``schema_version`` and the capture's metadata: ``rank``, ``world_size``...);
``source_files`` (each file a Python stack trace starts in, with its text).

Layers: the capture layer only.
"""

from __future__ import annotations

import sqlite3

DATABASE_SCHEMA_VERSION = "3.1"
"""Bumped when the tables change; a database of an older version is deleted and written anew."""

_RANK = "rank int NOT NULL DEFAULT 0"

TABLES: dict[str, str] = {
    "devices": "device_id int, num_y_cores int, num_x_cores int, num_y_compute_cores int, num_x_compute_cores int, "
    "worker_l1_size int, l1_num_banks int, l1_bank_size int, address_at_first_l1_bank int, "
    "address_at_first_l1_cb_buffer int, num_banks_per_storage_core int, num_compute_cores int, "
    "num_storage_cores int, total_l1_memory int, total_l1_for_tensors int, total_l1_for_interleaved_buffers int, "
    f"total_l1_for_sharded_buffers int, cb_limit int, {_RANK}",
    "operations": f"operation_id int, name text, duration float, {_RANK}, UNIQUE(operation_id, rank)",
    "operation_arguments": f"operation_id int, name text, value text, {_RANK}",
    "tensors": "tensor_id int, shape text, dtype text, layout text, memory_config text, device_id int, address int, "
    f"buffer_type int, {_RANK}, UNIQUE(tensor_id, rank)",
    "device_tensors": f"tensor_id int, device_id int, address int, {_RANK}",
    "buffers": f"operation_id int, device_id int, address int, max_size_per_bank int, buffer_type int, "
    f"buffer_layout int, {_RANK}",
    "captured_graph": f"operation_id int, captured_graph text, {_RANK}",
    "nodes": f"operation_id int, unique_id int, node_operation_id int, name text, {_RANK}",
    "edges": "operation_id int, source_unique_id int, sink_unique_id int, source_output_index int, "
    f"sink_input_index int, key int, {_RANK}",
    "report_metadata": "key text UNIQUE, value text",
    "errors": "operation_id int, operation_name text, error_type text, error_message text, stack_trace text, "
    f"timestamp text, {_RANK}",
    "source_files": "id INTEGER PRIMARY KEY, path text UNIQUE NOT NULL, contents text",
    "stack_traces": f"operation_id int, stack_trace text, source_file_id int REFERENCES source_files(id), {_RANK}",
    "input_tensors": f"operation_id int, input_index int, tensor_id int, {_RANK}",
    "output_tensors": f"operation_id int, output_index int, tensor_id int, {_RANK}",
    "tensor_lifetime": "tensor_id int, producer_operation_id int, last_use_operation_id int, "
    "deallocate_operation_id int, producer_source_file text, producer_source_line int, "
    f"last_use_source_file text, last_use_source_line int, {_RANK}, UNIQUE(tensor_id, rank)",
    "tensor_consumers": f"tensor_id int, operation_id int, input_index int, {_RANK}, "
    "UNIQUE(tensor_id, operation_id, input_index, rank)",
    "tensor_producers": f"tensor_id int, operation_id int, output_index int, {_RANK}, "
    "UNIQUE(tensor_id, operation_id, output_index, rank)",
    "local_tensor_comparison_records": "tensor_id int, golden_tensor_id int, matches int, desired_pcc float, "
    "actual_pcc float",
    "global_tensor_comparison_records": "tensor_id int, golden_tensor_id int, matches int, desired_pcc float, "
    "actual_pcc float",
    "buffer_chunks": "operation_id int, device_id int, address int, bank_id int, core_x int, core_y int, "
    f"chunk_address int, chunk_size int, page_size int, num_pages int, buffer_type int, {_RANK}",
}


def create_database_schema(cursor: sqlite3.Cursor) -> None:
    """Create every table (those already there are kept) and the stack traces' index."""
    for name, columns in TABLES.items():
        cursor.execute(f"CREATE TABLE IF NOT EXISTS {name} ({columns})")
    cursor.execute("CREATE INDEX IF NOT EXISTS idx_stack_traces_source_file_id ON stack_traces (source_file_id)")


def save_database_schema_version(cursor: sqlite3.Cursor) -> None:
    """Record :data:`DATABASE_SCHEMA_VERSION` in ``report_metadata``."""
    cursor.execute(
        "INSERT OR REPLACE INTO report_metadata (key, value) VALUES ('schema_version', ?)", (DATABASE_SCHEMA_VERSION,)
    )


def insert_rows(cursor: sqlite3.Cursor, table: str, rows: list[tuple], verb: str = "INSERT") -> None:
    """``verb`` (INSERT, INSERT OR IGNORE, INSERT OR REPLACE) ``rows`` into ``table``."""
    if rows:
        marks = ", ".join("?" * len(rows[0]))
        cursor.executemany(f"{verb} INTO {table} VALUES ({marks})", rows)


def schema_is_older(stored: str | None) -> bool:
    """Whether a database of schema ``stored`` (None: unknown) predates this one."""
    if stored is None:
        return True

    def parts(text: str) -> tuple[int, ...]:
        return tuple(int(p) for p in str(text).strip().split(".") if p.isdigit()) or (0,)

    have, want = parts(stored), parts(DATABASE_SCHEMA_VERSION)
    width = max(len(have), len(want))
    return have + (0,) * (width - len(have)) < want + (0,) * (width - len(want))
