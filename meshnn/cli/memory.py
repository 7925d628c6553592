"""``meshnn memory``: a small tensor-parallel working set, then the memory report."""

from __future__ import annotations

import numpy as np

import meshnn as ttnn


def show(system: str | None, mesh_shape: tuple[int, int] | None, plot: str | None) -> int:
    spec = ttnn.system_spec(system)
    shape = mesh_shape or spec.mesh_shape
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(*shape), system=spec.name)
    try:
        rng = np.random.default_rng(0)
        columns = ttnn.ShardTensorToMesh(mesh, dim=1)
        kept = []
        for i in range(6):  # weights of a few layers, then free every other one: a fragmented heap
            values = rng.standard_normal((1024, 1024 * (1 + i % 3)), dtype=np.float32)
            kept.append(
                ttnn.from_torch(values, dtype=ttnn.bfloat8_b, layout=ttnn.TILE_LAYOUT, device=mesh, mesh_mapper=columns)
            )
            kept.append(
                ttnn.from_torch(
                    values[:64],
                    dtype=ttnn.bfloat16,
                    layout=ttnn.TILE_LAYOUT,
                    device=mesh,
                    mesh_mapper=columns,
                    memory_config=ttnn.L1_MEMORY_CONFIG,
                )
            )
        for tensor in kept[::3]:
            ttnn.deallocate(tensor)
        print(
            "a synthetic working set (made up here, not your model's: six bfloat8_b weights in DRAM and six small "
            "bfloat16 activations in L1, every third freed); use ttnn.memory_report(mesh) in your own script"
        )
        print(f"memory of a {shape[0]}x{shape[1]} mesh on {spec.name} (bytes per bank):")
        print(ttnn.memory_report(mesh))
        if plot:
            path = ttnn.plot_memory(mesh, plot)
            print(f"wrote {path}")
        return 0
    finally:
        mesh.close()
