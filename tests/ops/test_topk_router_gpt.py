"""``ttnn.experimental.topk_router_gpt`` against torch written from the program's description: the
hidden dim's tiles cut in three parts (the first ``tiles % 3`` a tile longer), each part's product
summed in float32, the two senders' sums rounded to bfloat16, added to the worker's with the bias,
the logits rounded to bfloat16; the k largest (equal: lower expert first) softmaxed in bfloat16
steps.  Integer-valued inputs make every float32 sum exact (so the comparison is exact whatever the
summation order); random inputs are compared with the float32 router within bfloat16's bounds."""

from __future__ import annotations

import pytest
import torch

import meshnn as ttnn

TILE = ttnn.TILE_LAYOUT


def bf16(t: torch.Tensor) -> torch.Tensor:
    return t.float().to(torch.bfloat16).float()


def torch_router(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor, k: int) -> tuple[torch.Tensor, torch.Tensor]:
    tiles = x.shape[1] // 32
    sizes = [(tiles // 3 + (i < tiles % 3)) * 32 for i in range(3)]
    xs, ws = x.float().split(sizes, dim=1), w.float().split(sizes, dim=0)
    first, second, own = (a @ c for a, c in zip(xs, ws, strict=True))
    logits = bf16(own + bf16(first) + bf16(second) + b.float())
    ids = torch.sort(-logits, dim=1, stable=True).indices[:, :k]  # equal logits: the lower expert first
    best = logits.gather(1, ids)
    e = bf16(torch.exp(best - best[:, :1]))
    weights = bf16(e * bf16(1.0 / e.sum(dim=1, keepdim=True)))
    return weights, ids


def run(mesh, x, w, b, k):
    put = lambda t: ttnn.from_torch(t, dtype=ttnn.bfloat16, layout=TILE, device=mesh)  # noqa: E731
    ids, weights = ttnn.experimental.topk_router_gpt(put(x), weight_tensor=put(w), bias_tensor=put(b), k=k)
    return ids, weights


@pytest.fixture
def n150():
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 1), system="n150")
    yield mesh
    ttnn.close_mesh_device(mesh)


@pytest.mark.parametrize("hidden,k", [(64, 4), (96, 1), (160, 5), (2880, 32)])
def test_integer_router_matches_exactly(n150, hidden, k):
    g = torch.Generator().manual_seed(hidden + k)
    x = torch.randint(-4, 5, (32, hidden), generator=g).float()
    w = torch.randint(-4, 5, (hidden, 128), generator=g).float() / 4
    b = torch.randint(-64, 64, (1, 128), generator=g).float().expand(32, 128).contiguous() / 8
    ids, weights = run(n150, x, w, b, k)
    padded = -(-k // 8) * 8
    assert tuple(ids.shape) == (32, padded) and ids.dtype == ttnn.uint16 and weights.dtype == ttnn.bfloat16
    assert ids.layout == ttnn.ROW_MAJOR_LAYOUT and ids.memory_config().buffer_type == ttnn.BufferType.L1
    got_ids = ttnn.to_torch(ids).long() & 0xFFFF
    got_w = ttnn.to_torch(weights).float()
    want_w, want_ids = torch_router(x, w, b, k)
    assert torch.equal(got_ids[:, :k], want_ids)
    assert torch.equal(got_w[:, :k], want_w)
    assert not got_ids[:, k:].any() and not got_w[:, k:].any()


def test_senders_partial_sums_are_rounded_to_bfloat16(n150):
    """Three parts of one tile each.  Expert 3: 256 + 1 in the first sender's part packs to 256, plus
    the worker's 1: 257, which rounds to 256.  Expert 5: 256 + 1 in the worker's part stays 257 in
    float32, plus a sender's 1: 258.  Expert 5 wins; not rounding the sender's sum (258 vs 258) or
    rounding the worker's too (256 vs 256) would tie them, expert 3 first."""
    x, w, b = torch.zeros(32, 96), torch.zeros(96, 128), torch.zeros(32, 128)
    x[:, [0, 1, 2, 64, 65]] = 1.0
    w[0, 3], w[1, 3], w[64, 3] = 256.0, 1.0, 1.0
    w[64, 5], w[65, 5], w[2, 5] = 256.0, 1.0, 1.0
    ids, weights = run(n150, x, w, b, 2)
    assert torch.equal(ttnn.to_torch(ids).long()[:, :2], torch.tensor([[5, 3]] * 32))
    want_w, want_ids = torch_router(x, w, b, 2)
    assert torch.equal(want_ids, torch.tensor([[5, 3]] * 32))
    assert torch.equal(ttnn.to_torch(weights).float()[:, :2], want_w)


def test_ties_pick_the_lower_expert_and_k_pads_with_zeros(n150):
    x, w = torch.zeros(32, 64), torch.zeros(64, 128)
    ids, weights = run(n150, x, w, torch.zeros(32, 128), 3)
    assert torch.equal(ttnn.to_torch(ids).long(), torch.tensor([[0, 1, 2, 0, 0, 0, 0, 0]] * 32))
    assert torch.equal(ttnn.to_torch(weights).float()[:, :3], torch.full((32, 3), bf16(torch.tensor(1 / 3)).item()))


def test_random_router_is_the_float_router_within_bfloat16(n150):
    g = torch.Generator().manual_seed(7)
    x, w = torch.randn(32, 2880, generator=g) * 0.1, torch.randn(2880, 128, generator=g) * 0.01
    b = (torch.randn(1, 128, generator=g) * 0.1).expand(32, 128).contiguous()
    x, w, b = bf16(x), bf16(w), bf16(b)
    ids, weights = run(n150, x, w, b, 4)
    want_w, want_ids = torch_router(x, w, b, 4)
    got = ttnn.to_torch(ids).long()[:, :4]
    assert (got == want_ids).float().mean() >= 0.99  # (float32 sums in another order may move a logit one ulp)
    same = (got == want_ids).all(dim=1)
    diff = (ttnn.to_torch(weights).float()[:, :4] - want_w)[same].abs()
    assert diff.max() <= 2**-8


def test_replicated_on_two_devices_gives_each_the_same():
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 2), system="n300")
    try:
        x = torch.randint(-3, 4, (32, 64)).float()
        w = torch.randint(-3, 4, (64, 128)).float()
        b = torch.zeros(32, 128)
        put = lambda t: ttnn.from_torch(t, dtype=ttnn.bfloat16, layout=TILE, device=mesh,  # noqa: E731
                                        mesh_mapper=ttnn.ReplicateTensorToMesh(mesh))  # fmt: skip
        ids, _ = ttnn.experimental.topk_router_gpt(put(x), weight_tensor=put(w), bias_tensor=put(b))
        both = ttnn.to_torch(ids, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0)).long()
        assert torch.equal(both[:32], both[32:]) and torch.equal(both[:32, :4], torch_router(x, w, b, 4)[1])
    finally:
        ttnn.close_mesh_device(mesh)


def test_blackhole_lacks_the_twelve_dram_cores():
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 1), system="p150")
    try:
        with pytest.raises(ttnn.MeshnnValueError, match="12 DRAM-aligned cores"):
            run(mesh, torch.zeros(32, 64), torch.zeros(64, 128), torch.zeros(32, 128), 4)
    finally:
        ttnn.close_mesh_device(mesh)
