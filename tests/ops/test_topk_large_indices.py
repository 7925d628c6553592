"""``ttnn.experimental.topk_large_indices`` against numpy written from its description: per row the
indices of the k largest values, largest first, equal values the lower index first (also across the
cut), a chosen -inf the sentinel 0xFFFFFFFF; UINT32 ROW_MAJOR, the input's memory config; its program
cached by k and the input's format, not its shape; Blackhole only."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import meshnn as ttnn

SENTINEL = 0xFFFFFFFF


def numpy_topk(values: np.ndarray, k: int) -> np.ndarray:
    rows = values.reshape(-1, values.shape[-1]).astype(np.float64)
    out = []
    for row in rows:
        order = sorted(range(row.size), key=lambda i, r=row: (-r[i], i))[:k]
        out.append([SENTINEL if row[i] == -np.inf else i for i in order])
    return np.array(out, dtype=np.int64).reshape(*values.shape[:-1], k)


@pytest.fixture
def p150():
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 1), system="p150")
    yield mesh
    ttnn.close_mesh_device(mesh)


def put(mesh, t, memory_config=None):
    return ttnn.from_torch(t, dtype=ttnn.bfloat16, layout=ttnn.ROW_MAJOR_LAYOUT, device=mesh,
                           memory_config=memory_config)  # fmt: skip


def indices(tensor) -> np.ndarray:
    return ttnn.to_torch(tensor, dtype=torch.uint32).to(torch.int64).numpy()


@pytest.mark.parametrize("shape,k", [((3, 300), 16), ((2, 2, 1100), 512), ((2100,), 2048), ((1, 4096), 1536)])
def test_ties_and_shapes_match_the_stable_reference(p150, shape, k):
    g = torch.Generator().manual_seed(k)
    values = (torch.randn(*shape, generator=g) * 4).round().to(torch.bfloat16)  # many equal values
    out = ttnn.experimental.topk_large_indices(put(p150, values), k=k)
    assert tuple(out.shape) == (*shape[:-1], k) and out.dtype == ttnn.uint32 and out.layout == ttnn.ROW_MAJOR_LAYOUT
    np.testing.assert_array_equal(indices(out), numpy_topk(values.float().numpy(), k))


def test_negative_infinity_is_the_sentinel_and_indices_pass_uint16(p150):
    values = torch.full((2, 70000), -float("inf"), dtype=torch.bfloat16)
    values[:, 69990:] = torch.arange(10, dtype=torch.bfloat16)
    out = indices(ttnn.experimental.topk_large_indices(put(p150, values, ttnn.L1_MEMORY_CONFIG), k=16))
    np.testing.assert_array_equal(out[:, :10], np.tile(np.arange(69999, 69989, -1), (2, 1)))
    assert (out[:, 10:] == SENTINEL).all()


def test_output_keeps_the_input_memory_config(p150):
    out = ttnn.experimental.topk_large_indices(put(p150, torch.zeros(1, 64), ttnn.L1_MEMORY_CONFIG), k=32)
    assert out.memory_config() == ttnn.L1_MEMORY_CONFIG
    np.testing.assert_array_equal(indices(out), np.arange(32)[None])


def test_program_cache_is_keyed_by_k_not_shape(p150):
    p150.enable_program_cache()
    inputs = [put(p150, torch.zeros(rows, n)) for rows, n in ((2, 3000), (5, 4097))]
    counts = []
    for x in inputs:
        ttnn.experimental.topk_large_indices(x, k=1536)
        counts.append(p150.num_program_cache_entries())
    ttnn.experimental.topk_large_indices(inputs[0], k=512)
    assert counts[0] == counts[1] and p150.num_program_cache_entries() == counts[0] + 1


def test_refusals(p150):
    x = put(p150, torch.zeros(2, 64))
    op = ttnn.experimental.topk_large_indices
    with pytest.raises(TypeError):
        op(x)  # (k has no default)
    for k in (0, 8, 24, 2064):
        with pytest.raises(ttnn.MeshnnValueError, match="multiples of 16"):
            op(x, k=k)
    with pytest.raises(ttnn.MeshnnValueError, match="must be >= k"):
        op(x, k=128)
    with pytest.raises(ttnn.MeshnnValueError, match="ROW_MAJOR"):
        op(ttnn.from_torch(torch.zeros(32, 64), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=p150), k=16)
    with pytest.raises(ttnn.MeshnnValueError, match="BFLOAT16"):
        op(ttnn.from_torch(torch.zeros(2, 64), dtype=ttnn.float32, device=p150), k=16)
    wormhole = ttnn.open_mesh_device(ttnn.MeshShape(1, 1), system="n150")
    try:
        with pytest.raises(ttnn.MeshnnValueError, match="Blackhole"):
            op(put(wormhole, torch.zeros(2, 64)), k=16)
    finally:
        ttnn.close_mesh_device(wormhole)
