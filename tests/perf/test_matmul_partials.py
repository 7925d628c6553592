"""A matmul's partial sums between K blocks (meshnn/perf/matmul.py: partials_cycles): ttnn's
all-DRAM 2-D config splits K into ``Kt / grid x`` tile blocks (matmul_program_config.cpp), and the
compute kernel the 1-D, 2-D and DRAM-sharded programs share (bmm_large_block_zm_fused_bias_activation.cpp)
keeps each output tile's partial sum in L1 between blocks: accumulated by the packer (``packer_l1_acc``:
ttnn's default; the 2-D factory enables it above two blocks, the 1-D and DRAM-sharded ones above one)
and reloaded once before the last block, else spilled and reloaded after every block; float32 partials
with ``fp32_dest_acc_en``.  The flags are the op's compute-kernel config's (meshnn/ops/costs.py)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from meshnn.ops.costs import matmul_config
from meshnn.perf import MathFidelity, MatmulConfig, MatmulProgram, OpDesc, OpFamily, TensorDesc, machine, predict
from meshnn.perf.calibrate import _program
from meshnn.perf.matmul import (
    FP32_PARTIAL_TILE_BYTES,
    PARTIAL_TILE_BYTES,
    accumulates,
    chosen_config,
    float16_partials,
    partial_tile_bytes,
    partials_cycles,
)

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
    one_d = mm(32, 1024, 1024, config=MatmulConfig(MatmulProgram.MULTICAST_1D, (8, 8), 1, 2, in0_block_w=32))
    assert partials_cycles(one_d, N150, 2, 32, 20.0) == 0.0
    other = mm(32, 1024, 1024, config=MatmulConfig(MatmulProgram.REUSE, (8, 8), 1, 2, in0_block_w=4))
    assert partials_cycles(other, N150, 2, 32, 20.0) == 0.0


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


def _decode(program: MatmulProgram, *, l1_acc: bool | None = None, fp32: bool | None = None) -> OpDesc:
    """A decode-sized (one row of tiles) matmul, K 64 tiles in blocks of one tile: tt_transformers'
    in0_block_w for the 1B's FF1 (its largest divisor up to 8 of K tiles over the activation's cores)."""
    config = MatmulConfig(program, (8, 2), 1, 2, in0_block_w=1, packer_l1_acc=l1_acc, fp32_acc=fp32)
    return mm(32, 2048, 1024, "BFLOAT8_B", config)


@pytest.mark.parametrize("program", [MatmulProgram.MULTICAST_1D, MatmulProgram.DRAM_SHARDED])
def test_a_1d_or_dram_sharded_program_accumulates_its_blocks_in_l1(program):
    """64 blocks of one multiply (40 cycles, a single-use weight tile): the first block's bfloat16 partial
    written (32 cycles, hidden), 62 added into it (64 cycles each: 24 waited for), one reload."""
    arch = N150.system.arch
    reload = PARTIAL_TILE_BYTES / arch.operand_bytes_per_cycle + arch.fpu_eltwise_cycles_per_tile
    add = PARTIAL_TILE_BYTES / arch.packer_accumulate_bytes_per_cycle
    assert add == 64.0
    assert partials_cycles(_decode(program), N150, 2, 64, 40.0) == pytest.approx(2 * (62 * (add - 40) + reload))


def test_two_blocks_accumulate_in_a_1d_program_but_spill_in_a_2d_one():
    arch = N150.system.arch
    one_d = mm(32, 512, 1024, "BFLOAT8_B", MatmulConfig(MatmulProgram.MULTICAST_1D, (8, 4), 1, 1, in0_block_w=8))
    two_d = mm(32, 512, 1024, "BFLOAT8_B", MatmulConfig(MatmulProgram.MULTICAST_2D, (8, 4), 1, 1, in0_block_w=8))
    bf16 = PARTIAL_TILE_BYTES / arch.operand_bytes_per_cycle + arch.fpu_eltwise_cycles_per_tile
    bfp8 = two_d.outputs[0].tile_bytes / arch.operand_bytes_per_cycle + arch.fpu_eltwise_cycles_per_tile
    assert partials_cycles(one_d, N150, 1, 16, 1.0) == pytest.approx(PARTIAL_TILE_BYTES / 64 - 8 + bf16)
    assert partials_cycles(two_d, N150, 1, 16, 1.0) == pytest.approx(two_d.outputs[0].tile_bytes / 64 - 8 + bfp8)


def test_float32_accumulation_doubles_the_partial():
    """fp32_dest_acc_en: 4 KB partials, each add 128 cycles (against 64 for bfloat16)."""
    arch = N150.system.arch
    reload = FP32_PARTIAL_TILE_BYTES / arch.operand_bytes_per_cycle + arch.fpu_eltwise_cycles_per_tile
    desc = _decode(MatmulProgram.DRAM_SHARDED, l1_acc=True, fp32=True)
    assert FP32_PARTIAL_TILE_BYTES / arch.packer_accumulate_bytes_per_cycle == 128.0
    expected = 2 * ((FP32_PARTIAL_TILE_BYTES / 64 - 40) + 62 * (128 - 40) + reload)
    assert partials_cycles(desc, N150, 2, 64, 40.0) == pytest.approx(expected)
    bf16 = partials_cycles(_decode(MatmulProgram.DRAM_SHARDED), N150, 2, 64, 40.0)
    assert partials_cycles(desc, N150, 2, 64, 40.0) > bf16


def test_without_l1_accumulation_every_block_spills_and_reloads():
    """packer_l1_acc off (tt_transformers' HIFI2_NA): each of the first 63 blocks writes its partial in the
    output's format (bfloat8_b: 1088 B, 17 cycles, hidden behind a 40-cycle multiply) and the next reloads it."""
    arch = N150.system.arch
    desc = _decode(MatmulProgram.DRAM_SHARDED, l1_acc=False, fp32=False)
    reload = desc.outputs[0].tile_bytes / arch.operand_bytes_per_cycle + arch.fpu_eltwise_cycles_per_tile
    assert partials_cycles(desc, N150, 2, 64, 40.0) == pytest.approx(2 * 63 * reload)


def test_ttnn_default_accumulation_follows_the_output_dtype():
    """No compute-kernel config: L1 accumulation in bfloat16 unless the output is float32, which
    accumulates in float32 and spills instead (matmul_device_operation.cpp's defaults)."""
    assert accumulates(_decode(MatmulProgram.DRAM_SHARDED)) == (True, False)
    a, b = TensorDesc((1, 1, 32, 2048), "FLOAT32"), TensorDesc((1, 1, 2048, 1024), "BFLOAT16")
    config = MatmulConfig(MatmulProgram.DRAM_SHARDED, (8, 2), 1, 2, in0_block_w=1)
    fp32 = OpDesc(OpFamily.MATMUL, (a, b), (TensorDesc((1, 1, 32, 1024), "FLOAT32"),), matmul=config)
    assert accumulates(fp32) == (False, True)


def test_the_compute_kernel_config_sets_the_flags_and_the_auto_config_keeps_them():
    kernel = SimpleNamespace(math_fidelity="HiFi2", fp32_dest_acc_en=True, packer_l1_acc=False)
    config = matmul_config({"compute_kernel_config": kernel})
    assert (config.packer_l1_acc, config.fp32_acc) == (False, True)
    assert (matmul_config({}).packer_l1_acc, matmul_config({}).fp32_acc) == (None, None)
    bare = matmul_config({"compute_kernel_config": SimpleNamespace(math_fidelity="LoFi")})
    assert (bare.packer_l1_acc, bare.fp32_acc) == (False, False)  # the config structs' defaults
    auto = chosen_config(mm(1024, 1024, 1024, config=config), N150).matmul
    assert auto.program is MatmulProgram.MULTICAST_2D and (auto.packer_l1_acc, auto.fp32_acc) == (False, True)


def test_a_decode_matmul_in_one_tile_blocks_waits_on_the_packer():
    """The 1B's decode FF1 shape on an N150 (K 64 tiles, in0_block_w 1, DRAM-sharded over 12 banks): each
    weight tile's one multiply (``single_use_weight_tile_cycles``, under the 64-cycle accumulate) waits for
    the packer 62 times a tile, beside the same matmul in one K block."""
    from meshnn.perf.latency import op_latency

    arch = N150.system.arch
    single = op_latency(arch.arch).single_use_weight_tile_cycles
    a, b = TensorDesc((1, 1, 32, 2048), "BFLOAT16"), TensorDesc((1, 1, 2048, 8192), "BFLOAT4_B")
    out = TensorDesc((1, 1, 32, 8192), "BFLOAT16")

    def ff1(in0_block_w: int) -> OpDesc:
        config = MatmulConfig(MatmulProgram.DRAM_SHARDED, (12, 1), 1, 22, in0_block_w=in0_block_w)
        return OpDesc(OpFamily.MATMUL, (a, b), (out,), fidelity=MathFidelity.LoFi, matmul=config)

    out_tiles = 22  # 256 output tiles over the 12 banks' cores
    reload = PARTIAL_TILE_BYTES / arch.operand_bytes_per_cycle + arch.fpu_eltwise_cycles_per_tile
    waits = out_tiles * (62 * (64.0 - single) + reload)
    assert single < 64.0
    added = predict(ff1(1), N150).compute_ns - predict(ff1(64), N150).compute_ns
    assert added == pytest.approx(arch.cycles_ns(waits))


def test_a_dram_sharded_program_before_36177_keeps_bfloat16_partials_under_float32_accumulation():
    """tt-metal's DRAM-sharded factory set ``interm0_data_format = Float16_b`` whatever the config until #36177
    (2026-01-21): an op marked so costs its fp32_dest_acc_en partials as 2 KB bfloat16 tiles (62 adds of 64
    cycles, not 128), with or without L1 accumulation (spilled in bfloat16, not the output's bfloat8_b)."""
    fp32 = _decode(MatmulProgram.DRAM_SHARDED, l1_acc=True, fp32=True)
    bf16 = _decode(MatmulProgram.DRAM_SHARDED, l1_acc=True, fp32=False)
    assert partials_cycles(float16_partials(fp32), N150, 2, 64, 40.0) == partials_cycles(bf16, N150, 2, 64, 40.0)
    assert partials_cycles(float16_partials(fp32), N150, 2, 64, 40.0) < partials_cycles(fp32, N150, 2, 64, 40.0)
    assert partial_tile_bytes(float16_partials(fp32), True, True) == PARTIAL_TILE_BYTES
    spilled = float16_partials(_decode(MatmulProgram.DRAM_SHARDED, l1_acc=False, fp32=False))
    assert spilled.outputs[0].tile_bytes == 1088 and partial_tile_bytes(spilled, False, False) == PARTIAL_TILE_BYTES


def test_the_mark_moves_only_the_dram_sharded_program():
    """The 1-D and 2-D factories kept Float32 partials under fp32_dest_acc_en at every date; a non-matmul op is
    left as it is, and marking twice is marking once."""
    one_d = _decode(MatmulProgram.MULTICAST_1D, l1_acc=True, fp32=True)
    assert partials_cycles(float16_partials(one_d), N150, 2, 64, 40.0) == partials_cycles(one_d, N150, 2, 64, 40.0)
    assert partial_tile_bytes(float16_partials(one_d), True, True) == FP32_PARTIAL_TILE_BYTES
    other = OpDesc(OpFamily.UNARY, (TensorDesc((1, 1, 32, 32), "BFLOAT16"),), (TensorDesc((1, 1, 32, 32), "BFLOAT16"),))
    assert float16_partials(other) is other
    twice = float16_partials(float16_partials(one_d))
    assert twice == float16_partials(one_d) and len(twice.attributes) == 1


def test_a_marked_decode_matmul_predicts_as_its_16_bit_twin():
    """The 1B's decode QKV on an N300 chip (K 64 tiles in blocks of 2, HiFi2): float32 partials marked as before
    #36177 time as the same matmul without float32 accumulation."""
    a, b = TensorDesc((1, 1, 32, 2048), "BFLOAT16"), TensorDesc((1, 1, 2048, 1536), "BFLOAT8_B")
    out = TensorDesc((1, 1, 32, 1536), "BFLOAT16")

    def qkv(fp32: bool) -> OpDesc:
        config = MatmulConfig(MatmulProgram.DRAM_SHARDED, (12, 1), 1, 2, in0_block_w=2, packer_l1_acc=True,
                              fp32_acc=fp32)  # fmt: skip
        return OpDesc(OpFamily.MATMUL, (a, b), (out,), fidelity=MathFidelity.HiFi2, matmul=config)

    marked = predict(float16_partials(qkv(True)), N150).compute_ns
    assert marked == predict(qkv(False), N150).compute_ns
    assert marked < predict(qkv(True), N150).compute_ns
