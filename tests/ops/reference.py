"""What the op tests compare against, and how far a correct device result may lie from it.

A reference starts from the inputs AS THE DEVICE SEES THEM (the host conversion to the same dtype and
layout: ``quantized``), computes in float64, and carries a bound ``err`` on the distance of a correct
device result, made of:

- the float32 compute error of the op, a multiple of the unit roundoff u = 2**-24 (half a float32 ulp:
  a correctly rounded float32 operation errs by at most u |v|; one ulp is at most 2u |v|) times the
  op's magnitude, e.g. gamma_n * sum|a||b| for a length-n dot product, gamma_n = n u / (1 - n u);
- the rounding of the float32 result v into the OUTPUT dtype:
  float32:   nothing more;
  bfloat16:  round-to-nearest-even to 8 significant bits errs by half an ulp, at most 2**-8 |v|;
  bfloat8_b: 7 magnitude bits under the shared exponent E of a 16-value face row, and 2**E <= the
             row's largest |v|, so rounding (or clamping the largest value) errs by at most one step
             2**(E - 6) <= rowmax / 64.
  Here |v| <= |ref| + compute error, so the bound is computed from the reference, never from the
  result under test.

``Approx`` carries (reference, bound) through a chain of ops (first-order error propagation made
rigorous by bounding every product of errors, see each function).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pytest
import torch

import meshnn as ttnn

U = 2.0**-24  # float32 unit roundoff
F32_TINY = 2.0**-150  # half the float32 spacing below 2**-126: the absolute error of a subnormal rounding
BF16_HALF_ULP = 2.0**-8  # relative rounding error of round-to-nearest bfloat16
BF16_TINY = 2.0**-134  # half the bfloat16 subnormal spacing
BFP8_STEPS = 64  # bfloat8_b: one step is at most rowmax / 64

MESHES = {(1, 1): "n150", (1, 8): "t3k", (2, 4): "t3k", (8, 4): "galaxy"}
MESH_IDS = [f"{r}x{c}" for r, c in MESHES]

F32, BF16, BFP8 = ttnn.float32, ttnn.bfloat16, ttnn.bfloat8_b
TILE, RM = ttnn.TILE_LAYOUT, ttnn.ROW_MAJOR_LAYOUT
# Every float format an op takes on device: block floats exist only as tiles.
FLOAT_FORMATS = [(F32, TILE), (F32, RM), (BF16, TILE), (BF16, RM), (BFP8, TILE)]
SHARD, REPLICATE = "shard", "replicate"


def open_meshes(shapes: Sequence[tuple[int, int]]) -> dict[tuple[int, int], ttnn.MeshDevice]:
    return {shape: ttnn.open_mesh_device(ttnn.MeshShape(*shape), system=MESHES[shape]) for shape in shapes}


def mesh_fixtures(shapes: Sequence[tuple[int, int]]) -> tuple[Callable, Callable]:
    """A test module's ``meshes`` (every shape opened once for the module, closed after it) and
    ``mesh`` (one test per shape, ids such as ``2x4``) fixtures: ``meshes, mesh = mesh_fixtures(S)``."""

    @pytest.fixture(scope="module")
    def meshes():
        opened = open_meshes(shapes)
        yield opened
        for mesh in opened.values():
            mesh.close()

    @pytest.fixture(params=list(shapes), ids=[f"{r}x{c}" for r, c in shapes])
    def mesh(request, meshes):
        return meshes[request.param]

    return meshes, mesh


# ------------------------------------------------------------------------------- placement


def to_mesh(
    mesh: ttnn.MeshDevice,
    values: np.ndarray,
    dtype: ttnn.DataType,
    layout: ttnn.Layout,
    placement: str,
    *,
    memory_config: ttnn.MemoryConfig | None = None,
) -> ttnn.Tensor:
    """``values`` on ``mesh``: sharded on dim 0 (one batch slice per device), or replicated."""
    mapper = ttnn.ShardTensorToMesh(mesh, dim=0) if placement == SHARD else ttnn.ReplicateTensorToMesh(mesh)
    data = torch.from_numpy(np.ascontiguousarray(values))
    return ttnn.from_torch(
        data, dtype=dtype, layout=layout, device=mesh, mesh_mapper=mapper, memory_config=memory_config
    )


def results(mesh: ttnn.MeshDevice, tensor: ttnn.Tensor, placement: str) -> list[np.ndarray]:
    """The op's result as float64: the shards composed with ConcatMeshToTensor(dim=0) (one array), or
    every device's own tensor (one array per device) for a replicated input."""
    if placement == SHARD:
        return [ttnn.to_numpy(tensor, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0)).astype(np.float64)]
    shards = ttnn.get_device_tensors(tensor)
    assert len(shards) == mesh.get_num_devices()
    return [ttnn.to_numpy(shard).astype(np.float64) for shard in shards]


def per_shard(
    function: Callable[..., np.ndarray], placement: str, n: int, *sharded: np.ndarray, shared: Sequence[np.ndarray] = ()
) -> np.ndarray:
    """``function`` on each device's shard (dim 0 cut in ``n``), concatenated; or on the whole
    (replicated) inputs.  ``shared`` inputs are replicated either way."""
    if placement != SHARD:
        return function(*sharded, *shared)
    pieces = [np.split(a, n, axis=0) for a in sharded]
    return np.concatenate([function(*(p[i] for p in pieces), *shared) for i in range(n)], axis=0)


def quantized(values: np.ndarray, dtype: ttnn.DataType, layout: ttnn.Layout = TILE) -> np.ndarray:
    """``values`` as the device holds them: the host conversion to ``dtype`` (float64 for reference use)."""
    return ttnn.to_numpy(ttnn.Tensor(np.ascontiguousarray(values), dtype, layout=layout)).astype(np.float64)


# ------------------------------------------------------------------------------------ bounds


def face_row_max(values: np.ndarray) -> np.ndarray:
    """For each element, the largest |x| of its 16-value face row (the block sharing an exponent).
    Face rows are 16 aligned columns of the last dim, whatever the leading dims."""
    x = np.abs(np.asarray(values, np.float64))
    if x.ndim == 0:
        return x
    *outer, width = x.shape
    padded = np.pad(x, [(0, 0)] * len(outer) + [(0, -width % 16)])
    rows = padded.reshape(*outer, -1, 16).max(axis=-1, keepdims=True)
    return np.broadcast_to(rows, (*outer, padded.shape[-1] // 16, 16)).reshape(padded.shape)[..., :width]


def rounding_error(magnitude: np.ndarray, dtype: ttnn.DataType) -> np.ndarray:
    """The most that storing values of at most ``magnitude`` in ``dtype`` can move them."""
    magnitude = np.asarray(magnitude, np.float64)
    if dtype is F32:
        return np.zeros_like(magnitude)
    if dtype is BF16:
        return BF16_HALF_ULP * magnitude + BF16_TINY
    if dtype is BFP8:
        return face_row_max(magnitude) / BFP8_STEPS
    raise AssertionError(f"no rounding bound for {dtype}")


def output_bound(ref: np.ndarray, compute_error: np.ndarray | float, dtype: ttnn.DataType) -> np.ndarray:
    """The float32 compute error plus the rounding into ``dtype`` of a value within it of ``ref``."""
    compute = np.broadcast_to(np.asarray(compute_error, np.float64), np.shape(ref))
    return compute + rounding_error(np.abs(ref) + compute, dtype)


def float32_error(ref: np.ndarray, ulps: float) -> np.ndarray:
    """The error of a float32 evaluation good to ``ulps`` u relative, with ``ulps`` roundings that may
    fall in the subnormal range (F32_TINY absolute each)."""
    return ulps * (U * np.abs(ref) + F32_TINY)


def gamma(n: int) -> float:
    """Higham's gamma_n = n u / (1 - n u): a float32 sum or dot product of n terms (any order, FMA or
    not) errs by at most gamma_n times the sum of the |terms|."""
    return n * U / (1 - n * U)


def assert_within(out: np.ndarray, ref: np.ndarray, bound: np.ndarray, what: str = "") -> None:
    out, ref = np.asarray(out, np.float64), np.asarray(ref, np.float64)
    assert out.shape == ref.shape, f"{what}: shape {out.shape} != reference {ref.shape}"
    bound = np.broadcast_to(bound, ref.shape)
    with np.errstate(invalid="ignore"):
        err = np.abs(out - ref)
    bad = ~((err <= bound) | (out == ref))  # equal infinities are fine; NaN is not
    if bad.any():
        excess = np.where(bad, np.nan_to_num(err, nan=np.inf) - bound, -np.inf)
        i = np.unravel_index(np.argmax(excess), err.shape)
        raise AssertionError(
            f"{what}: {int(bad.sum())} of {bad.size} values beyond the bound; at {tuple(int(j) for j in i)}: "
            f"result {out[i]!r}, reference {ref[i]!r}, error {err[i]:.3e} > bound {bound[i]:.3e}"
        )


def exceeds(wrong: np.ndarray, ref: np.ndarray, bound: np.ndarray) -> bool:
    """True when ``wrong`` lies beyond ``bound`` somewhere: the negative check that a bound would catch
    a deliberately wrong result."""
    return bool(np.any(np.abs(np.asarray(wrong, np.float64) - ref) > bound))


def truncated_bf16(values: np.ndarray) -> np.ndarray:
    """``values`` cut to bfloat16 by truncation (a classic conversion bug: up to a whole ulp off)."""
    bits = np.asarray(values, np.float32).view(np.uint32) & np.uint32(0xFFFF0000)
    return bits.view(np.float32).astype(np.float64)


def exact_equal(out: np.ndarray, ref: np.ndarray, what: str = "") -> None:
    assert np.shape(out) == np.shape(ref), f"{what}: shape {np.shape(out)} != {np.shape(ref)}"
    np.testing.assert_array_equal(out, ref, err_msg=what)


def pcc(a: np.ndarray, b: np.ndarray) -> float:
    """Pearson correlation of the flattened arrays (ttnn's test metric)."""
    return float(np.corrcoef(np.asarray(a, np.float64).ravel(), np.asarray(b, np.float64).ravel())[0, 1])


# --------------------------------------------------------------------- chains of ops: Approx


@dataclass(frozen=True)
class Approx:
    """A float64 reference and a bound ``err`` on |device value - ref| (elementwise)."""

    ref: np.ndarray
    err: np.ndarray

    @staticmethod
    def exact(values: np.ndarray) -> Approx:
        values = np.asarray(values, np.float64)
        return Approx(values, np.zeros_like(values))

    @property
    def mag(self) -> np.ndarray:
        """A bound on |device value|."""
        return np.abs(self.ref) + self.err


def a_matmul(a: Approx, b: Approx) -> Approx:
    """A @ B in float32 on values within err of the references:
    |A'B' - AB| <= |A'-A||B'| + |A||B'-B| <= eA @ magB + |A| @ eB, and the float32 dot products add
    gamma_n * |A'| @ |B'| <= gamma_n * magA @ magB."""
    n = a.ref.shape[-1]
    err = a.err @ b.mag + np.abs(a.ref) @ b.err + gamma(n) * (a.mag @ b.mag)
    return Approx(a.ref @ b.ref, err)


def a_add(a: Approx, b: Approx) -> Approx:
    """a + b: the errors add, and the float32 sum rounds once: u * |a' + b'| <= u (magA + magB)."""
    return Approx(a.ref + b.ref, a.err + b.err + U * (a.mag + b.mag))


def a_scale(a: Approx, s: float) -> Approx:
    """a * s (s exact in float32): |s| eA plus one rounding u |s| magA."""
    return Approx(a.ref * s, abs(s) * a.err + U * abs(s) * a.mag)


def a_map(a: Approx, function: Callable[[np.ndarray], np.ndarray], lipschitz: float, ulps: float) -> Approx:
    """function(a) for a ``lipschitz``-continuous function computed to ``ulps`` u (relative):
    |f(a') - f(a)| <= L eA, and the float32 evaluation adds ulps u |f(a')| <= ulps u (|f(a)| + L eA)."""
    ref = function(a.ref)
    moved = lipschitz * a.err
    return Approx(ref, moved + float32_error(np.abs(ref) + moved, ulps))


def a_softmax(a: Approx, axis: int = -1) -> Approx:
    """softmax along ``axis``.  Input error: with |dx| <= E (the row's largest err), the exact softmax
    of x + dx is p * exp(dx_i) / sum_j p_j exp(dx_j), within p (exp(2E) - 1) of p.  Float32 compute
    (x - max, exp to 8u, a sum of n terms, one division): relative (2R + n + 20) u, R the largest
    |x - max| of the row (inputs moved by up to 2E)."""
    x = a.ref
    shifted = x - x.max(axis=axis, keepdims=True)
    e = np.exp(shifted)
    p = e / e.sum(axis=axis, keepdims=True)
    big_e = a.err.max(axis=axis, keepdims=True)
    spread = np.expm1(2 * big_e)
    reach = np.abs(shifted).max(axis=axis, keepdims=True) + 2 * big_e
    rel = (2 * reach + x.shape[axis] + 20) * U
    return Approx(p, p * spread + rel * p * (1 + spread))


def a_stored(a: Approx, dtype: ttnn.DataType) -> Approx:
    """a stored in ``dtype`` (an op's output): the rounding of a value of at most magA."""
    return Approx(a.ref, a.err + rounding_error(a.mag, dtype))


def a_sum(parts: Sequence[Approx]) -> Approx:
    """The float32 sum of len(parts) values (a reduction across devices): the errors add, plus
    gamma_(k-1) * sum |parts|."""
    ref = sum(p.ref for p in parts)
    err = sum(p.err for p in parts) + gamma(max(len(parts) - 1, 0)) * sum(p.mag for p in parts)
    return Approx(ref, err)


# -------------------------------------------------------------------- float64 op references

SQRT_HALF = 1 / math.sqrt(2)
GELU_LIPSCHITZ = 1.13  # max |gelu'(x)| = 1.1289 (at x = sqrt(2))


def gelu64(x: np.ndarray) -> np.ndarray:
    erfc = np.vectorize(math.erfc, otypes=[np.float64])
    return 0.5 * x * erfc(-x * SQRT_HALF)
