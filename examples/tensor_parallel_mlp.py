"""A tensor-parallel two-layer MLP on a T3000 (2x4): column-parallel up projection, GELU,
row-parallel down projection, reduce_scatter, then all_gather.  Run with `meshnn run`; it needs
torch, as TTNN code does (the README's first command installs it: pip install -e '.[torch]')."""

import torch
import ttnn

mesh_device = ttnn.open_mesh_device(ttnn.MeshShape(2, 4))
devices = mesh_device.get_num_devices()
torch.manual_seed(0)
hidden, width = 256, 1024
x = torch.randn(1, 32, hidden)
w1 = torch.randn(hidden, width) / hidden**0.5
w2 = torch.randn(width, hidden) / width**0.5

replicate = ttnn.ReplicateTensorToMesh(mesh_device)
tt_x = ttnn.from_torch(x, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh_device, mesh_mapper=replicate)
tt_w1 = ttnn.from_torch(
    w1,
    dtype=ttnn.bfloat16,
    layout=ttnn.TILE_LAYOUT,
    device=mesh_device,
    mesh_mapper=ttnn.ShardTensorToMesh(mesh_device, dim=1),
)
tt_w2 = ttnn.from_torch(
    w2,
    dtype=ttnn.bfloat16,
    layout=ttnn.TILE_LAYOUT,
    device=mesh_device,
    mesh_mapper=ttnn.ShardTensorToMesh(mesh_device, dim=0),
)

hidden_states = ttnn.gelu(ttnn.linear(tt_x, tt_w1))  # each device: its width / 8 columns
partial = ttnn.linear(hidden_states, tt_w2)  # each device: a partial sum of the output
scattered = ttnn.reduce_scatter(partial, dim=2)  # each device: the sum, for its slice of hidden
output = ttnn.all_gather(scattered, dim=2)  # every device: the whole output
ttnn.deallocate(partial)

device_outputs = ttnn.get_device_tensors(output)
expected = torch.nn.functional.gelu(x.bfloat16().float() @ w1.bfloat16().float()) @ w2.bfloat16().float()
for device_output in device_outputs:
    got = ttnn.to_torch(device_output).float()
    pcc = torch.corrcoef(torch.stack([got.flatten(), expected.flatten()]))[0, 1].item()
    assert pcc > 0.999, pcc
print(
    f"tensor-parallel MLP on {devices} devices: every device holds the same {tuple(output.shape)} output, PCC > 0.999"
)
ttnn.close_mesh_device(mesh_device)
