"""A small TTNN script that tests/capture/test_visualizer.py runs with ``meshnn run viz_model.py`` (a
relative path, from its own folder) with a report being written: module-level ops, two identical
blocks called from a loop, a deallocate, and the result read back."""

import torch
import ttnn

mesh = ttnn.open_mesh_device(ttnn.MeshShape(2, 4))
x = ttnn.from_torch(torch.randn(1, 1, 64, 256), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh)
columns, rows = ttnn.ShardTensorToMesh(mesh, dim=1), ttnn.ShardTensorToMesh(mesh, dim=0)
w_up = ttnn.from_torch(
    torch.randn(256, 512), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh, mesh_mapper=columns
)
w_down = ttnn.from_torch(
    torch.randn(512, 256), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh, mesh_mapper=rows
)


def block(h):
    normed = ttnn.rms_norm(h)
    up = ttnn.linear(normed, w_up)
    ttnn.deallocate(normed)
    activated = ttnn.relu(up)
    down = ttnn.linear(activated, w_down)
    return ttnn.all_reduce(down)


y = ttnn.exp(x)
for _ in range(2):
    y = block(y)
out = ttnn.to_torch(y, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0))
ttnn.close_mesh_device(mesh)
