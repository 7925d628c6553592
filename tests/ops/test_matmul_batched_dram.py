"""``ttnn.MatmulMultiCoreReuseMultiCastBatchedDRAMShardedProgramConfig``: DeepSeek's MLA ``wkv_b1``
product as ``models/demos/deepseek_v3/tt/mla/mla1d.py`` configures it (a batch of 24 [32, 128] x
[128, 512] products, the activations and output HEIGHT sharded in L1 on 12 workers, two matrices
each, the weights HEIGHT sharded over the 12 DRAM banks); tt-metal's operand checks.  The product
is a bfloat16 one of exactly representable values: compared exactly with torch's float32 product
rounded once."""

from __future__ import annotations

import pytest
import torch

import meshnn as ttnn

B, M, K, N = 24, 32, 128, 512


def _height(buffer, grid, rows, width):
    spec = ttnn.ShardSpec(grid, [rows, width], ttnn.ShardOrientation.ROW_MAJOR)
    return ttnn.MemoryConfig(ttnn.TensorMemoryLayout.HEIGHT_SHARDED, buffer, spec)


@pytest.fixture
def setup(open_mesh):
    mesh = open_mesh((1, 1))
    workers = mesh.get_optimal_dram_bank_to_logical_worker_assignment(ttnn.NOC.NOC_0)
    grid = ttnn.CoreRangeSet([ttnn.CoreRange(c, c) for c in workers])
    banks = ttnn.CoreRangeSet([ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(len(workers) - 1, 0))])
    per = B // len(workers)
    gen = torch.Generator().manual_seed(3)
    x = torch.randint(-4, 5, (1, B, M, K), generator=gen).float() / 4
    w = torch.randint(-4, 5, (1, B, K, N), generator=gen).float() / 8
    a = ttnn.from_torch(x, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh,
                        memory_config=_height(ttnn.BufferType.L1, grid, per * M, K))  # fmt: skip
    b = ttnn.from_torch(w, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh,
                        memory_config=_height(ttnn.BufferType.DRAM, banks, per * K, N))  # fmt: skip
    out = _height(ttnn.BufferType.L1, grid, per * M, N)
    config = ttnn.MatmulMultiCoreReuseMultiCastBatchedDRAMShardedProgramConfig(
        in0_block_w=K // 32, per_core_M=M // 32, per_core_N=N // 32, fused_activation=None
    )
    return a, b, out, config, (x, w)


def test_the_batch_sharded_product_is_each_matrix_product(setup):
    a, b, out, config, (x, w) = setup
    y = ttnn.linear(a, b, memory_config=out, program_config=config)
    assert list(y.shape) == [1, B, M, N] and y.memory_config() == out
    assert torch.equal(ttnn.to_torch(y), (x @ w).bfloat16())


def test_tt_metals_checks_of_the_operands(setup):
    a, b, out, config, _ = setup
    dram_out = ttnn.DRAM_MEMORY_CONFIG
    with pytest.raises(ttnn.MeshnnValueError, match="Output memory config must be sharded"):
        ttnn.matmul(a, b, memory_config=dram_out, program_config=config)
    with pytest.raises(ttnn.MeshnnValueError, match="Input A memory layout must be HEIGHT_SHARDED"):
        ttnn.matmul(ttnn.to_memory_config(a, ttnn.L1_MEMORY_CONFIG), b, memory_config=out, program_config=config)
    with pytest.raises(ttnn.MeshnnValueError, match="Input B memory layout must be HEIGHT_SHARDED"):
        ttnn.matmul(a, ttnn.to_memory_config(b, ttnn.DRAM_MEMORY_CONFIG), memory_config=out, program_config=config)
    odd = ttnn.MatmulMultiCoreReuseMultiCastBatchedDRAMShardedProgramConfig(in0_block_w=3, per_core_M=1, per_core_N=16)
    with pytest.raises(ttnn.MeshnnValueError, match="divisible by in0_block_w"):
        ttnn.matmul(a, b, memory_config=out, program_config=odd)
    with pytest.raises(ttnn.MeshnnValueError, match="shard spec"):
        ttnn.matmul(a, b, memory_config=ttnn.L1_HEIGHT_SHARDED_MEMORY_CONFIG, program_config=config)


def test_the_config_checks_its_fields():
    with pytest.raises((ttnn.MeshnnValueError, ttnn.MeshnnTypeError), match="per_core_N"):
        ttnn.MatmulMultiCoreReuseMultiCastBatchedDRAMShardedProgramConfig(in0_block_w=1, per_core_M=1, per_core_N=0)
    config = ttnn.MatmulMultiCoreReuseMultiCastBatchedDRAMShardedProgramConfig(
        in0_block_w=4, per_core_M=1, per_core_N=16
    )
    assert (config.in0_block_w, config.per_core_M, config.per_core_N, config.fused_activation) == (4, 1, 16, None)
