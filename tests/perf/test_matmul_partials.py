"""A 2-D matmul's partial sums between K blocks (meshnn/perf/matmul.py: partials_cycles): ttnn's
all-DRAM 2-D config splits K into ``Kt / grid x`` tile blocks (matmul_program_config.cpp), and the
compute kernel (bmm_large_block_zm_fused_bias_activation.cpp) keeps each output tile's partial sum in
L1 between blocks: accumulated by the packer (``packer_l1_acc``, ttnn's default, on for more than two
blocks) and reloaded once before the last block; with two blocks spilled in the output's format and
reloaded once."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from meshnn.ops.costs import matmul_config
from meshnn.perf import MathFidelity, MatmulConfig, MatmulProgram, OpDesc, OpFamily, TensorDesc, machine, predict
from meshnn.perf.calibrate import _program
from meshnn.perf.matmul import PARTIAL_TILE_BYTES, chosen_config, partials_cycles

N150, P150 = machine("n150"), machine("p150")


def mm(
    m: int, k: int, n: int, dtype: str = "BFLOAT16", config: MatmulConfig | None = None, fid=MathFidelity.LoFi
) -> OpDesc:
    a, b, out = TensorDesc((1, 1, m, k), dtype), TensorDesc((1, 1, k, n), dtype), TensorDesc((1, 1, m, n), dtype)
    return OpDesc(OpFamily.MATMUL, (a, b), (out,), fidelity=fid, matmul=config or MatmulConfig())


def test_the_all_dram_2d_config_splits_k_over_the_grid_columns():
    assert chosen_config(mm(1024, 1024, 1024), N150).matmul.in0_block_w == 4  # 32 K tiles over 8 columns
    assert chosen_config(mm(640, 704, 704), P150).matmul.in0_block_w == 2  # 22 over 11
    assert chosen_config(mm(1024, 1056, 1024), N150).matmul.in0_block_w == 1  # 33 tiles: 8 does not divide them


def test_partials_cost_nothing_with_one_block_or_an_unknown_block():
    one = mm(1024, 256, 1024, config=MatmulConfig(MatmulProgram.MULTICAST_2D, (8, 8), 4, 4, in0_block_w=8))
    assert partials_cycles(one, N150, 16, 8, 20.0) == 0.0
    unknown = mm(1024, 1024, 1024, config=MatmulConfig(MatmulProgram.MULTICAST_2D, (8, 8), 4, 4))
    assert partials_cycles(unknown, N150, 16, 32, 20.0) == 0.0
    one_d = mm(32, 1024, 1024, config=MatmulConfig(MatmulProgram.MULTICAST_1D, (8, 8), 1, 2, in0_block_w=4))
    assert partials_cycles(one_d, N150, 2, 32, 20.0) == 0.0


def test_two_blocks_spill_in_the_output_format_and_reload_once():
    arch = N150.system.arch
    desc = mm(1024, 512, 1024, "BFLOAT8_B", MatmulConfig(MatmulProgram.MULTICAST_2D, (8, 8), 4, 4, in0_block_w=8))
    reload = desc.outputs[0].tile_bytes / arch.operand_bytes_per_cycle + arch.fpu_eltwise_cycles_per_tile
    assert partials_cycles(desc, N150, 16, 16, 1000.0) == pytest.approx(16 * reload)  # no pack wait either


def test_more_blocks_wait_for_the_packer_where_it_outlasts_a_block_of_multiplies():
    arch = P150.system.arch
    config = MatmulConfig(MatmulProgram.MULTICAST_2D, (11, 10), 2, 2, in0_block_w=2)
    desc = mm(640, 704, 704, "BFLOAT4_B", config)
    reload = PARTIAL_TILE_BYTES / arch.operand_bytes_per_cycle + arch.fpu_eltwise_cycles_per_tile
    write = PARTIAL_TILE_BYTES / arch.packer_bytes_per_cycle  # the first block's partial written: 32 cycles
    add = PARTIAL_TILE_BYTES / arch.packer_accumulate_bytes_per_cycle  # the next nine added into it: 64 cycles
    short = 10.0  # a block's two multiplies (20 cycles) are shorter than either
    expected = 4 * ((write - 2 * short) + 9 * (add - 2 * short) + reload)
    assert partials_cycles(desc, P150, 4, 22, short) == pytest.approx(expected)
    assert partials_cycles(desc, P150, 4, 22, 100.0) == pytest.approx(4 * reload)  # long multiplies hide it


def test_a_multi_block_2d_matmul_takes_longer_than_the_same_without_its_partials():
    auto = chosen_config(mm(1024, 1024, 1024, fid=MathFidelity.HiFi4), N150)  # 8 K blocks of 4 tiles, 4x4 a core
    without = OpDesc(OpFamily.MATMUL, auto.inputs, auto.outputs, fidelity=auto.fidelity,
                     matmul=MatmulConfig(auto.matmul.program, auto.matmul.grid, auto.matmul.per_core_m,
                                         auto.matmul.per_core_n))  # fmt: skip
    arch = N150.system.arch
    reload = 16 * (PARTIAL_TILE_BYTES / arch.operand_bytes_per_cycle + arch.fpu_eltwise_cycles_per_tile)
    added = predict(auto, N150, traced=True).compute_ns - predict(without, N150, traced=True).compute_ns
    assert added == pytest.approx(arch.cycles_ns(reload))  # the math binds (HiFi4), and outlasts the pack


def test_a_captured_program_config_carries_its_inner_block():
    program = SimpleNamespace(compute_with_storage_grid_size=(8, 8), per_core_M=4, per_core_N=4, in0_block_w=2)
    config = matmul_config({"program_config": program})  # an unknown class counts as the 2-D program
    assert config.program is MatmulProgram.MULTICAST_2D and config.in0_block_w == 2


def test_a_profiler_csvs_program_config_carries_its_inner_block():
    """meshnn perf --calibrate reads a measured ops_perf_results CSV: its matmul rows keep their K blocks."""
    text = "MatmulMultiCoreReuseMultiCastProgramConfig(compute_with_storage_grid_size=(x=8,y=8),in0_block_w=4,"
    text += "per_core_M=4,per_core_N=4)"  # as tt-metal's profiler writes the op's attributes
    config = _program(text)
    assert config.program is MatmulProgram.MULTICAST_2D and config.in0_block_w == 4
    assert _program(text.replace("in0_block_w=4,", "")).in0_block_w is None
