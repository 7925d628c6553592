"""Where a report's operations came from in the user's code: each op's stack trace and the file it
starts in (``stack_traces``, ``source_files``), and each tensor's life by op and line
(``tensor_lifetime``), as ttnn's report writer and its graph importer fill them for
ttnn-visualizer (its Source button, its label ``ttnn.add (model.py:12)``, its late-deallocation
view).

Layers: imports the mesh layer's call sites.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from meshnn.mesh.call_sites import stack_trace, user_frames

Site = tuple[str, int] | None
"""The innermost frame of the user's code: (absolute file, line); None when the call had none."""

_PRODUCED = (
    "INSERT INTO tensor_lifetime (tensor_id, producer_operation_id, producer_source_file, producer_source_line) "
    "VALUES (?, ?, ?, ?) ON CONFLICT(tensor_id) DO NOTHING"
)
_USED = (
    "INSERT INTO tensor_lifetime (tensor_id, last_use_operation_id, last_use_source_file, last_use_source_line) "
    "VALUES (?, ?, ?, ?) ON CONFLICT(tensor_id) DO UPDATE SET last_use_operation_id = excluded.last_use_operation_id, "
    "last_use_source_file = excluded.last_use_source_file, last_use_source_line = excluded.last_use_source_line"
)
_FREED = (
    "INSERT INTO tensor_lifetime (tensor_id, deallocate_operation_id) VALUES (?, ?) ON CONFLICT(tensor_id) "
    "DO UPDATE SET deallocate_operation_id = coalesce(deallocate_operation_id, excluded.deallocate_operation_id)"
)


class ReportSources:
    """The stack traces, source files and tensor lives of one report database."""

    def __init__(self) -> None:
        self._ids: dict[str, int | None] = {}  # source file -> its source_files id (None: unreadable)

    def source_file(self, db: sqlite3.Connection, path: str) -> int | None:
        """The ``source_files`` id of ``path``, its text stored the first time (None when it is
        not a readable regular file)."""
        if path not in self._ids:
            self._ids[path] = None
            if not os.path.isfile(path):
                return None
            try:
                text = Path(path).read_text(encoding="utf-8", errors="replace")
            except OSError:
                return None
            db.execute("INSERT OR IGNORE INTO source_files (path, contents) VALUES (?, ?)", (path, text))
            self._ids[path] = db.execute("SELECT id FROM source_files WHERE path = ?", (path,)).fetchone()[0]
        return self._ids[path]

    def stack_trace(self, db: sqlite3.Connection, operation_id: int) -> Site:
        """Write the caller's stack trace for ``operation_id`` (user frames only, innermost first,
        absolute paths) and its first file; return its innermost frame."""
        frames = user_frames()
        site = (frames[0].filename, frames[0].lineno) if frames else None
        source = self.source_file(db, site[0]) if site is not None else None
        db.execute("INSERT INTO stack_traces VALUES (?, ?, ?)", (operation_id, stack_trace(frames), source))
        return site


def record_lives(
    db: sqlite3.Connection, operation_id: int, site: Site, *, used: list[int], made: list[int], freed: list[int]
) -> None:
    """``tensor_lifetime`` after one op: the tensors it read (its last use so far), made (their
    producer) and freed (``ttnn.deallocate``), with the op's file and line."""
    file, line = site if site is not None else (None, None)
    db.executemany(_USED, [(tid, operation_id, file, line) for tid in used])
    db.executemany(_PRODUCED, [(tid, operation_id, file, line) for tid in made])
    db.executemany(_FREED, [(tid, operation_id) for tid in freed])
