"""tt-perf-report 1.4.1 (Tenstorrent's analyser of measured profiler CSVs) reads the CSV meshnn writes.

It runs as a separate process on a CSV of a predicted T3000 decode step and its own ``--csv``
output is parsed: the device count it detects, the ops it reports, and its roofline verdict on
each matmul (a DRAM-sharded decode matmul is DRAM-bound, a large bfloat8_b matmul FLOP-bound).
"""

from __future__ import annotations

import csv
import importlib.util
import subprocess
import sys

import pytest

from meshnn.perf import Recorder, write_ops_perf_csv

from .test_recorder import decode_layer

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("tt_perf_report") is None, reason="tt-perf-report is not installed (the test extra)"
)


def run_report(tmp_path, recorder: Recorder) -> tuple[str, list[dict[str, str]]]:
    source = write_ops_perf_csv(recorder, tmp_path / "ops_perf_results_meshnn.csv")
    out = tmp_path / "report.csv"
    command = [sys.executable, "-m", "tt_perf_report.perf_report", str(source), "--csv", str(out), "--no-advice"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    with out.open(newline="") as handle:
        return done.stdout, list(csv.DictReader(handle))


def test_tt_perf_report_reads_meshnns_csv(tmp_path):
    recorder = Recorder("t3k")
    decode_layer(recorder)
    printed, rows = run_report(tmp_path, recorder)
    assert "Detected CSV format: v2.1" in printed
    assert "Detected data from 8 devices" in printed
    assert "Unclassified operation" not in printed
    assert len(rows) == 4  # one merged row per op
    assert [r["OP Code"].split()[0] for r in rows] == [
        "MatmulDeviceOperation",
        "MatmulDeviceOperation",
        "BinaryNgDeviceOperation",
        "AllGatherAsyncDeviceOperation",
    ]
    decode, prefill = rows[0], rows[1]
    assert decode["Bound"] == "DRAM" and decode["DRAM Sharded"] == "True"
    assert prefill["Bound"] == "FLOP"
    assert rows[0]["OP Code"] == "MatmulDeviceOperation 32 x 8192 x 1280"
    assert [r["Op Category"] for r in rows] == ["Compute", "Compute", "Compute", "CCL"]
    expected_us = recorder.records[1].prediction.kernel_ns / 1e3
    assert float(prefill["Device Time"]) == pytest.approx(expected_us, rel=1e-3)


def test_tt_perf_report_keeps_devices_apart_when_asked(tmp_path):
    recorder = Recorder("n300")
    decode_layer(recorder, traced=False)
    source = write_ops_perf_csv(recorder, tmp_path / "ops_perf_results_n300.csv")
    out = tmp_path / "separate.csv"
    command = [sys.executable, "-m", "tt_perf_report.perf_report", str(source), "--csv", str(out)]
    done = subprocess.run([*command, "--no-merge-devices", "--no-advice"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    with out.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 4 * 2
    assert {r["Device"] for r in rows} == {"0", "1"}
