"""What tt-metal's eltwise unit tests of 2026-06 call and meshnn lacked (stop 45).

Each case states ttnn's rule it checks; bfloat16 results are compared exactly with the float32
result rounded to nearest even (the host conversion's rounding), float32 ones exactly.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import meshnn as ttnn


@pytest.fixture
def single(open_mesh):
    return open_mesh((1, 1))


def put(mesh, values, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT):
    return ttnn.from_torch(torch.as_tensor(values), dtype=dtype, layout=layout, device=mesh)


def bf16(values) -> torch.Tensor:
    """float32 values rounded to bfloat16 (nearest even), as float32."""
    return torch.as_tensor(np.asarray(values, np.float32)).bfloat16().float()


def back(tensor) -> torch.Tensor:
    return ttnn.to_torch(tensor).float()


@pytest.mark.parametrize("fast", [False, True])
def test_multiply_takes_fast_and_approximate_mode_records_it_and_stays_exact(single, recorder, fast):
    rng = np.random.default_rng(45)
    a = bf16(rng.standard_normal((64, 64)) * 1e3)
    b = bf16(rng.standard_normal((64, 64)) * 1e-2)
    got = back(ttnn.multiply(put(single, a), put(single, b), fast_and_approximate_mode=fast))
    assert torch.equal(got, bf16(a * b))  # the float32 product, rounded once to nearest even
    assert recorder.ops[-1].attrs["fast_and_approximate_mode"] is fast
    with pytest.raises(TypeError, match="fast_and_approximate_mode"):
        ttnn.multiply(put(single, a), put(single, b), fast_and_approximate_mode="yes")


@pytest.mark.parametrize("op", ["le", "add", "abs", "where"])
def test_a_preallocated_output_keeps_its_memory_config_beside_another_given(single, op):
    """ttnn's element-wise device operations take a preallocated output's spec whole: a
    ``memory_config`` given beside it (L1 here, the output in DRAM) picks only the worker cores."""
    a = bf16(np.arange(64 * 64).reshape(64, 64) % 13 - 6)
    b = bf16(np.arange(64 * 64).reshape(64, 64) % 7 - 3)
    x, y = put(single, a), put(single, b)
    out = ttnn.from_torch(torch.zeros(64, 64), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=single)
    l1 = ttnn.L1_MEMORY_CONFIG
    calls = {
        "le": (lambda: ttnn.le(x, y, memory_config=l1, output_tensor=out), (a <= b).float()),
        "add": (lambda: ttnn.add(x, y, memory_config=l1, output_tensor=out), bf16(a + b)),
        "abs": (lambda: ttnn.abs(x, memory_config=l1, output_tensor=out), a.abs()),
        "where": (lambda: ttnn.where(x, x, y, memory_config=l1, output_tensor=out), torch.where(a != 0, a, b)),
    }
    run, expect = calls[op]
    got = run()
    assert got.memory_config().buffer_type == ttnn.BufferType.DRAM
    assert torch.equal(back(out), expect)


def test_unary_op_type_has_tt_metal_2026s_members_in_its_order():
    names = [m.name for m in ttnn.UnaryOpType]
    for before, after in (("POWER", "POWER_ITERATIVE"), ("TYPECAST", "BITCAST")):
        assert names.index(after) == names.index(before) + 1
    assert names[-7:] == ["CBRT", "LOGSIGMOID", "LOGIT", "XIELU", "LGAMMA", "DIGAMMA", "POLYGAMMA"]
    assert ttnn.UnaryOpType.LOGIT.value == "logit" and ttnn.UnaryOpType.LGAMMA.value == "lgamma"


@pytest.mark.parametrize("exponent", [0, 2, 3.0])
def test_power_iterative_as_an_activation_is_the_whole_power(single, exponent):
    x = bf16(torch.rand(16, 16, generator=torch.Generator().manual_seed(45)) + 1.5)
    t = put(single, x)
    act = ttnn.UnaryWithParam(ttnn.UnaryOpType.POWER_ITERATIVE, exponent)
    got = back(ttnn.add(t, t, activations=[act]))
    assert torch.equal(got, bf16(bf16(x + x) ** exponent))  # the sum rounded, then its power rounded


@pytest.mark.parametrize("exponent", [3.65, -3.0])
def test_power_iterative_refuses_an_exponent_its_kernel_cannot_multiply(single, exponent):
    t = put(single, torch.ones(32, 32))
    act = ttnn.UnaryWithParam(ttnn.UnaryOpType.POWER_ITERATIVE, exponent)
    with pytest.raises(ValueError, match="POWER_ITERATIVE needs a whole exponent"):
        ttnn.add(t, t, activations=[act])


@pytest.mark.parametrize(("member", "op"), [("LOGSIGMOID", "log_sigmoid"), ("LGAMMA", "lgamma")])
def test_new_members_fuse_as_their_public_ops_compute(single, member, op):
    x = bf16(torch.linspace(0.5, 4.0, 32 * 32).reshape(32, 32))
    t = put(single, x)
    fused = back(ttnn.add(t, t, activations=[ttnn.UnaryWithParam(getattr(ttnn.UnaryOpType, member))]))
    assert torch.equal(fused, back(getattr(ttnn, op)(ttnn.add(t, t))))


def test_sigmoid_mode_is_newer_ttnns_enum_recorded_and_every_mode_exact(single, recorder):
    assert [(m.name, m.value) for m in ttnn.SigmoidMode] == [
        ("FastApproximate", 0),
        ("AccurateWithFastExp", 1),
        ("Accurate", 2),
    ]
    x = bf16(torch.linspace(-6, 6, 32 * 64).reshape(32, 64))
    t = put(single, x)
    expect = bf16(torch.sigmoid(x))  # the float32 sigmoid of the bfloat16 inputs, rounded once
    for mode in ttnn.SigmoidMode:
        assert torch.equal(back(ttnn.sigmoid(t, mode=mode)), expect)
        assert recorder.ops[-1].attrs["mode"] is mode
    with pytest.raises(TypeError, match=r"mode must be a ttnn\.SigmoidMode"):
        ttnn.sigmoid(t, mode=True)


@pytest.mark.parametrize(("alpha_p", "alpha_n"), [(0.8, 0.8), (0.3, 0.1), (1.0, 0.5)])
def test_xielu_is_ttnns_piecewise_activation(single, alpha_p, alpha_n):
    x = bf16(torch.randn(32, 64, generator=torch.Generator().manual_seed(45)) * 3)
    wide = x.double()
    positive = alpha_p * wide * wide + 0.5 * wide
    negative = alpha_n * torch.expm1(wide.clamp(max=-1e-6)) - alpha_n * wide + 0.5 * wide
    exact = torch.where(wide > 0, positive, negative)
    got = back(ttnn.xielu(put(single, x), alpha_p=alpha_p, alpha_n=alpha_n))
    assert torch.equal(got, bf16(exact.float()))  # float32 computation, rounded once to bfloat16
    golden = ttnn.get_golden_function(ttnn.xielu)(x.bfloat16(), alpha_p=alpha_p, alpha_n=alpha_n)
    assert golden.dtype == torch.bfloat16 and torch.equal(golden.float(), got)
    wide32 = back(ttnn.xielu(put(single, x, ttnn.float32), alpha_p=alpha_p, alpha_n=alpha_n))
    terms = torch.where(wide > 0, positive.abs(), (alpha_n + 0.5) * wide.abs() + alpha_n)
    assert torch.all((wide32.double() - exact).abs() <= 4 * 2**-24 * terms)  # 4 ulps of its largest term
    with pytest.raises(TypeError, match="alpha_p"):
        ttnn.xielu(put(single, x), alpha_p="big")


def test_xielu_fuses_as_the_xielu_member(single):
    x = put(single, bf16(torch.linspace(-4, 4, 32 * 32).reshape(32, 32)))
    act = ttnn.UnaryWithParam(ttnn.UnaryOpType.XIELU, [0.3, 0.1])
    fused = back(ttnn.add(x, x, activations=[act]))
    assert torch.equal(fused, back(ttnn.xielu(ttnn.add(x, x), alpha_p=0.3, alpha_n=0.1)))


def test_sub_core_grids_are_in_the_program_cache_key(single):
    """ttnn hashes a program with the cores it runs on: another ``sub_core_grids`` is another entry."""
    a = put(single, torch.ones(1, 1, 32, 64), ttnn.float32)
    grid = [ttnn.CoreRangeSet([ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(n, n))]) for n in (3, 5)]
    single.enable_program_cache()
    before = single.num_program_cache_entries()
    ttnn.add(a, a, sub_core_grids=grid[0])
    ttnn.add(a, a, sub_core_grids=grid[0])
    assert single.num_program_cache_entries() == before + 1
    ttnn.add(a, a, sub_core_grids=grid[1])
    assert single.num_program_cache_entries() == before + 2
    ttnn.add(a, a)
    assert single.num_program_cache_entries() == before + 3


def test_unary_with_param_takes_two_numbers_as_ttnn_does():
    two = ttnn.UnaryWithParam(ttnn.UnaryOpType.TYPECAST, ttnn.float32.value, ttnn.bfloat16.value)
    assert two.params == (1.0, 0.0) and two == ttnn.UnaryWithParam(ttnn.UnaryOpType.TYPECAST, (1, 0))
    with pytest.raises(TypeError, match="second param"):
        ttnn.UnaryWithParam(ttnn.UnaryOpType.TYPECAST, (1, 0), 2)


def test_unary_chain_ending_in_typecast_gives_its_dtype(single):
    """tt-metal 2026-06's test_binary_ng_typecast_lt: ``x - y < 0`` as a chain, cast to bfloat16."""
    x = put(single, torch.tensor([[0.98828125, 0.99000000953674316, 1.5]]), ttnn.float32)
    chain = [
        ttnn.UnaryWithParam(ttnn.UnaryOpType.SUB_UNARY_SFPU, 0.99000000953674316),
        ttnn.UnaryWithParam(ttnn.UnaryOpType.LTZ),
        ttnn.UnaryWithParam(ttnn.UnaryOpType.TYPECAST, ttnn.float32.value, ttnn.bfloat16.value),
    ]
    out = ttnn.unary_chain(x, chain)
    assert out.dtype == ttnn.bfloat16
    assert torch.equal(back(out), torch.tensor([[1.0, 0.0, 0.0]]))
    y = put(single, torch.tensor([[1.0, -2.5, 3.0078125]]), ttnn.float32)
    rounded = ttnn.unary_chain(y, [ttnn.UnaryOpType.NEG, ttnn.UnaryWithParam(ttnn.UnaryOpType.TYPECAST, 1, 0)])
    assert torch.equal(back(rounded), bf16(torch.tensor([[-1.0, 2.5, -3.0078125]])))  # 3.0078125 rounds to 3.0
    with pytest.raises(ValueError, match="TYPECAST takes two"):
        ttnn.unary_chain(y, [ttnn.UnaryOpType.NEG, ttnn.UnaryWithParam(ttnn.UnaryOpType.TYPECAST, 1, 99)])


@pytest.mark.parametrize(("shape", "row"), [((1, 1, 32, 32), (1, 1, 32, 32)), ((2, 64, 48), (48,))])
def test_snake_beta_is_x_plus_sin_squared_over_beta(single, shape, row):
    g = torch.Generator().manual_seed(45)
    x = bf16(torch.randn(shape, generator=g) * 3)
    a = bf16(torch.rand(row, generator=g) * 0.5 + 0.96)
    b = bf16(torch.rand(row, generator=g) * 0.6 + 0.97)
    s = torch.sin(a.double() * x.double())
    exact = x.double() + s * s / b.double()
    got = back(ttnn.snake_beta(put(single, x), put(single, a), put(single, b)))
    assert tuple(got.shape) == shape
    # float32 computation then one rounding: within half a bfloat16 ulp of the exact value plus a
    # float32 rounding's share (sin, the product, the quotient, the sum: a few 2^-24 of |terms|)
    bound = 2.0 ** (torch.floor(torch.log2(exact.abs().clamp(min=2**-126))) - 8) + 8 * 2**-24 * (x.abs().double() + 1)
    assert torch.all((got.double() - exact).abs() <= bound)
    golden = ttnn.get_golden_function(ttnn.snake_beta)(x.bfloat16(), a.bfloat16(), b.bfloat16())
    assert golden.dtype == torch.bfloat16


@pytest.mark.parametrize(
    ("x", "a", "b", "dtype", "layout", "message"),
    [
        ((1, 1, 32, 32), (32,), (64,), ttnn.bfloat16, ttnn.TILE_LAYOUT, "alpha.shape == beta.shape"),
        ((1, 1, 32, 64), (32,), (32,), ttnn.bfloat16, ttnn.TILE_LAYOUT, "input.W == alpha.W"),
        ((1, 1, 64, 32), (1, 64, 32), (1, 64, 32), ttnn.bfloat16, ttnn.TILE_LAYOUT, "non-1 size only on the last"),
        ((32,), (32,), (32,), ttnn.bfloat16, ttnn.TILE_LAYOUT, "input rank >= 2"),
        ((1, 1, 32, 32), (32,), (32,), ttnn.bfloat16, ttnn.ROW_MAJOR_LAYOUT, "tile layout"),
        ((1, 1, 32, 32), (32,), (32,), ttnn.float32, ttnn.TILE_LAYOUT, "alpha.dtype == beta.dtype"),
    ],
)
def test_snake_beta_refuses_what_tt_metal_refuses_as_a_runtime_error(single, x, a, b, dtype, layout, message):
    tx = put(single, torch.zeros(x), ttnn.bfloat16, layout)
    ta, tb = put(single, torch.ones(a), dtype, layout), put(single, torch.ones(b), ttnn.bfloat16, layout)
    with pytest.raises(RuntimeError, match=message):
        ttnn.snake_beta(tx, ta, tb)


@pytest.mark.parametrize("op", ["add", "multiply", "multiply_", "bitwise_or"])
def test_binary_ops_take_sub_device_id_and_record_it(single, recorder, op):
    dtype = ttnn.int32 if op == "bitwise_or" else ttnn.bfloat16
    a = put(single, torch.full((32, 32), 3, dtype=torch.int32 if op == "bitwise_or" else torch.float32), dtype)
    b = put(single, torch.full((32, 32), 5, dtype=torch.int32 if op == "bitwise_or" else torch.float32), dtype)
    got = back(getattr(ttnn, op)(a, b, sub_device_id=ttnn.SubDeviceId(0)))
    expect = {"add": 8.0, "multiply": 15.0, "multiply_": 15.0, "bitwise_or": 7.0}[op]
    assert torch.equal(got, torch.full((32, 32), expect))
    assert recorder.ops[-1].attrs["sub_device_id"] == 0
    with pytest.raises(TypeError, match="sub_device_id"):
        getattr(ttnn, op)(a, b, sub_device_id="first")


@pytest.mark.parametrize(
    ("values", "source", "target", "torch_source", "torch_target"),
    [
        ([16457, 16429, 32641, 31744, 64512, 0], ttnn.uint16, ttnn.bfloat16, torch.int16, torch.bfloat16),
        ([3.140625, 2.703125, -1.0, 0.0], ttnn.bfloat16, ttnn.uint16, torch.bfloat16, torch.int16),
        ([-1, 0, 2147483647, -2147483648], ttnn.int32, ttnn.uint32, torch.int32, torch.int32),
        ([16457, 1078523331, -1082130432], ttnn.uint32, ttnn.float32, torch.int32, torch.float32),
        ([1.5, -2.0, 3.4e38, 1e-40], ttnn.float32, ttnn.int32, torch.float32, torch.int32),
    ],
)
def test_bitcast_keeps_every_bit(single, values, source, target, torch_source, torch_target):
    """Unsigned dtypes read back as their signed torch types, bits kept (ttnn 0.81.1's to_torch)."""
    x = torch.tensor(values, dtype=torch.float32 if torch_source.is_floating_point else torch.int64)
    x = x.to(torch_source) if torch_source.is_floating_point else x.to(torch.int64).to(torch_source)
    out = ttnn.bitcast(put(single, x.reshape(1, -1), source), target)
    assert out.dtype == target and out.layout == ttnn.TILE_LAYOUT
    got = ttnn.to_torch(out).flatten()
    bits = torch.int16 if x.element_size() == 2 else torch.int32
    assert got.element_size() == x.element_size()
    want = x.view(torch_target)
    nan = torch.isnan(want) if want.is_floating_point() else torch.zeros_like(want, dtype=torch.bool)
    assert torch.equal(got.view(bits)[~nan], x.view(bits)[~nan])  # bit for bit
    assert torch.isnan(got.view(torch_target)[nan]).all()  # a NaN stays a NaN (its payload is the packer's)


def test_bitcast_refuses_another_width_or_a_block_float(single):
    x = put(single, torch.ones(32, 32), ttnn.bfloat16)
    with pytest.raises(ValueError, match="differ in width"):
        ttnn.bitcast(x, ttnn.float32)
    with pytest.raises(ValueError, match="no bitcast"):
        ttnn.bitcast(put(single, torch.ones(32, 32), ttnn.bfloat8_b), ttnn.bfloat16)
    with pytest.raises(TypeError, match=r"dtype must be a ttnn\.DataType"):
        ttnn.bitcast(x, "uint16")


@pytest.mark.parametrize("dtype", [ttnn.float32, ttnn.bfloat16])
def test_exp2_flushes_a_subnormal_result_to_zero(single, dtype):
    """tt-metal 2026's exp2 kernels (#44507) give 0 where 2**x is subnormal (x = -127, -149); a normal
    result (x = -126) and the rest are 2**x rounded once."""
    near_max = float.fromhex("0x1.fffffep+6")  # (numpy's float32 exp2 misses its 2**x by 2 ulp)
    x = torch.tensor([-149.0, -127.0, -126.0, -0.25, 0.0, 10.0, -float("inf"), 128.0, near_max] + [0.0] * 23)
    x = x.reshape(1, 32)
    got = ttnn.to_torch(ttnn.exp2(put(single, x, dtype=dtype))).float()[0]
    want = torch.exp2(x.to(torch.float64))[0]
    want[:2] = 0.0
    want = want.float() if dtype is ttnn.float32 else want.float().bfloat16().float()
    assert torch.equal(got, want)


@pytest.mark.parametrize("dtype", [ttnn.uint32, ttnn.int32])
def test_where_of_an_integer_predicate_and_float_scalars_is_float32(single, dtype):
    """tt-metal 2026's where_tss typecasts an INT32 / UINT32 predicate to FLOAT32 when a scalar is a
    float: the result is FLOAT32 and holds the scalars exactly (was the predicate's dtype, truncated)."""
    predicate = torch.tensor([[0, 1, 7, 0] * 8] * 32, dtype=torch.int32)
    got = ttnn.where(put(single, predicate, dtype=dtype), 0.0, -11.33)
    assert got.dtype is ttnn.float32
    assert torch.equal(ttnn.to_torch(got), torch.where(predicate.bool(), 0.0, -11.33))
    integers = ttnn.where(put(single, predicate, dtype=dtype), 3, -4)  # (int scalars keep the predicate's dtype)
    assert integers.dtype is dtype
