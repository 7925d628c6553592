"""tt-metal of 2026's ``allowed_worker_cores`` on the matmul program configs (the reuse, 1-D and 2-D
multicast ones): None by default, a CoreRangeSet kept as given (ttnn's property, equality and
repr), anything else refused; a product on the cores it allows is the product without it (the
simulator computes every product at once: a config changes no value)."""

from __future__ import annotations

import pytest
import torch

import meshnn as ttnn


def _cores(x: int, y: int) -> ttnn.CoreRangeSet:
    return ttnn.CoreRangeSet({ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(x - 1, y - 1))})


def _config(kind, cores):
    grid = ttnn.CoreCoord(4, 4)
    common = dict(compute_with_storage_grid_size=grid, in0_block_w=2, out_subblock_h=1, out_subblock_w=1)
    common |= dict(per_core_M=1, per_core_N=1, allowed_worker_cores=cores)
    if kind == "1d":
        return ttnn.MatmulMultiCoreReuseMultiCast1DProgramConfig(**common, fuse_batch=True, mcast_in0=True)
    if kind == "2d":
        return ttnn.MatmulMultiCoreReuseMultiCastProgramConfig(**common, transpose_mcast=False)
    return ttnn.MatmulMultiCoreReuseProgramConfig(**common)


@pytest.mark.parametrize("kind", ["reuse", "1d", "2d"])
def test_allowed_worker_cores_is_kept_and_changes_no_value(kind, open_mesh):
    mesh = open_mesh((1, 1))
    cores = _cores(2, 2)
    config = _config(kind, cores)
    assert config.allowed_worker_cores == cores and "allowed_worker_cores" in repr(config)
    assert _config(kind, None).allowed_worker_cores is None
    torch.manual_seed(0)
    a = ttnn.from_torch(torch.randn(1, 1, 64, 64), ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh)
    b = ttnn.from_torch(torch.randn(1, 1, 64, 64), ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh)
    plain = ttnn.to_torch(ttnn.matmul(a, b))
    assert torch.equal(ttnn.to_torch(ttnn.matmul(a, b, program_config=config)), plain)
    with pytest.raises(ttnn.MeshnnTypeError, match="allowed_worker_cores"):
        _config(kind, [(0, 0)])
