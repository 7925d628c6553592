"""Graph report files (``ttnn.graph.end_graph_capture_to_file``) and ``ttnn.graph_report.import_report``;
``extract_levelized_graph``, ``pretty_format``, ``visualize``."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys

import numpy as np
import pytest
import torch

import meshnn as ttnn
from meshnn.capture.graph_report_buffers import chunks
from meshnn.capture.graph_report_schema import DATABASE_SCHEMA_VERSION


@pytest.fixture
def mesh():
    device = ttnn.open_mesh_device(ttnn.MeshShape(1, 2))
    yield device
    ttnn.close_mesh_device(device)


def _capture(mesh, path, *, detailed=False):
    torch.manual_seed(0)
    data = torch.rand(1, 1, 32, 64).bfloat16()
    host = ttnn.from_torch(
        data, layout=ttnn.TILE_LAYOUT, dtype=ttnn.bfloat16, mesh_mapper=ttnn.shard_tensor_to_mesh_mapper(mesh, dim=3)
    )
    mesh.clear_program_cache()  # the gather's program not cached: it makes its own semaphores, in the capture
    if detailed:
        ttnn.graph.enable_detailed_buffer_tracing()
    ttnn.graph.begin_graph_capture(ttnn.graph.RunMode.NORMAL)
    try:
        x = ttnn.to_device(host, mesh, memory_config=ttnn.DRAM_MEMORY_CONFIG)
        y = ttnn.multiply(x, 2.0)
        z = ttnn.add(y, x, memory_config=ttnn.L1_MEMORY_CONFIG)
        gathered = ttnn.all_gather(z, 3, topology=ttnn.Topology.Linear)
    finally:
        nodes = ttnn.graph.end_graph_capture_to_file(str(path))
        ttnn.graph.disable_detailed_buffer_tracing()
    return data, nodes, gathered


def test_report_file_has_ttnn_keys_and_python_level_ops(mesh, tmp_path):
    data, nodes, gathered = _capture(mesh, tmp_path / "sub" / "report.json")
    report = json.loads((tmp_path / "sub" / "report.json").read_text())
    assert report["version"] == ttnn.graph.REPORT_VERSION == 1
    assert report["metadata"]["rank"] == 0 and report["metadata"]["world_size"] == 1
    assert report["metadata"]["total_duration_ns"] > 0
    assert [d["device_id"] for d in report["devices"]] == [0, 1]
    assert report["devices"][0]["l1_num_banks"] == 64 and report["devices"][0]["num_dram_channels"] == 12
    assert "chips" in report["cluster_descriptor"]
    assert nodes == report["graph"]
    top = [n["params"]["name"] for n in nodes if n["node_type"] == "function_start" and n["stacking_level"] == 1]
    assert top == ["ttnn.to_device", "ttnn.multiply", "ttnn.add", "ttnn.all_gather"]
    for index, node in enumerate(nodes):
        assert node["counter"] == index
        assert all(isinstance(node["params"][k], int) for k in ("address", "size", "device_id") if k in node["params"])
    add = next(n for n in nodes if n["node_type"] == "tensor" and n["params"].get("memory_config", "").count("L1"))
    assert add["params"]["dtype"] == "DataType::BFLOAT16" and add["params"]["buffer_type"] == 1
    assert json.loads(add["params"]["device_tensors"])[1]["device_id"] == 1
    ends = [n for n in nodes if n["node_type"] == "function_end" and n["stacking_level"] == 1]
    assert len(ends) == 4 and all(n["duration_ns"] >= 0 for n in ends)
    expected = torch.cat([data.float() * 3] * 1, dim=3)
    np.testing.assert_allclose(ttnn.to_torch(ttnn.get_device_tensors(gathered)[1]).float(), expected, rtol=2**-7)


def test_end_graph_capture_keeps_its_own_form(mesh):
    ttnn.graph.begin_graph_capture()
    ttnn.add(ttnn.from_torch(torch.ones(1, 1, 32, 32), device=mesh, layout=ttnn.TILE_LAYOUT), 1.0)
    trace = ttnn.graph.end_graph_capture()
    assert ttnn.graph.extract_calltrace(trace)[:4] == [
        "ttnn::convert_python_tensor_to_tt_tensor",
        "Tensor::to_device",
        "ttnn::add",
        "BinaryNgDeviceOperation",
    ]
    assert "stacking_level" not in trace[1]


def test_import_report_writes_operations_tensors_and_graphs(mesh, tmp_path):
    _capture(mesh, tmp_path / "report.json")
    db = ttnn.graph_report.import_report(tmp_path / "report.json", tmp_path / "out")
    assert db == tmp_path / "out" / "db.sqlite"
    cursor = sqlite3.connect(db).cursor()
    names = [r[0] for r in cursor.execute("SELECT name FROM operations ORDER BY operation_id")]
    assert [n for n in names if not n.startswith("ttnn::")] == [
        "ttnn.to_device",
        "ttnn.multiply",
        "ttnn.add",
        "ttnn.all_gather",
    ]
    assert cursor.execute("SELECT value FROM report_metadata WHERE key='schema_version'").fetchone()[0] == "3.1"
    assert DATABASE_SCHEMA_VERSION == "3.1"
    graphs = cursor.execute(
        "SELECT captured_graph FROM captured_graph JOIN operations USING (operation_id) WHERE name='ttnn.all_gather'"
    ).fetchall()
    kinds = [n["node_type"] for n in json.loads(graphs[0][0])]
    assert kinds[0] == "capture_start" and kinds[-1] == "capture_end" and "circular_buffer_allocate" in kinds
    add_id = cursor.execute("SELECT operation_id FROM operations WHERE name='ttnn.add'").fetchone()[0]
    assert len(cursor.execute("SELECT * FROM input_tensors WHERE operation_id=?", (add_id,)).fetchall()) == 2
    (out_tid,) = cursor.execute("SELECT tensor_id FROM output_tensors WHERE operation_id=?", (add_id,)).fetchone()
    row = cursor.execute("SELECT memory_config, buffer_type, device_id FROM tensors WHERE tensor_id=?", (out_tid,))
    memory, kind, device = row.fetchone()
    assert "BufferType::L1" in memory and kind == 1 and device == 0
    # ttnn's importer files each device's address under the mesh's device id: one row per address
    rows = cursor.execute("SELECT device_id, address FROM device_tensors WHERE tensor_id=?", (out_tid,)).fetchall()
    assert rows == [(0, cursor.execute("SELECT address FROM tensors WHERE tensor_id=?", (out_tid,)).fetchone()[0])]
    assert cursor.execute("SELECT count(*) FROM errors").fetchone()[0] == 0
    assert (tmp_path / "out" / "cluster_descriptor.yaml").exists()


def test_detailed_buffer_tracing_gives_buffers_and_l1_chunks(mesh, tmp_path):
    assert not ttnn.graph.is_detailed_buffer_tracing_enabled()
    _capture(mesh, tmp_path / "report.json", detailed=True)
    assert not ttnn.graph.is_detailed_buffer_tracing_enabled()
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["per_operation_buffers"] and report["buffer_pages"]
    cursor = sqlite3.connect(ttnn.graph_report.import_report(tmp_path / "report.json", tmp_path)).cursor()
    l1 = cursor.execute("SELECT max_size_per_bank FROM buffers WHERE buffer_type=1").fetchall()
    tiles = [size for (size,) in l1 if size != 4]  # 4 B a core: the gather's own semaphores (one word each)
    assert tiles and all(size == 2048 for size in tiles)  # one 32x32 bfloat16 tile per device on one bank
    assert len(l1) - len(tiles) == 3 * 2  # all_gather's 3 semaphores, a row per device
    # L1 pages at the end: z (one tile a device) and the gather's output (two tiles a device, on two banks)
    # and the semaphores': a 4-byte page on every core of the grid, per device
    grid = mesh.compute_with_storage_grid_size()
    assert cursor.execute("SELECT count(*) FROM buffer_chunks").fetchone()[0] == 2 + 4 + 3 * grid.x * grid.y * 2


def test_ranked_reports_merge_by_rank_and_stride(tmp_path):
    graph = [
        {"counter": 0, "node_type": "capture_start", "params": {}, "connections": [1, 3]},
        {"counter": 1, "node_type": "function_start", "params": {"name": "ttnn.relu"}, "connections": [2]},
        {"counter": 2, "node_type": "function_end", "params": {"name": "ttnn.relu"}, "connections": [3]},
        {"counter": 3, "node_type": "capture_end", "params": {}, "connections": []},
    ]
    for name, rank in (("graph_capture_1_of_2.json", 0), ("graph_capture_2_of_2.json", 1), ("x.json", 0)):
        report = {"version": 1, "graph": graph, "devices": [], "metadata": {"rank": rank, "world_size": 2}}
        (tmp_path / name).write_text(json.dumps(report))
    cursor = sqlite3.connect(ttnn.graph_report.import_report(tmp_path, tmp_path / "db")).cursor()
    assert sorted(cursor.execute("SELECT operation_id, rank FROM operations")) == [(1, 0), (1, 1)]
    (tmp_path / "graph_capture_1_of_2.json").unlink()
    (tmp_path / "graph_capture_2_of_2.json").unlink()
    (tmp_path / "y.json").write_text((tmp_path / "x.json").read_text())
    cursor = sqlite3.connect(ttnn.graph_report.import_report(tmp_path, tmp_path / "db2")).cursor()
    assert sorted(cursor.execute("SELECT operation_id, rank FROM operations")) == [(1, 0), (10001, 0)]


def test_unfinished_function_is_an_incomplete_operation(tmp_path):
    graph = [
        {"counter": 0, "node_type": "capture_start", "params": {}, "connections": [1]},
        {"counter": 1, "node_type": "function_start", "params": {"name": "ttnn.matmul"}, "connections": [2]},
        {"counter": 2, "node_type": "capture_end", "params": {}, "connections": []},
    ]
    (tmp_path / "r.json").write_text(json.dumps({"version": 1, "graph": graph, "metadata": {"rank": 3}}))
    cursor = sqlite3.connect(ttnn.graph_report.import_report(tmp_path / "r.json", tmp_path)).cursor()
    assert cursor.execute("SELECT operation_name, error_type, rank FROM errors").fetchall() == [
        ("ttnn.matmul", "incomplete_operation", 3)
    ]


def test_buffer_pages_fold_into_chunks():
    pages = [(0, 64, 0, 1, 5, i, 64 + 32 * i, 32, 1) for i in range(3)] + [(0, 64, 0, 2, 6, 3, 64, 32, 1)]
    assert sorted(chunks(7, pages)) == [(7, 0, 64, 5, 1, 0, 64, 96, 32, 3, 1), (7, 0, 64, 6, 2, 0, 64, 32, 32, 1, 1)]


def test_levelized_graph_levels_and_edges(mesh):
    x = ttnn.from_torch(torch.ones(1, 1, 32, 32), device=mesh, layout=ttnn.TILE_LAYOUT)
    ttnn.graph.begin_graph_capture()
    y = ttnn.add(x, 3.0)
    ttnn.relu(y)
    trace = ttnn.graph.end_graph_capture()
    one = ttnn.graph.extract_levelized_graph(trace)
    assert [v["name"] for v in one] == [f"tensor[{trace[2]['params']['tensor_id']}]", "ttnn::add", "ttnn::relu"]
    assert one[0]["out_edges"] == [1] and one[1]["out_edges"] == [2] and one[2]["in_edges"] == [1]
    assert one[1]["output_shape"] == ["Shape([1, 1, 32, 32])"] and one[1]["output_info"][0].startswith("Tensor(")
    two = ttnn.graph.extract_levelized_graph(trace, max_level=2)
    assert len(two) > len(one) and two[1]["internals"] == [2]
    assert two[2]["name"] == "BinaryNgDeviceOperation" and two[2]["stacking_level"] == 2
    with pytest.raises(ValueError, match="max_level"):
        ttnn.graph.extract_levelized_graph(trace, max_level=0)


def test_pretty_format_and_visualize(mesh, tmp_path):
    ttnn.graph.begin_graph_capture()
    ttnn.relu(ttnn.from_torch(torch.ones(1, 1, 32, 32), device=mesh, layout=ttnn.TILE_LAYOUT))
    trace = ttnn.graph.end_graph_capture()
    text = ttnn.graph.pretty_format(trace)
    assert "Function Start: ttnn::relu" in text and "    Function Start: UnaryDeviceOperation" in text
    dot = ttnn.graph.visualize(trace)
    # one cluster per function: from_torch's conversion and its Tensor::to_device, relu, its device op, its output
    assert dot.startswith("digraph {") and dot.count("subgraph cluster_") == 5
    with pytest.raises(ValueError, match="suffix"):
        ttnn.graph.visualize(trace, file_name=tmp_path / "g.txt")
    with pytest.raises(ValueError, match="Unknown node type"):
        ttnn.graph.pretty_format([{"counter": 0, "node_type": "nonsense", "params": {}}])


def test_cli_and_ttnn_alias(mesh, tmp_path):
    _capture(mesh, tmp_path / "report.json")
    done = subprocess.run(
        [sys.executable, "-m", "meshnn.capture.graph_report", str(tmp_path / "report.json"), str(tmp_path / "cli")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "cli" / "db.sqlite").exists()
    code = "import meshnn.compat.ttnn_alias as a; a.install(); from ttnn.graph_report import import_report as i; "
    code += "print(i.__module__)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "meshnn.capture.graph_report", out.stderr


def test_bad_calls_change_nothing(mesh, tmp_path):
    ttnn.graph.begin_graph_capture()
    with pytest.raises(TypeError, match="report_path"):
        ttnn.graph.end_graph_capture_to_file(42)
    with pytest.raises(TypeError, match="report_path"):
        ttnn.graph.end_graph_capture_to_file(tmp_path)  # a folder
    assert ttnn.graph.is_graph_capture_active()
    ttnn.graph.end_graph_capture()
    with pytest.raises(ValueError, match="no graph capture is active"):
        ttnn.graph.end_graph_capture_to_file(tmp_path / "r.json")
    (tmp_path / "norank.json").write_text(json.dumps({"version": 1, "graph": [], "metadata": {}}))
    with pytest.raises(ValueError, match="missing required field rank"):
        ttnn.graph_report.import_report(tmp_path / "norank.json", tmp_path / "o")
    with pytest.raises(ValueError, match="neither a report file nor a folder"):
        ttnn.graph_report.import_report(tmp_path / "absent.json", tmp_path / "o")
