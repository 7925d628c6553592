"""The meshnn command, run as a user runs it: in a subprocess."""

from __future__ import annotations

import os
import pathlib
import re
import struct
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))


def meshnn(*args: str, timeout: float = 300, cwd: pathlib.Path | None = None) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if k != "MESHNN_SYSTEM"}
    return subprocess.run(
        [sys.executable, "-m", "meshnn", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=environment,
        cwd=cwd,
    )


def test_info_lists_every_system_and_marks_the_selected_one():
    result = meshnn("info", "--system", "galaxy")
    assert result.returncode == 0, result.stderr
    for name in ("n150", "n300", "t3k", "galaxy", "p150", "p300"):
        assert re.search(rf"^[ *] {name} ", result.stdout, re.M), name
    assert re.search(r"^\* galaxy\s+Arch.WORMHOLE_B0\s+8x4", result.stdout, re.M)
    assert "72 x 1,393,312" in result.stdout and "8 x 4,277,141,376" in result.stdout


def test_demo_passes_and_every_device_holds_the_same_allocations():
    result = meshnn("demo", "--layers", "1", "--hidden", "256", "--seq", "32", "--heads", "8")
    assert result.returncode == 0, result.stdout + result.stderr
    match = re.search(r"PCC (\d\.\d+) \(bound (\d\.\d+) for bfloat16\).*PASS", result.stdout)
    assert match and float(match.group(1)) >= float(match.group(2))
    # lock-step: the 8 devices are one row with their count, said once
    assert re.search(r"^\s+0-7 \(8 devices\)\s+\(0, 0\)\.\.\(1, 3\)\s+[\d.]+ [KM]iB", result.stdout, re.M), (
        result.stdout
    )
    assert "identical allocations (lock-step), so one row stands for all 8" in result.stdout


def test_demo_with_bfloat8_b_weights_on_a_galaxy_row():
    result = meshnn(
        "demo",
        "--system",
        "galaxy",
        "--mesh",
        "1x4",
        "--dtype",
        "bfloat8_b",
        "--layers",
        "1",
        "--hidden",
        "256",
        "--seq",
        "32",
        "--heads",
        "8",
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "bound 0.98 for bfloat8_b" in result.stdout and "PASS" in result.stdout


def test_demo_refuses_a_model_that_does_not_split_over_the_mesh():
    result = meshnn("demo", "--hidden", "96", "--heads", "3", "--layers", "1", "--seq", "32")
    assert result.returncode == 2 and "cannot be cut over 8 devices" in result.stderr


def test_memory_report_and_plot(tmp_path):
    target = tmp_path / "memory.png"
    result = meshnn("memory", "--plot", str(target))
    assert result.returncode == 0, result.stderr
    assert "identical allocations (lock-step)" in result.stdout
    data = target.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    # one lane per buffer type, however many devices: 13 x (1.9 x 2 + 0.65) inches at 110 dpi
    assert (width, height) == (1430, 489)
    assert f"meshnn memory: wrote {target}" in result.stdout


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_examples_run_through_meshnn_run(example, tmp_path):
    result = meshnn("run", str(example), *([str(tmp_path)] if example.name == "cached_weights.py" else []))
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip()
    if example.name == "sharded_matmul_t3k.py":  # the topology as ttnn prints it
        assert "TensorTopology(distribution_shape=MeshShape([8]), placements=" in result.stdout
    assert "torch" in example.read_text().split('"""')[1]  # each says it needs torch, and who installs it


def test_run_names_a_missing_ttnn_function(tmp_path):
    script = tmp_path / "missing.py"
    script.write_text("import ttnn\nmesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 2))\nttnn.experimental.foo()\n")
    result = meshnn("run", str(script))
    assert result.returncode == 3
    assert "uses ttnn.experimental.foo, which meshnn does not implement yet" in result.stderr


def test_run_passes_arguments_and_the_system(tmp_path):
    script = tmp_path / "args.py"
    script.write_text("import sys, ttnn\nprint(sys.argv[1:], ttnn.get_num_devices())\n")
    result = meshnn("run", "--system", "galaxy", str(script), "a", "--b")
    assert result.returncode == 0 and "['a', '--b'] 32" in result.stdout
