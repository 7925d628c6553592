"""Host memory of a replicated tensor on an 8x4 Galaxy: rows that share pages (meshnn/host/shared_pages.py)
against every device's bytes kept apart (``MESHNN_SHARED_ROWS=0``).

Each case runs in a child process: a bfloat16 tensor of MIB MiB a device (TILE) put replicated on
the 32 devices by ``ttnn.from_torch``; the growth of the process's proportional set size (``Pss``
of /proc/self/smaps_rollup) and the fall of the system's ``MemAvailable`` across the put, the
put's wall time, and a bytes-equal check (device 0 read back equals the source; every row's bytes
equal row 0's).  The limits beside each memory figure are measured by the same run's sizes: one
device's bytes (the distinct bytes: what sharing can reach) and all 32 devices' bytes (what keeping
every row costs).  ``MemAvailable`` is the whole system's (other processes move it too).  A case
that needs more than the host has available now is not run, and says so.
Prints a table and one JSON line.  Usage: ``python benchmarks/shared_rows.py [MIB ...]`` (default 64 512).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

MiB = 1 << 20
DEVICES = 32


def meminfo(key: str) -> int:
    with open("/proc/meminfo") as info:
        return next(int(line.split()[1]) * 1024 for line in info if line.startswith(key + ":"))


def pss() -> int:
    with open("/proc/self/smaps_rollup") as rollup:
        return next(int(line.split()[1]) * 1024 for line in rollup if line.startswith("Pss:"))


def child(mib: int) -> dict:
    """One case, in this process (the parent sets MESHNN_SHARED_ROWS)."""
    import numpy as np
    import torch

    import meshnn as ttnn

    mesh = ttnn.open_mesh_device(ttnn.MeshShape(8, 4), system="galaxy")
    side = int((mib * MiB // 2) ** 0.5)
    source = torch.randn(1, 1, side, mib * MiB // 2 // side, generator=torch.Generator().manual_seed(0))
    source = source.to(torch.bfloat16)
    pss0, avail0 = pss(), meminfo("MemAvailable")
    start = time.perf_counter()
    tensor = ttnn.from_torch(source, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh)
    put = time.perf_counter() - start
    pss1, avail1 = pss(), meminfo("MemAvailable")
    rows = tensor.storage.mesh_buffer.rows()
    equal = bool(torch.equal(ttnn.to_torch(ttnn.get_device_tensors(tensor)[0]), source)) and all(
        np.array_equal(rows[r], rows[0]) for r in range(1, rows.shape[0])
    )
    pss2 = pss()  # (every row's pages now mapped: the check read them all)
    mesh.close()
    return {
        "device_bytes": int(rows.shape[1]),
        "pss_growth": pss1 - pss0,
        "pss_growth_read": pss2 - pss0,
        "available_fall": avail0 - avail1,
        "put_s": round(put, 3),
        "bytes_equal": equal,
    }


def run_case(mib: int, shared: bool) -> dict:
    needed = (1 if shared else DEVICES) * mib * MiB + 3 * mib * MiB  # rows held, plus source and read-back
    if needed > 0.8 * meminfo("MemAvailable"):
        return {"not_run": f"needs about {needed / 1e9:.1f} GB, {meminfo('MemAvailable') / 1e9:.1f} GB available"}
    env = dict(os.environ, MESHNN_SHARED_ROWS="1" if shared else "0")
    out = subprocess.run(
        [sys.executable, __file__, "--child", str(mib)], env=env, capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(sizes: list[int]) -> None:
    results = {}
    head = ["PSS put", "PSS read", "MemAvail", "one device", "all 32", "put s", "equal"]
    print(f"{'replicated bfloat16 on 8x4':30}" + "".join(f"{h:>12}" for h in head))
    for mib in sizes:
        for shared in (True, False):
            name = f"{mib} MiB a device, {'shared' if shared else 'apart'}"
            r = results[name] = run_case(mib, shared)
            if "not_run" in r:
                print(f"{name:28} not run: {r['not_run']}")
                continue
            one = r["device_bytes"]
            figures = [r["pss_growth"], r["pss_growth_read"], r["available_fall"], one, DEVICES * one]
            print(
                f"{name:30}"
                + "".join(f"{f / MiB:10.0f}Mi" for f in figures)
                + f"{r['put_s']:12.2f}{r['bytes_equal']!s:>12}"
            )
    print(json.dumps({"benchmark": "shared_rows", "mesh": "8x4"} | results))


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        print(json.dumps(child(int(sys.argv[2]))))
    else:
        main([int(a) for a in sys.argv[1:]] or [64, 512])
