"""``meshnn run SCRIPT.py``: run a TTNN script unmodified, ``import ttnn`` answered by meshnn.

The script's exit status is python's: 0, its ``sys.exit`` status, 1 for an uncaught error, 130
for Ctrl-C (a shell shows python's death by SIGINT as 130), 3 for a ttnn name meshnn lacks.  An
uncaught error's traceback is python's without meshnn's own frames below the call the script
made (they are counted, and shown with ``MESHNN_FULL_TRACEBACK=1``).

Under an MPI launcher each rank runs in a child process that a supervisor watches: a rank killed
by a signal is named before the launcher tears the run down; an interrupt or a termination the
supervisor receives is passed on to the rank; and the rank ends when its supervisor does.
"""

from __future__ import annotations

import importlib
import os
import runpy
import signal
import sys
import traceback
from types import FrameType, TracebackType

import meshnn
from meshnn.compat import ttnn_alias
from meshnn.errors import NotImplementedByMeshnn

MISSING_EXIT = 3
INTERRUPTED_EXIT = 130
SUPERVISED = "MESHNN_SUPERVISED"
FULL_TRACEBACK = "MESHNN_FULL_TRACEBACK"
FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)
_PACKAGE = os.path.dirname(os.path.abspath(meshnn.__file__)) + os.sep


def _rank() -> str:
    for name in ("PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK"):
        if name in os.environ:
            return os.environ[name]
    return "?"


def _end_with_parent() -> None:
    """In the rank's process, before it runs: a process group of its own (the supervisor passes
    each signal on once), and, on Linux, death when the supervisor dies (PR_SET_PDEATHSIG)."""
    os.setpgid(0, 0)
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass  # elsewhere the rank's MPI watchdog ends it when the supervisor is gone


def supervise(script: str, args: list[str], system: str | None) -> int:
    """Under an MPI launcher, run the rank in a child process and watch it: a rank killed by a
    signal is reported by name before the launcher tears the run down; SIGINT, SIGTERM, SIGHUP
    and SIGQUIT sent to the supervisor are passed on to the rank."""
    import subprocess

    command = _same_command() or [
        sys.executable,
        "-m",
        "meshnn",
        "run",
        *(["--system", system] if system else []),
        script,
        *args,
    ]
    child = subprocess.Popen(  # close_fds=False keeps the PMI socket
        command, env=os.environ | {SUPERVISED: "1"}, close_fds=False, preexec_fn=_end_with_parent
    )

    def forward(signum: int, frame: FrameType | None) -> None:
        if child.poll() is None:
            child.send_signal(signum)

    for signum in FORWARDED:
        signal.signal(signum, forward)
    code = child.wait()
    if code < 0:
        name = signal.Signals(-code).name
        if -code != signal.SIGINT:
            print(
                f"meshnn: rank {_rank()} (pid {child.pid}) was killed by {name}; the run stops",
                file=sys.stderr,
                flush=True,
            )
        return 128 - code
    return code


def _same_command() -> list[str] | None:
    """The command line of this process when it is ``meshnn run`` or ``meshnn plan``, for the
    rank's process to run the same command (a plan stays a plan); None otherwise."""
    name = os.path.basename(sys.argv[0]) if sys.argv else ""
    if name in ("meshnn", "__main__.py") and sys.argv[1:2] in (["run"], ["plan"]):
        return [sys.executable, "-m", "meshnn", *sys.argv[1:]]
    return None


def run_path(
    script: str, args: list[str], *, system: str | None = None, passes: tuple[type[BaseException], ...] = ()
) -> int:
    """Run ``script`` as ``__main__`` with ``args``; a ttnn name meshnn lacks exits 3 with its name.
    An error of a type in ``passes`` reaches the caller instead of being reported here."""
    if not os.path.isfile(script):
        print(f"meshnn run: no such script: {script}", file=sys.stderr)
        return 2
    if meshnn.launched_under_mpi() and os.environ.get(SUPERVISED) != "1":
        code = supervise(script, args, system)
        if _same_command() is not None:  # the rank ran this whole command (a plan's report included)
            raise SystemExit(code)
        return code
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
        return INTERRUPTED_EXIT if isinstance(error, KeyboardInterrupt) else 1
    finally:
        sys.argv = saved
        sys.path.pop(0)
    return 0


def report_uncaught(script: str, error: BaseException) -> None:
    """An error the script did not catch, as Python reports it: the traceback from the script's
    own first frame (the file and line of the mistake), without meshnn's frames below the call
    the script made; then, under MPI, every rank ends (through the MPI context's hook, which
    prints ``meshnn: rank R: raised ...`` once, and an interrupt's traceback on one rank)."""
    trace = _from_script(error.__traceback__, os.path.abspath(script))
    if isinstance(error, SyntaxError) and trace is error.__traceback__:
        trace = None  # the script did not compile: Python's own report of it names its file and line
    if os.environ.get(FULL_TRACEBACK) != "1":
        trace, hidden = _without_meshnn_frames(trace)
        if hidden:
            error.add_note(f"({hidden} frame(s) inside meshnn not shown; {FULL_TRACEBACK}=1 shows them)")
    error.with_traceback(trace)
    if sys.excepthook is not sys.__excepthook__:
        sys.excepthook(type(error), error, trace)  # the MPI context's hook: prints, then aborts
    else:
        traceback.print_exception(type(error), error, trace, file=sys.stderr)
    interrupted = isinstance(error, KeyboardInterrupt)
    meshnn.end_all_ranks(
        "interrupted (KeyboardInterrupt)" if interrupted else f"raised {type(error).__name__}: {error}"
    )


def _from_script(trace: TracebackType | None, script: str) -> TracebackType | None:
    """``trace`` without the frames of ``meshnn run`` and runpy above the script's first frame."""
    here = trace
    while here is not None:
        if os.path.abspath(here.tb_frame.f_code.co_filename) == script:
            return here
        here = here.tb_next
    return trace


_IMPORTLIB = os.path.dirname(importlib.__file__)  # the import machinery's own Python files
_HANDLER = os.path.join(_PACKAGE, "host", "interrupts.py")  # meshnn's Ctrl-C handler's file


def _without_meshnn_frames(trace: TracebackType | None) -> tuple[TracebackType | None, int]:
    """``trace`` with each run of frames inside meshnn cut to its first one (the ttnn function
    the script called), and how many frames were cut.  The frames of the script and of other
    libraries stay; the import machinery's frames under a meshnn frame (meshnn importing its op
    catalog at the first op) are meshnn's run too.  meshnn's Ctrl-C handler's own frame, the last
    of an interrupt's trace, is cut wherever it lands (it is not where the program was: Python's
    own handler leaves no frame), also below a frame of another library."""
    kept: list[TracebackType] = []
    hidden, inside = 0, False
    here = trace
    while here is not None:
        code = here.tb_frame.f_code
        if here.tb_next is None and code.co_name == "on_sigint" and os.path.abspath(code.co_filename) == _HANDLER:
            hidden += 1
            break
        name = here.tb_frame.f_code.co_filename
        machinery = name.startswith("<frozen importlib") or os.path.dirname(name) == _IMPORTLIB
        mine = os.path.abspath(name).startswith(_PACKAGE) or (inside and machinery)
        if mine and inside:
            hidden += 1
        else:
            kept.append(here)
        inside = mine
        here = here.tb_next
    rebuilt = None
    for tb in reversed(kept):
        rebuilt = TracebackType(rebuilt, tb.tb_frame, tb.tb_lasti, tb.tb_lineno)
    return rebuilt, hidden
