"""What a random sample of tt-metal's 2026 test files needed (stop 55): ``ttnn.outer`` of host vectors
moved to ttnn's default device, as ttnn's composite moves them; a host tensor keeping a sharded memory
config converted to ROW_MAJOR (its width padded to whole shards, as the spec says its bytes hold); and
the group norm bindings of ``ttnn._ttnn.operations.normalization``, with ttnn's messages."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import meshnn as ttnn
from meshnn.compat import ttnn_alias


@pytest.fixture
def n150(open_mesh):
    return open_mesh((1, 1))  # an 8x8 compute grid


@pytest.fixture
def default_device(n150):
    before = ttnn.GetDefaultDevice()
    ttnn.SetDefaultDevice(n150)
    yield n150
    ttnn.SetDefaultDevice(before)


def _host(values: np.ndarray) -> ttnn.Tensor:
    return ttnn.Tensor(torch.from_numpy(values).to(torch.bfloat16), ttnn.bfloat16)


def test_outer_moves_host_vectors_to_the_default_device(default_device, rng):
    a = rng.integers(-8, 8, (1, 1, 32, 1)).astype(np.float32)  # small integers: exact in bfloat16
    b = rng.integers(-8, 8, (1, 1, 1, 64)).astype(np.float32)
    out = ttnn.outer(_host(a), _host(b))
    assert ttnn.is_tensor_storage_on_device(out) and out.device() is default_device
    assert list(out.shape) == [1, 1, 32, 64]
    got = ttnn.to_torch(out).float().numpy()
    np.testing.assert_array_equal(got, (a.reshape(32, 1) * b.reshape(1, 64)).reshape(1, 1, 32, 64))


def test_outer_of_a_host_vector_without_a_default_device_is_refused(n150):
    assert ttnn.GetDefaultDevice() is None
    a = _host(np.ones((1, 1, 32, 1), np.float32))
    b = ttnn.from_torch(torch.ones(1, 1, 1, 32, dtype=torch.bfloat16), layout=ttnn.TILE_LAYOUT, device=n150)
    with pytest.raises(ttnn.MeshnnValueError, match=r"input_tensor_a .* is on the host"):
        ttnn.outer(a, b)


def test_outer_checks_a_host_operands_shape_before_moving_it(default_device):
    with pytest.raises(ttnn.MeshnnValueError, match="3 dimensions of 1"):
        ttnn.outer(_host(np.ones((1, 2, 32, 1), np.float32)), _host(np.ones((1, 1, 1, 32), np.float32)))


def test_a_host_tensor_with_a_sharded_config_converts_to_row_major_by_whole_shards(n150):
    # 512 columns block-sharded 320 wide (COL_MAJOR, 8 x 5 cores: 8 shard rows, 2 shard columns): read
    # back to the host the tensor keeps its config, and a ROW_MAJOR spec of it pads the width to 640.
    values = torch.randn(1, 1, 8192, 512).to(torch.bfloat16)
    grid = ttnn.CoreRangeSet({ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(7, 4))})
    spec = ttnn.ShardSpec(grid, (1024, 320), ttnn.ShardOrientation.COL_MAJOR)
    config = ttnn.MemoryConfig(ttnn.TensorMemoryLayout.BLOCK_SHARDED, ttnn.BufferType.L1, spec)
    host = ttnn.Tensor(values, ttnn.bfloat16).to(ttnn.TILE_LAYOUT).to(n150, config).cpu()
    rows = host.to(ttnn.ROW_MAJOR_LAYOUT)
    assert list(rows.shape) == [1, 1, 8192, 512] and list(rows.padded_shape) == [1, 1, 8192, 640]
    assert torch.equal(rows.to_torch(), values)
    assert torch.equal(rows.to(ttnn.TILE_LAYOUT).to_torch(), values)  # and back


@pytest.fixture
def normalization():
    # what `from ttnn._ttnn.operations.normalization import ...` reads
    return ttnn_alias.alias_module()._ttnn.operations.normalization


def test_find_expected_dram_grid_is_the_dram_group_norms_grid(normalization, n150):
    # 256 channels, 32 groups: 8 virtual columns a grid row; 12 tile rows: 6 grid rows (see
    # test_group_norm_dram_grid.py); 4 batches: 4 rows.
    find = normalization._find_expected_dram_grid
    assert find(max_x=8, max_y=8, num_channels=256, num_groups=32, input_nhw=12 * 32) == ttnn.CoreGrid(y=6, x=8)
    assert find(8, 8, 256, 32, 12 * 32, 4) == ttnn.CoreGrid(y=4, x=8)
    assert normalization._compute_num_virtual_cols(grid_x=8, num_groups=3, num_channels=96) == 3
    assert normalization._compute_num_virtual_cols(8, 3, 33) == 0  # 33 channels make no whole tiles


def test_find_expected_dram_grid_raises_when_no_grid_fits(normalization):
    with pytest.raises(RuntimeError, match=r"Cannot find a valid DRAM group-norm grid for num_channels=33"):
        normalization._find_expected_dram_grid(max_x=8, max_y=8, num_channels=33, num_groups=3, input_nhw=32)
    with pytest.raises(ttnn.MeshnnValueError, match="num_batches must be >= 1"):
        normalization._find_expected_dram_grid(8, 8, 256, 32, 384, 0)


def test_the_input_mask_refuses_in_ttnns_words(normalization):
    mask = normalization.create_group_norm_input_mask
    with pytest.raises(RuntimeError, match="num_cores_across_channel must be > 0"):
        mask(num_channel=256, num_groups=32, num_cores_across_channel=0, data_type=ttnn.DataType.BFLOAT16)
    with pytest.raises(RuntimeError, match=r"num_groups \(32\) must be divisible by num_cores_across_channel \(3\)"):
        mask(num_channel=256, num_groups=32, num_cores_across_channel=3, data_type=ttnn.DataType.BFLOAT16)


def _dram(device, shape, layout=ttnn.TILE_LAYOUT):
    return ttnn.from_torch(torch.randn(*shape, dtype=torch.bfloat16), layout=layout, device=device)


def test_group_norm_picks_the_dram_grid_when_given_none(n150):
    # [1, 1, 384, 256] in 32 groups: the grid search's (y=6, x=8) (see above); the values match the
    # same call with that grid given.
    x = _dram(n150, (1, 1, 384, 256))
    picked = ttnn.to_torch(ttnn.group_norm(x, num_groups=32, inplace=False))
    given = ttnn.to_torch(ttnn.group_norm(x, num_groups=32, inplace=False, core_grid=ttnn.CoreGrid(y=6, x=8)))
    assert torch.equal(picked, given)
    with pytest.raises(ttnn.MeshnnValueError, match="num_out_blocks cannot be specified when core_grid is auto"):
        ttnn.group_norm(x, num_groups=32, inplace=False, num_out_blocks=1)


def test_group_norm_refuses_a_dram_grid_too_big_for_the_tile_rows(n150):
    # 64 rows are 2 tile rows; an 8x8 grid of 1 group has 64 virtual rows: the largest that fits is 2x1.
    x = _dram(n150, (1, 1, 64, 64))
    with pytest.raises(RuntimeError, match=r"Requested core_grid \(x=8, y=8\) is invalid .* \(x=2, y=1\)"):
        ttnn.group_norm(x, num_groups=1, core_grid=ttnn.CoreGrid(x=8, y=8), inplace=False)
    # 48 channels make no whole tiles in any number of columns: no grid at all.
    y = _dram(n150, (1, 1, 32, 48), ttnn.ROW_MAJOR_LAYOUT)
    with pytest.raises(RuntimeError, match="Cannot find any valid core grid"):
        ttnn.group_norm(y, num_groups=16, core_grid=ttnn.CoreGrid(x=32, y=1), inplace=False)


def test_group_norm_num_out_blocks_must_fit_a_cores_block(n150):
    # 8 tile rows over 2 virtual rows (4x2 grid, 4 virtual columns): 4 tile rows a core.
    x = _dram(n150, (1, 1, 256, 256))
    grid = ttnn.CoreGrid(y=2, x=4)
    with pytest.raises(RuntimeError, match=r"num_out_blocks \(5\) must be in \[1, block_h \(4\)\]"):
        ttnn.group_norm(x, num_groups=32, core_grid=grid, num_out_blocks=5, inplace=False)
    ttnn.group_norm(x, num_groups=32, core_grid=grid, num_out_blocks=4, inplace=False)  # (the most)
    # 2 batches of 2 tile rows on one core: a batch's 2 tile rows a block.
    y = _dram(n150, (2, 1, 64, 256))
    with pytest.raises(RuntimeError, match=r"block_h \(2\)"):
        ttnn.group_norm(y, num_groups=32, core_grid=ttnn.CoreGrid(y=1, x=1), num_out_blocks=3, inplace=False)


def test_the_norms_of_a_rank_0_tensor_are_over_its_one_value(n150):
    # ttnn's shape of rank 0 reads 1 at [-1]: the norms run over a width of one value.
    x = ttnn.from_torch(torch.tensor(1.5, dtype=torch.bfloat16), layout=ttnn.TILE_LAYOUT, device=n150)
    rms = ttnn.to_torch(ttnn.rms_norm(x, epsilon=0.25))
    assert rms.shape == () and abs(float(rms) - 1.5 / (1.5**2 + 0.25) ** 0.5) <= 2**-7  # a bfloat16 step at ~1
    assert float(ttnn.to_torch(ttnn.layer_norm(x, epsilon=0.25))) == 0.0  # (x - mean) is 0
