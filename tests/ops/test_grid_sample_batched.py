"""ttnn.grid_sample with K points per grid position (a grid of 2K values per row, or 6K
precomputed): the W dimension takes the points (``[N, HO, WO * K, C]``, point k of position w at
``w * K + k``) or, with ``batch_output_channels``, the channels do (``[N, HO, WO, K * C]``).  Each
point's values are the plain grid_sample of that point, so the results are compared exactly; the
output's memory config defaults to the grid's, as in ttnn."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import meshnn as ttnn


@pytest.fixture(scope="module")
def device():
    m = ttnn.open_mesh_device(ttnn.MeshShape(1, 1), system="n150")
    yield m
    m.close()


@pytest.mark.parametrize("precomputed", [False, True])
def test_k_points_per_position_go_to_the_width_or_the_channels(device, precomputed):
    rng = np.random.default_rng(3)
    n, h, w, c, ho, wo, k = 2, 8, 12, 32, 3, 5, 3
    image = torch.from_numpy(rng.standard_normal((n, h, w, c)).astype(np.float32))
    grid = torch.from_numpy(rng.uniform(-1.1, 1.1, (n, ho, wo, k, 2)).astype(np.float32))
    x = ttnn.from_torch(image, dtype=ttnn.bfloat16, layout=ttnn.ROW_MAJOR_LAYOUT, device=device)

    def on(points):  # [n, ho, wo, k * 2] -> the device grid (precomputed: [n, ho, wo, k * 6])
        g = ttnn.from_torch(points, dtype=ttnn.float32)
        if precomputed:
            table = ttnn.prepare_grid_sample_grid(g.reshape([n, ho, -1, 2]), [n, h, w, c])
            return ttnn.to_device(table.reshape([n, ho, wo, -1]), device)
        return ttnn.to_device(g, device)

    single = [
        ttnn.to_torch(ttnn.grid_sample(x, on(grid[..., j, :]), use_precomputed_grid=precomputed)) for j in range(k)
    ]
    each = torch.stack(single, dim=3)  # [n, ho, wo, k, c]
    batched = on(grid.reshape(n, ho, wo, 2 * k))
    wide = ttnn.grid_sample(x, batched, use_precomputed_grid=precomputed)
    assert tuple(wide.shape) == (n, ho, wo * k, c)
    assert torch.equal(ttnn.to_torch(wide), each.reshape(n, ho, wo * k, c))
    deep = ttnn.grid_sample(x, batched, use_precomputed_grid=precomputed, batch_output_channels=True)
    assert tuple(deep.shape) == (n, ho, wo, k * c)
    assert torch.equal(ttnn.to_torch(deep), each.reshape(n, ho, wo, k * c))


def test_the_output_lands_where_the_grid_is(device):
    image = torch.randn(1, 4, 4, 32)
    x = ttnn.from_torch(image, dtype=ttnn.bfloat16, layout=ttnn.ROW_MAJOR_LAYOUT, device=device,
                        memory_config=ttnn.L1_MEMORY_CONFIG)  # fmt: skip
    grid = ttnn.from_torch(torch.zeros(1, 2, 2, 2), dtype=ttnn.float32, device=device)  # DRAM
    assert ttnn.grid_sample(x, grid).memory_config() == ttnn.DRAM_MEMORY_CONFIG
