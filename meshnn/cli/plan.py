"""``meshnn plan SCRIPT.py``: run a TTNN script on planning meshes and say whether it fits.

Every mesh the script opens without ``execute=`` is a planning mesh (``meshnn.planning()``): each
op is validated and allocates its outputs at their real addresses, and nothing is computed, so a
model far larger than this machine's memory plans in seconds (weights may be torch "meta"
tensors).  A :class:`meshnn.MemoryTimeline` records every op; the report gives each mesh's DRAM and
L1 peaks per device (lock-step: the same on every device), the op that set each, and the predicted
device time when the build has the performance model's capture (``meshnn.begin_perf_capture``).
An out-of-memory error stops the plan where it would stop the model, and is reported with the op,
the devices and the sizes; a script that reads values (``to_torch``) stops there, planned so far.

Layers: the public surface (``import meshnn``) and the CLI's runner.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from typing import Any

import meshnn
from meshnn.cli.reports import print_reports, report_mark
from meshnn.cli.runner import run_path

OOM_EXIT = 1


def begin_perf() -> Any:
    """The performance model's capture, when this build has one (None otherwise)."""
    begin = getattr(meshnn, "begin_perf_capture", None)
    return begin() if begin is not None else None


def plan_path(
    script: str, args: list[str], *, system: str | None = None, steps: bool = False, plot: str | None = None
) -> int:
    """Plan ``script``; print the report; 1 when it runs out of memory, else the script's code."""
    if not os.path.isfile(script):
        print(f"meshnn plan: no such script: {script}", file=sys.stderr)
        return 2
    if plot and importlib.util.find_spec("matplotlib") is None:
        print(f"meshnn plan: --plot {plot} needs matplotlib: pip install 'meshnn[plot]'", file=sys.stderr)
        return 2
    mark = report_mark()
    timeline = meshnn.MemoryTimeline().start()
    capture = begin_perf()
    stopped: BaseException | None = None
    code = 0
    try:
        with meshnn.planning():
            code = run_path(script, args, system=system, passes=(meshnn.OutOfMemoryError, meshnn.PlanningError))
    except (meshnn.OutOfMemoryError, meshnn.PlanningError) as error:
        stopped = error
    finally:
        if capture is not None:
            meshnn.end_perf_capture()
        timeline.stop()
    print(f"\nmeshnn plan: {script} on planning meshes (every op validated and allocated, nothing computed)")
    print(timeline.summary(capture))
    if capture is None:
        print("predicted device times: not available (this build has no performance-model capture)")
    if steps:
        print("\n" + timeline.report())
    if plot and timeline.meshes:
        print(f"meshnn plan: wrote {timeline.plot(plot)}")
    print_reports("meshnn plan", since=mark)
    if isinstance(stopped, meshnn.OutOfMemoryError):
        print(f"\nmeshnn plan: OUT OF MEMORY, the model does not fit: {stopped}", file=sys.stderr)
        return OOM_EXIT
    if stopped is not None:
        print(f"\nmeshnn plan: the script read values, which a plan does not have; planned up to there ({stopped})")
    return code
