"""The host worker threads: one pool, made at the first large copy and kept, and what runs on it.

``host_threads`` says how many threads one large copy or conversion is split over
(``MESHNN_HOST_THREADS``, else the CPUs, at most ``MAX_HOST_THREADS``); ``run_parallel`` runs the
parts of a task at once; ``parallel_copyto`` splits a large host copy (``PARALLEL_MIN_BYTES`` and
more) over the threads, giving the bytes of one single-threaded copy; ``each_chunk`` hands the
chunks of a torch conversion out one at a time.  Every wait is bounded (``wait_timeout``).

Part of the ``host`` layer; imports ``meshnn.errors`` and the host's settings and omp modules.
"""

from __future__ import annotations

import itertools
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import numpy as np

from meshnn.errors import MeshnnValueError
from meshnn.host import omp, settings


def wait_timeout() -> float:
    """Seconds one wait of meshnn's threads may last (``MESHNN_WAIT_TIMEOUT``, default 120; checked
    by :mod:`meshnn.host.settings`): the start of the worker pool here, and the mesh command
    queues' waits for events and drains."""
    return settings.wait_timeout()


PARALLEL_MIN_BYTES = 2 << 20
"""Host copies of fewer bytes run on the calling thread alone: below this size, handing part of
a copy to another thread costs more than the second core saves.  (numpy copies release the
interpreter lock for their whole length, so the threads of a large copy do run at once.)"""

HOST_THREADS_ENV = "MESHNN_HOST_THREADS"
MAX_HOST_THREADS = 8  # beyond this a copy is bound by memory bandwidth, not by cores
MAX_CONFIGURED_THREADS = 256  # MESHNN_HOST_THREADS at most: every thread of the pool starts at once

_workers: tuple[ThreadPoolExecutor, int] | None = None  # the pool and its thread count
_workers_lock = threading.Lock()
_on_worker = threading.local()


def host_threads() -> int:
    """Threads one large host copy or conversion is split over: ``MESHNN_HOST_THREADS`` when set
    (1 turns splitting off; at most ``MAX_CONFIGURED_THREADS``), else the CPUs this process may
    run on, at most ``MAX_HOST_THREADS``."""
    configured = os.environ.get(HOST_THREADS_ENV)
    if configured:
        text = configured.strip()
        if not (text.isascii() and text.isdigit()) or not 1 <= int(text) <= MAX_CONFIGURED_THREADS:
            raise MeshnnValueError(
                f"{HOST_THREADS_ENV} must be a positive integer of at most {MAX_CONFIGURED_THREADS}, got {configured!r}"
            )
        return int(text)
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, MAX_HOST_THREADS))


def _worker_pool(count: int) -> ThreadPoolExecutor:
    """At least ``count`` host worker threads, made at the first large copy and then kept (they
    exit with the interpreter).  All of them start at once, so ``threading.active_count()``
    changes then and not at some later copy."""
    global _workers
    with _workers_lock:
        if _workers is None or _workers[1] < count:
            pool = ThreadPoolExecutor(count, "meshnn-host", initializer=_mark_worker)
            started = threading.Barrier(count)  # each task holds its thread until all have one
            for future in [pool.submit(started.wait, wait_timeout()) for _ in range(count)]:
                future.result()
            if _workers is not None:
                _workers[0].shutdown(wait=False)
            _workers = (pool, count)
        return _workers[0]


def on_host_worker() -> bool:
    """Whether the calling thread is one of the host worker threads (where parallel work runs in turn)."""
    return getattr(_on_worker, "active", False)


def _mark_worker() -> None:
    _on_worker.active = True


def _forget_workers() -> None:
    """In a forked child: the parent's threads are gone, so the next large copy starts new ones."""
    global _workers, _workers_lock
    _workers, _workers_lock = None, threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_workers)


def run_parallel(task: Callable[[int], None], parts: int) -> None:
    """Run ``task(0)``, ..., ``task(parts - 1)`` at the same time: part 0 on the calling thread,
    the others on the host worker threads.  Returns once every part has finished (none is left
    writing), then raises the first error a part raised.  On a worker thread (a nested call), or
    with one host thread, the parts run one after another: a worker never waits for a worker."""
    threads = min(parts, host_threads())
    if threads <= 1 or on_host_worker():
        for part in range(parts):
            task(part)
        return
    pool = _worker_pool(threads - 1)
    futures = [pool.submit(task, part) for part in range(1, parts)]
    try:
        task(0)
    finally:
        errors = [future.exception() for future in futures]  # waits for every part
    for error in errors:
        if error is not None:
            raise error


def parallel_copyto(dst: np.ndarray, src: np.ndarray) -> None:
    """``np.copyto(dst, src)`` for two arrays of one shape (any strides), split into ranges of
    their first axis long enough to share out when it moves ``PARALLEL_MIN_BYTES`` or more.  Each
    element is copied once, by one thread: the bytes are exactly those of the single copy."""
    parts = host_threads() if dst.nbytes >= PARALLEL_MIN_BYTES else 1
    axis = next((i for i, n in enumerate(dst.shape) if n >= parts), None)
    if parts == 1 or axis is None:
        np.copyto(dst, src)
        return
    length, lead = dst.shape[axis], (slice(None),) * axis

    def copy_part(part: int) -> None:
        piece = (*lead, slice(length * part // parts, length * (part + 1) // parts))
        np.copyto(dst[piece], src[piece])

    run_parallel(copy_part, parts)


_Chunk = TypeVar("_Chunk")


def each_chunk(torch: Any, chunks: list[_Chunk], work: Callable[[_Chunk], None]) -> None:
    """``work(chunk)`` for every chunk of a conversion done with ``torch``'s operations, the chunks
    handed out one at a time to the host threads (:func:`host_threads`), each thread running its
    torch operations on itself alone.  A core then keeps its own chunk in its own cache, and the
    numpy steps of a chunk (index moves, exponent bytes) run in parallel too; measured on 2
    cores, a bfloat8_b pack is about a quarter faster than with torch splitting every operation
    over its threads.  Handing chunks out as threads free up (rather than a fixed half each)
    lets a thread that a busy host slows do fewer.  ``work`` must take its scratch per thread
    (as :func:`meshnn.formats.bfp_chunks.thread_scratch` gives it).

    torch's thread count is per thread (OpenMP's): each thread sets its own alone for its chunks
    (:mod:`meshnn.host.omp`) and gives it back.  Where that cannot be done, ``torch.set_num_threads``
    also sets the count every thread starts with, so the calling thread's count, and so that
    starting count, is restored before this returns."""
    parts = min(len(chunks), host_threads())
    if parts <= 1 or on_host_worker():
        for chunk in chunks:
            work(chunk)
        return
    alone = omp.available()  # each thread's count set alone, else torch's (and restored below)
    saved = None if alone else torch.get_num_threads()
    numbers = itertools.count()  # next() on a count is atomic under the interpreter lock
    failed = threading.Event()  # once a chunk fails, the others are not started

    def run(part: int) -> None:
        token = omp.one_thread() if alone else torch.set_num_threads(1)  # (given back below when alone)
        try:
            while not failed.is_set() and (number := next(numbers)) < len(chunks):
                try:
                    work(chunks[number])
                except BaseException:
                    failed.set()
                    raise
        finally:
            omp.restore(token)

    try:
        run_parallel(run, parts)
    finally:
        if saved is not None:
            torch.set_num_threads(saved)
