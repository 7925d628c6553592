"""``meshnn run SCRIPT.py``: run a TTNN script unmodified, ``import ttnn`` answered by meshnn."""

from __future__ import annotations

import os
import runpy
import sys
import traceback
from types import TracebackType

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


def run_path(
    script: str, args: list[str], *, system: str | None = None, passes: tuple[type[BaseException], ...] = ()
) -> int:
    """Run ``script`` as ``__main__`` with ``args``; a ttnn name meshnn lacks exits 3 with its name.
    An error of a type in ``passes`` reaches the caller instead of being reported here."""
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
        meshnn.end_all_ranks(f"{script} uses ttnn.{missing.name}, which meshnn does not implement yet")
        return MISSING_EXIT
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 1)
        if code:  # as `python -m mpi4py` does: a rank that exits non-zero ends the run
            meshnn.end_all_ranks(f"{script} exited with code {code}")
        return code
    except passes:
        raise
    except BaseException as error:
        report_uncaught(script, error)
        return 1
    finally:
        sys.argv = saved
        sys.path.pop(0)
    return 0


def report_uncaught(script: str, error: BaseException) -> None:
    """An error the script did not catch, as Python reports it: the traceback from the script's
    own first frame (the file and line of the mistake), then, under MPI, every rank ends (through
    the MPI context's hook, which prints ``meshnn: rank R: raised ...`` once)."""
    trace = _from_script(error.__traceback__, os.path.abspath(script))
    if isinstance(error, SyntaxError) and trace is error.__traceback__:
        trace = None  # the script did not compile: Python's own report of it names its file and line
    error.with_traceback(trace)
    if sys.excepthook is not sys.__excepthook__:
        sys.excepthook(type(error), error, trace)  # the MPI context's hook: prints, then aborts
    else:
        traceback.print_exception(type(error), error, trace, file=sys.stderr)
    meshnn.end_all_ranks(f"raised {type(error).__name__}: {error}")


def _from_script(trace: TracebackType | None, script: str) -> TracebackType | None:
    """``trace`` without the frames of ``meshnn run`` and runpy above the script's first frame."""
    here = trace
    while here is not None:
        if os.path.abspath(here.tb_frame.f_code.co_filename) == script:
            return here
        here = here.tb_next
    return trace
