"""meshnn.host.interrupts: the SIGINT handler defers an interrupt landing in one of meshnn's
finalizers and raises it anywhere else; arming leaves a program's own handler alone.  (The
end-to-end runs, with real signals, are in test_round3.py.)"""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest

import meshnn  # noqa: F401  (arms the handler at import)
from meshnn.host import interrupts


@pytest.fixture
def deferred(monkeypatch):
    calls: list[float] = []
    monkeypatch.setattr(interrupts, "interrupt_main_soon", lambda delay=0.01: calls.append(delay))
    return calls


def test_an_interrupt_landing_in_a_finalizer_is_deferred_and_anywhere_else_raised(deferred):
    frames = []

    @interrupts.passes_interrupts
    def finalizer() -> None:
        frames.append(sys._getframe())  # a frame inside the finalizer (its callee's, as a signal sees it)

    finalizer()
    interrupts.on_sigint(signal.SIGINT, frames[0])
    assert deferred == [interrupts.REDELIVERY_DELAY]
    with pytest.raises(KeyboardInterrupt):
        interrupts.on_sigint(signal.SIGINT, sys._getframe())
    assert len(deferred) == 1


def test_a_finalizer_passes_on_an_interrupt_raised_inside_it(deferred):
    @interrupts.passes_interrupts
    def finalizer() -> None:
        raise KeyboardInterrupt

    assert finalizer() is None and deferred == [interrupts.REDELIVERY_DELAY]


def test_arming_replaces_only_pythons_default_handler(monkeypatch):
    installed = []
    monkeypatch.setattr(signal, "signal", lambda signum, handler: installed.append(handler))
    monkeypatch.setattr(signal, "getsignal", lambda signum: signal.default_int_handler)
    interrupts.arm()
    assert installed == [interrupts.on_sigint]
    monkeypatch.setattr(signal, "getsignal", lambda signum: print)  # a program's own handler
    interrupts.arm()
    assert installed == [interrupts.on_sigint]


def test_importing_meshnn_arms_the_handler_of_a_plain_python_process():
    code = "import signal, meshnn; print(signal.getsignal(signal.SIGINT).__qualname__)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.stdout.strip() == "on_sigint", result


def test_meshnn_runs_trace_of_a_ctrl_c_leaves_out_the_handlers_own_frame():
    """The handler's frame is not where the program was: ``meshnn run`` cuts it even when it lands
    below a frame of another library (where a run of meshnn's frames has ended), as it did in a
    catalog load interrupted inside the standard library."""
    from meshnn.cli.runner import _without_meshnn_frames
    from meshnn.host.interrupts import on_sigint

    try:
        on_sigint(signal.SIGINT, None)  # called from this test's frame, outside meshnn
    except KeyboardInterrupt as error:
        trace = error.__traceback__
    rebuilt, hidden = _without_meshnn_frames(trace)
    assert hidden == 1 and rebuilt is not None and rebuilt.tb_next is None
    assert rebuilt.tb_frame.f_code.co_name == "test_meshnn_runs_trace_of_a_ctrl_c_leaves_out_the_handlers_own_frame"
