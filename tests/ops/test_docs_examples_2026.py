"""What tt-metal 2026's documentation examples (``tests/ttnn/docs_examples``) needed: newer ttnn's
``rounding_mode`` beside 0.81's ``round_mode`` (``rdiv``, ``rdiv_bw``, ``div_bw``); ``fill_rm`` /
``fill_ones_rm``; a ``UnaryWithParam`` of a bool param and the ``(UnaryOpType, param)`` pair ttnn's
binding converts; ``experimental.minimal_matmul_split``, ``dit_minimal_matmul_addcmul_fused`` and
``dit_rms_norm_unary_fused``; ``get_group_norm_cores_across_channel(shard_orientation=)``.

Bounds: a value computed in float32 and rounded once to bfloat16 is within half a bfloat16 ulp
(2**-8 relative) of the float64 reference, plus the float32 sums' own error (negligible here)."""

from __future__ import annotations

import pytest
import torch

import meshnn as ttnn

HALF_ULP = 2.0**-8
"""Half a bfloat16 ulp, relative: the most one rounding to bfloat16 moves a value."""


def _put(mesh, values, layout=ttnn.TILE_LAYOUT):
    return ttnn.from_torch(values, ttnn.bfloat16, layout=layout, device=mesh)


def _within_one_rounding(got: torch.Tensor, exact: torch.Tensor) -> bool:
    bound = HALF_ULP * exact.abs() + 1e-30
    return bool(((got.double() - exact).abs() <= bound * 1.0001).all())


# ---------------------------------------------------------------- rounding_mode (2026's name)


@pytest.mark.parametrize("mode", [None, "trunc", "floor"])
def test_rdiv_rounding_mode_is_round_mode(mode, open_mesh):
    mesh = open_mesh((1, 1))
    x = _put(mesh, torch.tensor([[1.0, 2.0], [3.0, -4.0]]))
    old = ttnn.to_torch(ttnn.rdiv(x, 7, round_mode=mode))
    assert torch.equal(ttnn.to_torch(ttnn.rdiv(x, 7, rounding_mode=mode)), old)
    expected = torch.div(torch.full((2, 2), 7.0), torch.tensor([[1.0, 2.0], [3.0, -4.0]]), rounding_mode=mode)
    assert torch.equal(old, expected.bfloat16())
    golden = ttnn.get_golden_function(ttnn.rdiv)
    assert torch.equal(golden(torch.tensor([3.0, -4.0]), 7, rounding_mode=mode), expected[1])


def test_rounding_mode_refusals(open_mesh):
    mesh = open_mesh((1, 1))
    x = _put(mesh, torch.ones(2, 2))
    calls = [
        lambda **k: ttnn.rdiv(x, 2, **k),
        lambda **k: ttnn.rdiv_bw(x, x, 2.0, **k),
        lambda **k: ttnn.div_bw(x, x, 2.0, **k),
        lambda **k: ttnn.div_bw(x, x, x, **k),
    ]
    for call in calls:
        with pytest.raises(ttnn.MeshnnValueError, match="rounding_mode must be None, 'trunc' or 'floor'"):
            call(rounding_mode="round")
        with pytest.raises(ttnn.MeshnnValueError, match="disagree"):
            call(round_mode="floor", rounding_mode="trunc")


def test_division_gradients_take_rounding_mode(open_mesh):
    mesh = open_mesh((1, 1))
    values = torch.tensor([[1.0, 2.0], [4.0, -8.0]])
    grad, x = _put(mesh, torch.ones(2, 2)), _put(mesh, values)
    (plain,) = ttnn.rdiv_bw(grad, x, 0.5, rounding_mode=None)
    assert torch.equal(ttnn.to_torch(plain), (-0.5 / values**2).bfloat16())  # powers of two: exact
    (rounded,) = ttnn.rdiv_bw(grad, x, 0.5, rounding_mode="floor")
    assert torch.equal(ttnn.to_torch(rounded), torch.zeros(2, 2, dtype=torch.bfloat16))
    grads = ttnn.div_bw(grad, x, x, rounding_mode="trunc")
    assert all(torch.equal(ttnn.to_torch(g), torch.zeros(2, 2, dtype=torch.bfloat16)) for g in grads)
    (scalar,) = ttnn.div_bw(grad, x, 4.0, rounding_mode=None)
    assert torch.equal(ttnn.to_torch(scalar), torch.full((2, 2), 0.25, dtype=torch.bfloat16))
    golden = ttnn.get_golden_function(ttnn.rdiv_bw)
    t = values.clone().requires_grad_(True)
    assert torch.equal(golden(torch.ones(2, 2), t, 0.5, rounding_mode="floor")[0], torch.zeros(2, 2))


# ---------------------------------------------------------------- fill_rm


@pytest.mark.parametrize("layout", [ttnn.TILE_LAYOUT, ttnn.ROW_MAJOR_LAYOUT])
def test_fill_rm_corner_and_rest(layout, open_mesh):
    mesh = open_mesh((1, 1))
    anything = _put(mesh, torch.zeros(1, 1, 32, 32), layout)
    out = ttnn.fill_rm(2, 3, 64, 96, 33, 31, anything, 1.3, -2.7)
    assert out.shape == ttnn.Shape([2, 3, 64, 96]) and out.layout == ttnn.ROW_MAJOR_LAYOUT
    assert out.dtype == ttnn.bfloat16 and out.memory_config() == anything.memory_config()
    expected = torch.full((2, 3, 64, 96), -2.7).bfloat16()
    expected[:, :, :33, :31] = torch.tensor(1.3).bfloat16()  # rounded to nearest, ties to even
    assert torch.equal(ttnn.to_torch(out), expected)
    assert torch.equal(ttnn.get_golden_function(ttnn.fill_rm)(2, 3, 64, 96, 33, 31, None, 1.3, -2.7), expected)
    ones = ttnn.fill_ones_rm(1, 1, 32, 32, 31, 31, anything, memory_config=ttnn.L1_MEMORY_CONFIG)
    assert ones.memory_config().buffer_type == ttnn.BufferType.L1
    expected = torch.zeros(1, 1, 32, 32, dtype=torch.bfloat16)
    expected[:, :, :31, :31] = 1
    assert torch.equal(ttnn.to_torch(ones), expected)


def test_fill_rm_refusals(open_mesh):
    mesh = open_mesh((1, 1))
    anything = _put(mesh, torch.zeros(32, 32))
    refusals = [
        (lambda: ttnn.fill_rm(0, 1, 32, 32, 1, 1, anything, 1.0, 0.0), "must all be positive"),
        (lambda: ttnn.fill_rm(1, 1, 32, 32, 33, 1, anything, 1.0, 0.0), "hOnes"),
        (lambda: ttnn.fill_ones_rm(1, 1, 32, 16384, 1, 1, anything), "less than 16384"),
        (lambda: ttnn.fill_rm(1, 1, 32, 32, 1, 1, anything, "1", 0.0), "val_hi must be a number"),
        (lambda: ttnn.fill_ones_rm(1, 1, 32, 32, 1, 1, ttnn.typecast(anything, ttnn.float32)), "bfloat16"),
        (lambda: ttnn.fill_ones_rm(1, 1, 32, 32, 1, 1, torch.zeros(2)), "any"),
    ]
    for call, words in refusals:
        with pytest.raises(ttnn.MeshnnError, match=words):
            call()


# ---------------------------------------------------------------- fused activations


def test_unary_with_param_takes_a_bool_param(open_mesh):
    assert ttnn.UnaryWithParam(ttnn.UnaryOpType.EXP, False).params == (0.0,)
    assert ttnn.UnaryWithParam(ttnn.UnaryOpType.GELU, True).params == (1.0,)
    with pytest.raises(ttnn.MeshnnTypeError, match="number"):
        ttnn.UnaryWithParam(ttnn.UnaryOpType.EXP, "fast")
    mesh = open_mesh((1, 1))
    x = _put(mesh, torch.linspace(-2, 2, 1024).reshape(32, 32))
    chain = [ttnn.UnaryWithParam(ttnn.UnaryOpType.RELU), ttnn.UnaryWithParam(ttnn.UnaryOpType.EXP, False)]
    assert torch.equal(ttnn.to_torch(ttnn.unary_chain(x, chain)), ttnn.to_torch(ttnn.exp(ttnn.relu(x))))


def test_minimal_matmul_takes_a_pair_as_its_activation(open_mesh):
    mesh = open_mesh((1, 1))
    torch.manual_seed(0)
    a, b = _put(mesh, torch.randn(64, 32)), _put(mesh, torch.randn(32, 64))
    pair = ttnn.experimental.minimal_matmul(a, b, fused_activation=(ttnn.UnaryOpType.GELU, False))
    named = ttnn.experimental.minimal_matmul(a, b, fused_activation=ttnn.UnaryWithParam(ttnn.UnaryOpType.GELU))
    assert torch.equal(ttnn.to_torch(pair), ttnn.to_torch(named))
    with pytest.raises(ttnn.MeshnnTypeError, match="pair"):
        ttnn.experimental.minimal_matmul(a, b, fused_activation=3)


# ---------------------------------------------------------------- the minimal matmul's fused forms


def test_minimal_matmul_split_is_the_product_in_chunks(open_mesh):
    mesh = open_mesh((1, 1))
    torch.manual_seed(1)
    x, w, bias = torch.randn(64, 64), torch.randn(64, 192), torch.randn(1, 192)
    a, b, c = _put(mesh, x), _put(mesh, w), _put(mesh, bias)
    config = ttnn.MinimalMatmulConfig(
        M_block_size=8, K_block_size=8, N_block_size=8, subblock_h=2, subblock_w=2,
        compute_with_storage_grid_size=mesh.compute_with_storage_grid_size(),
    )  # fmt: skip
    whole = ttnn.to_torch(ttnn.experimental.minimal_matmul(a, b, bias_tensor=c, config=config))
    pieces = ttnn.experimental.minimal_matmul_split(input_tensor=a, weight_tensor=b, bias_tensor=c, config=config)
    assert [p.shape for p in pieces] == [ttnn.Shape([64, 64])] * 3
    assert torch.equal(torch.cat([ttnn.to_torch(p) for p in pieces], -1), whole)
    two = ttnn.experimental.minimal_matmul_split(a, b, chunks=2)
    assert [p.shape for p in two] == [ttnn.Shape([64, 96])] * 2
    golden = ttnn.get_golden_function(ttnn.experimental.minimal_matmul_split)
    assert [g.shape for g in golden(x, w, chunks=3, bias_tensor=bias)] == [torch.Size([64, 64])] * 3
    for kwargs, words in (({"dim": 0}, "dim=-1"), ({"chunks": 0}, ">= 1"), ({"chunks": 4}, "multiple of 32")):
        with pytest.raises(ttnn.MeshnnValueError, match=words):
            ttnn.experimental.minimal_matmul_split(a, b, **kwargs)


@pytest.mark.parametrize("gate_rows", [1, 64])
def test_dit_matmul_addcmul_is_rounded_once(gate_rows, open_mesh):
    mesh = open_mesh((1, 1))
    torch.manual_seed(2)
    x, w = torch.randn(64, 32).bfloat16(), torch.randn(32, 64).bfloat16()
    base, gate, bias = torch.randn(64, 64).bfloat16(), torch.randn(gate_rows, 64).bfloat16(), torch.randn(1, 64)
    bias = bias.bfloat16()
    out = ttnn.experimental.dit_minimal_matmul_addcmul_fused(
        _put(mesh, x), _put(mesh, w), 2.0, _put(mesh, base), _put(mesh, gate), _put(mesh, bias)
    )
    assert out.shape == ttnn.Shape([64, 64]) and out.dtype == ttnn.bfloat16
    exact = base.double() + 2.0 * (x.double() @ w.double() + bias.double()) * gate.double()
    assert _within_one_rounding(ttnn.to_torch(out), exact)
    golden = ttnn.get_golden_function(ttnn.experimental.dit_minimal_matmul_addcmul_fused)
    assert _within_one_rounding(golden(x, w, 2.0, base, gate, bias).bfloat16(), exact)


def test_dit_matmul_addcmul_refusals(open_mesh):
    mesh = open_mesh((1, 1))
    a, w = _put(mesh, torch.ones(64, 32)), _put(mesh, torch.ones(32, 64))
    full, row = _put(mesh, torch.ones(64, 64)), _put(mesh, torch.ones(1, 64))
    op = ttnn.experimental.dit_minimal_matmul_addcmul_fused
    with pytest.raises(ttnn.MeshnnValueError, match="addcmul_input_tensor1"):
        op(a, w, 1.0, row, row)
    with pytest.raises(ttnn.MeshnnValueError, match="addcmul_input_tensor2"):
        op(a, w, 1.0, full, _put(mesh, torch.ones(32, 64)))
    with pytest.raises(ttnn.MeshnnTypeError, match="scalar"):
        op(a, w, None, full, row)


# ---------------------------------------------------------------- norms


@pytest.mark.parametrize("activation", ["silu", ttnn.UnaryOpType.GELU, None])
def test_dit_rms_norm_unary_fused_is_rounded_once(activation, open_mesh):
    mesh = open_mesh((1, 1))
    torch.manual_seed(3)
    x, weight = torch.randn(1, 1, 64, 128).bfloat16(), torch.randn(1, 128).bfloat16()
    out = ttnn.experimental.dit_rms_norm_unary_fused(_put(mesh, x), weight=_put(mesh, weight), activation=activation)
    normed = x.double() * torch.rsqrt(x.double().pow(2).mean(-1, keepdim=True) + 1e-5) * weight.double().reshape(-1)
    functions = {"silu": torch.nn.functional.silu, ttnn.UnaryOpType.GELU: torch.nn.functional.gelu}
    exact = functions[activation](normed) if activation is not None else normed
    # the float32 kernel's own error (mean of squares, rsqrt, erf / exp) is far under 2**-16 relative
    got = ttnn.to_torch(out).double()
    assert bool(((got - exact).abs() <= (HALF_ULP + 2.0**-16) * exact.abs() + 1e-6).all())
    golden = ttnn.get_golden_function(ttnn.experimental.dit_rms_norm_unary_fused)
    assert torch.allclose(golden(x, weight=weight, activation=activation).double(), exact, rtol=2.0**-16, atol=1e-6)


def test_dit_rms_norm_refuses_an_unknown_activation(open_mesh):
    mesh = open_mesh((1, 1))
    x = _put(mesh, torch.ones(1, 1, 32, 64))
    with pytest.raises(ttnn.MeshnnTypeError, match="activation"):
        ttnn.experimental.dit_rms_norm_unary_fused(x, activation="swish_please")


def test_group_norm_cores_across_channel_follow_the_orientation():
    grid = ttnn.CoreGrid(y=4, x=8)
    block = ttnn.TensorMemoryLayout.BLOCK_SHARDED
    assert ttnn.get_group_norm_cores_across_channel(block, grid, ttnn.ShardOrientation.ROW_MAJOR) == 8
    assert ttnn.get_group_norm_cores_across_channel(block, grid, ttnn.ShardOrientation.COL_MAJOR) == 4
    assert ttnn.get_group_norm_cores_across_channel(block, grid) == 4  # ttnn's older rule: COL_MAJOR
    height = ttnn.TensorMemoryLayout.HEIGHT_SHARDED
    assert ttnn.get_group_norm_cores_across_channel(height, grid, ttnn.ShardOrientation.ROW_MAJOR) == 1
    with pytest.raises(ttnn.MeshnnTypeError, match="shard_orientation"):
        ttnn.get_group_norm_cores_across_channel(block, grid, "ROW_MAJOR")


# ---------------------------------------------------------------- randn


def test_randn_is_standard_normal_and_seeded(open_mesh):
    mesh = open_mesh((1, 1))
    small = ttnn.randn(shape=[2, 3], dtype=ttnn.bfloat16, layout=ttnn.ROW_MAJOR_LAYOUT, device=mesh)
    assert small.shape == ttnn.Shape([2, 3]) and small.layout == ttnn.ROW_MAJOR_LAYOUT
    first = ttnn.to_torch(ttnn.randn([128, 128], mesh, dtype=ttnn.float32, seed=7))
    assert torch.equal(ttnn.to_torch(ttnn.randn([128, 128], mesh, dtype=ttnn.float32, seed=7)), first)
    assert not torch.equal(ttnn.to_torch(ttnn.randn([128, 128], mesh, dtype=ttnn.float32, seed=8)), first)
    # 16,384 standard normal draws: the mean's deviation is 1/128 (bound: 6 deviations), the
    # variance's sqrt(2/16384) ~ 0.011 (bound: 0.07); both fixed by the seed, so deterministic
    assert abs(first.mean().item()) < 6 / 128 and abs(first.var().item() - 1) < 0.07
    with pytest.raises(ttnn.MeshnnTypeError, match="dtype"):
        ttnn.randn([2, 2], mesh, dtype=ttnn.int32)


# ---------------------------------------------------------------- rotate_half (the Falcon-7B integration tests)


@pytest.mark.parametrize("dtype", [ttnn.bfloat16, ttnn.bfloat8_b, ttnn.float32])
def test_rotate_half_is_exact(dtype, open_mesh):
    mesh = open_mesh((1, 1))
    torch.manual_seed(4)
    x = ttnn.from_torch(torch.randn(1, 2, 32, 128), dtype, layout=ttnn.TILE_LAYOUT, device=mesh)
    given = ttnn.to_torch(x)
    expected = torch.cat((-given[..., 64:], given[..., :64]), dim=-1)
    assert torch.equal(ttnn.to_torch(ttnn.experimental.rotate_half(x)), expected)
    assert torch.equal(ttnn.get_golden_function(ttnn.experimental.rotate_half)(given), expected)
    with pytest.raises(ttnn.MeshnnValueError, match="multiple of 64"):
        ttnn.experimental.rotate_half(ttnn.from_torch(torch.ones(32, 32), dtype, layout=ttnn.TILE_LAYOUT, device=mesh))
