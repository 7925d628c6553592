"""Every op against numpy in float64 on 1x1 (n150), 1x8 and 2x4 (t3k) and 8x4 (galaxy) meshes.

Inputs are sharded on the batch dim (each device gets one batch slice; the result is composed with
ConcatMeshToTensor) or replicated (every device's own result is checked).  The reference quantizes the
inputs exactly as the device sees them (the host conversion of the same dtype and layout), computes in
float64 per shard, and bounds the device result by the float32 compute error of the op plus the
rounding into the OUTPUT dtype (see reference.py for the format bounds):
- float32 output: the compute error only, a few u = 2**-24 times the op's magnitude;
- bfloat16 output: plus half an ulp, 2**-8 |v|;
- bfloat8_b output: plus one step of the value's 16-wide face row, rowmax / 64.
Exact ops (data movement without a dtype change, comparisons, max / min, argmax, abs, neg, relu, the
rows an embedding picks) must be exactly equal.  Each family also checks that a deliberately wrong
result (a truncating bfloat16 conversion, a float32 result rounded to bfloat16, a bfloat8_b result
stored as bfloat4_b, a missing bias, an ignored epsilon ...) lies beyond its bound.

bfloat8_b shapes keep the last dim a multiple of 16 for element-wise ops: an element-wise op also
computes the tile padding (exp(0) = 1 there), which legitimately raises the shared exponent of a face
row that mixes padding and data.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import meshnn as ttnn

from .reference import (
    BF16,
    BFP8,
    F32,
    FLOAT_FORMATS,
    GELU_LIPSCHITZ,
    MESHES,
    REPLICATE,
    RM,
    SHARD,
    TILE,
    Approx,
    U,
    a_add,
    a_map,
    a_matmul,
    a_softmax,
    assert_within,
    exact_equal,
    exceeds,
    float32_error,
    gamma,
    gelu64,
    mesh_fixtures,
    output_bound,
    per_shard,
    quantized,
    results,
    to_mesh,
    truncated_bf16,
)

PLACEMENTS = [SHARD, REPLICATE]


meshes, mesh = mesh_fixtures(list(MESHES))


@pytest.fixture
def rng():
    return np.random.default_rng(20261203)


def batch(mesh, placement: str) -> int:
    """Sharded: one batch slice per device; replicated: two batches on every device."""
    return mesh.get_num_devices() if placement == SHARD else 2


FULL_SWEEP = (2, 4)  # the mesh that runs every format and shape; the others run a cross-section
CROSS_SECTION = [(BF16, TILE), (F32, RM), (BFP8, TILE)]


def formats(mesh) -> list[tuple[ttnn.DataType, ttnn.Layout]]:
    return FLOAT_FORMATS if tuple(mesh.shape) == FULL_SWEEP else CROSS_SECTION


def shapes_for(mesh, dtype) -> list[tuple[int, int]]:
    """(height, width) per test: non-multiples of 32 included; bfloat8_b widths are multiples of 16."""
    shapes = [(20, 48), (33, 16)] if dtype is BFP8 else [(20, 48), (3, 40), (33, 65)]
    return shapes if tuple(mesh.shape) == FULL_SWEEP else shapes[:1]


def wrong_in_format(ref: np.ndarray, dtype) -> np.ndarray:
    """A plausible wrong result for ``dtype``: float32 rounded through bfloat16, bfloat16 truncated
    instead of rounded, bfloat8_b stored as bfloat4_b."""
    if dtype is F32:
        return quantized(ref.astype(np.float32), BF16, RM)
    if dtype is BF16:
        return truncated_bf16(ref)
    return quantized(ref.astype(np.float32), ttnn.bfloat4_b, TILE)


def check(outs: list[np.ndarray], ref: np.ndarray, bound: np.ndarray | None, what: str) -> None:
    """Every result within ``bound`` of ``ref`` (exactly equal when ``bound`` is None)."""
    for i, out in enumerate(outs):
        if bound is None:
            exact_equal(out, ref, f"{what} device {i}")
        else:
            assert_within(out, ref, bound, f"{what} device {i}")


def check_tight(ref: np.ndarray, bound: np.ndarray, dtype, what: str) -> None:
    assert exceeds(wrong_in_format(ref, dtype), ref, bound), f"{what}: the bound would not catch a wrong result"


# ---------------------------------------------------------------------------------------- unary


def _softplus64(x: np.ndarray) -> np.ndarray:
    return np.where(x > 20, x, np.logaddexp(0, x))  # ttnn's softplus: beta 1, threshold 20


# name: (float64 reference, input domain, float32 compute error in u of |result|)
# ulps: correctly rounded ops (sqrt, 1/x, x*x) 1; rsqrt = 1/sqrt 3; numpy's float32 exp / log / tanh
# err by < 4 ulp = 8u; sigmoid = 1/(1 + exp(-x)): 8u + 1 (add) + 1 (divide) + slack = 11u; silu
# multiplies once more: 13u; softplus: log1p(exp(x)) passes exp's 8u through with gain <= 1, plus 4u
# for log1p: 13u; gelu: 0.5 x erfc(-x / sqrt 2) with erfc to 1.2e-7 (2.02u) relative in float64, then
# one rounding: 4u.  relu, neg and abs are exact.
UNARY = {
    "relu": (lambda x: np.maximum(x, 0), "normal", None),
    "gelu": (gelu64, "wide", 4),
    "silu": (lambda x: x / (1 + np.exp(-x)), "wide", 13),
    "sigmoid": (lambda x: 1 / (1 + np.exp(-x)), "wide", 11),
    "tanh": (np.tanh, "wide", 8),
    "exp": (np.exp, "normal", 8),
    "log": (np.log, "positive", 8),
    "sqrt": (np.sqrt, "positive", 1),
    "rsqrt": (lambda x: 1 / np.sqrt(x), "positive", 3),
    "reciprocal": (lambda x: 1 / x, "nonzero", 1),
    "neg": (np.negative, "normal", None),
    "abs": (np.abs, "normal", None),
    "square": (np.square, "normal", 1),
    "softplus": (_softplus64, "softplus", 13),
}


def draw(rng, shape, domain: str) -> np.ndarray:
    z = rng.standard_normal(shape)
    values = {
        "normal": 2 * z,
        "wide": 4 * z,  # gelu's tails down to about -15
        "positive": 2 * np.abs(z) + 0.5,  # stays > 0 in bfloat8_b too (steps of at most 1/8 here)
        "nonzero": np.sign(z) * (np.abs(z) + 0.25),
        "softplus": 10 * z,  # past the threshold of 20 on both sides
        "int": np.round(1.5 * z),  # small integers: comparisons see ties
    }[domain]
    return values.astype(np.float32)


@pytest.mark.parametrize("placement", PLACEMENTS)
@pytest.mark.parametrize("name", list(UNARY))
def test_unary(mesh, placement, name, rng):
    reference, domain, ulps = UNARY[name]
    op = getattr(ttnn, name)
    n, b = mesh.get_num_devices(), batch(mesh, placement)
    for dtype, layout in formats(mesh):
        for height, width in shapes_for(mesh, dtype):
            x = draw(rng, (b, height, width), domain)
            what = f"{name} {dtype} {layout} {(b, height, width)}"
            tensor = to_mesh(mesh, x, dtype, layout, placement)
            out = op(tensor)
            assert (out.dtype, out.layout, tuple(out.shape)) == (
                dtype,
                layout,
                (b // n if placement == SHARD else b, height, width),
            )
            ref = per_shard(reference, placement, n, quantized(x, dtype, layout))
            outs = results(mesh, out, placement)
            if ulps is None:
                check(outs, ref, None, what)
            else:
                bound = output_bound(ref, float32_error(ref, ulps), dtype)
                check(outs, ref, bound, what)
                check_tight(ref, bound, dtype, what)
            in_l1 = op(tensor, memory_config=ttnn.L1_MEMORY_CONFIG)
            assert in_l1.memory_config() == ttnn.L1_MEMORY_CONFIG, what
            check(results(mesh, in_l1, placement), outs[0], None, f"{what} L1 output = DRAM output")


# --------------------------------------------------------------------------------------- binary

# name: (float64 reference, domain of a, domain of b, float32 compute error in u, exact?)
# add / subtract / multiply / divide are correctly rounded in float32 (u |result|); numpy's float32
# power errs by < 4 ulp (8u); maximum / minimum pick an input and comparisons give 0 / 1: exact, except
# that maximum / minimum re-encode bfloat8_b face rows (one step of the output row).
BINARY = {
    "add": (np.add, "normal", "normal", 1),
    "subtract": (np.subtract, "normal", "normal", 1),
    "multiply": (np.multiply, "normal", "normal", 1),
    "divide": (np.divide, "nonzero", "nonzero", 1),
    "maximum": (np.maximum, "normal", "normal", 0),
    "minimum": (np.minimum, "normal", "normal", 0),
    "pow": (np.power, "positive", "normal", 8),
    "eq": (lambda a, b: (a == b).astype(np.float64), "int", "int", None),
    "ne": (lambda a, b: (a != b).astype(np.float64), "int", "int", None),
    "gt": (lambda a, b: (a > b).astype(np.float64), "int", "int", None),
    "lt": (lambda a, b: (a < b).astype(np.float64), "int", "int", None),
    "ge": (lambda a, b: (a >= b).astype(np.float64), "int", "int", None),
    "le": (lambda a, b: (a <= b).astype(np.float64), "int", "int", None),
}
SCALAR = {"pow": 2.0, "divide": -1.75}  # the Python scalar operand (others use 1.5)
# the dtype= of each input format: a different float format, bfloat8_b only where the width is a
# multiple of 16 (see the module docstring)
OUTPUT_DTYPE = {(F32, TILE): BFP8, (F32, RM): BF16, (BF16, TILE): F32, (BF16, RM): F32, (BFP8, TILE): BF16}


# conversions that keep every value: bfloat8_b's 7-bit mantissas fit bfloat16's 8 bits
WIDENING = {(BF16, F32), (BFP8, BF16), (BFP8, F32)}


def _binary_bound(ref: np.ndarray, ulps: int | None, dtype, source) -> np.ndarray | None:
    """None (exact) for comparisons, and for maximum / minimum into a format that holds the inputs."""
    keeps = (dtype is source and dtype is not BFP8) or (source, dtype) in WIDENING
    if ulps is None or (ulps == 0 and keeps):
        return None
    return output_bound(ref, float32_error(ref, ulps), dtype)


def _check_binary(mesh, placement, out, ref, ulps, dtype, source, what) -> np.ndarray:
    assert out.dtype is dtype, what
    outs = results(mesh, out, placement)
    check(outs, ref, _binary_bound(ref, ulps, dtype, source), what)
    return outs[0]


@pytest.mark.parametrize("placement", PLACEMENTS)
@pytest.mark.parametrize("name", list(BINARY))
def test_binary(mesh, placement, name, rng):
    """Same shapes, broadcasting either way ((W,) and (1, H, 1) operands, replicated), a Python scalar on
    either side, and the dtype= and memory_config= output arguments."""
    reference, domain_a, domain_b, ulps = BINARY[name]
    op = getattr(ttnn, name)
    n, b = mesh.get_num_devices(), batch(mesh, placement)
    scalar = SCALAR.get(name, 1.5)
    for dtype, layout in formats(mesh):
        for height, width in shapes_for(mesh, dtype)[:2]:
            shape = (b, height, width)
            x, y = draw(rng, shape, domain_a), draw(rng, shape, domain_b)
            # broadcast operands: (W,) on the right (b's domain) and on the left (a's), (1, H, 1) on the right
            row, left = draw(rng, (width,), domain_b), draw(rng, (width,), domain_a)
            column = draw(rng, (1, height, 1), domain_b)
            xq, yq = quantized(x, dtype, layout), quantized(y, dtype, layout)
            rq, lq, cq = (quantized(v, dtype, layout) for v in (row, left, column))
            a, bb = to_mesh(mesh, x, dtype, layout, placement), to_mesh(mesh, y, dtype, layout, placement)
            r, lt, c = (to_mesh(mesh, v, dtype, layout, REPLICATE) for v in (row, left, column))
            what = f"{name} {dtype} {layout} {shape}"

            ref = per_shard(reference, placement, n, xq, yq)
            same = _check_binary(mesh, placement, op(a, bb), ref, ulps, dtype, dtype, f"{what} same shape")
            if ulps:
                check_tight(ref, _binary_bound(ref, ulps, dtype, dtype), dtype, what)
            for label, got, expected in (
                ("a op (W,)", op(a, r), per_shard(lambda p, q=rq: reference(p, q), placement, n, xq)),
                ("(W,) op a", op(lt, a), per_shard(lambda p, q=lq: reference(q, p), placement, n, xq)),
                ("a op (1,H,1)", op(a, c), per_shard(lambda p, q=cq: reference(p, q), placement, n, xq)),
                ("a op scalar", op(a, scalar), per_shard(lambda p: reference(p, scalar), placement, n, xq)),
                ("scalar op a", op(scalar, a), per_shard(lambda p: reference(scalar, p), placement, n, xq)),
            ):
                assert tuple(got.shape)[1:] == (height, width), f"{what} {label}"
                _check_binary(mesh, placement, got, expected, ulps, dtype, dtype, f"{what} {label}")

            other = OUTPUT_DTYPE[(dtype, layout)]
            if other is BFP8 and width % 16:
                other = BF16
            _check_binary(mesh, placement, op(a, bb, dtype=other), ref, ulps, other, dtype, f"{what} dtype={other}")
            in_l1 = op(a, bb, memory_config=ttnn.L1_MEMORY_CONFIG)
            assert in_l1.memory_config().buffer_type is ttnn.BufferType.L1, what
            exact_equal(results(mesh, in_l1, placement)[0], same, f"{what} L1 output = DRAM output")


@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "maximum", "minimum", "eq", "gt"])
def test_binary_on_integers_is_exact(meshes, name, rng):
    """int32 and uint32 tensors compute in int64 and come back exactly (values well inside the range)."""
    mesh = meshes[(2, 4)]
    reference = BINARY[name][0]
    for dtype, low in ((ttnn.int32, -1000), (ttnn.uint32, 0)):
        x = rng.integers(low, 1000, (8, 5, 40)).astype(dtype.numpy_dtype)
        y = rng.integers(0, 1000, (8, 5, 40)).astype(dtype.numpy_dtype)
        if name == "subtract" and dtype is ttnn.uint32:
            x = x + y  # keep the difference non-negative
        a, b = (ttnn.Tensor(v, dtype, device=mesh, mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0)) for v in (x, y))
        out = getattr(ttnn, name)(a, b)
        assert out.dtype is dtype
        got = ttnn.to_numpy(out, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0)).astype(np.int64)
        exact_equal(got, reference(x.astype(np.int64), y.astype(np.int64)).astype(np.int64), f"{name} {dtype}")
        shifted = ttnn.to_numpy(ttnn.add(a, 3), mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0))
        exact_equal(shifted.astype(np.int64), x.astype(np.int64) + 3, f"{dtype} + 3")


# --------------------------------------------------------------------------------------- matmul


def _matmul_case(
    mesh,
    placement,
    dtype,
    a_shape,
    b_shape,
    *,
    b_placement,
    transpose_a=False,
    transpose_b=False,
    bias=False,
    activation=None,
    rng,
):
    """One matmul / linear on the mesh and its Approx reference (per shard, float64)."""
    n = mesh.get_num_devices()
    x = rng.standard_normal(a_shape).astype(np.float32)
    w = rng.standard_normal(b_shape).astype(np.float32)
    xq, wq = quantized(x, dtype), quantized(w, dtype)
    a, bt = to_mesh(mesh, x, dtype, TILE, placement), to_mesh(mesh, w, dtype, TILE, b_placement)
    kwargs = {"transpose_a": transpose_a, "transpose_b": transpose_b}
    bias_q = None
    if bias or activation:
        bias_values = rng.standard_normal(b_shape[-2] if transpose_b else b_shape[-1]).astype(np.float32)
        bias_q = quantized(bias_values, dtype)
        out = ttnn.linear(
            a, bt, bias=to_mesh(mesh, bias_values, dtype, TILE, REPLICATE), activation=activation, **kwargs
        )
    else:
        out = ttnn.matmul(a, bt, **kwargs)

    def reference(p, q):
        p = np.swapaxes(p, -1, -2) if transpose_a else p
        q = np.swapaxes(q, -1, -2) if transpose_b else q
        result = a_matmul(Approx.exact(p), Approx.exact(q))
        if bias_q is not None:
            result = a_add(result, Approx.exact(bias_q))
        if activation == "relu":
            result = a_map(result, lambda v: np.maximum(v, 0), 1.0, 0)  # 1-Lipschitz, exact
        elif activation == "gelu":
            result = a_map(result, gelu64, GELU_LIPSCHITZ, 4)
        return np.stack([result.ref, result.err])

    if b_placement == SHARD:
        stacked = per_shard(lambda p, q: reference(p, q).swapaxes(0, 1), placement, n, xq, wq).swapaxes(0, 1)
    else:
        stacked = per_shard(lambda p: reference(p, wq).swapaxes(0, 1), placement, n, xq).swapaxes(0, 1)
    return out, Approx(stacked[0], stacked[1]), (xq, wq, bias_q)


MATMUL_CASES = {
    # label: (A per-device shape, B shape, B placement, options)
    "plain": ((1, 20, 40), (40, 24), REPLICATE, {}),
    "transpose_b": ((1, 20, 40), (24, 40), REPLICATE, {"transpose_b": True}),
    "transpose_a": ((1, 40, 20), (40, 24), REPLICATE, {"transpose_a": True}),
    "batched": ((1, 2, 20, 40), (1, 2, 40, 24), SHARD, {}),
    "broadcast batch of b": ((1, 3, 20, 40), (1, 1, 40, 24), SHARD, {}),
    "broadcast batch of a": ((1, 1, 20, 40), (3, 40, 24), REPLICATE, {}),
    "linear bias": ((1, 20, 40), (40, 24), REPLICATE, {"bias": True}),
    "linear relu": ((1, 20, 40), (40, 24), REPLICATE, {"activation": "relu"}),
    "linear gelu transpose_b": ((1, 33, 40), (24, 40), REPLICATE, {"activation": "gelu", "transpose_b": True}),
}


@pytest.mark.parametrize("placement", PLACEMENTS)
@pytest.mark.parametrize("case", list(MATMUL_CASES))
def test_matmul_and_linear(mesh, placement, case, rng):
    """Bound: |A||B| propagation of a_matmul (gamma_n |A| @ |B| for the float32 dot products), the bias
    add (u), the activation (its Lipschitz constant and ulps), then the output rounding."""
    a_local, b_shape, b_placement, options = MATMUL_CASES[case]
    n = mesh.get_num_devices()
    count = n if placement == SHARD else 2
    a_shape = (count, *a_local[1:])
    if b_placement == SHARD:
        b_shape = (count, *b_shape[1:])
        b_placement = placement
    for dtype in (F32, BF16, BFP8):
        out, approx, (_, _, bias_q) = _matmul_case(
            mesh, placement, dtype, a_shape, b_shape, b_placement=b_placement, rng=rng, **options
        )
        assert out.dtype is dtype and out.memory_config() == ttnn.DRAM_MEMORY_CONFIG
        bound = output_bound(approx.ref, approx.err, dtype)
        what = f"{case} {dtype}"
        check(results(mesh, out, placement), approx.ref, bound, what)
        check_tight(approx.ref, bound, dtype, what)
        if bias_q is not None and options.get("activation") is None:
            assert exceeds(approx.ref - bias_q, approx.ref, bound), f"{what}: a missing bias must show"


def test_matmul_output_dtype_and_memory_config(meshes, rng):
    """dtype= rounds the float32 product into that dtype; memory_config= places it (same values)."""
    mesh = meshes[(2, 4)]
    x = rng.standard_normal((8, 20, 40)).astype(np.float32)
    w = rng.standard_normal((40, 24)).astype(np.float32)
    a, b = to_mesh(mesh, x, BF16, TILE, SHARD), to_mesh(mesh, w, BF16, TILE, REPLICATE)
    approx = a_matmul(Approx.exact(quantized(x, BF16)), Approx.exact(quantized(w, BF16)))
    for dtype in (F32, BF16, BFP8):
        out = ttnn.matmul(a, b, dtype=dtype, memory_config=ttnn.L1_MEMORY_CONFIG)
        assert out.dtype is dtype and out.memory_config().buffer_type is ttnn.BufferType.L1
        bound = output_bound(approx.ref, approx.err, dtype)
        check(results(mesh, out, SHARD), approx.ref, bound, f"matmul dtype={dtype}")
        check_tight(approx.ref, bound, dtype, f"matmul dtype={dtype}")


# -------------------------------------------------------------------------------------- softmax


@pytest.mark.parametrize("placement", PLACEMENTS)
def test_softmax(mesh, placement, rng):
    """Bound: a_softmax (relative (2R + n + 20) u for the float32 shift, exp, sum and divide), then the
    output rounding.  A softmax along the wrong dim, or rounded through bfloat16, lies beyond it."""
    b = batch(mesh, placement)
    for dtype, layout in formats(mesh):
        for height, width in shapes_for(mesh, dtype)[:2]:
            x = (3 * rng.standard_normal((b, height, width))).astype(np.float32)
            xq = quantized(x, dtype, layout)
            tensor = to_mesh(mesh, x, dtype, layout, placement)
            for dim in (-1, 1):
                if dim != -1 and layout is ttnn.ROW_MAJOR_LAYOUT:  # ttnn's moreh path takes tiles only
                    with pytest.raises(ttnn.MeshnnValueError, match="must be tilized"):
                        ttnn.softmax(tensor, dim=dim)
                    continue
                approx = a_softmax(Approx.exact(xq), axis=dim)  # dims 1 and -1 never mix shards
                bound = output_bound(approx.ref, approx.err, dtype)
                what = f"softmax dim={dim} {dtype} {layout} {(b, height, width)}"
                check(results(mesh, ttnn.softmax(tensor, dim=dim), placement), approx.ref, bound, what)
                check_tight(approx.ref, bound, dtype, what)
                wrong = a_softmax(Approx.exact(xq), axis=1 if dim == -1 else -1).ref
                assert exceeds(wrong, approx.ref, bound), what


# -------------------------------------------------------------------------------- normalization


def norm_reference(x: np.ndarray, weight, bias, epsilon: float, *, centred: bool) -> Approx:
    """layer_norm (centred) / rms_norm over the last dim of ``x`` (float64), with the float32 bound:
    - centring: |mean' - mean| <= gamma_(n+1) M (M = max |x| of the row) and one rounding of x - mean':
      |c' - c| <= E_c = gamma_(n+4) M (E_c = 0 for rms_norm);
    - variance mean(c'^2) in float32: |v' - v| <= 2 E_c sqrt(v) + E_c^2 + gamma_(n+2) (sqrt(v) + E_c)^2;
    - s = sqrt(v' + eps): relative rho <= |v' - v| / (v + eps) + 2u (|sqrt(a+d) - sqrt a| <= |d| / sqrt a);
    - z = c' / s: D = (E_c / s + |z| rho) / (1 - rho), plus one rounding u (|z| + D);
    - y = z w + b: |w| dz + 2u |w| (|z| + dz) + u |b|."""
    n = x.shape[-1]
    big = np.abs(x).max(axis=-1, keepdims=True)
    c = x - x.mean(axis=-1, keepdims=True) if centred else x
    e_c = gamma(n + 4) * big if centred else np.zeros_like(big)
    v = (c * c).mean(axis=-1, keepdims=True)
    e_v = 2 * e_c * np.sqrt(v) + e_c**2 + gamma(n + 2) * (np.sqrt(v) + e_c) ** 2
    s = np.sqrt(v + epsilon)
    rho = e_v / (v + epsilon) + 2 * U
    z = c / s
    d = (e_c / s + np.abs(z) * rho) / (1 - rho)
    dz = d + U * (np.abs(z) + d)
    w = np.ones(n) if weight is None else weight
    b = np.zeros(n) if bias is None else bias
    y = z * w + b
    err = np.abs(w) * dz + 2 * U * np.abs(w) * (np.abs(z) + dz) + U * np.abs(b)
    return Approx(y, err)


NORM_CASES = [  # (weight?, bias?, epsilon)
    (False, False, 1e-5),
    (True, False, 1e-5),
    (True, True, 1e-5),
    (True, True, 0.5),
]


@pytest.mark.parametrize("placement", PLACEMENTS)
@pytest.mark.parametrize("name", ["layer_norm", "rms_norm"])
def test_norms(mesh, placement, name, rng):
    op, centred = getattr(ttnn, name), name == "layer_norm"
    b = batch(mesh, placement)
    for dtype, layout in formats(mesh):
        height, width = shapes_for(mesh, dtype)[0]
        x = (2 * rng.standard_normal((b, height, width)) + 0.5).astype(np.float32)
        xq = quantized(x, dtype, layout)
        tensor = to_mesh(mesh, x, dtype, layout, placement)
        for with_weight, with_bias, epsilon in NORM_CASES:
            w = rng.standard_normal(width).astype(np.float32) if with_weight else None
            bias = rng.standard_normal(width).astype(np.float32) if with_bias else None
            wq = None if w is None else quantized(w, dtype, layout)
            bq = None if bias is None else quantized(bias, dtype, layout)
            kwargs = {"epsilon": epsilon}
            if w is not None:
                kwargs["weight"] = to_mesh(mesh, w, dtype, layout, REPLICATE)
            if bias is not None:
                kwargs["bias"] = to_mesh(mesh, bias, dtype, layout, REPLICATE)
            approx = norm_reference(xq, wq, bq, epsilon, centred=centred)
            bound = output_bound(approx.ref, approx.err, dtype)
            what = f"{name} {dtype} {layout} weight={with_weight} bias={with_bias} eps={epsilon}"
            check(results(mesh, op(tensor, **kwargs), placement), approx.ref, bound, what)
            check_tight(approx.ref, bound, dtype, what)
            if epsilon > 0.1:
                no_eps = norm_reference(xq, wq, bq, 0.0, centred=centred).ref
                assert exceeds(no_eps, approx.ref, bound), f"{what}: an ignored epsilon must show"


# ----------------------------------------------------------------------------------- reductions

REDUCE_DIMS = [(-1, True), (-1, False), (1, True), (1, False), ((1, 2), False), (None, True)]


@pytest.mark.parametrize("placement", PLACEMENTS)
@pytest.mark.parametrize("name", ["sum", "mean", "max"])
def test_reductions(mesh, placement, name, rng):
    """sum: gamma_(m-1) sum |x| over the m reduced values; mean: gamma_(m+1) sum |x| / m (the sum, then
    one division); max is exact, except that a bfloat8_b result re-encodes its face rows."""
    op = getattr(ttnn, name)
    n, b = mesh.get_num_devices(), batch(mesh, placement)
    np_op = {"sum": np.sum, "mean": np.mean, "max": np.max}[name]
    for dtype, layout in formats(mesh):
        height, width = shapes_for(mesh, dtype)[0]
        x = (2 * rng.standard_normal((b, height, width)) + 0.25).astype(np.float32)
        xq = quantized(x, dtype, layout)
        tensor = to_mesh(mesh, x, dtype, layout, placement)
        for dim, keepdim in REDUCE_DIMS:
            axes = (0, 1, 2) if dim is None else dim

            def reference(p, axes=axes, keepdim=keepdim):
                return np_op(p, axis=axes, keepdims=keepdim)

            ref = per_shard(reference, placement, n, xq)
            local = (b // n if placement == SHARD else b, height, width)  # one device's shard
            count = math.prod(local[a] for a in ((axes,) if isinstance(axes, int) else axes))
            magnitude = per_shard(
                lambda p, axes=axes, keepdim=keepdim: np.sum(np.abs(p), axis=axes, keepdims=keepdim), placement, n, xq
            )
            compute = {
                "sum": gamma(count - 1) * magnitude,
                "mean": gamma(count + 1) * magnitude / count,
                "max": 0 * magnitude,
            }[name]
            what = f"{name} dim={dim} keepdim={keepdim} {dtype} {layout}"
            out = op(tensor, dim=dim, keepdim=keepdim)
            if name == "max" and dtype is not BFP8:
                check(results(mesh, out, placement), ref, None, what)
                continue
            bound = output_bound(ref, compute, dtype)
            check(results(mesh, out, placement), ref, bound, what)
            if ref.size >= 64:  # a wrong format shows somewhere among many values, not always in one or two
                check_tight(ref, bound, dtype, what)
            if name == "mean":
                padded = (local[0], 32 * math.ceil(height / 32), 32 * math.ceil(width / 32))
                tiles = math.prod(padded[a] for a in ((axes,) if isinstance(axes, int) else axes))
                wrong = ref * count / tiles
                assert exceeds(wrong, ref, bound), f"{what}: a mean over the tile padding too must show"


@pytest.mark.parametrize("placement", PLACEMENTS)
def test_argmax_is_exact(mesh, placement, rng):
    n, b = mesh.get_num_devices(), batch(mesh, placement)
    for dtype, layout in ((F32, RM), (BF16, RM), (BF16, TILE)):
        x = draw(rng, (b, 5, 37), "int")  # small integers: ties, broken by the first index as numpy does
        xq = quantized(x, dtype, layout)
        tensor = to_mesh(mesh, x, dtype, layout, placement)
        out = ttnn.argmax(tensor, dim=-1)
        assert out.dtype is ttnn.uint32
        check(
            results(mesh, out, placement),
            per_shard(lambda p: np.argmax(p, axis=-1), placement, n, xq),
            None,
            f"argmax {dtype} {layout}",
        )
        if layout is TILE:  # ttnn: a TILE input needs a dim
            with pytest.raises(ttnn.MeshnnValueError, match="dim"):
                ttnn.argmax(tensor)
            continue
        everywhere = ttnn.argmax(tensor, keepdim=True)  # over all the shard's elements, each dim kept as 1
        expected = per_shard(lambda p: np.array([np.argmax(p)]).reshape(1, 1, 1), placement, n, xq)
        check(results(mesh, everywhere, placement), expected, None, f"argmax(all) {dtype} {layout}")


@pytest.mark.parametrize("placement", PLACEMENTS)
def test_embedding_is_exact(mesh, placement, rng):
    """The rows an embedding picks come back exactly (a bfloat8_b table keeps its face rows: the
    output rows have the table's width)."""
    b = batch(mesh, placement)
    vocab, hidden = 50, 48
    ids = rng.integers(0, vocab, (b, 7)).astype(np.uint32)
    mapper = ttnn.ShardTensorToMesh(mesh, dim=0) if placement == SHARD else ttnn.ReplicateTensorToMesh(mesh)
    id_tensor = ttnn.Tensor(ids, ttnn.uint32, device=mesh, layout=RM, mesh_mapper=mapper)
    table = rng.standard_normal((vocab, hidden)).astype(np.float32)
    for dtype, layout, out_layout in ((F32, RM, RM), (BF16, RM, RM), (BF16, TILE, TILE), (BFP8, TILE, TILE)):
        weight = to_mesh(mesh, table, dtype, layout, REPLICATE)
        out = ttnn.embedding(id_tensor, weight, layout=out_layout)
        assert (out.dtype, out.layout) == (dtype, out_layout)
        expected = quantized(table, dtype, layout)[ids]
        check(results(mesh, out, placement), expected, None, f"embedding {dtype} {layout}")


# -------------------------------------------------------------------------------- data movement


def _moves(local):
    """(label, ttnn call, numpy of one shard) of the exact rearrangements of a per-device shape."""
    d, h, w = local
    return [
        ("reshape", lambda t: ttnn.reshape(t, (d, w, h)), lambda p: p.reshape(d, w, h)),
        ("reshape flat", lambda t: ttnn.reshape(t, (d * h * w,)), lambda p: p.reshape(d * h * w)),
        ("permute", lambda t: ttnn.permute(t, (0, 2, 1)), lambda p: p.transpose(0, 2, 1)),
        ("permute 201", lambda t: ttnn.permute(t, (2, 0, 1)), lambda p: p.transpose(2, 0, 1)),
        ("transpose", lambda t: ttnn.transpose(t, -2, -1), lambda p: np.swapaxes(p, -2, -1)),
        ("transpose 01", lambda t: ttnn.transpose(t, 0, 1), lambda p: np.swapaxes(p, 0, 1)),
        # (unit steps and no front padding: ttnn refuses strided bfloat8_b slices and front padding of tiles)
        ("slice", lambda t: ttnn.slice(t, [0, 1, 3], [d, h - 1, w], [1, 1, 1]), lambda p: p[:, 1 : h - 1, 3:w]),
        (
            "pad pairs",
            lambda t: ttnn.pad(t, [(0, 0), (0, 2), (0, 5)], 0.5),
            lambda p: np.pad(p, [(0, 0), (0, 2), (0, 5)], constant_values=0.5),
        ),
        (
            "pad to shape",
            lambda t: ttnn.pad(t, [d, h + 3, w + 7], [0, 0, 0], -1.0),
            lambda p: np.pad(p, [(0, 0), (0, 3), (0, 7)], constant_values=-1.0),
        ),
        ("repeat", lambda t: ttnn.repeat(t, (2, 1, 3)), lambda p: np.tile(p, (2, 1, 3))),
        ("concat dim 1", lambda t: ttnn.concat([t, t], dim=1), lambda p: np.concatenate([p, p], 1)),
        ("to L1", lambda t: ttnn.to_memory_config(t, ttnn.L1_MEMORY_CONFIG), lambda p: p),
        (
            "L1 to DRAM",
            lambda t: ttnn.to_memory_config(ttnn.to_memory_config(t, ttnn.L1_MEMORY_CONFIG), ttnn.DRAM_MEMORY_CONFIG),
            lambda p: p,
        ),
        ("clone", ttnn.clone, lambda p: p),
        ("clone to L1", lambda t: ttnn.clone(t, memory_config=ttnn.L1_MEMORY_CONFIG), lambda p: p),
    ]


# bfloat8_b moves that keep every 16-value face row together (exact); the others re-encode rows
KEEP_FACE_ROWS = {"transpose 01", "concat dim 1", "to L1", "L1 to DRAM", "clone", "clone to L1"}


def local_shape(mesh, placement, b, height, width) -> tuple[int, int, int]:
    return (b // mesh.get_num_devices() if placement == SHARD else b, height, width)


@pytest.mark.parametrize("placement", PLACEMENTS)
def test_data_movement_is_exact(mesh, placement, rng):
    n, b = mesh.get_num_devices(), batch(mesh, placement)
    for dtype, layout in formats(mesh):
        for height, width in ((20, 48), (3, 40))[: len(shapes_for(mesh, dtype))]:
            x = rng.standard_normal((b, height, width)).astype(np.float32)
            y = rng.standard_normal((b, height, width + 16)).astype(np.float32)
            xq, yq = quantized(x, dtype, layout), quantized(y, dtype, layout)
            tensor, other = to_mesh(mesh, x, dtype, layout, placement), to_mesh(mesh, y, dtype, layout, placement)
            what = f"{dtype} {layout} {(b, height, width)}"
            for label, call, expected in _moves(local_shape(mesh, placement, b, height, width)):
                if dtype is BFP8 and label not in KEEP_FACE_ROWS:
                    continue  # bounded instead: test_block_float_moves_are_bounded
                out = call(tensor)
                assert out.dtype is dtype, f"{label} {what}"
                check(results(mesh, out, placement), per_shard(expected, placement, n, xq), None, f"{label} {what}")
            if dtype is not BFP8:
                joined = ttnn.concat([tensor, other], dim=2)
                ref = per_shard(lambda p, q: np.concatenate([p, q], axis=2), placement, n, xq, yq)
                check(results(mesh, joined, placement), ref, None, f"concat dim 2 {what}")
                other_layout = RM if layout is TILE else TILE
                flipped = ttnn.to_layout(tensor, other_layout)
                assert flipped.layout is other_layout
                check(
                    results(mesh, flipped, placement),
                    per_shard(lambda p: p, placement, n, xq),
                    None,
                    f"to_layout {what}",
                )


@pytest.mark.parametrize("placement", PLACEMENTS)
def test_block_float_moves_are_bounded(mesh, placement, rng):
    """Moves of bfloat8_b that carry values into other face rows re-encode them: one step of the
    destination row (the values are exact bfloat8_b already, so only the new shared exponent costs)."""
    n, b = mesh.get_num_devices(), batch(mesh, placement)
    x = rng.standard_normal((b, 20, 40)).astype(np.float32)  # 40: rows straddle face rows when moved
    xq = quantized(x, BFP8)
    tensor = to_mesh(mesh, x, BFP8, TILE, placement)
    moved_any = False
    for label, call, expected in _moves(local_shape(mesh, placement, b, 20, 40)):
        ref = per_shard(expected, placement, n, xq)
        outs = results(mesh, call(tensor), placement)
        check(outs, ref, output_bound(ref, 0.0, BFP8), f"bfloat8_b {label}")
        moved_any |= any(not np.array_equal(o, ref) for o in outs)
    assert moved_any, "some move must re-encode, or the bound is not doing work"


TYPECASTS = [
    (F32, BF16, RM),
    (BF16, F32, RM),
    (F32, BF16, TILE),
    (BF16, F32, TILE),
    (F32, BFP8, TILE),
    (BF16, BFP8, TILE),
    (BFP8, BF16, TILE),
    (BFP8, F32, TILE),
    (F32, ttnn.int32, RM),
    (BF16, ttnn.int32, TILE),
]


@pytest.mark.parametrize("placement", PLACEMENTS)
def test_typecast_matches_the_host_conversion(mesh, placement, rng):
    """A device typecast gives exactly the host typecast of the same values."""
    b = batch(mesh, placement)
    x = (4 * rng.standard_normal((b, 20, 48))).astype(np.float32)
    for source, target, layout in TYPECASTS:
        tensor = to_mesh(mesh, x, source, layout, placement)
        host = ttnn.typecast(ttnn.Tensor(x, source, layout=layout), target)
        expected = ttnn.to_numpy(host).astype(np.float64)
        for label, out in (
            ("typecast", ttnn.typecast(tensor, target)),
            ("clone dtype=", ttnn.clone(tensor, dtype=target)),
        ):
            assert out.dtype is target
            check(results(mesh, out, placement), expected, None, f"{label} {source}->{target} {layout}")


SHARDINGS = [  # (strategy, core grid) cutting a (64, 64) shard into tile-aligned pieces
    (ttnn.ShardStrategy.HEIGHT, ttnn.CoreGrid(y=1, x=2)),
    (ttnn.ShardStrategy.WIDTH, ttnn.CoreGrid(y=1, x=2)),
    (ttnn.ShardStrategy.BLOCK, ttnn.CoreGrid(y=2, x=2)),
]


@pytest.mark.parametrize("placement", PLACEMENTS)
def test_to_memory_config_sharded_and_back(mesh, placement, rng):
    n, b = mesh.get_num_devices(), batch(mesh, placement)
    x = rng.standard_normal((b, 64, 64)).astype(np.float32)
    local = (b // n if placement == SHARD else b, 64, 64)  # the sharded memory config cuts one device's shard
    for dtype, layout in formats(mesh):
        xq = quantized(x, dtype, layout)
        tensor = to_mesh(mesh, x, dtype, layout, placement)
        for strategy, grid in SHARDINGS:
            config = ttnn.create_sharded_memory_config(local, grid, strategy)
            sharded = ttnn.to_memory_config(tensor, config)
            assert sharded.memory_config() == config and sharded.is_sharded()
            assert sharded.memory_config().buffer_type is ttnn.BufferType.L1
            what = f"{strategy} {dtype} {layout}"
            check(results(mesh, sharded, placement), per_shard(lambda p: p, placement, n, xq), None, what)
            back = ttnn.to_memory_config(sharded, ttnn.DRAM_MEMORY_CONFIG)
            assert back.memory_config() == ttnn.DRAM_MEMORY_CONFIG
            check(results(mesh, back, placement), per_shard(lambda p: p, placement, n, xq), None, f"{what} back")
            relu = ttnn.relu(sharded)  # an op on a sharded input keeps its memory config
            assert relu.memory_config() == config
            check(
                results(mesh, relu, placement),
                per_shard(lambda p: np.maximum(p, 0), placement, n, xq),
                None,
                f"relu of {what}",
            )


@pytest.mark.parametrize("name", ["move", "reallocate"])
def test_move_and_reallocate_defragment(open_mesh, rng, name):
    """The input is freed first, so the copy lands at the lowest free address (the hole a freed tensor
    left below it, on fresh meshes so that the addresses are known); the values are exact."""
    for shape in MESHES:
        mesh = open_mesh(shape)
        x = rng.standard_normal((mesh.get_num_devices(), 20, 48)).astype(np.float32)
        for dtype, layout in formats(mesh):
            low = to_mesh(mesh, x, dtype, layout, SHARD)
            high = to_mesh(mesh, x, dtype, layout, SHARD)
            hole = low.buffer_address()
            assert high.buffer_address() > hole
            ttnn.deallocate(low)
            moved = getattr(ttnn, name)(high)
            assert not high.is_allocated() and moved.buffer_address() == hole
            check(results(mesh, moved, SHARD), quantized(x, dtype, layout), None, f"{name} {dtype} {layout}")
            ttnn.deallocate(moved)


@pytest.mark.parametrize("name", ["log", "reciprocal"])
def test_block_float_elementwise_keeps_the_data_beside_tile_padding(meshes, name):
    """bfloat8_b (1, 4, 40): columns 32-39 share their face row with the padding columns 40-47."""
    mesh = meshes[(1, 1)]
    x = np.full((1, 4, 40), 2.0, np.float32)
    out = ttnn.to_numpy(getattr(ttnn, name)(ttnn.Tensor(x, BFP8, device=mesh, layout=TILE))).astype(np.float64)
    ref = UNARY[name][0](quantized(x, BFP8))
    assert_within(out, ref, output_bound(ref, float32_error(ref, 8), BFP8), f"{name} bfloat8_b width 40")


def test_linear_adds_the_first_row_of_a_one_tile_row_bias_as_ttnns_kernel_does(mesh):
    """ttnn's fused bias is one tile row ([1, 1, 32, N] is accepted, batch 1): the kernel broadcasts
    its first row over every output row (tt-metal's nightly test_sd_matmul passes such a bias)."""
    rng = np.random.default_rng(5)
    a = rng.integers(-4, 4, (2, 64, 64)).astype(np.float32)  # small integers: every product exact
    w = rng.integers(-4, 4, (64, 96)).astype(np.float32)
    bias = rng.integers(-4, 4, (1, 1, 32, 96)).astype(np.float32)
    rep = ttnn.ReplicateTensorToMesh(mesh)

    def put(x):
        return ttnn.from_torch(x, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT, device=mesh, mesh_mapper=rep)

    out = ttnn.linear(put(a[None]), put(w), bias=put(bias))
    got = ttnn.to_numpy(ttnn.get_device_tensors(out)[0])
    np.testing.assert_array_equal(got, (a @ w + bias[0, 0, 0])[None])
    with pytest.raises(ttnn.MeshnnValueError, match="does not broadcast"):
        ttnn.linear(put(a[None]), put(w), bias=put(np.ones((1, 2, 32, 96), np.float32)))  # batch 2: refused
