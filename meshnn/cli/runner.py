"""``meshnn run SCRIPT.py``: run a TTNN script unmodified, ``import ttnn`` answered by meshnn."""

from __future__ import annotations

import os
import runpy
import sys

import meshnn
from meshnn.compat import ttnn_alias
from meshnn.errors import NotImplementedByMeshnn

MISSING_EXIT = 3
SUPERVISED = "MESHNN_SUPERVISED"


def _rank() -> str:
    for name in ("PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK"):
        if name in os.environ:
            return os.environ[name]
    return "?"


def supervise(script: str, args: list[str], system: str | None) -> int:
    """Under an MPI launcher, run the rank in a child process and watch it: a rank killed by a
    signal is reported by name before the launcher tears the run down."""
    import signal
    import subprocess

    command = [sys.executable, "-m", "meshnn", "run", *(["--system", system] if system else []), script, *args]
    child = subprocess.Popen(command, env=os.environ | {SUPERVISED: "1"}, close_fds=False)  # keeps the PMI socket
    code = child.wait()
    if code < 0:
        name = signal.Signals(-code).name
        print(
            f"meshnn: rank {_rank()} (pid {child.pid}) was killed by {name}; the run stops", file=sys.stderr, flush=True
        )
        return 128 - code
    return code


def run_path(script: str, args: list[str], *, system: str | None = None) -> int:
    """Run ``script`` as ``__main__`` with ``args``; a ttnn name meshnn lacks exits 3 with its name."""
    if not os.path.isfile(script):
        print(f"meshnn run: no such script: {script}", file=sys.stderr)
        return 2
    if meshnn.launched_under_mpi() and os.environ.get(SUPERVISED) != "1":
        return supervise(script, args, system)
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
