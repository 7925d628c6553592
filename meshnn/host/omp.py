"""How many threads torch's CPU operations take inside meshnn's kernels: one, unless a product has
work enough to share.

torch splits an operation over its OpenMP threads, and a parallel region ends only when every one
of its threads has done its part. On a shared host, where other processes hold the cores, a
region waits for a thread the scheduler has not run yet: measured on a 2-core host at load 4, a
``32 x 8192`` bfloat16 silu-multiply took 12 to 27 ms on two threads and 0.17 ms on one, a ``32 x
2048 @ 2048 x 8192`` bfloat16 product 10 to 16 ms against 2.8 to 6.9 ms, a decode attention's
float32 batched product 4.8 against 2.4 ms. A model's step is hundreds of such small operations.
So a kernel runs torch on its own thread alone (:func:`one_thread` / :func:`restore`), and only a
product of at least :data:`WIDE_MIN_MACS` multiply-adds spreads over the thread's usual count
(:func:`wide`), where a second core pays for the wait on a quiet host.

OpenMP's thread count is per thread (its ``nthreads`` setting); ``torch.set_num_threads`` sets the
calling thread's and also the count every new thread starts with (and MKL's, process-wide). This
module sets the calling thread's alone, through the OpenMP runtime that torch loaded (the
``libgomp`` beside its libraries, or one found among the loaded libraries), so the user's threads
and torch's defaults are untouched. Where no such runtime is found (another OpenMP, a torch built
without one), nothing is changed and torch runs as it would. Which count a kernel's operation takes depends on its
size and torch's count alone, never on the data or on the thread that runs it, so an eager step
and its replay compute alike.

Part of the ``host`` layer; imports only :mod:`meshnn.host.torch_math` of meshnn (torch's runtime
when torch is loaded).  Torch's math functions are settled (:func:`~meshnn.host.torch_math.settle_vml`)
when this module is imported with torch loaded, and at the first kernel that uses torch.
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from meshnn.host.torch_math import settle_vml

WIDE_MIN_MACS = 1 << 26
"""A product of at least this many multiply-adds (67 M: a ``32 x 2048 @ 2048 x 1024``) runs on
the thread's usual count of torch threads; smaller ones, and every other operation, on one."""

SERIAL_ELEMENTS = 32768
"""torch's grain (``at::internal::GRAIN_SIZE``): an element-wise operation over at most this many
elements runs on the calling thread without opening an OpenMP region (``TensorIteratorBase::for_each``
runs it serially below the grain, and ``at::parallel_for`` only splits more than a grain), so a kernel
made of such operations needs no :func:`one_thread` (``launch(torch_elements=...)``)."""

_UNSET = object()
_runtime: Any = _UNSET  # (get, set) of the OpenMP runtime, or None: looked up once torch is loaded
_lock = threading.Lock()
_local = threading.local()  # usual: the calling thread's count before the outermost kernel on it (0: none)


def _find_runtime() -> tuple[Any, Any] | None:
    """``(omp_get_max_threads, omp_set_num_threads)`` of the OpenMP runtime torch uses, or None."""
    torch = sys.modules["torch"]
    names = [os.path.join(os.path.dirname(torch.__file__), "lib", "libgomp.so.1"), None]
    for name in names:
        if name is not None and not os.path.exists(name):
            continue
        try:
            lib = ctypes.CDLL(name)  # an already loaded library: the same handle, nothing loaded twice
            get, put = lib.omp_get_max_threads, lib.omp_set_num_threads
        except (OSError, AttributeError):
            continue
        get.restype, get.argtypes = ctypes.c_int, []
        put.restype, put.argtypes = None, [ctypes.c_int]
        if get() == torch.get_num_threads():  # the runtime torch's count lives in
            return get, put
    return None


def _functions() -> tuple[Any, Any] | None:
    global _runtime
    if _runtime is _UNSET:
        if "torch" not in sys.modules:
            return None  # (looked up again once the program imports torch)
        with _lock:
            if _runtime is _UNSET:
                settle_vml()  # (before torch's first split call: pytorch/pytorch#188792)
                _runtime = _find_runtime()
    return _runtime


def one_thread() -> tuple[int, int] | None:
    """Make torch's operations on the calling thread run on it alone, until :func:`restore` is
    given what this returns (None: nothing was changed).  Calls nest: the thread's usual count,
    which :func:`wide` gives a large product, is its count at the outermost call."""
    functions = _functions()
    if functions is None:
        return None
    get, put = functions
    if not getattr(_local, "ready", False):  # torch sets a thread's count at its first operation there:
        sys.modules["torch"].get_num_threads()  # that set-up first, so it cannot undo this one
        _local.ready = True
    current, outer = get(), getattr(_local, "usual", 0)
    if not outer:
        _local.usual = current
    if current != 1:
        put(1)
    return current, outer


def restore(token: tuple[int, int] | None) -> None:
    """Give the calling thread back the count it had before the :func:`one_thread` that
    returned ``token``."""
    if token is None:
        return
    current, outer = token
    if current != 1:
        _runtime[1](current)
    _local.usual = outer


@contextmanager
def wide(macs: int) -> Iterator[None]:
    """Within a kernel (after :func:`one_thread`), a product of ``macs`` multiply-adds: on the
    thread's usual count of torch threads when it has :data:`WIDE_MIN_MACS` or more."""
    usual = getattr(_local, "usual", 0)
    if usual <= 1 or macs < WIDE_MIN_MACS:
        yield
        return
    _runtime[1](usual)
    try:
        yield
    finally:
        _runtime[1](1)


def available() -> bool:
    """Whether the calling thread's count can be set alone (torch loaded, its runtime found)."""
    return _functions() is not None


settle_vml()  # (at ``import meshnn`` when the program imported torch first; else a no-op)
