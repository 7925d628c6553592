"""Mesh I/O: enqueue_write_shards / enqueue_read_shards of 512 MiB of float32 over a 2x4 mesh.

Each device gets a 64 MiB shard (row-major pages of 4 KiB) through one ShardDataTransfer.  The
limit beside each figure is a numpy copy of the same 512 MiB into a preallocated array in the
same run; "fresh" writes go to a newly created MeshBuffer (the slab's pages are touched for the
first time), "reused" writes to one already written.  Peers (../shared/reference/peers.md):
JAX device_put on 8 CPU devices runs at about 0.3 of a numpy copy.  Prints a table and one JSON line.
"""

from __future__ import annotations

import json
import time

import numpy as np

import meshnn as ttnn

TOTAL = 512 << 20
REPEATS = 5


def best(fn, repeats: int = REPEATS) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(2, 4), system="t3k")
    coords = mesh.local_coords()
    host = np.random.default_rng(0).standard_normal(TOTAL // 4, dtype=np.float32)
    shards = host.reshape(len(coords), -1)
    out = np.empty_like(host)
    out_shards = out.reshape(len(coords), -1)
    config = ttnn.ReplicatedBufferConfig(TOTAL // len(coords))
    local = ttnn.DeviceLocalBufferConfig(4096, ttnn.BufferType.DRAM)
    cq = mesh.mesh_command_queue()
    writes = [ttnn.ShardDataTransfer(c, shards[i]) for i, c in enumerate(coords)]
    reads = [ttnn.ShardDataTransfer(c, out_shards[i]) for i, c in enumerate(coords)]

    numpy_copy = best(lambda: np.copyto(out, host))

    def fresh_write() -> None:
        buffer = ttnn.MeshBuffer.create(config, local, mesh)
        cq.enqueue_write_shards(buffer, writes, blocking=True)
        buffer.deallocate()

    fresh = best(fresh_write, 3)
    buffer = ttnn.MeshBuffer.create(config, local, mesh)
    cq.enqueue_write_shards(buffer, writes, blocking=True)
    reused = best(lambda: cq.enqueue_write_shards(buffer, writes, blocking=True))
    non_blocking = best(lambda: (cq.enqueue_write_shards(buffer, writes, blocking=False), cq.finish()))
    read = best(lambda: cq.enqueue_read_shards(reads, buffer, blocking=True))
    assert np.array_equal(out, host)
    mesh.close()

    gbps = {
        name: TOTAL / t / 1e9
        for name, t in [
            ("numpy_copy", numpy_copy),
            ("write_fresh", fresh),
            ("write_reused", reused),
            ("write_nonblocking", non_blocking),
            ("read", read),
        ]
    }
    print(f"{'512 MiB float32 over 2x4':32} {'GB/s':>8} {'x numpy copy':>13}")
    for name, value in gbps.items():
        print(f"{name:32} {value:8.2f} {value / gbps['numpy_copy']:13.2f}")
    print(
        json.dumps(
            {"benchmark": "mesh_io", "bytes": TOTAL}
            | {k: round(v, 3) for k, v in gbps.items()}
            | {f"{k}_ratio": round(v / gbps["numpy_copy"], 3) for k, v in gbps.items() if k != "numpy_copy"}
        )
    )


if __name__ == "__main__":
    main()
