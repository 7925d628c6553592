"""ttnn.graph's Python-level records: record_python_operation's arguments as text (keyword ones,
then positional ones by index; a tensor as a summary, never its data), tensor ids, stack traces while
they are on; the outermost capture empties the records, takes its ops' records there, and turns
stack traces on and off when ttnn.CONFIG asks; the sidecar file holds them."""

from __future__ import annotations

import json

import numpy as np
import pytest

import meshnn as ttnn
from meshnn.capture import graph


@pytest.fixture(autouse=True)
def fresh():
    graph._python_io_data = []
    was = graph.is_python_stack_trace_enabled()
    yield
    (graph.enable_python_stack_traces if was else graph.disable_python_stack_traces)()


def test_a_record_holds_arguments_as_text_and_tensor_ids(open_mesh):
    mesh = open_mesh((1, 1))
    x = ttnn.from_torch(np.ones((32, 32), np.float32), device=mesh)
    graph.disable_python_stack_traces()
    graph.record_python_operation("ttnn.add", (x, 2.5), {"memory_config": None})
    (record,) = graph._python_io_data
    assert list(record["arguments"]) == ["memory_config", "0", "1"]
    assert record["arguments"]["1"] == "2.5" and record["arguments"]["memory_config"] == "None"
    summary = record["arguments"]["0"]
    assert summary.startswith("ttnn.Tensor(shape=") and "storage_type=StorageType.DEVICE" in summary
    assert record["input_tensor_ids"] == [int(summary.split("tensor_id=")[1].split(",")[0])]
    assert "python_stack_trace" not in record
    graph.store_output_tensor_ids([7])
    graph.store_captured_graph([{"node_type": "capture_start"}])
    assert record["output_tensor_ids"] == [7] and record["captured_graph"][0]["node_type"] == "capture_start"


def test_stack_traces_name_the_callers_frames_only():
    graph.enable_python_stack_traces()
    graph.record_python_operation("ttnn.relu", [], {})
    trace = "".join(graph._python_io_data[0]["python_stack_trace"])
    assert "test_python_io.py" in trace and "meshnn/capture" not in trace


def test_the_outermost_capture_owns_the_records_and_the_config_turns_traces_on(open_mesh, tmp_path):
    mesh = open_mesh((1, 1))
    x = ttnn.from_torch(np.ones((32, 32), np.float32), device=mesh, layout=ttnn.TILE_LAYOUT)
    graph._python_io_data = [{"name": "stale"}]
    graph.disable_python_stack_traces()
    with ttnn.manage_config("enable_graph_python_stack_traces", True):
        graph.begin_graph_capture()
        assert graph._python_io_data == [] and graph.is_python_stack_trace_enabled()
        ttnn.exp(x)
        graph.record_python_operation("mine", (), {})
        graph.end_graph_capture_to_file(tmp_path / "report.json")
    assert not graph.is_python_stack_trace_enabled()  # the capture turned them on, its end off
    names = [r["name"] for r in json.loads((tmp_path / "report.python_io.json").read_text())]
    assert names == ["ttnn.exp", "mine"]
    assert all("python_stack_trace" in r for r in graph._python_io_data)


def test_traces_turned_on_before_stay_on():
    graph.enable_python_stack_traces()
    with ttnn.manage_config("enable_graph_python_stack_traces", True):
        graph.begin_graph_capture()
        graph.end_graph_capture()
    assert graph.is_python_stack_trace_enabled()


def test_bad_arguments_are_refused():
    with pytest.raises(TypeError, match="function_kwargs"):
        graph.record_python_operation("ttnn.add", (), [("a", 1)])
