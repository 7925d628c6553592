"""What the meshnn command says, in what a user can type: options by their flags (``--system
galaxy``, never ``system=``), the sizes the user asked for kept, a missing extra said before the
run, a script's syntax error at its own line, every file it wrote named, "1 device"."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import meshnn as ttnn
from meshnn.cli import main as cli
from meshnn.cli import perf as perf_command
from meshnn.mesh import memory_report as report_module


def run_cli(capsys, *args: str) -> tuple[int, str, str]:
    try:
        code = cli.main(list(args))
    except SystemExit as leaving:
        code = leaving.code
    out = capsys.readouterr()
    return code, out.out, out.err


def meshnn(*args: str, cwd: Path | None = None, **env: str) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if k != "MESHNN_SYSTEM" and not k.startswith("TTNN_CONFIG")}
    command = [sys.executable, "-m", "meshnn", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=300, env=environment | env, cwd=cwd)


def test_a_mesh_too_big_for_the_system_names_the_system_flag(capsys):
    code, out, err = run_cli(capsys, "demo", "--mesh", "4x4")
    assert code == 2 and out == ""
    assert "--mesh 4x4 needs 16 devices but t3k (T3000: four N300 cards) has 8 (2x4): add --system galaxy" in err
    assert "system=" not in err and "MESHNN_SYSTEM" not in err
    code, _, err = run_cli(capsys, "memory", "--mesh", "1x4", "--system", "n300")
    assert code == 2 and "add --system t3k (8 devices, 2x4)" in err


def test_heads_that_do_not_split_keep_the_hidden_size_asked_for(capsys):
    code, out, err = run_cli(capsys, "demo", "--heads", "12", "--hidden", "1536")
    assert code == 2 and out == ""
    assert "with --hidden 1536, try --heads 16 (or --heads 8, --heads 24)" in err
    assert "try --hidden" not in err


def test_an_unknown_system_is_named_with_the_choices(capsys):
    code, out, err = run_cli(capsys, "demo", "--system", "foo")
    assert code == 2 and out == ""
    known = ", ".join(ttnn.SYSTEMS)
    assert f"argument --system: unknown system 'foo'; the simulated systems are {known}" in err
    assert "system=" not in err
    for command in ("info", "memory", "run", "perf", "plan"):
        code, _, err = run_cli(
            capsys, command, "--system", "Foo", *(["x.py"] if command in ("run", "perf", "plan") else [])
        )
        assert code == 2 and "unknown system 'Foo'" in err, command


def test_a_syntax_error_under_meshnn_run_is_shown_at_the_scripts_line(tmp_path):
    (tmp_path / "broken.py").write_text("import ttnn\n\nx = = 1\n")
    result = meshnn("run", "broken.py", cwd=tmp_path)
    assert result.returncode == 1
    assert 'File "broken.py", line 3' in result.stderr and "SyntaxError: invalid syntax" in result.stderr
    assert "runner.py" not in result.stderr and "runpy" not in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize("command", ["run", "perf", "plan"])
def test_a_missing_script_is_named_by_the_command_given(capsys, command):
    code, out, err = run_cli(capsys, command, "missing.py")
    assert code == 2 and out == "" and err.strip() == f"meshnn {command}: no such script: missing.py"


def test_perf_without_torch_says_so_before_anything(capsys, tmp_path, monkeypatch):
    script = tmp_path / "model.py"
    script.write_text("import torch\nimport ttnn\n")
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "torch" else real(name, *a))
    code, out, err = run_cli(capsys, "perf", str(script))
    assert code == 2 and out == ""
    assert err.strip() == f"meshnn perf: {script} imports torch, which is not installed: pip install 'meshnn[torch]' " \
        "(or pip install torch)"  # fmt: skip
    assert not perf_command.missing_torch(str(tmp_path / "absent.py"))


@pytest.mark.parametrize("command", [["memory", "--plot", "m.png"], ["plan", "--plot", "m.png", "model.py"]])
def test_a_plot_without_matplotlib_is_refused_before_the_run(capsys, tmp_path, monkeypatch, command):
    (tmp_path / "model.py").write_text("raise SystemExit('the script ran')\n")
    monkeypatch.chdir(tmp_path)
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "matplotlib" else real(name, *a))
    code, out, err = run_cli(capsys, *command)
    assert code == 2 and out == "" and "the script ran" not in err
    assert err.strip() == f"meshnn {command[0]}: --plot m.png needs matplotlib: pip install 'meshnn[plot]'"


def test_meshnn_run_says_where_the_report_went(tmp_path):
    (tmp_path / "model.py").write_text(
        "import numpy as np\nimport ttnn\n"
        "mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 2))\n"
        "x = ttnn.from_torch(np.ones((32, 32), np.float32), layout=ttnn.TILE_LAYOUT, device=mesh)\n"
        "y = ttnn.exp(x)\n"
    )
    overrides = '{"enable_fast_runtime_mode": false, "enable_logging": true, "report_name": "Where"}'
    result = meshnn("run", "model.py", cwd=tmp_path, TTNN_CONFIG_OVERRIDES=overrides)
    assert result.returncode == 0, result.stderr
    (report,) = (tmp_path / "generated/ttnn/reports").iterdir()
    relative = report.relative_to(tmp_path)
    assert f"meshnn run: wrote the ttnn report {relative}/" in result.stdout
    assert f"meshnn run: wrote {relative}/perf/ops_perf_results_where.csv" in result.stdout
    assert (
        f"open it with: ttnn-visualizer --profiler-path {relative} --performance-path {relative}/perf" in result.stdout
    )
    assert (report / "perf" / "ops_perf_results_where.csv").is_file()


def test_a_one_device_mesh_is_one_device():
    with ttnn.open_mesh_device(ttnn.MeshShape(1, 1), system="n150") as mesh, ttnn.MemoryTimeline() as timeline:
        ttnn.exp(ttnn.ones((32, 32), layout=ttnn.TILE_LAYOUT, device=mesh))
        text = ttnn.memory_report(mesh)
    assert "0 (1 device)" in text and "identical allocations" not in text
    summary, report = timeline.summary(), timeline.report()
    assert "(1 device): 1 op" in summary and "(1 device)" in report
    assert not re.search(r"\b1 (devices|ops)\b", summary + report + text)


def test_devices_that_differ_get_rows_of_their_own(monkeypatch):
    with ttnn.open_mesh_device(ttnn.MeshShape(2, 4)) as mesh:
        rows = report_module.memory_rows(mesh)
        rows[5]["DRAM buffers"] = 7  # as a bug would make it: lock-step broken on one device
        monkeypatch.setattr(report_module, "memory_rows", lambda _: rows)
        lines = ttnn.memory_report(mesh).splitlines()
    assert [line.split("  ")[0] for line in lines[1:3]] == ["0-4, 6-7 (7 devices)", "5 (1 device)"]
    assert lines[3] == "devices DIFFER: 2 groups of devices hold different allocations"
