"""Small models run tensor-parallel on 2x4 and 8x4 meshes, and ttnn's multi-device op cases 52, 53, 55, 56.

The model bounds are carried through every op by ``Approx`` (reference.py): a_matmul adds
|A| @ |B| propagation and gamma_n for the float32 dot products, gelu its Lipschitz constant 1.13 and
4u, softmax a_softmax's bound, every stored intermediate the rounding of its dtype (2**-8 |v| for
bfloat16), and a cross-device sum gamma_(k-1) times the sum of the |partials|.  The chain's float64
reference is checked to be the plain (unsharded) numpy model, so the device result is compared with
the model itself.

- 2x4: pure tensor parallelism over all 8 devices (cluster_axis None);
- 8x4: data parallel over the 8 rows (the batch is sharded on mesh dim 0) and tensor parallel over the
  4 columns of each row (cluster_axis=1).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import meshnn as ttnn

from .reference import (
    BF16,
    F32,
    GELU_LIPSCHITZ,
    TILE,
    Approx,
    a_add,
    a_map,
    a_matmul,
    a_scale,
    a_softmax,
    a_stored,
    a_sum,
    assert_within,
    exact_equal,
    gelu64,
    open_meshes,
    output_bound,
    pcc,
    quantized,
)

MODEL_MESHES = [(2, 4), (8, 4)]


@pytest.fixture(scope="module")
def meshes():
    opened = open_meshes(MODEL_MESHES)
    yield opened
    for mesh in opened.values():
        mesh.close()


@pytest.fixture
def rng():
    return np.random.default_rng(20261205)


class Layout2d:
    """How a model is laid out on a mesh: ``dp`` data-parallel replicas (mesh rows, 8x4 only) of ``tp``
    tensor-parallel devices each, and the cluster_axis of the tensor-parallel collectives."""

    def __init__(self, mesh):
        self.mesh = mesh
        rows, cols = tuple(mesh.shape)
        self.two_d = rows == 8
        self.dp, self.tp = (rows, cols) if self.two_d else (1, rows * cols)
        self.axis = 1 if self.two_d else None

    def member(self, index: int) -> tuple[int, int]:
        """(replica, tensor-parallel rank) of the device at linear index ``index``."""
        return divmod(index, self.tp) if self.two_d else (0, index)

    def put(self, values: np.ndarray, dtype, *, batch_dim: int | None = None, tp_dim: int | None = None):
        """values with ``batch_dim`` cut over the replicas and ``tp_dim`` over the tensor-parallel ranks."""
        if self.two_d:
            mapper = ttnn.ShardTensor2dMesh(self.mesh, mesh_shape=tuple(self.mesh.shape), dims=(batch_dim, tp_dim))
        elif tp_dim is not None:
            mapper = ttnn.ShardTensorToMesh(self.mesh, dim=tp_dim)
        else:
            mapper = ttnn.ReplicateTensorToMesh(self.mesh)
        return ttnn.from_torch(
            torch.from_numpy(np.ascontiguousarray(values)),
            dtype=dtype,
            layout=TILE,
            device=self.mesh,
            mesh_mapper=mapper,
        )


def split(values: np.ndarray, parts: int, axis: int) -> list[np.ndarray]:
    return np.split(values, parts, axis=axis)


def check_devices(tensor, expected: list[Approx], layout: Layout2d, dtype, what: str) -> None:
    """Every device's result within its replica's bound of that replica's reference."""
    shards = ttnn.get_device_tensors(tensor)
    assert len(shards) == layout.mesh.get_num_devices()
    for index, shard in enumerate(shards):
        replica, _ = layout.member(index)
        approx = expected[replica]
        assert_within(ttnn.to_numpy(shard).astype(np.float64), approx.ref, approx.err, f"{what} device {index}")


# ---------------------------------------------------------------------------- tensor-parallel MLP


def mlp_reference(x, w1, b1, w2, b2, tp: int, dtype) -> Approx:
    """The device's chain per tensor-parallel rank c: h_c = x W1_c + b1_c, g_c = gelu(h_c) (stored),
    p_c = g_c W2_c (stored); then sum_c p_c (stored) + b2 (stored)."""
    partials = []
    for w1_c, b1_c, w2_c in zip(split(w1, tp, 1), split(b1, tp, 0), split(w2, tp, 0), strict=True):
        h = a_add(a_matmul(Approx.exact(x), Approx.exact(w1_c)), Approx.exact(b1_c))  # linear applies gelu
        g = a_stored(a_map(h, gelu64, GELU_LIPSCHITZ, 4), dtype)  # before it stores
        partials.append(a_stored(a_matmul(g, Approx.exact(w2_c)), dtype))
    total = a_stored(a_sum(partials), dtype)
    return a_stored(a_add(total, Approx.exact(b2)), dtype)


@pytest.mark.parametrize("shape", MODEL_MESHES, ids=["2x4", "8x4"])
@pytest.mark.parametrize("dtype", [F32, BF16], ids=str)
@pytest.mark.parametrize("reduction", ["reduce_scatter+all_gather", "all_reduce"])
def test_tensor_parallel_mlp(meshes, rng, shape, dtype, reduction):
    """Column-parallel linear (W1 sharded on its output dim), gelu, row-parallel linear (W2 sharded on
    its input dim), then reduce_scatter + bias + all_gather (or all_reduce + bias)."""
    layout = Layout2d(meshes[shape])
    tp, dp = layout.tp, layout.dp
    hidden, ffn, seq = 32 * tp, 64 * tp, 20  # the scattered hidden dim divides by tp tiles
    x = rng.standard_normal((dp * 2, seq, hidden)).astype(np.float32)
    w1 = (rng.standard_normal((hidden, ffn)) / math.sqrt(hidden)).astype(np.float32)
    b1 = rng.standard_normal(ffn).astype(np.float32)
    w2 = (rng.standard_normal((ffn, hidden)) / math.sqrt(ffn)).astype(np.float32)
    b2 = rng.standard_normal(hidden).astype(np.float32)
    xq, w1q, b1q, w2q, b2q = (quantized(v, dtype) for v in (x, w1, b1, w2, b2))

    x_t = layout.put(x, dtype, batch_dim=0)
    h = ttnn.linear(x_t, layout.put(w1, dtype, tp_dim=1), bias=layout.put(b1, dtype, tp_dim=0), activation="gelu")
    partial = ttnn.matmul(h, layout.put(w2, dtype, tp_dim=0))
    if reduction == "all_reduce":
        y = ttnn.add(ttnn.all_reduce(partial, cluster_axis=layout.axis), layout.put(b2, dtype))
    else:
        scattered = ttnn.reduce_scatter(partial, dim=-1, cluster_axis=layout.axis)
        assert tuple(scattered.shape)[-1] == hidden // tp
        scattered = ttnn.add(scattered, layout.put(b2, dtype, tp_dim=0))
        y = ttnn.all_gather(scattered, dim=-1, cluster_axis=layout.axis)
    assert tuple(y.shape) == (2, seq, hidden) and y.dtype is dtype

    expected = []
    for replica in range(dp):
        rows = xq[2 * replica : 2 * replica + 2]
        approx = mlp_reference(rows, w1q, b1q, w2q, b2q, tp, dtype)
        model = gelu64(rows @ w1q + b1q) @ w2q + b2q  # the unsharded model
        np.testing.assert_allclose(approx.ref, model, rtol=1e-12, atol=1e-12)
        expected.append(approx)
    check_devices(y, expected, layout, dtype, f"mlp {reduction} {dtype}")
    # the worst-case bound (gamma_n grows with n) stays a tolerance of a few per mille of |y| + 1 in
    # float32 and a few per cent in bfloat16, which a missing bias or a missing rank's partial exceeds
    worst = max(float((a.err / (np.abs(a.ref) + 1)).max()) for a in expected)
    assert worst < (0.1 if dtype is BF16 else 0.01)
    rows, last = xq[:2], slice(ffn - ffn // tp, ffn)
    last_partial = gelu64(rows @ w1q[:, last] + b1q[last]) @ w2q[last]
    for wrong in (expected[0].ref - b2q, expected[0].ref - last_partial):
        assert np.any(np.abs(wrong - expected[0].ref) > expected[0].err)


# ------------------------------------------------------------------------------- attention by heads


def attention_reference(x, wq, wk, wv, wo, heads_per_rank: int, head_dim: int, tp: int, dtype) -> Approx:
    """Per rank c: q, k, v = x W_c (stored); scores = q k^T (stored) * 1/sqrt(d) (stored, exact scale);
    p = softmax(scores) (stored); ctx = p v (stored); partial = ctx Wo_c (stored); sum over ranks."""
    batch, seq, _ = x.shape
    scale = 1 / math.sqrt(head_dim)
    partials = []
    for c in range(tp):

        def heads(w, c=c):
            w_c = split(w, tp, 1)[c]
            flat = a_stored(a_matmul(Approx.exact(x), Approx.exact(w_c)), dtype)
            return Approx(
                *(v.reshape(batch, seq, heads_per_rank, head_dim).transpose(0, 2, 1, 3) for v in (flat.ref, flat.err))
            )

        q, k, v = heads(wq), heads(wk), heads(wv)
        kt = Approx(k.ref.swapaxes(-1, -2), k.err.swapaxes(-1, -2))
        scores = a_stored(a_scale(a_stored(a_matmul(q, kt), dtype), scale), dtype)
        p = a_stored(a_softmax(scores, axis=-1), dtype)
        ctx = a_stored(a_matmul(p, v), dtype)
        flat = Approx(
            *(t.transpose(0, 2, 1, 3).reshape(batch, seq, heads_per_rank * head_dim) for t in (ctx.ref, ctx.err))
        )
        partials.append(a_stored(a_matmul(flat, Approx.exact(split(wo, tp, 0)[c])), dtype))
    return a_stored(a_sum(partials), dtype)


def attention64(x, wq, wk, wv, wo, heads: int, head_dim: int) -> np.ndarray:
    """softmax(Q K^T / sqrt(d)) V W_o over all heads, in float64: the unsharded model."""
    batch, seq, _ = x.shape

    def split_heads(t):
        return t.reshape(batch, seq, heads, head_dim).transpose(0, 2, 1, 3)

    q, k, v = (split_heads(x @ w) for w in (wq, wk, wv))
    s = q @ k.swapaxes(-1, -2) / math.sqrt(head_dim)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    return (p @ v).transpose(0, 2, 1, 3).reshape(batch, seq, heads * head_dim) @ wo


@pytest.mark.parametrize("shape", MODEL_MESHES, ids=["2x4", "8x4"])
@pytest.mark.parametrize("dtype", [F32, BF16], ids=str)
def test_multi_head_attention_sharded_by_heads(meshes, rng, shape, dtype):
    """QKV projections column-parallel (each rank owns whole heads), per-rank attention, the output
    projection row-parallel, then all_reduce.  head_dim 16 makes the 1/sqrt(d) scale exact."""
    layout = Layout2d(meshes[shape])
    tp, dp = layout.tp, layout.dp
    heads_per_rank, head_dim, seq = 8 // tp if tp < 8 else 1, 16, 20
    heads = heads_per_rank * tp
    model = heads * head_dim
    x = rng.standard_normal((dp, seq, model)).astype(np.float32)
    wq, wk, wv, wo = ((rng.standard_normal((model, model)) / math.sqrt(model)).astype(np.float32) for _ in range(4))
    xq, wqq, wkq, wvq, woq = (quantized(v, dtype) for v in (x, wq, wk, wv, wo))

    x_t = layout.put(x, dtype, batch_dim=0)

    def project(w):
        flat = ttnn.linear(x_t, layout.put(w, dtype, tp_dim=1))
        return ttnn.permute(ttnn.reshape(flat, (1, seq, heads_per_rank, head_dim)), (0, 2, 1, 3))

    q, k, v = project(wq), project(wk), project(wv)
    scores = ttnn.multiply(ttnn.matmul(q, k, transpose_b=True), 1 / math.sqrt(head_dim))
    context = ttnn.matmul(ttnn.softmax(scores, dim=-1), v)
    context = ttnn.reshape(ttnn.permute(context, (0, 2, 1, 3)), (1, seq, heads_per_rank * head_dim))
    out = ttnn.all_reduce(ttnn.matmul(context, layout.put(wo, dtype, tp_dim=0)), cluster_axis=layout.axis)
    assert tuple(out.shape) == (1, seq, model)

    expected = []
    for replica in range(dp):
        rows = xq[replica : replica + 1]
        approx = attention_reference(rows, wqq, wkq, wvq, woq, heads_per_rank, head_dim, tp, dtype)
        np.testing.assert_allclose(
            approx.ref, attention64(rows, wqq, wkq, wvq, woq, heads, head_dim), rtol=1e-10, atol=1e-12
        )
        expected.append(approx)
    check_devices(out, expected, layout, dtype, f"attention {dtype}")
    # Attention without the 1/sqrt(d) scale, or with one head left out, must fail.  In float32 the
    # worst-case bound (under 1% of |y| + 1) catches them; in bfloat16 it does not (through the scores,
    # the softmax and two projections it reaches the size of the values), so there ttnn's own measure
    # does the work: PCC >= 0.999 for every device, below it for the wrong models.
    rows = xq[:1]
    unscaled = attention64(rows, wqq * math.sqrt(head_dim), wkq, wvq, woq, heads, head_dim)
    one_head_less = attention64(
        rows, wqq, wkq, wvq, np.concatenate([woq[:-head_dim], 0 * woq[-head_dim:]]), heads, head_dim
    )
    if dtype is F32:
        assert max(float((a.err / (np.abs(a.ref) + 1)).max()) for a in expected) < 0.01
        for wrong in (unscaled, one_head_less):
            assert np.any(np.abs(wrong - expected[0].ref) > expected[0].err)
    else:
        for index, shard in enumerate(ttnn.get_device_tensors(out)):
            replica, _ = layout.member(index)
            assert pcc(ttnn.to_numpy(shard), expected[replica].ref) >= 0.999, f"device {index}"
        for wrong in (unscaled, one_head_less):
            assert pcc(wrong, expected[0].ref) < 0.999


# ------------------------------------------------------------------- ttnn's multi-device op cases


def sharded_dim3(mesh, values: np.ndarray):
    return ttnn.from_torch(
        torch.from_numpy(values), dtype=BF16, layout=TILE, device=mesh, mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=3)
    )


def composed_dim3(mesh, tensor) -> np.ndarray:
    return ttnn.to_numpy(tensor, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=3)).astype(np.float64)


@pytest.mark.parametrize("shape", MODEL_MESHES, ids=["2x4", "8x4"])
def test_case_52_single_and_multi_op_on_shards(meshes, rng, shape):
    """test_multi_device_single_op_unary / _binary / _multi_op: gelu, add and gelu+exp on bfloat16
    shards of (1, 1, 32, 32 N) cut on dim 3, composed on dim 3: PCC >= 0.999 against torch in float32
    on the unquantized inputs."""
    mesh = meshes[shape]
    n = mesh.get_num_devices()
    a = rng.standard_normal((1, 1, 32, 32 * n)).astype(np.float32)
    b = rng.standard_normal((1, 1, 32, 32 * n)).astype(np.float32)
    ta, tb = torch.from_numpy(a), torch.from_numpy(b)
    x, y = sharded_dim3(mesh, a), sharded_dim3(mesh, b)
    for label, got, golden in (
        ("gelu", ttnn.gelu(x), torch.nn.functional.gelu(ta)),
        ("add", ttnn.add(x, y), ta + tb),
        ("gelu+exp", ttnn.exp(ttnn.gelu(x)), torch.exp(torch.nn.functional.gelu(ta))),
    ):
        out = composed_dim3(mesh, got)
        assert out.shape == a.shape
        assert pcc(out, golden.numpy()) >= 0.999, label
    assert pcc(composed_dim3(mesh, ttnn.neg(x)), a) < 0, "the PCC check must be able to fail"


@pytest.mark.parametrize("shape", MODEL_MESHES, ids=["2x4", "8x4"])
def test_case_53_data_parallel_matmul(meshes, rng, shape):
    """test_multi_device_data_parallel_matmul_op: A (N, 1, 32, 32) sharded on dim 0, B replicated,
    composed on dim 0: PCC >= 0.993 against torch, and within the bfloat16 matmul bound."""
    mesh = meshes[shape]
    n = mesh.get_num_devices()
    a = rng.random((n, 1, 32, 32)).astype(np.float32)
    b = rng.random((1, 1, 32, 32)).astype(np.float32)
    ta = ttnn.from_torch(
        torch.from_numpy(a), dtype=BF16, layout=TILE, device=mesh, mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0)
    )
    tb = ttnn.from_torch(
        torch.from_numpy(b), dtype=BF16, layout=TILE, device=mesh, mesh_mapper=ttnn.ReplicateTensorToMesh(mesh)
    )
    out = ttnn.to_numpy(ttnn.matmul(ta, tb), mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0)).astype(np.float64)
    assert out.shape == (n, 1, 32, 32)
    assert pcc(out, (torch.from_numpy(a) @ torch.from_numpy(b)).numpy()) >= 0.993
    approx = a_matmul(Approx.exact(quantized(a, BF16)), Approx.exact(quantized(b, BF16)))
    assert_within(out, approx.ref, output_bound(approx.ref, approx.err, BF16), "data-parallel matmul")


@pytest.mark.parametrize("shape", MODEL_MESHES, ids=["2x4", "8x4"])
def test_case_55_slicing_a_replicated_tensor(meshes, rng, shape):
    """test_slicing: a replicated (1, 32, 32, 32) tensor sliced [:, :, :, :1]: every device tensor has
    the sliced shape and the sliced values."""
    mesh = meshes[shape]
    x = rng.standard_normal((1, 32, 32, 32)).astype(np.float32)
    tensor = ttnn.from_torch(
        torch.from_numpy(x), dtype=BF16, layout=TILE, device=mesh, mesh_mapper=ttnn.ReplicateTensorToMesh(mesh)
    )
    sliced = ttnn.slice(tensor, [0, 0, 0, 0], [1, 32, 32, 1])
    devices = ttnn.get_device_tensors(sliced)
    assert len(devices) == mesh.get_num_devices()
    expected = quantized(x, BF16)[:, :, :, :1]
    for i, device in enumerate(devices):
        assert tuple(device.shape) == (1, 32, 32, 1)
        exact_equal(ttnn.to_numpy(device).astype(np.float64), expected, f"device {i}")


@pytest.mark.parametrize("shape", MODEL_MESHES, ids=["2x4", "8x4"])
def test_case_56_device_shard_i_is_golden_block_i(meshes, rng, shape):
    """test_device_shard_to_torch: exp of (1, 1, 32, 32 N) sharded on dim 3; the tensor of device i
    equals golden[..., 32 i : 32 (i + 1)] within the bfloat16 bound (8u for float32 exp, then 2**-8)."""
    mesh = meshes[shape]
    n = mesh.get_num_devices()
    x = rng.standard_normal((1, 1, 32, 32 * n)).astype(np.float32)
    out = ttnn.exp(sharded_dim3(mesh, x))
    golden = np.exp(quantized(x, BF16))
    bound = output_bound(golden, 8 * 2.0**-24 * golden, BF16)
    devices = ttnn.get_device_tensors(out)
    assert len(devices) == n
    for i, device in enumerate(devices):
        block = slice(32 * i, 32 * (i + 1))
        got = ttnn.to_numpy(device).astype(np.float64)
        assert_within(got, golden[..., block], bound[..., block], f"device {i}")
        if i:
            assert np.any(np.abs(got - golden[..., :32]) > bound[..., :32]), "device i must hold block i"
