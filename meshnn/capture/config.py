"""``ttnn.CONFIG``: ttnn's run configuration, and the report it turns on.

The attributes are ttnn's, with ttnn's defaults and checks (paths are ``pathlib.Path``).  As in
ttnn, a report is written while ``enable_logging`` is on, ``enable_fast_runtime_mode`` is off
and ``report_name`` is set: then ``report_path`` is ``root_report_path /
<report_name in snake case>_<mon><dd>_<HHMM>`` (the name cut to 64 characters; the time of the
first read after the name was set), and a :class:`~meshnn.capture.report_writer.ReportWriter`
writes it.  (ttnn keeps that path until the name changes; meshnn also makes a new one when
``root_report_path`` changes.)  Logging in fast runtime mode, or a detailed report without logging, warns as ttnn does
and writes nothing.

Attributes that only matter on hardware or in ttnn's Python layer are accepted, checked, kept and
written to the report's ``config.json``, and change nothing else: ``cache_path``,
``model_cache_path``, ``tmp_dir``, ``enable_model_cache``, ``throw_exception_on_fallback``
and ``enable_graph_report`` (ttnn's per-op graph pictures; the ``captured_graph`` table holds each
op's graph).  ``enable_comparison_mode`` with fast runtime mode off checks each op against its
golden function (:mod:`meshnn.capture.comparison`).

At import, ``$TTNN_CONFIG_PATH`` (a JSON file) and then ``$TTNN_CONFIG_OVERRIDES`` (a JSON object)
set attributes, as they do for ttnn; a name meshnn's CONFIG lacks (a newer ttnn's) is named in a
warning and skipped, a bad value raises.

Layers: imports errors, the mesh layer's observers and the capture layer's report writer.
"""

from __future__ import annotations

import atexit
import contextlib
import datetime
import json
import os
import threading
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from meshnn.capture import comparison
from meshnn.capture.report_writer import ReportOptions, ReportWriter, snake_name
from meshnn.errors import MeshnnError, MeshnnTypeError, MeshnnValueError
from meshnn.mesh.observers import OBSERVERS

_HOME = Path(os.environ.get("HOME", "~"))
DEFAULTS: dict[str, object] = {
    "cache_path": _HOME / ".cache/ttnn",
    "model_cache_path": _HOME / ".cache/ttnn/models",
    "tmp_dir": Path("/tmp/ttnn"),
    "enable_model_cache": False,
    "enable_fast_runtime_mode": True,
    "throw_exception_on_fallback": False,
    "enable_logging": False,
    "enable_graph_report": False,
    "enable_detailed_buffer_report": False,
    "enable_detailed_tensor_report": False,
    "enable_graph_python_stack_traces": False,
    "enable_comparison_mode": False,
    "comparison_mode_should_raise_exception": False,
    "comparison_mode_pcc": 0.9999,
    "root_report_path": Path("generated/ttnn/reports"),
    "report_name": None,
}
_PATHS = {name for name, value in DEFAULTS.items() if isinstance(value, Path)}
_FLAGS = {name for name, value in DEFAULTS.items() if isinstance(value, bool)}


def _checked(name: str, value: object) -> object:
    """``value`` for attribute ``name``, or a meshnn error naming it."""
    if name not in DEFAULTS:
        raise MeshnnValueError(f"ttnn.CONFIG has no attribute {name!r}; its attributes are {', '.join(DEFAULTS)}")
    if name in _PATHS:
        if not isinstance(value, str | os.PathLike):
            raise MeshnnTypeError(f"ttnn.CONFIG.{name} must be a path (str or os.PathLike), got {value!r}")
        return Path(value)
    if name in _FLAGS:
        if not isinstance(value, bool):
            raise MeshnnTypeError(f"ttnn.CONFIG.{name} must be a bool, got {value!r}")
        return value
    if name == "comparison_mode_pcc":
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0.0 <= value <= 1.0:
            raise MeshnnValueError(f"ttnn.CONFIG.comparison_mode_pcc must be a number in [0, 1], got {value!r}")
        return float(value)
    if value is not None and not isinstance(value, str | os.PathLike):
        raise MeshnnTypeError(f"ttnn.CONFIG.report_name must be a str or None, got {value!r}")
    return None if value is None else str(value)


class Config:
    """``ttnn.Config``: the attributes of :data:`DEFAULTS`, each checked when set."""

    def __init__(self, **values: object) -> None:
        object.__setattr__(self, "_values", dict(DEFAULTS))
        object.__setattr__(self, "_path_cache", None)  # ((report name, root), its path)
        for name, value in values.items():
            self._values[name] = _checked(name, value)

    def __getattr__(self, name: str) -> Any:
        values = object.__getattribute__(self, "_values")
        if name in values:
            return values[name]
        raise AttributeError(f"ttnn.CONFIG has no attribute {name!r}")

    def __setattr__(self, name: str, value: object) -> None:
        if name == "report_path":
            raise MeshnnValueError("ttnn.CONFIG.report_path is read-only: set root_report_path and report_name")
        old = self._values.get(name)
        self._values[name] = _checked(name, value)
        try:
            self._changed(name)
        except MeshnnError:  # (a report folder that cannot be made) the config stays as it was
            self._values[name] = old
            raise

    def _changed(self, name: str) -> None:
        """A hook for :data:`CONFIG`; a Config of one's own changes nothing else."""

    @property
    def report_path(self) -> Path | None:
        """Where the report goes (None without a ``report_name``)."""
        name = self._values["report_name"]
        if name is None:
            return None
        key = (name, self._values["root_report_path"])
        cache = self._path_cache
        if cache is None or cache[0] != key:
            stamp = datetime.datetime.now().strftime("%b%d_%H%M").lower()
            cache = (key, Path(key[1]) / f"{snake_name(name)}_{stamp}")
            object.__setattr__(self, "_path_cache", cache)
        return cache[1]

    def to_dict(self) -> dict[str, object]:
        """Every attribute and ``report_path``, as ``config.json`` holds them."""
        return {**self._values, "report_path": self.report_path}

    def __repr__(self) -> str:
        fields = ",".join(f"{k}={v}" for k, v in self._values.items())
        return f"Config{{{fields},report_path={self.report_path}}}"


class _GlobalConfig(Config):
    """The process's config: each change may start, move or stop the report."""

    def _changed(self, name: str) -> None:
        _warn_like_ttnn(self, name)
        sync_report(self)
        if name in ("enable_comparison_mode", "enable_fast_runtime_mode"):
            comparison.sync(self.enable_comparison_mode and not self.enable_fast_runtime_mode)


def _warn_like_ttnn(config: Config, name: str) -> None:
    fast = config.enable_fast_runtime_mode
    if name in ("enable_fast_runtime_mode", "enable_logging") and fast and config.enable_logging:
        warnings.warn(
            "Logging cannot be enabled in fast runtime mode. Please disable fast runtime mode if you want "
            "to enable logging.",
            stacklevel=4,
        )
    detailed = ("enable_graph_report", "enable_detailed_buffer_report", "enable_detailed_tensor_report")
    if name in (*detailed, "enable_fast_runtime_mode") and not config.enable_logging:
        for flag in detailed:
            if getattr(config, flag):
                warnings.warn(f"Running without logging: {flag} writes nothing until enable_logging", stacklevel=4)


_WRITER: ReportWriter | None = None
_LOCK = threading.Lock()
WRITTEN: list[ReportWriter] = []
"""Every report writer this process started, in order (the ``meshnn`` command says where each wrote)."""


def sync_report(config: Config) -> ReportWriter | None:
    """Start, move or stop the report writer to match ``config``; returns the writer now active."""
    global _WRITER
    wanted = config.enable_logging and not config.enable_fast_runtime_mode
    path = config.report_path if wanted else None
    options = ReportOptions(
        config.report_name or "",
        config.enable_detailed_buffer_report,
        config.enable_detailed_tensor_report,
        {k: (str(v) if isinstance(v, Path) else v) for k, v in config.to_dict().items()},
    )
    with _LOCK:
        if _WRITER is not None and _WRITER.path != path:
            OBSERVERS.remove(_WRITER)
            _WRITER.close()
            _WRITER = None
        if path is not None and _WRITER is None:
            _check_report_folder(path)
            _WRITER = ReportWriter(path, options)
            WRITTEN.append(_WRITER)
            OBSERVERS.add(_WRITER)
        elif _WRITER is not None:
            _WRITER.options = options
        return _WRITER


def _check_report_folder(path: Path) -> None:
    """Make the report folder now, when the report is switched on: a folder that cannot be made is
    an error here, naming it, and no report starts (not an OSError from every op afterwards)."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise MeshnnValueError(
            f"ttnn.CONFIG: the report folder {str(path)!r} cannot be made ({error.strerror or error}); "
            "set root_report_path to a folder this process can write"
        ) from None


def active_report() -> ReportWriter | None:
    """The report writer of :data:`CONFIG`, while one is writing."""
    return _WRITER


CONFIG = _GlobalConfig()
"""``ttnn.CONFIG``."""


@contextlib.contextmanager
def manage_config(name: str, value: object) -> Iterator[object]:
    """``ttnn.manage_config``: ``CONFIG.<name> = value`` inside the block, the old value after it."""
    if not isinstance(name, str):
        raise MeshnnTypeError(f"manage_config: name must be a str, got {name!r}")
    if name not in DEFAULTS:
        _checked(name, value)  # raises, naming it
    old = getattr(CONFIG, name)
    setattr(CONFIG, name, value)
    try:
        yield getattr(CONFIG, name)
    finally:
        setattr(CONFIG, name, old)


def load_overrides(environ: dict[str, str] | os._Environ) -> None:
    """Set :data:`CONFIG` from ``$TTNN_CONFIG_PATH`` (a JSON file) and ``$TTNN_CONFIG_OVERRIDES``."""
    sources = []
    if environ.get("TTNN_CONFIG_PATH"):
        try:
            sources.append(("TTNN_CONFIG_PATH", Path(environ["TTNN_CONFIG_PATH"]).read_text()))
        except (OSError, UnicodeDecodeError) as error:  # a missing file, a folder, no permission, not text
            reason = getattr(error, "strerror", None) or str(error)
            path = environ["TTNN_CONFIG_PATH"]
            raise MeshnnValueError(f"$TTNN_CONFIG_PATH={path!r} cannot be read: {reason}") from None
    if environ.get("TTNN_CONFIG_OVERRIDES"):
        sources.append(("TTNN_CONFIG_OVERRIDES", environ["TTNN_CONFIG_OVERRIDES"]))
    for variable, text in sources:
        try:
            values = json.loads(text)
        except json.JSONDecodeError as error:
            raise MeshnnValueError(f"${variable} is not JSON: {error}") from None
        if not isinstance(values, dict):
            raise MeshnnValueError(f"${variable} must be a JSON object of ttnn.CONFIG attributes")
        unknown = [name for name in values if name not in DEFAULTS]
        if unknown:  # newer ttnn attributes meshnn does not have: said, not fatal at import
            warnings.warn(f"${variable}: meshnn's ttnn.CONFIG has no {', '.join(unknown)}; ignored", stacklevel=2)
        for name, value in values.items():
            if name not in unknown:
                setattr(CONFIG, name, value)


CONFIG_PATH: Path | None = Path(os.environ["TTNN_CONFIG_PATH"]) if "TTNN_CONFIG_PATH" in os.environ else None
"""``ttnn.CONFIG_PATH``: ``$TTNN_CONFIG_PATH`` at import, a path, or None."""
CONFIG_OVERRIDES: str | None = os.environ.get("TTNN_CONFIG_OVERRIDES")
"""``ttnn.CONFIG_OVERRIDES``: ``$TTNN_CONFIG_OVERRIDES`` at import (JSON text), or None."""


def load_config_from_dictionary(config: dict[str, object], from_file: bool = False) -> None:
    """``ttnn.load_config_from_dictionary``: set each key of ``config`` on :data:`CONFIG`, its value
    first converted to the type of the attribute's current value (when that is not None), as ttnn
    does.  An unknown key raises ``ValueError`` (``from_file``: a warning, and it is skipped)."""
    if not isinstance(config, dict):
        raise MeshnnTypeError(f"load_config_from_dictionary: config must be a dict, got {type(config).__name__}")
    for key, value in config.items():
        if key in DEFAULTS:
            current = getattr(CONFIG, key)
            if current is not None and not isinstance(value, type(current)):
                value = _converted(key, current, value)
            setattr(CONFIG, key, value)
        elif from_file:
            warnings.warn(
                f"Unknown configuration key: {key}. Please update your configuration file: {CONFIG_PATH}.", stacklevel=2
            )
        else:
            raise MeshnnValueError(f"Unknown configuration key: {key}")


def _converted(key: str, current: object, value: object) -> object:
    """``type(current)(value)``, as ttnn converts a loaded value (a path from a str, a float from an int)."""
    kind = Path if isinstance(current, Path) else type(current)
    try:
        return kind(value)
    except (TypeError, ValueError) as error:
        raise MeshnnValueError(f"ttnn.CONFIG.{key}: {value!r} is not a {kind.__name__}: {error}") from None


def load_config_from_json_file(json_path: str | os.PathLike) -> None:
    """``ttnn.load_config_from_json_file``: :func:`load_config_from_dictionary` of the file's JSON
    object (``from_file``); a file that cannot be read or loaded is a warning, as in ttnn.  (A
    ``json_path`` that is no path is refused: ``open`` would take an int for a file descriptor.)"""
    if not isinstance(json_path, str | os.PathLike):
        raise MeshnnTypeError(f"load_config_from_json_file: json_path must be a path, got {type(json_path).__name__}")
    try:
        with open(json_path) as file:
            config = json.load(file)
        load_config_from_dictionary(config, from_file=True)
    except (OSError, ValueError, TypeError) as error:
        warnings.warn(f"Failed to load ttnn configuration from {json_path}: {error}", stacklevel=2)


def _close_at_exit() -> None:
    if _WRITER is not None:
        OBSERVERS.remove(_WRITER)
        _WRITER.close()


load_overrides(os.environ)
atexit.register(_close_at_exit)
