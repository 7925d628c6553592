"""What watching a run costs: an op with no observer, under ``ttnn.graph`` capture, and with the
ttnn report being written (``enable_logging``, with and without the detailed buffer report).

The run: a 2-layer MLP-like chain of ops (``linear``, ``relu``, ``add``) on small bfloat16 tensors
on a simulated T3000 (2x4), OPS ops per pass; each figure is the best of REPEATS passes, in
microseconds per op.  The limit beside each figure is the same op with nothing watching, measured
in the same run: the cost of the watching is the difference.  Prints a table, then one JSON line.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Callable

import torch

import meshnn as ttnn

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


def per_op_us(run: Callable[[], None]) -> float:
    best = float("inf")
    for _ in range(REPEATS):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return best / (PASSES * OPS_PER_CHAIN) * 1e6


def captured(run: Callable[[], None]) -> Callable[[], None]:
    def watched() -> None:
        ttnn.graph.begin_graph_capture()
        try:
            run()
        finally:
            ttnn.graph.end_graph_capture()

    return watched


def reported(run: Callable[[], None], root: str, detailed: bool) -> Callable[[], None]:
    def watched() -> None:
        with (
            ttnn.manage_config("enable_fast_runtime_mode", False),
            ttnn.manage_config("root_report_path", root),
            ttnn.manage_config("report_name", f"bench {detailed}"),
            ttnn.manage_config("enable_logging", True),
            ttnn.manage_config("enable_detailed_buffer_report", detailed),
        ):
            run()

    return watched


def main() -> None:
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(2, 4), system="t3k")
    run = chain(mesh)
    run()  # warm caches
    with tempfile.TemporaryDirectory() as root:
        rows = []
        for name, watched in (
            ("graph capture", captured(run)),
            ("report", reported(run, root, False)),
            ("report + buffer pages", reported(run, root, True)),
        ):
            bare = per_op_us(run)
            rows.append((name, per_op_us(watched), bare))
    ttnn.close_mesh_device(mesh)
    print(f"{'watching':<24}{'us per op':>12}{'limit: no watching':>22}{'cost per op':>14}")
    for name, figure, limit in rows:
        print(f"{name:<24}{figure:>12.1f}{limit:>22.1f}{figure - limit:>14.1f}")
    print(json.dumps({"benchmark": "capture", "us_per_op": {n: [round(f, 1), round(lim, 1)] for n, f, lim in rows}}))


if __name__ == "__main__":
    main()
