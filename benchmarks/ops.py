"""Ops: (a) a tiny op (32x32 bfloat16 add) on 1x1, 2x4 and 8x4 meshes; (b) a 4096x4096x4096
matmul sharded over 2x4 beside the same numpy matmul; (c) all_gather of 512 MiB over 2x4 (into
fresh output memory, and into a reused output slab) beside numpy copies of the same bytes.
Each figure sits beside its limit measured in the same run; the tiny op's cases are timed in turn,
round after round (best round each), so that their ratios compare like with like on a shared host.
Peers: JAX's tiny sharded add on 8 CPU devices, timed in the same run (before and after meshnn's
cases, in a process of its own; skipped without JAX).  Prints a table and one JSON line.
``--tiny``: (a) only, with JAX's figure (a few seconds, little memory: for runs interleaved with
other code's, the (b) and (c) parts need about 5 GiB of host memory).
"""

from __future__ import annotations

import json
import sys
import time

import numpy as np
import torch

import meshnn as ttnn
from meshnn.mesh.slab import SLAB_POOL


def best(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


ROUNDS = 12
"""Rounds of the tiny-op timing: each round times every case once, in turn, so that every case
meets the shared machine in the same states; a case's figure is its best round."""


def tiny_cases() -> dict[tuple[str, str], tuple[ttnn.MeshDevice, ttnn.Tensor]]:
    """(case, mesh) -> the mesh and the input of ``ttnn.add(x, x)`` of a 32x32 tile on every
    device: the same tile replicated (meshnn computes one device's and copies it, having checked
    the devices' bytes are equal), or a different tile on each device (sharded, as JAX's figure
    is: every device computes)."""
    cases = {}
    for case, dtype, sharded, meshes in [
        ("bfloat16 replicated", ttnn.bfloat16, False, [((1, 1), "n150"), ((2, 4), "t3k"), ((8, 4), "galaxy")]),
        ("bfloat16 sharded", ttnn.bfloat16, True, [((1, 1), "n150"), ((2, 4), "t3k"), ((8, 4), "galaxy")]),
        ("float32 replicated", ttnn.float32, False, [((1, 1), "n150"), ((8, 4), "galaxy")]),
    ]:
        for shape, system in meshes:
            mesh = ttnn.open_mesh_device(ttnn.MeshShape(*shape), system=system)
            n = shape[0] * shape[1]
            if sharded:
                x = ttnn.from_torch(
                    torch.randn(n, 32, 32),
                    dtype=dtype,
                    layout=ttnn.TILE_LAYOUT,
                    device=mesh,
                    mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0),
                )
            else:
                x = ttnn.from_torch(torch.randn(32, 32), dtype=dtype, layout=ttnn.TILE_LAYOUT, device=mesh)
            for _ in range(100):
                ttnn.add(x, x)
            cases[(case, f"{shape[0]}x{shape[1]}")] = (mesh, x)
    return cases


def tiny_add() -> dict[tuple[str, str], float]:
    """Seconds per ``ttnn.add(x, x)`` for every case of :func:`tiny_cases`, best of ROUNDS."""
    cases = tiny_cases()
    calls = 300
    seconds = dict.fromkeys(cases, float("inf"))
    for _ in range(ROUNDS):
        for key, (mesh, x) in cases.items():
            start = time.perf_counter()
            for _ in range(calls):
                ttnn.add(x, x)
            mesh.mesh_command_queue().finish()
            seconds[key] = min(seconds[key], (time.perf_counter() - start) / calls)
    for mesh, _ in cases.values():
        mesh.close()
    return seconds


JAX_TINY_ADD = """
import os, sys, time
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
import jax, jax.numpy as jnp
from jax.sharding import Mesh, NamedSharding, PartitionSpec
mesh = Mesh(jax.devices()[:8], ("d",))
x = jax.device_put(jnp.ones((8 * 32, 32), jnp.bfloat16), NamedSharding(mesh, PartitionSpec("d")))
add = jax.jit(lambda a: a + a)
for _ in range(200):
    add(x).block_until_ready()
rounds, calls, best = int(sys.argv[1]), 300, float("inf")
for _ in range(rounds):
    start = time.perf_counter()
    for _ in range(calls):
        add(x).block_until_ready()
    best = min(best, (time.perf_counter() - start) / calls)
print(best)
"""


def jax_tiny_add(rounds: int) -> float | None:
    """Seconds per tiny sharded add in JAX on 8 CPU devices (a 32x32 bfloat16 tile each, jitted,
    waited for), best of ``rounds``, in a process of its own (JAX's device count is set before it
    is imported); None without JAX."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", JAX_TINY_ADD, str(rounds)], capture_output=True, text=True, check=False
    )
    try:
        return float(done.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        return None


def matmul() -> tuple[float, float]:
    n = 4096
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(2, 4), system="t3k")
    a = torch.randn(n, n)
    b = torch.randn(n, n)
    # A's rows over the 8 devices, B replicated: the 8 products together are one n^3 matmul
    ta = ttnn.from_torch(a, dtype=ttnn.float32, device=mesh, mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0))
    tb = ttnn.from_torch(b, dtype=ttnn.float32, device=mesh, mesh_mapper=ttnn.ReplicateTensorToMesh(mesh))
    an, bn = a.numpy(), b.numpy()

    def on_mesh() -> None:
        out = ttnn.matmul(ta, tb)
        mesh.mesh_command_queue().finish()
        ttnn.deallocate(out)

    mesh_time = best(on_mesh, 3)
    numpy_time = best(lambda: an @ bn, 3)
    check = ttnn.to_torch(ttnn.matmul(ta, tb), mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0))
    assert torch.allclose(check, a @ b, rtol=1e-3, atol=1e-2)
    mesh.close()
    return mesh_time, numpy_time


def all_gather() -> tuple[float, float, int]:
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(2, 4), system="t3k")
    total = 512 << 20  # the gathered tensor; each device starts with 64 MiB of it
    x = torch.randn(8, total // 4 // 8)
    t = ttnn.from_torch(x, dtype=ttnn.float32, device=mesh, mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0))
    written = total * 8  # every device ends with the whole 512 MiB

    def gather() -> None:
        out = ttnn.all_gather(t, dim=0)
        mesh.mesh_command_queue().finish()
        ttnn.deallocate(out)

    gather_time = best(gather, 3)  # the 4 GiB output is past the slab pool's bound: fresh memory each time
    limit = SLAB_POOL.limit
    SLAB_POOL.limit = 8 << 30  # a pool that holds the output: its pages stay mapped, as device memory is
    gather()
    warm_time = best(gather, 3)
    SLAB_POOL.limit = limit
    SLAB_POOL.clear()
    source = np.random.default_rng(0).random(total // 8, dtype=np.float64)
    target = np.empty((8, total // 8), np.float64)
    copy_time = best(lambda: np.copyto(target, source), 3)  # the same 4 GiB written by numpy
    fresh_time = best(lambda: np.copyto(np.empty((8, total // 8), np.float64), source), 2)
    mesh.close()
    return gather_time, warm_time, copy_time, fresh_time, written


def main() -> None:
    jax_before = jax_tiny_add(ROUNDS // 2)
    times = tiny_add()
    jax_after = jax_tiny_add(ROUNDS // 2)
    jax_add = min((t for t in (jax_before, jax_after) if t is not None), default=None)
    tiny = {mesh: t for (case, mesh), t in times.items() if case == "bfloat16 replicated"}
    sharded = {mesh: t for (case, mesh), t in times.items() if case == "bfloat16 sharded"}
    tiny_f32 = {mesh: t for (case, mesh), t in times.items() if case == "float32 replicated"}
    print("(a) tiny 32x32 add, us per op (aims: 8x4 within 1.3x of 1x1, <= 0.33x JAX's tiny sharded add)")
    for name, seconds in tiny.items():
        print(f"    bfloat16 {name:6} {seconds * 1e6:9.1f}   (x{seconds / tiny['1x1']:.2f} of 1x1)  replicated")
    for name, seconds in sharded.items():
        print(f"    bfloat16 {name:6} {seconds * 1e6:9.1f}   (x{seconds / sharded['1x1']:.2f} of 1x1)  sharded")
    for name, seconds in tiny_f32.items():
        print(f"    float32  {name:6} {seconds * 1e6:9.1f}")
    if jax_add is not None:
        print(
            f"    JAX tiny sharded add, 8 CPU devices, same run: {jax_add * 1e6:.1f} us; meshnn 8x4 sharded "
            f"x{sharded['8x4'] / jax_add:.2f} of it, replicated x{tiny['8x4'] / jax_add:.2f} (aim: <= 0.33)"
        )
    tiny_json = {
        "benchmark": "ops",
        **{f"tiny_add_bf16_{k}_us": round(v * 1e6, 1) for k, v in tiny.items()},
        **{f"tiny_add_f32_{k}_us": round(v * 1e6, 1) for k, v in tiny_f32.items()},
        "tiny_add_8x4_over_1x1": round(tiny["8x4"] / tiny["1x1"], 2),
        **{f"tiny_add_bf16_sharded_{k}_us": round(v * 1e6, 1) for k, v in sharded.items()},
        "tiny_add_sharded_8x4_over_1x1": round(sharded["8x4"] / sharded["1x1"], 2),
        "jax_tiny_sharded_add_us": None if jax_add is None else round(jax_add * 1e6, 1),
        "tiny_add_sharded_8x4_over_jax": None if jax_add is None else round(sharded["8x4"] / jax_add, 2),
    }
    if "--tiny" in sys.argv:
        print(json.dumps(tiny_json))
        return
    mesh_mm, numpy_mm = matmul()
    gather_time, warm_time, copy_time, fresh_time, written = all_gather()
    print(f"(b) 4096^3 float32 matmul over 2x4: {mesh_mm:.3f} s; numpy {numpy_mm:.3f} s; x{mesh_mm / numpy_mm:.2f}")
    gbps, warm, limit = (written / t / 1e9 for t in (gather_time, warm_time, copy_time))
    fresh = written / fresh_time / 1e9
    print(
        f"(c) all_gather 512 MiB over 2x4 (4 GiB written); numpy copy {limit:.2f} GB/s, into fresh memory {fresh:.2f}"
    )
    print(
        f"    output in fresh memory (past the slab pool) {gbps:6.2f} GB/s  x{gbps / fresh:.2f} of numpy's fresh copy"
    )
    print(f"    output slab reused (pool of 8 GiB)          {warm:6.2f} GB/s  x{warm / limit:.2f} of numpy's copy")
    print(
        json.dumps(
            {
                **tiny_json,
                "matmul_mesh_s": round(mesh_mm, 3),
                "matmul_numpy_s": round(numpy_mm, 3),
                "matmul_ratio": round(mesh_mm / numpy_mm, 2),
                "all_gather_gbps": round(gbps, 2),
                "all_gather_warm_gbps": round(warm, 2),
                "numpy_copy_gbps": round(limit, 2),
                "numpy_fresh_copy_gbps": round(fresh, 2),
                "all_gather_fresh_ratio": round(gbps / fresh, 2),
                "all_gather_warm_ratio": round(warm / limit, 2),
            }
        )
    )


if __name__ == "__main__":
    main()
