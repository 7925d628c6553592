"""Stack traces, source files and tensor lives of an imported graph report.

A Python stack trace (``File "path", line N, in f`` lines, innermost first, as ttnn's graph
records them) names the file its first frame is in: that file's text goes into ``source_files``
once, and the trace's row points at it.  A tensor's life (``tensor_lifetime``) is read from the
operations' inputs and outputs: its producer is the first operation that outputs it, its last use
the last operation other than a free that takes it (None when only a free does), its free the
first ``ttnn.deallocate`` / ``ttnn::deallocate`` / ``Tensor::deallocate`` that takes it; each op's
innermost file and line come from its stack trace.

Layers: the capture layer only.
"""

from __future__ import annotations

import os
import re
import sqlite3
from pathlib import Path

_FRAME = re.compile(r'^\s*File "([^"]+)", line (\d+)', re.MULTILINE)
FREES = ("ttnn::deallocate", "ttnn.deallocate", "Tensor::deallocate")


def innermost_frame(trace: str | None) -> tuple[str | None, int | None]:
    """(file, line) of the first frame of a formatted stack trace; (None, None) without one."""
    found = _FRAME.search(trace or "")
    return (found.group(1), int(found.group(2))) if found else (None, None)


def _source_id(cursor: sqlite3.Cursor, path: str, ids: dict[str, int | None]) -> int | None:
    if path not in ids:
        ids[path] = None
        if os.path.isfile(path):
            text = Path(path).read_text(encoding="utf-8", errors="replace")
            cursor.execute("INSERT OR IGNORE INTO source_files (path, contents) VALUES (?, ?)", (path, text))
            ids[path] = cursor.execute("SELECT id FROM source_files WHERE path = ?", (path,)).fetchone()[0]
    return ids[path]


def insert_stack_traces(cursor: sqlite3.Cursor, traces: list[tuple[int, str]], rank: int) -> None:
    """One ``stack_traces`` row per (operation id, trace), pointing at its first file when readable."""
    ids: dict[str, int | None] = {}
    rows = []
    for operation_id, trace in traces:
        path, _ = innermost_frame(trace)
        rows.append((operation_id, trace, _source_id(cursor, path, ids) if path else None, rank))
    if rows:
        cursor.executemany("INSERT INTO stack_traces VALUES (?, ?, ?, ?)", rows)


def lifetime_rows(tables: dict[str, list[tuple]], traces: list[tuple[int, str]], tensors: set[int]) -> list[tuple]:
    """``tensor_lifetime`` rows (without rank) of the kept ``tensors`` (see the module docstring)."""
    names = {row[0]: row[1] for row in tables["operations"]}
    where = {op: innermost_frame(trace) for op, trace in traces}
    made: dict[int, list[int]] = {}
    used: dict[int, list[int]] = {}
    freed: dict[int, list[int]] = {}
    for op, _, tid in tables["output_tensors"]:
        made.setdefault(tid, []).append(op)
    for op, _, tid in tables["input_tensors"]:
        (freed if names.get(op) in FREES else used).setdefault(tid, []).append(op)
    rows = []
    for tid in sorted(tensors):
        producer = min(made[tid]) if tid in made else None
        last = max(used[tid]) if tid in used else None
        free = min(freed[tid]) if tid in freed else None
        rows.append((tid, producer, last, free, *where.get(producer, (None, None)), *where.get(last, (None, None))))
    return rows
