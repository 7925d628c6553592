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

import sys
from pathlib import Path

import meshnn as ttnn
from meshnn.cli.runner import run_path


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
    if ttnn.launched_under_mpi():  # every rank would write the same files; the prediction needs one
        print("meshnn perf: run it as one process (the prediction is the same), not under mpirun", file=sys.stderr)
        return 2
    capture = ttnn.begin_perf_capture(traced=traced)
    try:
        code = run_path(script, args, system=system)
    finally:
        ttnn.end_perf_capture()
    stem = name or Path(script).stem
    mode = "traced" if traced else "eager (replays of a trace traced)"
    print(f"\nmeshnn perf: predicted device time of {len(capture)} ops on {len(capture.recorders)} mesh(es), {mode}\n")
    print(capture.table())
    print()
    print(capture.summary())
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
        print(f"not timed ({len(capture.skipped)} ops):")
        for op, why in capture.skipped[:20]:
            print(f"  ttnn.{op}: {why}")
    return code
