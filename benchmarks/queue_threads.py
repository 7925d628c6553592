"""The mesh command queue under two busy threads: what it holds, and how long a read waits.

Two threads issue ``ttnn.add`` of a 256 KiB bfloat16 tensor on one 1x1 mesh as fast as they
can, dropping every result, for ``SECONDS``; a third (the main thread) reads a small tensor back
(``to_torch``, a blocking read) every ``READ_EVERY`` seconds, and the mesh is closed at the end.
Figures: ops issued per second, the most work the queue held (sampled), the most device DRAM
allocated (what the queued work keeps alive: results the threads dropped; the simulator keeps
those bytes in host memory), the read latency (median and worst) and the time
``close_mesh_device`` takes.

The same run is made twice, in turn: with the queue's bound (``MESHNN_QUEUE_DEPTH``, default 64
pieces of work) and, as the limit beside it, with the bound lifted (the depth set to 10**9 on the
queue: what issue 32 measured, an unbounded queue).  Aim: with the bound, the queue holds at most
its depth, the worst read waits well under a second, and close takes under a second.

Run as ``python benchmarks/queue_threads.py``.  Prints a table and one JSON line.
"""

from __future__ import annotations

import json
import statistics
import threading
import time

import numpy as np

import meshnn as ttnn
from meshnn.mesh.dispatch import queue_depth

SECONDS = 2.0  # each run's length
READ_EVERY = 0.05  # seconds between two reads of the main thread
SAMPLE_EVERY = 0.005  # seconds between two samples of the queue and the allocator
UNBOUNDED = 10**9


def one_run(depth: int) -> dict[str, float]:
    """Two threads adding, the main thread reading, then close; the figures of one run."""
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 1), system="n150")
    queue = mesh.mesh_command_queue(0)
    queue.depth = depth
    kw = {"dtype": ttnn.bfloat16, "layout": ttnn.TILE_LAYOUT, "device": mesh}
    x = ttnn.from_torch(np.ones((256, 512), np.float32), **kw)  # 256 KiB
    probe = ttnn.from_torch(np.ones((32, 32), np.float32), **kw)
    ttnn.to_torch(probe)  # warm: the first read imports what reads need
    stop = threading.Event()
    issued = [0, 0]

    def issue(slot: int) -> None:
        while not stop.is_set():
            ttnn.add(x, x)  # the result is dropped at once
            issued[slot] += 1

    held, dram = [0], [0]

    def sample() -> None:
        while not stop.is_set():
            held[0] = max(held[0], len(queue._work))
            view = mesh.allocator.memory_view(ttnn.BufferType.DRAM)
            dram[0] = max(dram[0], view.total_bytes_allocated_per_bank * view.num_banks)
            time.sleep(SAMPLE_EVERY)

    workers = [threading.Thread(target=issue, args=(i,)) for i in range(2)] + [threading.Thread(target=sample)]
    for worker in workers:
        worker.start()
    waits = []
    began = time.perf_counter()
    while time.perf_counter() - began < SECONDS:
        time.sleep(READ_EVERY)
        start = time.perf_counter()
        ttnn.to_torch(probe)
        waits.append(time.perf_counter() - start)
    stop.set()
    for worker in workers:
        worker.join()
    elapsed = time.perf_counter() - began
    start = time.perf_counter()
    ttnn.close_mesh_device(mesh)
    closed = time.perf_counter() - start
    return {
        "ops_per_s": sum(issued) / elapsed,
        "queue_peak": held[0],
        "dram_peak_mib": dram[0] / 2**20,
        "read_p50_ms": statistics.median(waits) * 1e3,
        "read_max_ms": max(waits) * 1e3,
        "close_s": closed,
    }


def main() -> None:
    depth = queue_depth()
    bounded = one_run(depth)
    unbounded = one_run(UNBOUNDED)
    rows = [
        ("ops issued per second (2 threads)", "ops_per_s", "{:,.0f}"),
        ("queue peak (pieces of work)", "queue_peak", "{:,.0f}"),
        ("device DRAM peak, MiB", "dram_peak_mib", "{:,.1f}"),
        ("blocking read, median ms", "read_p50_ms", "{:,.2f}"),
        ("blocking read, worst ms", "read_max_ms", "{:,.2f}"),
        ("close_mesh_device, s", "close_s", "{:,.3f}"),
    ]
    print(f"two threads adding 256 KiB tensors on one 1x1 mesh for {SECONDS:g} s, a read every {READ_EVERY:g} s")
    print(f"{'figure':40} {'bound ' + str(depth):>14} {'no bound':>14}")
    for label, key, form in rows:
        print(f"{label:40} {form.format(bounded[key]):>14} {form.format(unbounded[key]):>14}")
    aims = {
        "queue_within_depth": bounded["queue_peak"] <= depth,
        "read_worst_under_1s": bounded["read_max_ms"] < 1000,
        "close_under_1s": bounded["close_s"] < 1.0,
    }
    print("aims: " + ", ".join(f"{k} {'met' if v else 'MISSED'}" for k, v in aims.items()))
    figures = {"benchmark": "queue_threads", "depth": depth, "bounded": bounded, "unbounded": unbounded}
    print(json.dumps(figures | aims))


if __name__ == "__main__":
    main()
