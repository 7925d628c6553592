"""ttnn.CONFIG and the ttnn report folder meshnn writes: every table of a known run, row by row."""

from __future__ import annotations

import csv
import json
import math
import re
import shutil
import warnings
from pathlib import Path

import pytest
import torch

import meshnn as ttnn
from meshnn.capture.config import Config, active_report, load_overrides
from meshnn.capture.report_writer import MESH_MAPPING
from meshnn.capture.tensors import tensor_id

from .reporting import reporting, rows, small_run

L1 = ttnn.L1_MEMORY_CONFIG


def test_config_has_ttnn_defaults_checks_and_report_path():
    config = Config()
    assert (config.enable_logging, config.enable_fast_runtime_mode, config.report_name) == (False, True, None)
    assert config.root_report_path == ttnn.CONFIG.root_report_path.__class__("generated/ttnn/reports")
    assert config.report_path is None and config.comparison_mode_pcc == 0.9999
    config.root_report_path = "out"
    config.report_name = "My Model: run #1 (bf16)"
    path = config.report_path
    assert path.parent.name == "out"
    assert re.fullmatch(r"my_model_run_1_bf16_[a-z]{3}\d{2}_\d{4}", path.name), path.name
    assert config.report_path == path  # fixed once read, as ttnn caches it
    config.report_name = "x" * 70
    assert config.report_path.name.startswith("x" * 64 + "_")
    with pytest.raises(ttnn.MeshnnTypeError, match="enable_logging"):
        config.enable_logging = 1
    with pytest.raises(ttnn.MeshnnTypeError, match="root_report_path"):
        config.root_report_path = 3
    with pytest.raises(ttnn.MeshnnValueError, match="comparison_mode_pcc"):
        config.comparison_mode_pcc = 1.5
    with pytest.raises(ttnn.MeshnnValueError, match="report_path is read-only"):
        config.report_path = "here"
    with pytest.raises(ttnn.MeshnnValueError, match="no attribute 'enable_logs'"):
        config.enable_logs = True
    assert repr(config).startswith("Config{cache_path=")


def test_manage_config_restores_and_hardware_only_settings_are_kept(tmp_path):
    with ttnn.manage_config("enable_comparison_mode", True):
        assert ttnn.CONFIG.enable_comparison_mode is True
    assert ttnn.CONFIG.enable_comparison_mode is False
    with ttnn.manage_config("cache_path", tmp_path):
        assert ttnn.CONFIG.cache_path == tmp_path
    with pytest.raises(ttnn.MeshnnValueError, match="'nope'"), ttnn.manage_config("nope", 1):
        pass


def test_logging_in_fast_runtime_mode_warns_and_writes_nothing(tmp_path, open_mesh):
    mesh = open_mesh((1, 1))
    with (
        ttnn.manage_config("root_report_path", tmp_path),
        ttnn.manage_config("report_name", "fast"),
        pytest.warns(UserWarning, match="fast runtime mode"),
        ttnn.manage_config("enable_logging", True),
    ):
        assert active_report() is None
        ttnn.exp(ttnn.from_torch(torch.ones(32, 32), layout=ttnn.TILE_LAYOUT, device=mesh))
    assert list(tmp_path.iterdir()) == []


def test_ttnn_config_overrides_from_the_environment(tmp_path):
    overrides = {"enable_fast_runtime_mode": False, "report_name": "from env", "comparison_mode_pcc": 0.99}
    try:
        load_overrides({"TTNN_CONFIG_OVERRIDES": json.dumps(overrides)})
        assert (ttnn.CONFIG.enable_fast_runtime_mode, ttnn.CONFIG.report_name) == (False, "from env")
        assert ttnn.CONFIG.comparison_mode_pcc == 0.99
        file = tmp_path / "config.json"
        file.write_text(json.dumps({"report_name": "from file"}))
        load_overrides({"TTNN_CONFIG_PATH": str(file)})
        assert ttnn.CONFIG.report_name == "from file"
        with pytest.raises(ttnn.MeshnnValueError, match="TTNN_CONFIG_OVERRIDES is not JSON"):
            load_overrides({"TTNN_CONFIG_OVERRIDES": "{enable_logging: true"})
        with pytest.raises(ttnn.MeshnnTypeError, match="enable_logging"):
            load_overrides({"TTNN_CONFIG_OVERRIDES": '{"enable_logging": "yes"}'})
        newer = {"validate_program_args": True, "report_name": "newer"}
        with pytest.warns(UserWarning, match="no validate_program_args; ignored"):
            load_overrides({"TTNN_CONFIG_OVERRIDES": json.dumps(newer)})
        assert ttnn.CONFIG.report_name == "newer"
    finally:
        ttnn.CONFIG.report_name = None
        ttnn.CONFIG.comparison_mode_pcc = 0.9999
        ttnn.CONFIG.enable_fast_runtime_mode = True


def test_the_report_of_a_known_run(tmp_path, open_mesh):
    mesh = open_mesh((1, 2))
    with reporting(tmp_path, enable_detailed_buffer_report=True) as path:
        t = small_run(mesh)
    files = ["cluster_descriptor.yaml", "config.json", "db.sqlite", "perf", MESH_MAPPING]
    assert sorted(p.name for p in path.iterdir()) == files
    ops = rows(path, "SELECT operation_id, name, duration FROM operations")
    names = ["from_torch", "from_torch", "add", "matmul", "softmax", "deallocate"]  # ttnn's Python ops too
    assert [o[:2] for o in ops] == [(i, f"ttnn.{n}") for i, n in enumerate(names, 1)]
    assert all(0 < o[2] < 60 for o in ops[2:5]) and all(o[2] is None for o in (*ops[:2], ops[5]))
    ids = {name: tensor_id(t[name]) for name in ("x", "w", "y", "z", "s")}
    assert rows(path, "SELECT * FROM input_tensors") == [
        (3, 0, ids["x"]), (3, 1, ids["x"]), (4, 0, ids["y"]), (4, 1, ids["w"]), (5, 0, ids["z"]), (6, 0, ids["y"])
    ]  # fmt: skip
    assert rows(path, "SELECT * FROM output_tensors") == [
        (1, 0, ids["x"]), (2, 0, ids["w"]), (3, 0, ids["y"]), (4, 0, ids["z"]), (5, 0, ids["s"])
    ]  # fmt: skip
    arguments = rows(path, "SELECT name, value FROM operation_arguments WHERE operation_id = 3")
    x_text = "ttnn.Tensor(shape=Shape([64, 128]), dtype=DataType.BFLOAT16, layout=Layout.TILE)"
    assert arguments == [("0", x_text), ("1", x_text), ("memory_config", repr(L1)), ("dtype", "DataType.BFLOAT16")]
    tensors = {r[0]: r[1:] for r in rows(path, "SELECT * FROM tensors")}
    assert tensors[ids["x"]] == (
        "Shape([64, 128])", "DataType.BFLOAT16", "Layout.TILE", repr(L1), 0, t["x"].buffer_address(), 1
    )  # fmt: skip
    assert tensors[ids["w"]][-1] == 0 and tensors[ids["w"]][-2] == t["w"].buffer_address()
    assert rows(path, "SELECT device_id, address FROM device_tensors WHERE tensor_id = ?", ids["s"]) == [
        (0, t["s"].buffer_address()), (1, t["s"].buffer_address())
    ]  # fmt: skip
    devices = rows(path, "SELECT device_id, l1_num_banks, worker_l1_size, cb_limit FROM devices")
    info = mesh.allocator.device_info()
    assert devices == [(d, info["l1_num_banks"], info["worker_l1_size"], info["cb_limit"]) for d in (0, 1)]
    check_sources(path, ids)
    check_buffers(path, mesh, t)
    check_graphs(path)
    config = json.loads((path / "config.json").read_text())
    assert config["report_name"] == "meshnn test run" and config["enable_logging"] is True
    assert config["report_path"] == str(path)


def check_sources(path, ids):
    """Stack traces: the user's frames with absolute paths, the first file's text in source_files;
    tensor_lifetime: who made each tensor, read it last and freed it, at which line."""
    reporting_py = str(Path(__file__).with_name("reporting.py"))
    trace, source = rows(path, "SELECT stack_trace, source_file_id FROM stack_traces WHERE operation_id = 3")[0]
    assert trace.startswith(f'  File "{reporting_py}", line ') and "y = ttnn.add(x, x" in trace
    assert "meshnn/" not in trace and "<frozen" not in trace
    assert rows(path, "SELECT path, contents FROM source_files WHERE id = ?", source) == [
        (reporting_py, Path(reporting_py).read_text())
    ]
    line = next(
        i for i, text in enumerate(Path(reporting_py).read_text().splitlines(), 1) if "y = ttnn.add(x, x" in text
    )
    lives = {r[0]: r[1:] for r in rows(path, "SELECT * FROM tensor_lifetime")}
    assert lives[ids["y"]] == (3, 4, 6, reporting_py, line, reporting_py, line + 1)  # made, read by matmul, freed
    assert lives[ids["s"]][:3] == (5, None, None)


def check_buffers(path, mesh, t):
    """After op 5 (softmax) the live buffers are x, y (freed only after it), w, z, s: once per device."""
    got = rows(path, "SELECT device_id, address, max_size_per_bank, buffer_type FROM buffers WHERE operation_id = 5")
    expected = set()
    for name in ("x", "y", "w", "z", "s"):
        like = t["x"] if name == "y" else t[name]  # y is freed now: it was shaped and placed as x
        address = t["y_address"] if name == "y" else like.buffer_address()
        kind = like.memory_config().buffer_type
        banks = mesh.get_memory_view(kind).num_banks
        size = math.ceil(like.buffer_num_pages() / banks) * like.buffer_page_size()
        expected |= {(d, address, size, kind.value) for d in (0, 1)}
    assert sorted(got) == sorted(expected)
    pages = rows(path, "SELECT core_x, core_y, bank_id, page_index, page_address FROM buffer_pages "
                 "WHERE operation_id = 1 AND device_id = 0 AND address = ?", t["x"].buffer_address())  # fmt: skip
    buffer = t["x"].storage.mesh_buffer.get_device_buffer((0, 0))
    assert len(pages) == t["x"].buffer_num_pages() == 8
    for core_x, core_y, bank, page, address in pages:
        where = buffer.page_location(page)
        assert (bank, address) == (where.bank_id, where.address) and (core_x, core_y) == (bank % 8, bank // 8)


def check_graphs(path):
    graphs = dict(rows(path, "SELECT operation_id, captured_graph FROM captured_graph"))
    assert sorted(graphs) == [3, 4, 5]  # the device ops; ttnn's Python ops have no device graph
    calls = ttnn.graph.extract_calltrace(json.loads(graphs[4]))
    assert calls == ["ttnn::matmul", "MatmulDeviceOperation", "tt::tt_metal::create_device_tensor"]
    assert ttnn.graph.count_intermediate_and_output_tensors(json.loads(graphs[5])) == (0, 1)


def test_the_perf_files_hold_one_row_per_op_and_device(tmp_path, open_mesh):
    mesh = open_mesh((1, 2))
    with reporting(tmp_path) as path:
        small_run(mesh)
    [table] = (path / "perf").glob("ops_perf_results_*.csv")
    assert table.name == "ops_perf_results_meshnn_test_run.csv"
    with table.open() as f:
        read = list(csv.DictReader(f))
    assert [(r["OP CODE"], r["DEVICE ID"]) for r in read] == [
        ("BinaryNgDeviceOperation", "0"), ("BinaryNgDeviceOperation", "1"), ("MatmulDeviceOperation", "0"),
        ("MatmulDeviceOperation", "1"), ("SoftmaxDeviceOperation", "0"), ("SoftmaxDeviceOperation", "1"),
    ]  # fmt: skip
    log = (path / "perf" / "profile_log_device.csv").read_text().splitlines()
    assert log[0] == "ARCH: wormhole_b0, CHIP_FREQ[MHz]: 1000, Max Compute Cores: 64"
    assert len(log) == 2 + 4 * len(read)
    kernels = {}
    for line in log[2:]:
        cells = line.split(",")
        kernels.setdefault((cells[0], cells[7], cells[10]), []).append(int(cells[5]))
    for r in read:
        begin, end = kernels[(r["DEVICE ID"], r["GLOBAL CALL COUNT"], "BRISC-KERNEL")]
        assert end - begin == int(r["DEVICE KERNEL DURATION [ns]"])  # 1 GHz: a cycle is a ns


def test_logging_again_continues_the_same_report(tmp_path, open_mesh):
    mesh = open_mesh((1, 1))
    a = ttnn.from_torch(torch.ones(32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh)
    with (
        ttnn.manage_config("enable_fast_runtime_mode", False),
        ttnn.manage_config("root_report_path", tmp_path),
        ttnn.manage_config("report_name", "twice"),
    ):
        for _ in range(2):
            with ttnn.manage_config("enable_logging", True):
                ttnn.exp(a)
        path = ttnn.CONFIG.report_path
    assert rows(path, "SELECT operation_id, name FROM operations") == [(1, "ttnn.exp"), (2, "ttnn.exp")]
    assert rows(path, "SELECT count(*) FROM tensors") == [(3,)]  # a once, two outputs


def test_the_detailed_tensor_report_stores_loadable_tensors(tmp_path, open_mesh):
    mesh = open_mesh((1, 2))
    values = torch.arange(64 * 64, dtype=torch.float32).reshape(64, 64)
    a = ttnn.from_torch(values, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT, device=mesh)
    with reporting(tmp_path, enable_detailed_tensor_report=True) as path:
        out = ttnn.neg(a)
    # a report's tensors/<id>.bin is a meshnn tensor file (ttnn.load_tensor wants the .tensorbin name)
    copy = shutil.copyfile(path / "tensors" / f"{tensor_id(out)}.bin", path / "stored.tensorbin")
    stored = ttnn.load_tensor(copy)
    composer = ttnn.ConcatMeshToTensor(mesh, dim=0)
    assert torch.equal(ttnn.to_torch(stored, mesh_composer=composer), ttnn.to_torch(out, mesh_composer=composer))
    assert torch.equal(ttnn.to_torch(out, mesh_composer=composer)[:64], -values)


def test_an_op_that_ran_out_of_memory_keeps_its_row(tmp_path, open_mesh):
    mesh = open_mesh((1, 1))
    view = mesh.get_memory_view(ttnn.BufferType.L1)
    pages = view.largest_contiguous_bytes_free_per_bank // 4096 * view.num_banks
    filler = ttnn.allocate_tensor_on_device(ttnn.Shape([pages * 32, 32]), ttnn.float32, ttnn.TILE_LAYOUT, mesh, L1)
    wide = ttnn.from_torch(torch.ones(32, 32), dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT, device=mesh)
    with reporting(tmp_path) as path:
        with pytest.raises(ttnn.OutOfMemoryError):
            ttnn.exp(wide, memory_config=L1)
        ttnn.exp(wide)
    del filler
    assert rows(path, "SELECT operation_id, name, duration IS NULL FROM operations") == [
        (1, "ttnn.exp", 1), (2, "ttnn.exp", 0)
    ]  # fmt: skip
    assert rows(path, "SELECT operation_id FROM output_tensors") == [(2,)]
    graph = json.loads(rows(path, "SELECT captured_graph FROM captured_graph WHERE operation_id = 1")[0][0])
    assert [n["node_type"] for n in graph][-1] == "capture_end"
    assert not [n for n in graph if n["node_type"] == "function_end"]


def test_no_report_costs_nothing_when_logging_is_off(tmp_path, open_mesh):
    mesh = open_mesh((1, 1))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with ttnn.manage_config("root_report_path", tmp_path), ttnn.manage_config("report_name", "off"):
            ttnn.exp(ttnn.from_torch(torch.ones(32, 32), layout=ttnn.TILE_LAYOUT, device=mesh))
    assert active_report() is None and list(tmp_path.iterdir()) == []


def test_an_op_the_perf_model_refuses_is_listed_and_the_run_goes_on(tmp_path, open_mesh, monkeypatch):
    from meshnn.capture import report_perf

    def refuse(event, outputs):
        raise ttnn.MeshnnValueError(f"cannot describe {event.op}")

    monkeypatch.setattr(report_perf, "describe", refuse)
    mesh = open_mesh((1, 1))
    with reporting(tmp_path) as path:
        ttnn.exp(ttnn.from_torch(torch.ones(32, 32), layout=ttnn.TILE_LAYOUT, device=mesh))
    assert rows(path, "SELECT name FROM operations") == [("ttnn.from_torch",), ("ttnn.exp",)]
    refused = json.loads(rows(path, "SELECT value FROM report_metadata WHERE key = 'perf_refused'")[0][0])
    assert refused == [["ttnn.exp", "cannot describe exp"]]
    assert not (path / "perf").exists()
