"""The tensor-parallel MLP of the ops issue on a 2x4 mesh split across ranks: column-parallel up
projection, GELU, row-parallel down projection, reduce_scatter, all_gather; every device of every
rank must hold the whole output."""

import torch

import meshnn as ttnn

mesh = ttnn.open_mesh_device(ttnn.MeshShape(2, 4))
context = mesh.context
torch.manual_seed(0)  # the same on every rank: SPMD
hidden, width = 256, 1024
x = torch.randn(1, 32, hidden)
w1 = torch.randn(hidden, width) / hidden**0.5
w2 = torch.randn(width, hidden) / width**0.5

kw = {"dtype": ttnn.bfloat16, "layout": ttnn.TILE_LAYOUT, "device": mesh}
tt_x = ttnn.from_torch(x, mesh_mapper=ttnn.ReplicateTensorToMesh(mesh), **kw)
tt_w1 = ttnn.from_torch(w1, mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=1), **kw)
tt_w2 = ttnn.from_torch(w2, mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0), **kw)
assert len(tt_w1.storage.mesh_buffer.slab()) == len(mesh.local_coords())

partial = ttnn.linear(ttnn.gelu(ttnn.linear(tt_x, tt_w1)), tt_w2)
output = ttnn.all_gather(ttnn.reduce_scatter(partial, dim=2), dim=2)

expected = torch.nn.functional.gelu(x.bfloat16().float() @ w1.bfloat16().float()) @ w2.bfloat16().float()
everything = ttnn.to_torch(output, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0)).float()
assert everything.shape == (8, 32, hidden), everything.shape
for device_output in everything:
    pcc = torch.corrcoef(torch.stack([device_output.flatten(), expected.flatten()]))[0, 1].item()
    assert pcc > 0.999, pcc
    assert torch.allclose(device_output, everything[0]), "devices disagree"
print(f"OK rank {context.rank}: tensor-parallel MLP over {context.world_size} ranks, PCC > 0.999 on all 8 devices")
mesh.close()
