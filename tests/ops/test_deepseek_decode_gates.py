"""``ttnn.experimental.deepseek.moe.deepseek_moe_gate`` / ``generalized_moe_gate`` and
``ttnn.experimental.deepseek_grouped_gate`` against torch references written from their semantics
(DeepSeek-V3's gate: sigmoid, bias for choosing only, 8 groups of 32 ranked by their two best, 4
kept, top 8, renormalized and scaled).  Expert ids are compared exactly (inputs drawn without ties);
weights within the bfloat16 steps the kernel rounds at (each a relative 2^-8 at most)."""

from __future__ import annotations

import pytest
import torch

import meshnn as ttnn

BF16_STEP = 2.0**-8  # a bfloat16 rounding's relative error is at most half of this


@pytest.fixture
def device():
    dev = ttnn.open_device(device_id=0)
    yield dev
    ttnn.close_device(dev)


def _sharded(dev, n, shard=(32, 32)):
    grid = dev.compute_with_storage_grid_size()
    cores = ttnn.num_cores_to_corerangeset(n, ttnn.CoreCoord(grid.x, grid.y), row_wise=True)
    spec = ttnn.ShardSpec(cores, shard, ttnn.ShardOrientation.ROW_MAJOR)
    return ttnn.MemoryConfig(ttnn.TensorMemoryLayout.HEIGHT_SHARDED, ttnn.BufferType.L1, spec)


def _put(dev, values, dtype, config):
    return ttnn.from_torch(values, dtype=dtype, layout=ttnn.TILE_LAYOUT, device=dev, memory_config=config)


def _distinct(shape, seed):
    """bfloat16 values, all distinct along the last dim (a shuffled ramp), in [-2, 2)."""
    g = torch.Generator().manual_seed(seed)
    n = shape[-1]
    ramp = torch.stack([torch.randperm(n, generator=g) for _ in range(int(torch.tensor(shape[:-1]).prod()))])
    return ((ramp.float() - n / 2) / (n / 4)).reshape(shape).bfloat16()


def _largest(values, k):
    """The ``k`` largest along the last dim, largest first; equal values: the lower index first
    (meshnn's documented tie rule)."""
    return torch.argsort(-values, dim=-1, stable=True)[..., :k]


def reference(logits, bias, eps, scale, sigmoid):
    """(weights float64, ids) of tokens ``(n, 256)``: DeepSeek's grouped gate, the device's
    bfloat16 roundings of s, s + bias and the group sums."""
    s = torch.sigmoid(logits.float()).bfloat16().float() if sigmoid else logits.float()
    v = (s + bias.float()).bfloat16().float()
    groups = v.reshape(-1, 8, 32)
    best2 = groups.topk(2, dim=-1).values
    group_score = (best2[..., 0] + best2[..., 1]).bfloat16().float()
    kept = _largest(group_score, 4)
    mask = torch.zeros_like(group_score, dtype=torch.bool).scatter(1, kept, True)
    masked = torch.where(mask[..., None], groups, torch.tensor(float("-inf"))).reshape(-1, 256)
    ids = _largest(masked, 8)
    chosen = s.gather(1, ids).double()
    return chosen / (chosen.sum(-1, keepdim=True) + eps) * scale, ids


def _gate_inputs(dev, n, seed, sigmoid, blocks=1):
    logits = _distinct((n, 256 * blocks), seed)
    if not sigmoid:
        logits = torch.sigmoid(logits.float()).bfloat16()
    bias = (_distinct((n, 256 * blocks), seed + 1).float() / 8).bfloat16()
    shape = (n, 16, 16) if blocks == 1 else (n, blocks, 16, 16)
    config = _sharded(dev, n, (32 * blocks, 32))
    ids = (torch.arange(256 * blocks).reshape(1, *shape[1:]) + 0).expand(n, *shape[1:])
    tensors = [
        _put(dev, logits.reshape(shape), ttnn.bfloat16, config),
        _put(dev, bias.reshape(shape).transpose(-2, -1).contiguous(), ttnn.bfloat16, config),
        _put(dev, ids.transpose(-2, -1).contiguous().to(torch.int32), ttnn.uint16, config),
    ]
    out_config = _sharded(dev, n)
    outs = [
        _put(dev, torch.full((n, 32, 32), 7.0), ttnn.bfloat16, out_config),
        _put(dev, torch.full((n, 32, 32), 9, dtype=torch.int32), ttnn.uint16, out_config),
    ]
    return logits, bias, tensors, outs


def _check_weights(got, want):
    assert torch.all((got.double() - want).abs() <= 3 * BF16_STEP * want.abs() + 1e-30), (got, want)


@pytest.mark.parametrize("sigmoid", [True, False])
def test_deepseek_moe_gate_matches_the_grouped_gate(device, sigmoid):
    logits, bias, (x, b, i), (o, oi) = _gate_inputs(device, 3, 5, sigmoid)
    got_w, got_i = ttnn.experimental.deepseek.moe.deepseek_moe_gate(
        x, bias_tensor=b, input_indices_tensor=i, output_tensor=o, output_indices_tensor=oi, enable_sigmoid=sigmoid
    )
    assert got_w is o and got_i is oi
    want_w, want_i = reference(logits, bias, 1e-20, 2.5, sigmoid)
    w, idx = ttnn.to_torch(got_w).float(), ttnn.to_torch(got_i).to(torch.int64)
    assert torch.equal(idx[:, 0, :8], want_i)
    _check_weights(w[:, 0, :8], want_w)
    untouched = torch.ones(32, 32, dtype=torch.bool)
    untouched[0, :8] = False
    assert torch.all(w[:, untouched] == 7.0) and torch.all(idx[:, untouched] == 9)


def test_deepseek_moe_gate_writes_the_indices_given(device):
    """The ids written are the input-index tensor's values at the chosen experts (offset here)."""
    logits, bias, (x, b, _), (o, oi) = _gate_inputs(device, 1, 11, True)
    ids = (torch.arange(256) + 40000).reshape(1, 16, 16).transpose(-2, -1).contiguous().to(torch.int32)
    i = _put(device, ids, ttnn.uint16, _sharded(device, 1))
    ttnn.experimental.deepseek.moe.deepseek_moe_gate(
        x, bias_tensor=b, input_indices_tensor=i, output_tensor=o, output_indices_tensor=oi, enable_sigmoid=True
    )
    _, want_i = reference(logits, bias, 1e-20, 2.5, True)
    got = ttnn.to_torch(oi).to(torch.int64)[0, 0, :8] & 0xFFFF
    assert torch.equal(got, want_i[0] + 40000)


@pytest.mark.parametrize(("topk", "softmax"), [(8, False), (6, False), (4, True)])
def test_generalized_gate_512_global_top_k(device, topk, softmax):
    logits, bias, (x, b, i), (o, oi) = _gate_inputs(device, 2, 21, True, blocks=2)
    ttnn.experimental.deepseek.moe.generalized_moe_gate(
        x, bias_tensor=b, input_indices_tensor=i, output_tensor=o, output_indices_tensor=oi,
        enable_sigmoid=True, topk=topk, output_softmax=softmax,
    )  # fmt: skip
    s = torch.sigmoid(logits.float()).bfloat16().float()
    v = (s + bias.float()).bfloat16().float()
    want_i = _largest(v, topk)
    chosen = s.gather(1, want_i).double()
    if softmax:
        chosen = torch.exp(chosen - chosen[:, :1])
    want_w = chosen / (chosen.sum(-1, keepdim=True) + 1e-20) * 2.5
    w, idx = ttnn.to_torch(o).float(), ttnn.to_torch(oi).to(torch.int64)
    assert torch.equal(idx[:, 0, :topk], want_i)
    _check_weights(w[:, 0, :topk], want_w)
    assert torch.all(w[:, 0, topk:8] == 0) and torch.all(idx[:, 0, topk:8] == 0)


def test_generalized_gate_softmax_of_large_logits_stays_finite(device):
    logits, _bias, (x, b, i), (o, oi) = _gate_inputs(device, 1, 3, False)
    x = _put(device, (logits.float() * 100).reshape(1, 16, 16).bfloat16(), ttnn.bfloat16, _sharded(device, 1))
    ttnn.experimental.deepseek.moe.generalized_moe_gate(
        x, bias_tensor=b, input_indices_tensor=i, output_tensor=o, output_indices_tensor=oi, output_softmax=True
    )
    w = ttnn.to_torch(o).float()[0, 0, :8]
    assert torch.all(torch.isfinite(w)) and abs(float(w.sum()) - 2.5) <= 8 * BF16_STEP * 2.5


def test_generalized_gate_grouped_is_the_deepseek_gate(device):
    logits, bias, (x, b, i), (o, oi) = _gate_inputs(device, 2, 31, True)
    ttnn.experimental.deepseek.moe.generalized_moe_gate(
        x, bias_tensor=b, input_indices_tensor=i, output_tensor=o, output_indices_tensor=oi,
        enable_sigmoid=True, grouped=True,
    )  # fmt: skip
    want_w, want_i = reference(logits, bias, 1e-20, 2.5, True)
    assert torch.equal(ttnn.to_torch(oi).to(torch.int64)[:, 0, :8], want_i)
    _check_weights(ttnn.to_torch(o).float()[:, 0, :8], want_w)


@pytest.mark.parametrize("shape", [(1, 1, 1, 256), (2, 1, 33, 256)])
def test_deepseek_grouped_gate(device, shape):
    scores = _distinct(shape, 41)
    bias = (_distinct(shape, 42).float() / 8).bfloat16()
    put = lambda t: ttnn.from_torch(t, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)  # noqa: E731
    w, i = ttnn.experimental.deepseek_grouped_gate(put(scores), put(bias), route_scale=1.5)
    assert tuple(w.shape) == (*shape[:-1], 8) and i.dtype == ttnn.uint16 and w.dtype == ttnn.bfloat16
    want_w, want_i = reference(scores.reshape(-1, 256), bias.reshape(-1, 256), 1e-20, 1.5, True)
    assert torch.equal(ttnn.to_torch(i).to(torch.int64).reshape(-1, 8), want_i)
    got = ttnn.to_torch(w).float().reshape(-1, 8)
    assert torch.all((got.double() - want_w).abs() <= 6 * BF16_STEP * want_w.abs())


def test_the_gates_route_each_device_its_own_tokens():
    """On a 1x2 mesh with different tokens per device, each device's outputs are its own tokens' routes."""
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 2), system="t3k")
    try:
        split, join = ttnn.ShardTensorToMesh(mesh, dim=0), ttnn.ConcatMeshToTensor(mesh, dim=0)

        def put(values, dtype, config=None):
            return ttnn.from_torch(values, dtype=dtype, layout=ttnn.TILE_LAYOUT, device=mesh, mesh_mapper=split,
                                   memory_config=config)  # fmt: skip

        scores, bias = _distinct((2, 32, 256), 51), (_distinct((2, 32, 256), 52).float() / 8).bfloat16()
        w, i = ttnn.experimental.deepseek_grouped_gate(put(scores, ttnn.bfloat16), put(bias, ttnn.bfloat16))
        want_w, want_i = reference(scores.reshape(-1, 256), bias.reshape(-1, 256), 1e-20, 1.0, True)
        assert torch.equal(ttnn.to_torch(i, mesh_composer=join).to(torch.int64).reshape(-1, 8), want_i)
        got = ttnn.to_torch(w, mesh_composer=join).float().reshape(-1, 8)
        assert torch.all((got.double() - want_w).abs() <= 6 * BF16_STEP * want_w.abs())

        core = ttnn.CoreRangeSet([ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(0, 0))])
        spec = ttnn.ShardSpec(core, (32, 32), ttnn.ShardOrientation.ROW_MAJOR)
        face = ttnn.MemoryConfig(ttnn.TensorMemoryLayout.HEIGHT_SHARDED, ttnn.BufferType.L1, spec)
        logits, gate_bias = _distinct((2, 256), 53), (_distinct((2, 256), 54).float() / 8).bfloat16()
        ids = torch.arange(256).reshape(1, 16, 16).transpose(-2, -1).expand(2, 16, 16).contiguous().to(torch.int32)
        o, oi = put(torch.zeros(2, 32, 32), ttnn.bfloat16, face), put(torch.zeros(2, 32, 32), ttnn.uint16, face)
        ttnn.experimental.deepseek.moe.deepseek_moe_gate(
            put(logits.reshape(2, 16, 16), ttnn.bfloat16, face),
            bias_tensor=put(gate_bias.reshape(2, 16, 16).transpose(-2, -1).contiguous(), ttnn.bfloat16, face),
            input_indices_tensor=put(ids, ttnn.uint16, face),
            output_tensor=o, output_indices_tensor=oi, enable_sigmoid=True,
        )  # fmt: skip
        want_w, want_i = reference(logits, gate_bias, 1e-20, 2.5, True)
        assert torch.equal(ttnn.to_torch(oi, mesh_composer=join).to(torch.int64)[:, 0, :8], want_i)
        _check_weights(ttnn.to_torch(o, mesh_composer=join).float()[:, 0, :8], want_w)
    finally:
        ttnn.close_mesh_device(mesh)
