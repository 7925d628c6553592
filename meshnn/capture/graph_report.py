"""``ttnn.graph_report``: graph report files (``end_graph_capture_to_file``) into a report database.

``import_report(report_path, output_dir, db_name="db.sqlite", generate_svgs=False)`` reads one
report file, or every report of a folder, into ``output_dir/db_name`` (ttnn-visualizer's schema
3.1: :mod:`~meshnn.capture.graph_report_schema`) and returns the database's path.  A folder's
reports are its ``graph_capture_<n>_of_<world>.json`` files when it has any (one per rank of a
multi-process run, merged into one database), else every ``*.json`` but ``config.json`` and
``*.python_io.json``.  Each report's rows carry its ``metadata.rank`` (a report without one is
refused, naming it); a second report of the same rank has its operation ids shifted by
``_OPERATION_ID_STRIDE_PER_RANK_FILE`` per report before it.  A report of another ``version`` is
skipped with a warning.  Device ids are renumbered 0, 1, ... per report.  Beside the database: the
system's ``cluster_descriptor.yaml`` and ``physical_chip_mesh_coordinate_mapping.yaml`` (ranked
names ``..._<r+1>_of_<world>.yaml`` for a multi-process run), written once; with
``generate_svgs`` each report's graph drawn into ``graphs/<report>.svg`` (needs graphviz's
``dot``).  A database of an older schema is deleted first (no migration, as ttnn).

``python -m meshnn.capture.graph_report REPORT OUTPUT_DIR [--db-name NAME] [--svg]`` does the same
from a shell.

Layers: the capture layer only.
"""

from __future__ import annotations

import argparse
import json
import re
import sqlite3
import sys
import warnings
from pathlib import Path

from meshnn.capture.graph_report_buffers import buffer_chunk_rows
from meshnn.capture.graph_report_rows import import_graph
from meshnn.capture.graph_report_schema import (
    DATABASE_SCHEMA_VERSION,
    create_database_schema,
    insert_rows,
    save_database_schema_version,
    schema_is_older,
)
from meshnn.capture.report_rows import DEVICE_COLUMNS
from meshnn.errors import MeshnnTypeError, MeshnnValueError

__all__ = [
    "DATABASE_SCHEMA_VERSION",
    "SUPPORTED_REPORT_VERSION",
    "create_database_schema",
    "extract_operation_durations",
    "extract_total_duration_from_graph",
    "import_devices",
    "import_graph",
    "import_metadata",
    "import_report",
    "main",
    "save_database_schema_version",
]

SUPPORTED_REPORT_VERSION = 1
_OPERATION_ID_STRIDE_PER_RANK_FILE = 10000
_MAPPING = "physical_chip_mesh_coordinate_mapping"
_RANKED = re.compile(r"^graph_capture_(\d+)_of_(\d+)\.json$", re.IGNORECASE)


def import_devices(cursor: sqlite3.Cursor, devices: list, rank: int = 0) -> set:
    """One ``devices`` row per device object; returns the device ids written."""
    rows = [(d.get("device_id", 0), *(d.get(c, 0) for c in DEVICE_COLUMNS), rank) for d in devices or ()]
    insert_rows(cursor, "devices", rows, "INSERT OR REPLACE")
    return {row[0] for row in rows}


def import_metadata(cursor: sqlite3.Cursor, metadata: dict) -> None:
    """Each metadata key into ``report_metadata`` (values as text; a key seen again is replaced)."""
    insert_rows(cursor, "report_metadata", [(k, str(v)) for k, v in (metadata or {}).items()], "INSERT OR REPLACE")


def extract_total_duration_from_graph(graph: list) -> float:
    """The capture's wall time in seconds: its ``capture_end``'s ``duration_ns`` (0.0 without)."""
    for node in reversed(graph):
        if node.get("node_type") == "capture_end":
            return node.get("duration_ns", 0) / 1e9
    return 0.0


def extract_operation_durations(graph: list) -> dict:
    """``{function name: seconds}`` from each ``function_end``'s ``duration_ns`` (the last of a name wins)."""
    return {
        n.get("params", {}).get("name", "unknown"): n.get("duration_ns", 0) / 1e9
        for n in graph
        if n.get("node_type") == "function_end"
    }


def report_files(report_path: Path) -> list[Path]:
    """The reports a path names (see the module docstring), ranked ones by (rank, world)."""
    if report_path.is_file():
        return [report_path]
    if not report_path.is_dir():
        raise MeshnnValueError(f"import_report: {report_path} is neither a report file nor a folder")
    ranked = [p for p in report_path.glob("*.json") if _RANKED.match(p.name)]
    if ranked:
        return sorted(ranked, key=lambda p: tuple(int(g) for g in _RANKED.match(p.name).groups()))  # type: ignore[union-attr]
    return sorted(
        p for p in report_path.glob("*.json") if p.name != "config.json" and not p.name.endswith(".python_io.json")
    )


def report_rank(report: object, path: Path) -> int:
    if not isinstance(report, dict):
        raise MeshnnValueError(f"Graph report must be a JSON object: {path}")
    metadata = report.get("metadata")
    if not isinstance(metadata, dict):
        raise MeshnnValueError(f"Graph report missing metadata object: {path}")
    if metadata.get("rank") is None:
        raise MeshnnValueError(f"Graph report metadata missing required field rank: {path}")
    return int(metadata["rank"])


def _renumber_devices(report: dict) -> None:
    """Device ids 0, 1, ... in the order of the report's devices' ids, everywhere in the report."""
    remap = {raw: i for i, raw in enumerate(sorted({d.get("device_id", 0) for d in report.get("devices", [])}))}
    if not remap:
        return
    for device in report.get("devices", []):
        device["device_id"] = remap.get(device.get("device_id", 0), 0)
    for node in report.get("graph", []):
        params = node.get("params") or {}
        if "device_id" in params:
            params["device_id"] = remap.get(int(params["device_id"]), int(params["device_id"]))
        if params.get("device_tensors"):
            each = json.loads(params["device_tensors"])
            for entry in each:
                for key in ("device_id", "mesh_device_id"):
                    if key in entry:
                        entry[key] = remap.get(entry[key], entry[key])
            params["device_tensors"] = json.dumps(each)
    groups = [*report.get("per_operation_buffers", {}).values(), report.get("buffer_pages", [])]
    for rows in groups:
        for row in rows:
            if "device_id" in row:
                row["device_id"] = remap.get(row["device_id"], row["device_id"])


def _side_files(report: dict, output_dir: Path, rank: int) -> None:
    world = int((report.get("metadata") or {}).get("world_size", 1))
    suffix = f"_{rank + 1}_of_{world}" if world > 1 else ""
    names = (("cluster_descriptor", "cluster_descriptor"), ("mesh_coordinate_mapping", _MAPPING))
    for key, stem in names:
        target = output_dir / f"{stem}{suffix}.yaml"
        if report.get(key) and not target.exists():
            target.write_text(report[key])


def _import_one(cursor: sqlite3.Cursor, path: Path, base: int, rank: int, output_dir: Path, svgs: bool) -> dict:
    report = json.loads(path.read_text())
    _renumber_devices(report)
    import_devices(cursor, report.get("devices", []), rank)
    python_io = report.get("python_io")
    sidecar = path.with_suffix(".python_io.json")
    if python_io is None and sidecar.exists():
        python_io = json.loads(sidecar.read_text())
    graph = report.get("graph", [])
    stats = import_graph(
        cursor,
        graph,
        base_operation_id=base,
        devices=report.get("devices", []),
        python_io=python_io,
        per_operation_buffers=report.get("per_operation_buffers"),
        rank=rank,
        record_tensor_lifetime=any(r.get("python_stack_trace") for r in python_io or ()),
    )
    import_metadata(cursor, report.get("metadata", {}))
    _side_files(report, output_dir, rank)
    chunks = buffer_chunk_rows(report, stats["graph_counter_to_op_id"], base)
    insert_rows(cursor, "buffer_chunks", [(*r, rank) for r in chunks])
    if svgs and graph:
        from meshnn.capture.graph_visualize import visualize

        (output_dir / "graphs").mkdir(exist_ok=True)
        visualize(graph, file_name=output_dir / "graphs" / f"{path.stem}.svg")
    return stats


def _fresh_database(db_path: Path) -> None:
    """Delete ``db_path`` when it holds an older schema (or is no database)."""
    if not db_path.exists():
        return
    try:
        with sqlite3.connect(db_path) as connection:
            row = connection.execute("SELECT value FROM report_metadata WHERE key = 'schema_version'").fetchone()
        older = schema_is_older(row[0] if row else None)
    except sqlite3.Error:
        older = True
    if older:
        db_path.unlink()


def import_report(
    report_path: str | Path, output_dir: str | Path, db_name: str = "db.sqlite", generate_svgs: bool = False
) -> Path:
    """Import one report file or a folder of them (see the module docstring); the database's path."""
    for name, value in (("report_path", report_path), ("output_dir", output_dir), ("db_name", db_name)):
        if not isinstance(value, str | Path):
            raise MeshnnTypeError(f"import_report: {name} must be a str or a Path, got {value!r}")
    files, output = report_files(Path(report_path)), Path(output_dir)
    output.mkdir(parents=True, exist_ok=True)
    db_path = output / db_name
    _fresh_database(db_path)
    connection = sqlite3.connect(db_path)
    try:
        cursor = connection.cursor()
        create_database_schema(cursor)
        save_database_schema_version(cursor)
        per_rank: dict[int, int] = {}
        for path in files:
            report = json.loads(path.read_text())
            rank = report_rank(report, path)
            if report.get("version", 0) != SUPPORTED_REPORT_VERSION:
                warnings.warn(
                    f"{path} has version {report.get('version', 0)}, expected {SUPPORTED_REPORT_VERSION}", stacklevel=2
                )
                continue
            base = per_rank.get(rank, 0) * _OPERATION_ID_STRIDE_PER_RANK_FILE
            per_rank[rank] = per_rank.get(rank, 0) + 1
            _import_one(cursor, path, base, rank, output, generate_svgs)
        connection.commit()
    finally:
        connection.close()
    return db_path


def main(argv: list[str] | None = None) -> int:
    """The command: ``REPORT OUTPUT_DIR [--db-name NAME] [--svg]``."""
    parser = argparse.ArgumentParser(description="Import graph capture reports into a ttnn-visualizer database")
    parser.add_argument("report_path", help="a report JSON file, or a folder of them")
    parser.add_argument("output_dir", help="the folder to write the database in")
    parser.add_argument("--db-name", default="db.sqlite", help="the database's file name")
    parser.add_argument("--svg", action="store_true", help="draw each report's graph (needs graphviz's dot)")
    args = parser.parse_args(argv)
    print(import_report(args.report_path, args.output_dir, args.db_name, generate_svgs=args.svg))
    return 0


if __name__ == "__main__":
    sys.exit(main())
