"""A 2-D matmul whose per-core output runs in several output blocks (meshnn/perf/matmul_out_blocks.py): the
blocks ttnn picks for an all-DRAM-interleaved matmul given no program config (matmul_program_config.cpp's
get_multi_dim_per_core_factor at tt-metal 62931bdb59), the writes and in1 refill at each block boundary, and
only the last block's share of the output left to drain after the math."""

from __future__ import annotations

from dataclasses import replace

import pytest

from meshnn.perf import MathFidelity, MatmulConfig, MatmulProgram, OpDesc, OpFamily, TensorDesc, machine
from meshnn.perf.matmul import (
    activation_stream_cycles,
    chosen_config,
    in1_sender_cycles,
    multicast_flush_cycles,
    output_drain_ns,
    sender_read_cycles,
)
from meshnn.perf.matmul_out_blocks import (
    block_count,
    boundary_cycles,
    cb_bytes,
    drain_share,
    multi_dim_factor,
    reread_factors,
)

N150, P150 = machine("n150"), machine("p150")


def mm(m: int, k: int, n: int, dtype: str = "BFLOAT16", config: MatmulConfig | None = None) -> OpDesc:
    a, b, out = TensorDesc((1, 1, m, k), dtype), TensorDesc((1, 1, k, n), dtype), TensorDesc((1, 1, m, n), dtype)
    return OpDesc(OpFamily.MATMUL, (a, b), (out,), fidelity=MathFidelity.HiFi2, matmul=config or MatmulConfig())


def test_the_circular_buffers_are_ttnns_estimate():
    """get_estimated_size_of_cbs: in0 and in1 K-blocks twice, the output block in in0's tile and its partials."""
    desc = mm(1024, 1024, 1024)
    a, b = desc.inputs[0], desc.inputs[1]
    assert cb_bytes(12, 12, 12, a, b, 2048) == 12 * 12 * 2 * 2048 * 2 + 144 * (2048 + 2048) == 1_769_472


def test_a_block_that_fits_stays_whole():
    l1 = N150.system.spec.arch_spec.l1_bank_size
    assert multi_dim_factor(mm(1024, 1024, 1024), 4, 4, 4, l1, False) == (4, 4, 4)
    config = chosen_config(mm(1024, 1024, 1024), N150).matmul
    assert (config.out_block_h, config.out_block_w, config.in0_block_w) == (None, None, 4)
    assert block_count(config) == 1 and drain_share(config) == 1.0


def test_a_block_too_large_is_split_into_the_squarest_that_fits():
    """N150, bfloat16, 12x12 tiles a core over 12-tile K-blocks: 1.77 MB of buffers against 1.39 MB of L1.  Of
    the 72-tile blocks (12x6 and 6x12, as square as each other) ttnn keeps the later, 6x12: 1.18 MB."""
    l1 = N150.system.spec.arch_spec.l1_bank_size
    desc = mm(3072, 3072, 3072)
    assert cb_bytes(12, 12, 12, desc.inputs[0], desc.inputs[1], 2048) > l1 > 1_179_648
    assert multi_dim_factor(desc, 12, 12, 12, l1, False) == (6, 12, 12)
    config = chosen_config(mm(4096, 4096, 4096), N150).matmul  # 16x16 a core: 8x8 blocks, K-blocks kept at 16
    assert (config.per_core_m, config.per_core_n, config.out_block_h, config.out_block_w) == (16, 16, 8, 8)
    assert config.in0_block_w == 16 and block_count(config) == 4
    assert chosen_config(mm(4096, 4096, 4096, "BFLOAT8_B"), N150).matmul.out_block_h == 8  # 8x16 in bfloat8_b


def test_the_senders_read_again_for_each_block_row_and_column():
    whole = chosen_config(mm(4096, 4096, 4096), N150)
    single = replace(whole, matmul=replace(whole.matmul, out_block_h=None, out_block_w=None))
    assert reread_factors(whole.matmul) == (2, 2) and reread_factors(single.matmul) == (1, 1)
    k_tiles = 128
    assert activation_stream_cycles(whole, N150, 128, k_tiles) == pytest.approx(
        2 * activation_stream_cycles(single, N150, 128, k_tiles)
    )
    assert in1_sender_cycles(whole, N150, k_tiles) == pytest.approx(2 * in1_sender_cycles(single, N150, k_tiles))


def test_each_boundary_waits_for_the_writes_beyond_the_last_k_block_and_one_in1_block():
    desc = chosen_config(mm(3072, 3072, 3072), N150)  # 6x12 blocks of a 12x12 core block: 2 blocks
    arch, per_multiply = N150.system.arch, 47.0
    writes = desc.outputs[0].nbytes / 2 / arch.matmul_drain_bytes_per_s * arch.clock_hz
    last_k_block = 6 * 12 * 12 * per_multiply
    assert writes > last_k_block  # 9 MiB over the grid at 77.4 GB/s outlast 864 multiplies
    refill = sender_read_cycles(N150, 12 * 12, 2048) + multicast_flush_cycles(N150, 12 * 12, 2048)
    assert boundary_cycles(desc, N150, per_multiply) == pytest.approx(writes - last_k_block + refill)
    assert boundary_cycles(chosen_config(mm(1024, 1024, 1024), N150), N150, per_multiply) == 0


def test_only_the_last_blocks_share_is_left_to_drain():
    desc = chosen_config(mm(4096, 4096, 4096), N150)
    whole = replace(desc, matmul=replace(desc.matmul, out_block_h=None, out_block_w=None))
    assert output_drain_ns(desc, N150) == pytest.approx(output_drain_ns(whole, N150) / 4)


def test_a_program_config_given_by_hand_carries_its_blocks():
    """The benchmark's manual config for 20480x26624x26624 bfloat16 on 13x10: 64x64 tiles a core in 8x8 blocks."""
    config = MatmulConfig(MatmulProgram.MULTICAST_2D, (13, 10), 64, 64, in0_block_w=16, out_block_h=8, out_block_w=8)
    assert block_count(config) == 64 and reread_factors(config) == (8, 8)
    one_d = replace(config, program=MatmulProgram.MULTICAST_1D)
    assert block_count(one_d) == 1  # only the 2-D program's blocks are timed


def test_an_ops_program_config_hands_its_output_blocks_to_the_model():
    from meshnn.ops.costs import matmul_config
    from meshnn.ops.matmul_config import MatmulMultiCoreReuseMultiCastProgramConfig

    program = MatmulMultiCoreReuseMultiCastProgramConfig(
        compute_with_storage_grid_size=(8, 8),
        in0_block_w=8,
        out_subblock_h=1,
        out_subblock_w=8,
        out_block_h=4,
        out_block_w=8,
        per_core_M=16,
        per_core_N=16,
        transpose_mcast=False,
    )
    config = matmul_config({"program_config": program})
    assert (config.program, config.out_block_h, config.out_block_w) == (MatmulProgram.MULTICAST_2D, 4, 8)
    assert block_count(config) == 8


def test_a_config_whose_blocks_are_its_whole_per_core_block_keeps_none():
    """ttnn's configs default out_block_h / _w to per_core_M / _N: that is no split."""
    from meshnn.perf.matmul_out_blocks import split_block

    assert split_block(16, 16) is None and split_block(None, 16) is None and split_block(0, 16) is None
    assert split_block(8, 16) == 8 and split_block(8, None) == 8 and split_block(True, 16) is None
