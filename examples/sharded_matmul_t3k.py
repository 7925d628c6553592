"""A data-parallel matmul on a T3000 (2x4): A's rows sharded over the 8 devices, B replicated.

Written as TTNN code: run it with `meshnn run examples/sharded_matmul_t3k.py` (import ttnn is
answered by meshnn), or on a machine with real hardware and ttnn.  It needs torch, as TTNN code
does: the README's first command installs it (pip install -e '.[torch]').
"""

import torch
import ttnn

mesh_device = ttnn.open_mesh_device(ttnn.MeshShape(2, 4))
torch.manual_seed(0)
a = torch.randn(8 * 64, 256)
b = torch.randn(256, 128)

tt_a = ttnn.from_torch(
    a,
    dtype=ttnn.bfloat16,
    layout=ttnn.TILE_LAYOUT,
    device=mesh_device,
    mesh_mapper=ttnn.ShardTensorToMesh(mesh_device, dim=0),
)
tt_b = ttnn.from_torch(
    b,
    dtype=ttnn.bfloat16,
    layout=ttnn.TILE_LAYOUT,
    device=mesh_device,
    mesh_mapper=ttnn.ReplicateTensorToMesh(mesh_device),
)
tt_c = ttnn.matmul(tt_a, tt_b)
print("per-device shard:", tt_c.shape)
print(tt_c.tensor_topology())  # as ttnn prints it: TensorTopology(distribution_shape=MeshShape([8]), ...)

c = ttnn.to_torch(tt_c, mesh_composer=ttnn.ConcatMeshToTensor(mesh_device, dim=0))
expected = a.bfloat16().float() @ b.bfloat16().float()
pcc = torch.corrcoef(torch.stack([c.float().flatten(), expected.flatten()]))[0, 1].item()
print(f"result {tuple(c.shape)}, PCC vs torch {pcc:.5f}")
assert pcc > 0.999, pcc
ttnn.close_mesh_device(mesh_device)
