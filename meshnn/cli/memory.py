"""``meshnn memory``: a small tensor-parallel working set, then the memory report; with
``--timeline``, a few layers' ops on it recorded op by op (``ttnn.MemoryTimeline``)."""

from __future__ import annotations

import importlib.util
import sys

import numpy as np

import meshnn as ttnn


def working_set(mesh: ttnn.MeshDevice) -> list[ttnn.Tensor]:
    """Weights of a few layers (DRAM) and activations (L1), every third one freed: a fragmented heap."""
    rng = np.random.default_rng(0)
    columns = ttnn.ShardTensorToMesh(mesh, dim=1)
    kept = []
    for i in range(6):
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
    return [t for t in kept if t.is_allocated()]


def layers(mesh: ttnn.MeshDevice, kept: list[ttnn.Tensor]) -> None:
    """Two layers on the working set: gather the activations, matmul, gelu, all in L1."""
    x = ttnn.from_torch(
        np.ones((64, 1024), np.float32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh,
        mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=1), memory_config=ttnn.L1_MEMORY_CONFIG,
    )  # fmt: skip
    weights = [t for t in kept if t.memory_config().buffer_type is ttnn.BufferType.DRAM and t.shape[0] == 1024]
    outputs = []
    for weight in weights[:2]:
        gathered = ttnn.all_gather(x, dim=1, memory_config=ttnn.L1_MEMORY_CONFIG)
        hidden = ttnn.matmul(gathered, weight, memory_config=ttnn.L1_MEMORY_CONFIG)
        ttnn.deallocate(gathered)
        outputs.append(ttnn.gelu(hidden, memory_config=ttnn.L1_MEMORY_CONFIG))
        ttnn.deallocate(hidden)


def show(system: str | None, mesh_shape: tuple[int, int] | None, plot: str | None, timeline: bool = False) -> int:
    if plot and importlib.util.find_spec("matplotlib") is None:
        print(f"meshnn memory: --plot {plot} needs matplotlib: pip install 'meshnn[plot]'", file=sys.stderr)
        return 2
    spec = ttnn.system_spec(system)
    shape = mesh_shape or spec.mesh_shape
    recorder = ttnn.MemoryTimeline().start() if timeline else None
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(*shape), system=spec.name)
    try:
        kept = working_set(mesh)
        if recorder is not None:
            layers(mesh, kept)
            recorder.stop()
            print(recorder.report())
            if plot:
                print(f"meshnn memory: wrote {recorder.plot(plot, mesh)}")
            return 0
        print(
            "a synthetic working set (made up here, not your model's: six bfloat8_b weights in DRAM and six small "
            "bfloat16 activations in L1, every third freed); use ttnn.memory_report(mesh) in your own script"
        )
        print(f"memory of a {shape[0]}x{shape[1]} mesh on {spec.name} (bytes per bank):")
        print(ttnn.memory_report(mesh))
        if plot:
            print(f"meshnn memory: wrote {ttnn.plot_memory(mesh, plot)}")
        return 0
    finally:
        if recorder is not None:
            recorder.stop()
        mesh.close()
