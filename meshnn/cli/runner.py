"""``meshnn run SCRIPT.py``: run a TTNN script unmodified, ``import ttnn`` answered by meshnn."""

from __future__ import annotations

import os
import runpy
import sys

from meshnn.compat import ttnn_alias
from meshnn.errors import NotImplementedByMeshnn

MISSING_EXIT = 3


def run_path(script: str, args: list[str], *, system: str | None = None) -> int:
    """Run ``script`` as ``__main__`` with ``args``; a ttnn name meshnn lacks exits 3 with its name."""
    if not os.path.isfile(script):
        print(f"meshnn run: no such script: {script}", file=sys.stderr)
        return 2
    if system is not None:
        os.environ["MESHNN_SYSTEM"] = system
    ttnn_alias.install()
    saved = sys.argv
    sys.argv = [script, *args]
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    try:
        runpy.run_path(script, run_name="__main__")
    except NotImplementedByMeshnn as missing:
        print(f"meshnn run: {script} uses ttnn.{missing.name}, which meshnn does not implement yet", file=sys.stderr)
        return MISSING_EXIT
    except SystemExit as exit_:
        return exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 1)
    finally:
        sys.argv = saved
        sys.path.pop(0)
    return 0
