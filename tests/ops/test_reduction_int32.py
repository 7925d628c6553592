"""ttnn.max / ttnn.min of INT32 tensors (tt-metal 2026's SFPU reduce path): exact integer results in
the input's dtype, and a ``scalar`` applied as tt-metal's kernel does it: the picked value times the
scalar in float32, truncated toward zero, the op flipped for a negative scalar (``max(s x) = s min(x)``).
The other reductions still refuse INT32 (rows in tests/reliability/rows/surf56.py)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import meshnn as ttnn

from .reference import SHARD, TILE, exact_equal, mesh_fixtures, to_mesh

meshes, mesh = mesh_fixtures([(1, 1), (2, 4)])


def values(shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    gen = np.random.default_rng(seed)
    return gen.integers(-50_000, 50_000, shape, dtype=np.int32)


def composed(mesh, tensor) -> np.ndarray:
    assert tensor.dtype == ttnn.int32
    return ttnn.to_numpy(tensor, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0))


@pytest.mark.parametrize("op", ["max", "min"])
@pytest.mark.parametrize("dim", [1, -1, -2, (-1, -2), (1, 3)])
def test_int32_max_min_are_exact(mesh, op, dim):
    n = mesh.get_num_devices()
    x = values((n, 3, 37, 45))
    x[0, 1, 5, 7] = 2**30 + 1  # values float32 cannot hold survive: no float on the way
    x[-1, 2, 30, 40] = -(2**30) - 1
    got = composed(mesh, getattr(ttnn, op)(to_mesh(mesh, x, ttnn.int32, TILE, SHARD), dim=dim))
    want = getattr(np, op)(x, axis=dim)
    assert got.dtype == np.int32
    exact_equal(got, want, f"{op} over {dim}")


@pytest.mark.parametrize("op", ["max", "min"])
@pytest.mark.parametrize("scalar", [2.0, 0.5, -3.0, -0.5])
def test_int32_scalar_is_a_float32_product_truncated(mesh, op, scalar):
    n = mesh.get_num_devices()
    x = values((n, 2, 64, 64), seed=1) | 1  # odd values: a half-scalar lands between integers
    got = composed(mesh, getattr(ttnn, op)(to_mesh(mesh, x, ttnn.int32, TILE, SHARD), dim=-1, scalar=scalar))
    picked = getattr(np, op)(x.astype(np.float64) * scalar, axis=-1)
    exact_equal(got, np.trunc(picked).astype(np.int32), f"{op} with scalar {scalar}")
    if scalar < 0:  # the flip is seen: not the scalar times the unflipped op
        unflipped = np.trunc(getattr(np, op)(x, axis=-1) * scalar).astype(np.int32)
        assert not np.array_equal(got, unflipped)


def test_float_max_with_a_negative_scalar_flips_too(meshes):
    mesh = meshes[(1, 1)]
    x = torch.randn(1, 1, 32, 64)
    t = ttnn.from_torch(x, dtype=ttnn.float32, layout=TILE, device=mesh)
    got = ttnn.to_torch(ttnn.max(t, dim=-1, scalar=-2.0))
    exact_equal(got.numpy(), (x * -2.0).amax(dim=-1).numpy())
