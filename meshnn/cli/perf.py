"""``meshnn perf SCRIPT.py``: run a TTNN script (as ``meshnn run`` does) with the predicted device time
of every op recorded (``ttnn.begin_perf_capture``), then print the per-op table and the totals per
device, and write what Tenstorrent's tools read: tt-metal's ops-perf CSV
(``ops_perf_results_<name>.csv``, one row per device per op, for ``tt-perf-report``) and a PNG of
where the time goes (``<name>_time.png``), one of each per mesh the script used.
"""

from __future__ import annotations

import sys
from pathlib import Path

import meshnn as ttnn
from meshnn.cli.runner import run_path


def run_perf(
    script: str,
    args: list[str],
    *,
    system: str | None = None,
    out: str = "meshnn_perf",
    name: str | None = None,
    traced: bool = False,
    plot: bool = True,
) -> int:
    """Run ``script`` with a perf capture on, then report every mesh it used; returns the script's
    exit code (the report is printed whatever it was)."""
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
    if capture.skipped:
        print(f"not timed ({len(capture.skipped)} ops):")
        for op, why in capture.skipped[:20]:
            print(f"  ttnn.{op}: {why}")
    return code
