"""What the ``meshnn`` command says after a script ran: where each ttnn report it wrote went (the
report folders ``ttnn.CONFIG`` asked for), with the command that opens it in ttnn-visualizer.

Layers: the public surface and the capture layer's config (only when it was imported: a run that
never touched ``ttnn.CONFIG`` wrote no report).
"""

from __future__ import annotations

import sys


def report_mark() -> frozenset[int]:
    """The reports this process has written so far (``print_reports(since=...)`` leaves them out;
    one started but not written yet, as ``$TTNN_CONFIG_OVERRIDES`` starts it at import, belongs to
    the run that comes)."""
    config = sys.modules.get("meshnn.capture.config")
    return frozenset() if config is None else frozenset(id(w) for w in config.WRITTEN if _written(w))


def finished_reports(since: frozenset[int] = frozenset()) -> list[tuple[str, list[str]]]:
    """Each report this process wrote but those in ``since``, closed now (its perf files written):
    ``(folder, files)``."""
    config = sys.modules.get("meshnn.capture.config")
    if config is None:
        return []
    done = []
    for writer in config.WRITTEN:
        if id(writer) in since:
            continue
        perf = writer.close()
        if _written(writer):
            done.append((str(writer.path), [str(p) for p in perf]))
    return done


def print_reports(command: str, since: frozenset[int] = frozenset()) -> None:
    """Print where each ttnn report the run wrote (those in ``since`` left out) is, and how to open it."""
    for folder, perf in finished_reports(since):
        print(f"{command}: wrote the ttnn report {folder}/ (db.sqlite, config.json, cluster descriptors)")
        for path in perf:
            print(f"{command}: wrote {path}")
        performance = f" --performance-path {folder}/perf" if perf else ""
        print(f"  open it with: ttnn-visualizer --profiler-path {folder}{performance}")


def _written(writer: object) -> bool:
    """The report has its database (its folder is made when the report is switched on, before
    anything is written)."""
    return (writer.path / "db.sqlite").is_file()  # type: ignore[attr-defined]
