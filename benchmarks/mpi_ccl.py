"""Collectives across MPI ranks: ttnn.all_gather and ttnn.all_reduce of 64 MiB over 2 ranks.

The mesh is 2x1 with one device per rank; each device holds a 64 MiB float32 row-major tensor
and the collective runs along ``cluster_axis=0`` (across the ranks).  Beside each figure, in the
same run, mpi4py moves the same bytes raw: ``Allgather`` of 64 MiB per rank and ``Allreduce``
(sum) of 64 MiB.  GB/s = 64 MiB / time, the same definition for both; the time is the slowest
rank's best of REPEATS, each started after a barrier.  Aim: meshnn within 1.3x of raw MPI.

Run as ``mpiexec -n 2 python benchmarks/mpi_ccl.py``; run without a launcher it starts that
itself.  Prints a table and one JSON line (from rank 0).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time

import numpy as np

BYTES = 64 << 20
REPEATS = 5


def relaunch() -> None:
    mpiexec = shutil.which("mpiexec", path=os.path.dirname(sys.executable)) or shutil.which("mpiexec")
    if mpiexec is None:
        sys.exit("mpiexec not found: pip install 'meshnn[mpi]'")
    sys.exit(subprocess.call([mpiexec, "-n", "2", sys.executable, os.path.abspath(__file__)]))


def main() -> None:
    import meshnn as ttnn

    if not ttnn.launched_under_mpi():
        relaunch()
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(2, 1), system="t3k")
    rank = comm.Get_rank()
    n = BYTES // 4
    local = np.random.default_rng(rank).standard_normal(n, dtype=np.float32)
    everyone = [np.random.default_rng(r).standard_normal(n, dtype=np.float32) for r in range(2)]
    host = np.concatenate(everyone).reshape(2, 1, 1024, n // 1024)
    tensor = ttnn.from_torch(
        host,
        dtype=ttnn.float32,
        layout=ttnn.ROW_MAJOR_LAYOUT,
        device=mesh,
        mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0),
    )

    def timed(fn) -> float:
        times = []
        for _ in range(REPEATS):
            comm.Barrier()
            start = time.perf_counter()
            fn()
            times.append(time.perf_counter() - start)
        return comm.allreduce(min(times), op=MPI.MAX)

    gathered = np.empty(2 * n, dtype=np.float32)
    summed = np.empty(n, dtype=np.float32)
    raw_gather = timed(lambda: comm.Allgather(local, gathered))
    raw_reduce = timed(lambda: comm.Allreduce(local, summed, op=MPI.SUM))

    def ccl(op) -> None:
        out = op()
        ttnn.synchronize_device(mesh)
        ttnn.deallocate(out)

    gather = timed(lambda: ccl(lambda: ttnn.all_gather(tensor, dim=0, cluster_axis=0)))
    reduce = timed(lambda: ccl(lambda: ttnn.all_reduce(tensor, cluster_axis=0)))

    # the results are right (checked once, outside the timing)
    out = ttnn.all_gather(tensor, dim=0, cluster_axis=0)
    mine = ttnn.get_device_tensors(out)[rank]
    assert np.array_equal(ttnn.to_torch(mine).numpy().reshape(-1), np.concatenate(everyone))
    total = ttnn.all_reduce(tensor, cluster_axis=0)
    got = ttnn.to_torch(ttnn.get_device_tensors(total)[rank]).numpy().reshape(-1)
    assert np.array_equal(got, everyone[0] + everyone[1])
    mesh.close()

    if rank:
        return
    rows = {
        "all_gather": (BYTES / gather / 1e9, BYTES / raw_gather / 1e9),
        "all_reduce": (BYTES / reduce / 1e9, BYTES / raw_reduce / 1e9),
    }
    print(f"{'64 MiB float32, 2 ranks':24} {'meshnn GB/s':>12} {'mpi4py GB/s':>12} {'slowdown':>9}")
    for name, (ours, raw) in rows.items():
        print(f"{name:24} {ours:12.2f} {raw:12.2f} {raw / ours:8.2f}x")
    print(
        json.dumps(
            {"benchmark": "mpi_ccl", "bytes": BYTES, "ranks": 2}
            | {f"{k}_gbps": round(v[0], 3) for k, v in rows.items()}
            | {f"{k}_mpi_gbps": round(v[1], 3) for k, v in rows.items()}
            | {f"{k}_slowdown": round(v[1] / v[0], 3) for k, v in rows.items()}
        )
    )


if __name__ == "__main__":
    main()
