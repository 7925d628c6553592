"""``ttnn.transformer.windowed_scaled_dot_product_attention`` (tt-metal of 2026): SDPA with the
block-diagonal mask of ``cu_window_seqlens``, within the float64 reference's bound for a correct
float32 evaluation (the bound catches attention across windows), its bounds read from the device
tensor when the kernel runs, and tt-metal's checks of the bounds tensor."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import torch

import meshnn as ttnn

from .reference import BF16, assert_within, exceeds, output_bound
from .test_transformer import gathered, heads_on, held, sdpa_reference


def _bounds(mesh, values, dtype=ttnn.uint32, layout=ttnn.ROW_MAJOR_LAYOUT):
    return ttnn.from_torch(torch.tensor(values, dtype=torch.int32), dtype=dtype, layout=layout, device=mesh)


def _mask(s: int, bounds: list[int]) -> np.ndarray:
    mask = np.full((s, s), -np.inf)
    for start, end in itertools.pairwise(bounds):
        mask[start:end, start:end] = 0.0
    return mask


@pytest.mark.parametrize("bounds", [[0, 64, 128], [0, 32, 96, 128], [0, 40, 100, 128]], ids=["w2", "w3", "uneven"])
def test_windowed_sdpa_attends_within_each_window(open_mesh, rng, bounds):
    mesh = open_mesh((1, 2))
    s, d = 128, 32
    q, k, v = (rng.standard_normal((1, h, s, d)) for h in (4, 2, 2))
    tq, tk, tv = (heads_on(mesh, x) for x in (q, k, v))
    replicated = ttnn.from_torch(
        torch.tensor(bounds, dtype=torch.int32),
        dtype=ttnn.int32,
        layout=ttnn.ROW_MAJOR_LAYOUT,
        device=mesh,
        mesh_mapper=ttnn.ReplicateTensorToMesh(mesh),
    )
    out = ttnn.transformer.windowed_scaled_dot_product_attention(tq, tk, tv, replicated)
    assert tuple(out.shape) == (1, 2, s, d) and out.dtype is BF16 and out.layout is ttnn.TILE_LAYOUT
    held_qkv = [held(x, BF16) for x in (q, k, v)]
    ref, compute = sdpa_reference(*held_qkv, scale=1 / math.sqrt(d), mask=_mask(s, bounds))
    bound = output_bound(ref, compute, BF16)
    assert_within(gathered(mesh, out), ref, bound, "windowed sdpa")
    full, _ = sdpa_reference(*held_qkv, scale=1 / math.sqrt(d))
    assert exceeds(full, ref, bound), "the bound must catch attention across windows"


def test_the_bounds_are_read_when_the_kernel_runs(open_mesh, rng):
    mesh = open_mesh((1, 1))
    s, d = 64, 32
    q, k, v = (rng.standard_normal((1, 1, s, d)) for _ in range(3))
    tq, tk, tv = (heads_on(mesh, x) for x in (q, k, v))
    bounds = _bounds(mesh, [0, 32, 64])
    first = ttnn.to_torch(ttnn.transformer.windowed_scaled_dot_product_attention(tq, tk, tv, bounds, scale=0.2))
    ttnn.copy_host_to_device_tensor(ttnn.from_torch(torch.tensor([0, 16, 64], dtype=torch.int32), ttnn.uint32), bounds)
    second = ttnn.to_torch(ttnn.transformer.windowed_scaled_dot_product_attention(tq, tk, tv, bounds, scale=0.2))
    same = _bounds(mesh, [0, 16, 64])
    third = ttnn.to_torch(ttnn.transformer.windowed_scaled_dot_product_attention(tq, tk, tv, same, scale=0.2))
    assert torch.equal(second, third) and not torch.equal(first, second)


def test_the_bounds_tensor_is_checked(open_mesh, rng):
    mesh = open_mesh((1, 1))
    x = heads_on(mesh, rng.standard_normal((1, 1, 32, 32)))
    windowed = ttnn.transformer.windowed_scaled_dot_product_attention
    with pytest.raises(ttnn.MeshnnValueError, match="at least 2 elements"):
        windowed(x, x, x, _bounds(mesh, [0]))
    with pytest.raises(ttnn.MeshnnTypeError, match="uint32 or int32"):
        windowed(x, x, x, _bounds(mesh, [0, 32], ttnn.bfloat16))
    with pytest.raises(ttnn.MeshnnValueError, match="row-major"):
        windowed(x, x, x, _bounds(mesh, [0, 32], layout=ttnn.TILE_LAYOUT))
    with pytest.raises(ttnn.MeshnnValueError, match="1D tensor"):
        windowed(x, x, x, x)
