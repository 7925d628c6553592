"""Shared by the report tests: run code with ``ttnn.CONFIG`` writing a report, and the small run
the report tests (and the visualizer test) look at."""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

import torch

import meshnn as ttnn
from meshnn.capture.config import active_report


@contextlib.contextmanager
def reporting(root: Path, name: str = "meshnn test run", **flags: bool):
    """``ttnn.CONFIG`` set to write a report named ``name`` under ``root`` inside the block (in an
    order that warns of nothing), restored after it; yields the report's path."""
    with contextlib.ExitStack() as stack:
        stack.enter_context(ttnn.manage_config("enable_fast_runtime_mode", False))
        stack.enter_context(ttnn.manage_config("root_report_path", root))
        stack.enter_context(ttnn.manage_config("report_name", name))
        stack.enter_context(ttnn.manage_config("enable_logging", True))
        for flag, value in flags.items():
            stack.enter_context(ttnn.manage_config(flag, value))
        assert active_report() is not None
        yield ttnn.CONFIG.report_path
    assert active_report() is None


def small_run(mesh):
    """x (L1) and w (DRAM) put on the mesh; y = x + x (L1), z = y @ w, s = softmax(z); y freed.
    Returns the tensors by name, and ``y_address``: where y lived."""
    x = ttnn.from_torch(
        torch.ones(64, 128),
        dtype=ttnn.bfloat16,
        layout=ttnn.TILE_LAYOUT,
        device=mesh,
        memory_config=ttnn.L1_MEMORY_CONFIG,
    )
    w = ttnn.from_torch(torch.full((128, 64), 0.5), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh)
    y = ttnn.add(x, x, memory_config=ttnn.L1_MEMORY_CONFIG)  # the line the report's stack trace names
    z = ttnn.matmul(y, w)
    s = ttnn.softmax(z)
    y_address = y.buffer_address()
    ttnn.deallocate(y)
    return {"x": x, "w": w, "y": y, "z": z, "s": s, "y_address": y_address}


def rows(path: Path, query: str, *args: object) -> list[tuple]:
    with contextlib.closing(sqlite3.connect(path / "db.sqlite")) as db:
        return db.execute(query, args).fetchall()
