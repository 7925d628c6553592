"""MPI faults: the time from a rank's error to the end of the whole job, on 2 and 4 ranks.

Each case starts ``mpiexec -n N`` on a mesh with one row per rank (simulated galaxy); once every
rank has put a tensor on the mesh, rank 1 stamps the wall clock and goes wrong while the others
run an ``all_gather``: ``raise`` (an uncaught error under ``meshnn run``), ``exit0``
(``sys.exit(0)``), ``mismatch`` (an ``all_reduce`` instead) and ``sleep`` (sleeps past
``MESHNN_WAIT_TIMEOUT``, set to 2 s here: its figure includes that wait).  The figure is the time
from the stamp to the launcher's exit.  Beside it, in the same run, the floor: the same launch
where rank 1 stamps and calls ``MPI_Abort`` itself through mpi4py while the others wait in a
barrier (what tearing down N processes costs).  Aim (issue 26): every case under 10 s.

Run as ``python benchmarks/mpi_fault.py`` (it starts ``mpiexec`` itself).  Prints a table and one
JSON line.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time

AIM = 10.0
CASES = ("raise", "exit0", "mismatch", "sleep")
WAIT = "2"  # MESHNN_WAIT_TIMEOUT for the sleep case


def worker(mode: str) -> None:
    """One rank of a case (run by mpiexec)."""
    import numpy as np

    if mode == "floor":
        from mpi4py import MPI

        if MPI.COMM_WORLD.Get_rank() == 1:
            print(f"FAULT_AT {time.time()}", flush=True)
            MPI.COMM_WORLD.Abort(1)
        MPI.COMM_WORLD.Barrier()
        return
    import meshnn as ttnn

    ranks = ttnn.get_context().world_size
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(ranks, 2), system="galaxy")
    x = ttnn.from_torch(
        np.ones((ranks * 2, 32, 64), np.float32),
        layout=ttnn.TILE_LAYOUT,
        device=mesh,
        mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0),
    )
    ttnn.all_gather(x, dim=0)  # every rank is up and past one collective
    if mesh.context.rank == 1:
        print(f"FAULT_AT {time.time()}", flush=True)
        if mode == "raise":
            raise ValueError("a deliberate failure on rank 1")
        if mode == "exit0":
            sys.exit(0)
        if mode == "sleep":
            time.sleep(600)
        ttnn.all_reduce(x)
    ttnn.all_gather(x, dim=0)


def measure(mpiexec: str, ranks: int, mode: str) -> float:
    """Seconds from rank 1's stamp to the launcher's exit (which must fail, and in time)."""
    runner = [sys.executable] if mode == "floor" else [sys.executable, "-m", "meshnn", "run"]
    command = [mpiexec, "-n", str(ranks), *runner, os.path.abspath(__file__), "--worker", mode]
    env = os.environ | {"MESHNN_WAIT_TIMEOUT": WAIT, "PYTHONUNBUFFERED": "1"}
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
    try:
        out, _ = child.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        child.kill()
        return float("inf")
    ended = time.time()
    stamps = [float(line.split()[1]) for line in out.splitlines() if line.startswith("FAULT_AT")]
    if child.returncode == 0 or len(stamps) != 1:
        raise SystemExit(f"{mode} on {ranks} ranks: exit code {child.returncode}, output {out!r}")
    return ended - stamps[0]


def main() -> None:
    mpiexec = shutil.which("mpiexec", path=os.path.dirname(sys.executable)) or shutil.which("mpiexec")
    if mpiexec is None:
        sys.exit("mpiexec not found: pip install 'meshnn[mpi]'")
    figures: dict[str, float] = {}
    for ranks in (2, 4):
        figures[f"floor_{ranks}"] = measure(mpiexec, ranks, "floor")
        for mode in CASES:
            figures[f"{mode}_{ranks}"] = measure(mpiexec, ranks, mode)
    print(f"{'error -> job ended (s)':24} {'2 ranks':>8} {'4 ranks':>8}   aim")
    for mode in ("floor", *CASES):
        label = "MPI_Abort (floor)" if mode == "floor" else mode
        aim = "" if mode == "floor" else f"< {AIM:g} s"
        print(f"{label:24} {figures[f'{mode}_2']:8.2f} {figures[f'{mode}_4']:8.2f}   {aim}")
    print(f"(sleep includes MESHNN_WAIT_TIMEOUT={WAIT} s)")
    met = all(v < AIM for k, v in figures.items() if not k.startswith("floor"))
    rounded = {k: round(v, 3) for k, v in figures.items()}
    print(json.dumps({"benchmark": "mpi_fault", "aim_s": AIM, "met": met} | rounded))


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--worker":
        worker(sys.argv[2])
    else:
        main()
