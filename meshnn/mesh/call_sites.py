"""Where in the user's code a call into meshnn came from: the frames of the caller's stack that are
the user's, for reports (ttnn's stack traces) and memory pictures (a buffer named by the line
that made it and the variable that line assigns).

The user's frames are the stack's frames less meshnn's own (files under the ``meshnn`` package, and
the functions meshnn compiles with ttnn's signatures, named ``<ttnn.NAME>``), less Python's frozen
modules (``<frozen runpy>``: how ``meshnn run`` and ``python -m`` start a script), and less
everything outside the ``meshnn`` command (``meshnn run`` and ``meshnn perf``
are the launcher, not the user's program).  File names are absolute, whatever path the script was
started with, so that each frame of a stack trace names its file in full.

Layers: imports nothing of meshnn.
"""

from __future__ import annotations

import linecache
import os
import re
import sys
import traceback
from dataclasses import dataclass
from types import FrameType

PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
"""The ``meshnn`` package's folder: frames of files under it are meshnn's own."""

LAUNCHER_ROOT = PACKAGE_ROOT + "cli" + os.sep
"""The ``meshnn`` command's folder: the frames outside its innermost frame are the launcher's."""

_ABSOLUTE: dict[str, str] = {}
_ASSIGNED = re.compile(r"\s*([A-Za-z_][\w.]*(?:\s*,\s*[A-Za-z_][\w.]*)*)\s*(?:\[[^\]=]*\])?\s*[+\-*/@]?=(?!=)")


def absolute(filename: str) -> str:
    """``filename`` made absolute against the working directory (``<...>`` names as they are)."""
    found = _ABSOLUTE.get(filename)
    if found is None:
        found = filename if filename.startswith("<") else os.path.abspath(filename)
        _ABSOLUTE[filename] = found
    return found


NOT_USERS = ("<frozen ", "<ttnn.")
"""Pseudo-file names of frames that are not the user's: Python's frozen modules, meshnn's generated ops."""


def is_meshnns(filename: str) -> bool:
    """Whether a frame of ``filename`` is meshnn's own: the package's files and the ops meshnn
    compiles with ttnn's signatures (``<ttnn.NAME>``)."""
    return filename.startswith(PACKAGE_ROOT) or filename.startswith("<ttnn.")


def compiled_op(filename: str) -> str | None:
    """The ttnn name of an op meshnn compiled (a frame of ``<ttnn.NAME>``), else None."""
    return filename[6:-1] if filename.startswith("<ttnn.") and filename.endswith(">") else None


def _is_users(filename: str) -> bool:
    return not filename.startswith(PACKAGE_ROOT) and not filename.startswith(NOT_USERS)


def user_frames(frame: FrameType | None = None) -> list[traceback.FrameSummary]:
    """The user's frames of the stack above ``frame`` (default: the caller's), innermost first,
    with absolute file names and their source lines."""
    here = sys._getframe(1) if frame is None else frame
    found: list[traceback.FrameSummary] = []
    while here is not None:
        code = here.f_code
        filename = absolute(code.co_filename)
        if filename.startswith(LAUNCHER_ROOT):
            break
        if _is_users(filename):
            found.append(traceback.FrameSummary(filename, here.f_lineno, code.co_name))
        here = here.f_back
    return found


def stack_trace(frames: list[traceback.FrameSummary]) -> str:
    """``frames`` as ttnn's report writes a stack trace: Python's ``File "x.py", line n, in f`` and
    the source line of each frame, innermost first, one frame after another."""
    return "\n".join(traceback.format_list(frames))


@dataclass(frozen=True, slots=True)
class CallSite:
    """The innermost user frame of a call: its absolute file and line."""

    filename: str
    line: int

    @property
    def short(self) -> str:
        """``model.py:12``."""
        return f"{os.path.basename(self.filename)}:{self.line}"

    @property
    def assigned(self) -> str | None:
        """The name(s) the line assigns (``h`` in ``h = ttnn.rms_norm(x)``), when it is an
        assignment; None otherwise."""
        text = linecache.getline(self.filename, self.line)
        match = _ASSIGNED.match(text)
        return re.sub(r"\s+", "", match.group(1)).replace(",", ", ") if match else None


def call_site() -> CallSite | None:
    """The innermost user frame of the caller's stack (None when the call came from meshnn itself,
    or from no file)."""
    here = sys._getframe(1)
    while here is not None:
        filename = here.f_code.co_filename
        if filename.startswith(LAUNCHER_ROOT):
            return None
        if _is_users(filename) and not filename.startswith("<"):
            return CallSite(absolute(filename), here.f_lineno)
        here = here.f_back
    return None
