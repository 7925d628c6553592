"""``ttnn.database``: a report's rows as ttnn's records, its connection and stack-trace helper;
the ``errors`` rows of calls that raised; ``ttnn.reports.get_device_info`` as ttnn's DeviceInfo."""

from __future__ import annotations

import importlib
import sqlite3

import pytest
import torch

import meshnn as ttnn
from meshnn.capture import database
from meshnn.compat import ttnn_alias


@pytest.fixture
def fresh_connection():
    database.SQLITE_CONNECTION = None
    yield
    if database.SQLITE_CONNECTION is not None:
        database.SQLITE_CONNECTION.close()
    database.SQLITE_CONNECTION = None


@pytest.fixture
def report(tmp_path):
    with (
        ttnn.manage_config("root_report_path", tmp_path),
        ttnn.manage_config("report_name", "db test"),
        ttnn.manage_config("enable_fast_runtime_mode", False),
    ):
        yield


def test_a_reports_rows_read_as_ttnns_records(open_mesh, report, fresh_connection):
    mesh = open_mesh((1, 1))
    with ttnn.manage_config("enable_logging", True), ttnn.manage_config("enable_detailed_buffer_report", True):
        a = ttnn.from_torch(
            torch.ones(64, 64), layout=ttnn.TILE_LAYOUT, device=mesh, memory_config=ttnn.L1_MEMORY_CONFIG
        )
        out = ttnn.add(a, a, memory_config=ttnn.L1_MEMORY_CONFIG)
        ttnn.to_torch(out)
        path = ttnn.CONFIG.report_path
    operations = list(database.query_operations(path))
    assert [o.name for o in operations] == ["ttnn.from_torch", "ttnn.add", "ttnn.to_torch"]
    assert database.query_latest_operation(path) == operations[-1]
    add = operations[1]
    assert database.query_operation_by_id(path, add.operation_id) == add and add.duration > 0
    buffers = list(database.query_buffers(path, add.operation_id))
    assert buffers and all(b.buffer_type is ttnn.BufferType.L1 for b in buffers)
    pages = list(database.query_buffer_pages(path, add.operation_id))
    assert pages and all(p.buffer_type is ttnn.BufferType.L1 for p in pages)
    given = next(database.query_input_tensors(path, add.operation_id))
    assert database.query_tensor_by_id(path, given.tensor_id).shape == "Shape([64, 64])"
    assert next(database.query_output_tensors(path, add.operation_id)).output_index == 0
    assert "test_database.py" in database.query_stack_trace(path, add.operation_id)
    device = database.query_device_by_id(path, mesh.get_device_ids()[0])
    assert device.l1_num_banks == ttnn.reports.get_device_info(mesh).l1_num_banks == 64


def test_a_call_that_raised_has_an_errors_row(open_mesh, report, fresh_connection):
    mesh = open_mesh((1, 1))
    total = ttnn.reports.get_device_info(mesh).total_l1_memory
    side = int((total * 1.5 / 2) ** 0.5) // 32 * 32 + 32
    with ttnn.manage_config("enable_logging", True), ttnn.manage_config("enable_detailed_buffer_report", True):
        with pytest.raises(RuntimeError, match="Out of Memory"):
            ttnn.from_torch(
                torch.zeros(side, side), layout=ttnn.TILE_LAYOUT, device=mesh, memory_config=ttnn.L1_MEMORY_CONFIG
            )
        path = ttnn.CONFIG.report_path
    rows = sqlite3.connect(path / database.SQLITE_DB_PATH).execute("SELECT * FROM errors").fetchall()
    (error,) = [database.ErrorRecord(*row) for row in rows]
    assert error.operation_name == "ttnn.from_torch" and error.error_type == "RuntimeError"
    assert error.error_message.startswith("Out of Memory: Not enough space to allocate")
    assert error.stack_trace.startswith("Traceback (most recent call last):") and error.timestamp
    operation = database.query_operation_by_id(path, error.operation_id)
    assert operation.name == "ttnn.from_torch" and operation.duration is None


def test_insert_stack_trace_keeps_the_innermost_first_and_the_source(tmp_path, fresh_connection):
    source = tmp_path / "model.py"
    source.write_text("x = 1\n")
    lines = ["Traceback (most recent call last):", f'  File "{source}", line 1, in <module>', "    x = 1", "t1", "t2"]
    database.insert_stack_trace(tmp_path / "r", 7, lines)
    database.insert_stack_trace(tmp_path / "r", 8, ["Traceback:", '  File "/no/such.py", line 1', "a", "b"])
    db = sqlite3.connect(tmp_path / "r" / database.SQLITE_DB_PATH)
    (sid, path, text), *rest = db.execute("SELECT * FROM source_files").fetchall()
    assert not rest and path == str(source.resolve()) and text == "x = 1\n"
    assert db.execute("SELECT * FROM stack_traces").fetchall() == [
        (7, "\n".join(lines[:3][::-1]), sid),
        (8, '  File "/no/such.py", line 1\nTraceback:', None),
    ]


def test_device_info_is_ttnns_record(open_mesh):
    info = ttnn.reports.get_device_info(open_mesh((1, 1)))
    assert isinstance(info, ttnn.reports.DeviceInfo) and info.num_compute_cores == 64
    with pytest.raises(TypeError):
        info["l1_num_banks"]
    with pytest.raises(TypeError, match="MeshDevice"):
        ttnn.reports.get_device_info("device")


def test_the_alias_imports_it():
    was = ttnn_alias.is_installed()
    ttnn_alias.install()
    try:
        assert importlib.import_module("ttnn.database") is database
        assert database.SQLITE_DB_PATH == "db.sqlite"
    finally:
        if not was:
            ttnn_alias.uninstall()
