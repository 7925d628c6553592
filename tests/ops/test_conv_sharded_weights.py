"""A conv weight and bias distributed over a mesh with a sharded placement (tt-metal's ``tt_dit``
``Conv2d`` shards them over a mesh axis): each device convolves with its own shard, as ttnn
prepares each device's shard.  float32 throughout: the bound is float32 accumulation over
9 * 3 products of O(1) values (1e-5), far below a wrong shard's O(1) error."""

from __future__ import annotations

import pytest
import torch

import meshnn as ttnn


@pytest.fixture
def line(open_mesh):
    return open_mesh((1, 4))


def _conv(mesh, weight, bias, out_channels, **kw):
    x = torch.randn(1, 6, 6, 3, generator=torch.Generator().manual_seed(48))
    xt = ttnn.from_torch(x, dtype=ttnn.float32, device=mesh, mesh_mapper=ttnn.ReplicateTensorToMesh(mesh))
    out = ttnn.conv2d(
        input_tensor=xt, weight_tensor=weight, bias_tensor=bias, in_channels=3, out_channels=out_channels,
        device=mesh, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1), batch_size=1, input_height=6, input_width=6,
        conv_config=ttnn.Conv2dConfig(weights_dtype=ttnn.float32), dtype=ttnn.float32, **kw,
    )  # fmt: skip
    return x, out


def test_each_device_convolves_with_its_own_weight_and_bias_shard(line):
    w = torch.randn(8, 3, 3, 3, generator=torch.Generator().manual_seed(1))
    b = torch.randn(1, 1, 1, 8, generator=torch.Generator().manual_seed(2))
    wt = ttnn.from_torch(w, dtype=ttnn.float32, mesh_mapper=ttnn.ShardTensorToMesh(line, dim=0))
    bt = ttnn.from_torch(b, dtype=ttnn.float32, mesh_mapper=ttnn.ShardTensorToMesh(line, dim=3))
    assert list(wt.shape) == [2, 3, 3, 3]  # a device's shard: ttnn's shape of a distributed tensor
    x, out = _conv(line, wt, bt, out_channels=2)
    got = ttnn.to_torch(out, mesh_composer=ttnn.ConcatMeshToTensor(line, dim=3)).reshape(1, 6, 6, 8)
    want = torch.nn.functional.conv2d(x.permute(0, 3, 1, 2), w, b.flatten(), padding=1).permute(0, 2, 3, 1)
    assert torch.allclose(got, want, atol=1e-5, rtol=0)


def test_a_replicated_weight_is_the_same_on_every_device(line):
    w = torch.randn(2, 3, 3, 3, generator=torch.Generator().manual_seed(3))
    wt = ttnn.from_torch(w, dtype=ttnn.float32, mesh_mapper=ttnn.ReplicateTensorToMesh(line))
    x, out = _conv(line, wt, None, out_channels=2)
    want = torch.nn.functional.conv2d(x.permute(0, 3, 1, 2), w, padding=1).permute(0, 2, 3, 1)
    for shard in ttnn.get_device_tensors(out):
        assert torch.allclose(ttnn.to_torch(shard).reshape(1, 6, 6, 2), want, atol=1e-5, rtol=0)


def test_a_shard_of_the_wrong_size_is_refused_naming_the_weight(line):
    wt = ttnn.from_torch(torch.zeros(8, 3, 3, 3), dtype=ttnn.float32, mesh_mapper=ttnn.ShardTensorToMesh(line, dim=0))
    with pytest.raises(ttnn.MeshnnValueError, match=r"weight_tensor \[2, 3, 3, 3\] must be"):
        _conv(line, wt, None, out_channels=4)
