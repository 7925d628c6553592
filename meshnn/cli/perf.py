"""``meshnn perf SCRIPT.py``: run a TTNN script (as ``meshnn run`` does) with the predicted device time
of every op recorded (``ttnn.begin_perf_capture``), then print the per-op table and the totals per
device, and write what Tenstorrent's tools read: tt-metal's ops-perf CSV
(``ops_perf_results_<name>.csv``, one row per device per op, for ``tt-perf-report``) and a PNG of
where the time goes (``<name>_time.png``), one of each per mesh the script used.

``--calibrate MEASURED.csv`` (an ops-perf CSV tt-metal's profiler wrote on hardware): every measured
row beside the model (per row and per family, on the system the CSV ran on); with a script, its run
predicted with the measured kernel times where its ops match measured ones and the model elsewhere
(:mod:`meshnn.perf.calibrate`), each op saying which.  Without a script only the rows are checked.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import meshnn as ttnn
from meshnn.cli.reports import print_reports, report_mark
from meshnn.cli.runner import run_path

IMPORTS_TORCH = re.compile(r"^\s*(import torch\b|from torch\b)", re.M)


def missing_torch(script: str) -> bool:
    """Whether ``script`` imports torch and torch is not installed (the script would stop there)."""
    try:
        text = Path(script).read_text(errors="replace")
    except OSError:
        return False
    return bool(IMPORTS_TORCH.search(text)) and importlib.util.find_spec("torch") is None


def missing_matplotlib() -> bool:
    return importlib.util.find_spec("matplotlib") is None


def refusal(script: str, plot: bool) -> tuple[int | None, bool]:
    """Before the run: an exit code when it cannot go on (under MPI; the script imports torch and
    torch is not installed), else None; and whether a PNG can be drawn (said when it cannot)."""
    if ttnn.launched_under_mpi():  # every rank would write the same files; the prediction needs one
        print("meshnn perf: run it as one process (the prediction is the same), not under mpirun", file=sys.stderr)
        return 2, plot
    if missing_torch(script):
        print(
            f"meshnn perf: {script} imports torch, which is not installed: pip install 'meshnn[torch]' "
            "(or pip install torch)",
            file=sys.stderr,
        )
        return 2, plot
    if plot and missing_matplotlib():
        print("meshnn perf: no PNG this time: matplotlib is not installed (pip install 'meshnn[plot]'; --no-plot "
              "says you want none)", file=sys.stderr)  # fmt: skip
        return None, False
    return None, plot


def print_tables(capture: ttnn.PerfCapture, traced: bool) -> None:
    """The per-op table and the totals of every mesh."""
    mode = "traced" if traced else "eager (replays of a trace traced)"
    meshes = len(capture.recorders)
    ops = f"{len(capture)} op" + ("" if len(capture) == 1 else "s")
    print(f"\nmeshnn perf: predicted device time of {ops} on {meshes} mesh{'' if meshes == 1 else 'es'}, {mode}\n")
    print(capture.table())
    print()
    print(capture.summary())


def checked_measurements(path: str, system: str | None) -> list | None:
    """The measured rows of ``path`` (``meshnn.perf.MeasuredRow``), printed beside the model; None
    (after saying why) when unreadable."""
    perf = ttnn.perf
    try:
        rows = perf.read_ops_perf_csv(path)
        target = perf.measured_machine(rows, system)
    except ttnn.MeshnnError as error:
        print(f"meshnn perf: --calibrate {path}: {error}", file=sys.stderr)
        return None
    print(perf.format_checks(perf.check_rows(rows, target), target))
    return rows


def run_perf(
    script: str | None,
    args: list[str],
    *,
    system: str | None = None,
    out: str = "meshnn_perf",
    name: str | None = None,
    traced: bool = False,
    plot: bool = True,
    calibrate: str | None = None,
) -> int:
    """Run ``script`` with a perf capture on, then report every mesh it used; returns the script's
    exit code (the report is printed whatever it was).  ``calibrate``: a measured ops-perf CSV."""
    measured = None
    if calibrate is not None:
        measured = checked_measurements(calibrate, system if script is None else None)
        if measured is None:
            return 2
        if script is None:
            return 0
    if script is None:
        print("meshnn perf: give a script (or --calibrate MEASURED.csv)", file=sys.stderr)
        return 2
    if not Path(script).is_file():
        print(f"meshnn perf: no such script: {script}", file=sys.stderr)
        return 2
    refused, plot = refusal(script, plot)
    if refused is not None:
        return refused
    mark = report_mark()
    capture = ttnn.begin_perf_capture(traced=traced)
    try:
        code = run_path(script, args, system=system)
    finally:
        ttnn.end_perf_capture()
    stem = name or Path(script).stem
    if code and not len(capture):  # the script stopped before its first op: its error says why
        print_reports("meshnn perf", since=mark)
        return code
    print_tables(capture, traced)
    written = capture.write_ops_perf_csv(out, stem)
    if plot:
        try:
            written += capture.write_time_plot(out, stem)
        except ttnn.MeshnnError as missing:  # matplotlib (the plot extra) is absent
            print(f"meshnn perf: no picture: {missing}", file=sys.stderr)
    for path in written:
        print(f"wrote {path}")
    if measured is not None:
        times = ttnn.perf.measured_times(measured)
        for recorder in capture.recorders:
            print()
            print(ttnn.perf.format_calibrated(ttnn.perf.calibrate_run(recorder, times), recorder.machine))
    if capture.skipped:
        print(f"not timed ({len(capture.skipped)} op{'' if len(capture.skipped) == 1 else 's'}):")
        for op, why in capture.skipped[:20]:
            print(f"  ttnn.{op}: {why}")
    print_reports("meshnn perf", since=mark)
    return code
