"""``meshnn perf SCRIPT.py``: a TTNN script runs with every op's device time predicted; the table and
totals are printed, and the ops-perf CSV it writes is read by the real tt-perf-report 1.4.1 (the
test extra)."""

from __future__ import annotations

import csv
import importlib.util
import os
import re
import subprocess
import sys

import pytest


def meshnn(*args: str, cwd=None) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if k != "MESHNN_SYSTEM"}
    command = [sys.executable, "-m", "meshnn", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=300, env=environment, cwd=cwd)


SCRIPT = """
import numpy as np
import ttnn

mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 2))
x = ttnn.from_torch(np.ones((32, 512), np.float32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh)
w = ttnn.from_torch(
    np.ones((512, 1024), np.float32), dtype=ttnn.bfloat8_b, layout=ttnn.TILE_LAYOUT, device=mesh,
    mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=1),
)
y = ttnn.linear(x, w)
y = ttnn.silu(y)
y = ttnn.all_gather(y, dim=1)
y = ttnn.matmul(y, ttnn.from_torch(np.ones((1024, 64), np.float32), layout=ttnn.TILE_LAYOUT, device=mesh))
print("script done", list(y.shape))
"""


@pytest.fixture(scope="module")
def perf_run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("perf")
    script = folder / "tiny_model.py"
    script.write_text(SCRIPT)
    result = meshnn("perf", "--system", "n300", "--out", str(folder / "out"), str(script), cwd=folder)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout, folder / "out"


def test_perf_prints_the_table_and_the_totals_per_device(perf_run):
    printed, _ = perf_run
    assert "script done [32, 64]" in printed
    lines = printed.splitlines()
    header = next(i for i, line in enumerate(lines) if line.split()[:3] == ["#", "op", "shapes"])
    for cell in ("dtypes", "fidelity", "cores", "kernel us", "bound"):
        assert cell in lines[header]
    ops = [line.split()[1] for line in lines[header + 2 : header + 6]]
    assert ops == ["MatmulDeviceOperation", "UnaryDeviceOperation", "AllGatherAsyncDeviceOperation", ops[0]]
    assert "32x512 @ 512x512 -> 32x512" in lines[header + 2] and "BF16 x BFP8 => BF16" in lines[header + 2]
    totals = [line for line in lines if re.match(r"device \d: 4 ops, kernels [\d.,]+ us \+ gaps", line)]
    assert len(totals) == 2
    assert re.search(r"mesh 0 \(n300 1x2\): 4 ops, .* all eager .* all traced", printed)


def test_perf_writes_the_csv_and_the_picture(perf_run):
    _, out = perf_run
    with (out / "ops_perf_results_tiny_model.csv").open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 4 * 2  # one row per device per op
    assert {r["DEVICE ID"] for r in rows} == {"0", "1"}
    assert rows[0]["OP CODE"] == "MatmulDeviceOperation" and rows[0]["MATH FIDELITY"] == "HiFi2"
    if importlib.util.find_spec("matplotlib") is not None:
        assert (out / "tiny_model_time.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.skipif(importlib.util.find_spec("tt_perf_report") is None, reason="tt-perf-report (test extra) is absent")
def test_tt_perf_report_reads_the_csv_meshnn_perf_wrote(perf_run, tmp_path):
    _, out = perf_run
    report = tmp_path / "report.csv"
    command = [sys.executable, "-m", "tt_perf_report.perf_report", str(out / "ops_perf_results_tiny_model.csv")]
    done = subprocess.run([*command, "--csv", str(report), "--no-advice"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Detected data from 2 devices" in done.stdout and "Unclassified operation" not in done.stdout
    with report.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert [r["OP Code"].split()[0] for r in rows] == [
        "MatmulDeviceOperation",
        "UnaryDeviceOperation",
        "AllGatherAsyncDeviceOperation",
        "MatmulDeviceOperation",
    ]
    matmuls = [r for r in rows if r["OP Code"].startswith("Matmul")]
    assert [r["OP Code"] for r in matmuls] == [
        "MatmulDeviceOperation 32 x 512 x 512",
        "MatmulDeviceOperation 32 x 1024 x 64",
    ]
    assert all(r["Bound"] in ("DRAM", "FLOP", "BOTH", "SLOW") for r in matmuls)  # the roofline classified them
    assert [r["Op Category"] for r in rows] == ["Compute", "Compute", "CCL", "Compute"]


def test_perf_of_a_missing_script():
    result = meshnn("perf", "no_such_script.py")
    assert result.returncode == 2 and "no such script" in result.stderr


def test_demo_prints_predicted_prefill_time_and_decode_tokens_per_second():
    result = meshnn("demo", "--system", "n300", "--layers", "1", "--hidden", "256", "--seq", "64", "--heads", "8")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "predicted device time on n300" in result.stdout
    prefill = re.search(r"prefill of 64 tokens\s+([\d.,]+) ms traced, ([\d.,]+) ms eager", result.stdout)
    decode = re.search(
        r"decode, one user\s+([\d,]+) tokens/s traced \(([\d.]+) ms a token\), ([\d,]+) tokens/s eager", result.stdout
    )
    assert prefill and decode, result.stdout
    traced_ms, eager_ms = float(prefill.group(1)), float(prefill.group(2))
    assert 0 < traced_ms < eager_ms  # tracing removes the host's dispatch gaps
    per_second, step_ms, eager_per_second = (float(decode.group(i).replace(",", "")) for i in (1, 2, 3))
    assert per_second == pytest.approx(1e3 / step_ms, rel=0.01) and eager_per_second < per_second
    assert step_ms < traced_ms  # one token costs less than 64


def test_perf_says_where_it_wrote_each_file(perf_run):
    printed, out = perf_run
    assert f"wrote {out / 'ops_perf_results_tiny_model.csv'}" in printed
    if importlib.util.find_spec("matplotlib") is not None:
        assert f"wrote {out / 'tiny_model_time.png'}" in printed


def test_the_time_picture_has_a_lane_per_distinct_device_timeline(tmp_path):
    """Devices with the same predicted timeline share a lane; ops on part of the mesh split it."""
    from meshnn.perf import OpDesc, OpFamily, Recorder, TensorDesc
    from meshnn.perf.plot import device_lanes, devices_text, write_time_plot

    recorder = Recorder("t3k")
    x = TensorDesc((1, 1, 128, 4096))
    recorder.record(OpDesc(OpFamily.BINARY, (x, x), (x,), name="ttnn.add"))
    assert [devices for devices, _ in device_lanes(recorder)] == [list(range(8))]
    recorder.record(OpDesc(OpFamily.SOFTMAX, (x,), (x,), name="ttnn.softmax"), devices=[4, 5, 6, 7])
    lanes = device_lanes(recorder)
    assert [devices_text(devices) for devices, _ in lanes] == ["devices 0-3", "devices 4-7"]
    assert [len(ops) for _, ops in lanes] == [1, 2]
    if importlib.util.find_spec("matplotlib") is not None:
        path = write_time_plot(recorder, tmp_path / "time.png")
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
