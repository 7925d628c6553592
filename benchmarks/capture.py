"""What watching a run costs: an op with no observer, under ``ttnn.graph`` capture, and with the
ttnn report being written (``enable_logging``, with and without the detailed buffer report).

The run: a chain of ops (``linear``, ``relu``, ``add``, ``linear``) on small bfloat16 tensors on
a simulated T3000 (2x4), PASSES chains per pass; each figure is the best of REPEATS passes, in
microseconds per op.  The limit beside each figure is the same ops with nothing watching, measured
in the same run in turns with the watched passes: the cost of the watching is the difference (the
report's one-off costs, its folder and its perf files at the end, are left out).  Prints a table,
then one JSON line.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # one BLAS thread: on a shared machine more only add noise

import contextlib
import json
import tempfile
import time
from collections.abc import Callable

import torch

import meshnn as ttnn
from meshnn.capture.config import active_report
from meshnn.capture.graph_capture import GraphCapture
from meshnn.mesh.observers import OBSERVERS

PASSES = 20  # chains per pass
REPEATS = 5
OPS_PER_CHAIN = 4


def chain(mesh: ttnn.MeshDevice) -> Callable[[], None]:
    x = ttnn.from_torch(torch.randn(64, 256), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh)
    w = ttnn.from_torch(torch.randn(256, 256), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh)

    def run() -> None:
        for _ in range(PASSES):
            h = ttnn.linear(x, w)
            r = ttnn.relu(h)
            s = ttnn.add(r, x)
            out = ttnn.linear(s, w)
            for t in (h, r, s, out):
                ttnn.deallocate(t)

    return run


def seconds(run: Callable[[], None]) -> float:
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def paired(run: Callable[[], None], watcher: object) -> tuple[float, float]:
    """(watched, bare) microseconds per op, each the best of REPEATS passes taken in turns (a bare
    pass, then a watched one), so both see the same machine."""
    watched, bare = [], []
    for _ in range(REPEATS):
        bare.append(seconds(run))
        OBSERVERS.add(watcher)
        try:
            watched.append(seconds(run))
        finally:
            OBSERVERS.remove(watcher)
    ops = PASSES * OPS_PER_CHAIN
    return min(watched) / ops * 1e6, min(bare) / ops * 1e6


def report_writer(root: str, detailed: bool, stack: contextlib.ExitStack) -> object:
    """The report writer ttnn.CONFIG starts for a report under ``root`` (taken off the observers:
    :func:`paired` adds it for the watched passes)."""
    for name, value in (
        ("enable_fast_runtime_mode", False),
        ("root_report_path", root),
        ("report_name", f"bench {detailed}"),
        ("enable_logging", True),
        ("enable_detailed_buffer_report", detailed),
    ):
        stack.enter_context(ttnn.manage_config(name, value))
    writer = active_report()
    OBSERVERS.remove(writer)
    return writer


def main() -> None:
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(2, 4), system="t3k")
    run = chain(mesh)
    run()  # warm caches
    rows = [("graph capture", *paired(run, GraphCapture()))]
    with tempfile.TemporaryDirectory() as root:
        for detailed in (False, True):
            with contextlib.ExitStack() as stack:
                name = "report + buffer pages" if detailed else "report"
                rows.append((name, *paired(run, report_writer(root, detailed, stack))))
    ttnn.close_mesh_device(mesh)
    print(f"{'watching':<24}{'us per op':>12}{'limit: no watching':>22}{'cost per op':>14}")
    for name, figure, limit in rows:
        print(f"{name:<24}{figure:>12.1f}{limit:>22.1f}{figure - limit:>14.1f}")
    print(json.dumps({"benchmark": "capture", "us_per_op": {n: [round(f, 1), round(lim, 1)] for n, f, lim in rows}}))


if __name__ == "__main__":
    main()
