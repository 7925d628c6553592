"""The program config ttnn picks for a matmul given none (meshnn/perf/matmul_auto.py): the cores a
matmul really uses.  The model had spread every such matmul one output tile a core over the whole
grid; ttnn's create_simple_matmul_program_config chooses 1-D or 2-D multicast programs by shape."""

from __future__ import annotations

import math

import pytest

from meshnn.device.arch import Arch
from meshnn.ops.costs import matmul_config
from meshnn.perf import (
    BufferType,
    MatmulConfig,
    MatmulProgram,
    MemoryLayout,
    OpDesc,
    OpFamily,
    TensorDesc,
    machine,
    predict,
)
from meshnn.perf.calibrate import _program
from meshnn.perf.matmul import (
    activation_stream_cycles,
    chosen_config,
    in0_multicast_cycles,
    in1_sender_cycles,
    sender_read_cycles,
)
from meshnn.perf.matmul_auto import _block_factor, auto_matmul_config
from meshnn.perf.matmul_banks import bank_transfer_efficiency
from meshnn.perf.traffic import traffic, transfer_efficiency

N150 = machine("n150")


def mm(m: int, k: int, n: int, dtype: str = "BFLOAT16", **config) -> OpDesc:
    a, b, out = TensorDesc((1, 1, m, k), dtype), TensorDesc((1, 1, k, n), dtype), TensorDesc((1, 1, m, n), dtype)
    return OpDesc(OpFamily.MATMUL, (a, b), (out,), matmul=MatmulConfig(**config))


@pytest.mark.parametrize(
    ("shape", "program", "per_core"),
    [
        ((512, 1024, 1024), MatmulProgram.MULTICAST_1D, (16, 1)),  # one block row: in0 multicast, N over 64 cores
        ((512, 1024, 4096), MatmulProgram.MULTICAST_1D, (16, 2)),
        ((32, 4096, 4096), MatmulProgram.MULTICAST_1D, (1, 2)),  # M within a tile, all DRAM: wide
        ((4096, 1024, 64), MatmulProgram.MULTICAST_1D, (2, 2)),  # 64x taller than wide: in1 multicast
        ((1024, 1024, 2048), MatmulProgram.MULTICAST_2D, (4, 8)),  # all DRAM-interleaved: ceil(Mt/8) x ceil(Nt/8)
        ((512, 512, 512), MatmulProgram.MULTICAST_2D, (2, 2)),
        ((4096, 4096, 4096), MatmulProgram.MULTICAST_2D, (16, 16)),
    ],
)
def test_ttnn_picks_the_program_by_shape(shape, program, per_core):
    config = auto_matmul_config(mm(*shape), N150)
    assert config.program is program and config.grid == (8, 8)
    assert (config.per_core_m, config.per_core_n) == per_core


def test_one_block_row_reads_all_of_in0_through_one_sender():
    """512x1024x1024 bf16 (GEMM_FLOPS out-of-box: 9.32 TFLOPs traced, 115 us): 32 cores with work,
    and the single in0 sender's 1 MiB read from DRAM bounds it (the model had 64 cores and 31 us)."""
    p = predict(mm(512, 1024, 1024), "n150", traced=True)
    assert p.cores == 32
    in0_read_ns = 512 * 1024 * 2 / 12.0  # bytes over the fitted 12 B/cycle at 1 GHz
    assert p.kernel_ns > in0_read_ns
    assert 2 * 512 * 1024 * 1024 / (p.kernel_ns + p.gap_ns) / 1e3 == pytest.approx(9.32, rel=0.15)


def test_a_given_config_core_grid_or_sharded_input_is_kept():
    given = mm(512, 1024, 1024, program=MatmulProgram.MULTICAST_2D, grid=(8, 4), per_core_m=4, per_core_n=4)
    assert chosen_config(given, N150) is given
    gridded = mm(512, 1024, 1024, grid=(4, 4), user_core_grid=True)
    assert chosen_config(gridded, N150) is gridded
    a = TensorDesc((1, 1, 512, 1024), buffer=BufferType.L1, memory=MemoryLayout.HEIGHT_SHARDED)
    sharded = OpDesc(OpFamily.MATMUL, (a, TensorDesc((1, 1, 1024, 1024))), (TensorDesc((1, 1, 512, 1024)),))
    assert chosen_config(sharded, N150) is sharded


def test_the_block_shrinks_to_fit_l1():
    """16x16 bfloat16 blocks fit a Wormhole core's 1,393,312 allocatable L1 bytes (1,310,720 B of
    circular buffers); with a float32 intermediate (fp32 accumulation) they do not, and 8x8 does."""
    t = TensorDesc((1, 1, 32, 32))
    l1 = N150.system.spec.arch_spec.l1_bank_size
    assert l1 == 1_499_136 - 105_824
    assert _block_factor(t, t, t, l1, fp32_acc=False) == 16
    assert _block_factor(t, t, t, l1, fp32_acc=True) == 8


def prefill_mlp(program: MatmulProgram, weight_buffer: BufferType = BufferType.DRAM) -> OpDesc:
    """Llama-3.1-8B's w1 over a 128-token prefill as tt_transformers runs it on an N150: a 2-D program
    on an 8x4 grid, one tile row and 56 tile columns a core, a bfloat4_b weight width-sharded in DRAM."""
    x = TensorDesc((1, 1, 128, 4096))
    memory = MemoryLayout.WIDTH_SHARDED if weight_buffer is BufferType.DRAM else MemoryLayout.INTERLEAVED
    w = TensorDesc((1, 1, 4096, 14336), "BFLOAT4_B", buffer=weight_buffer, memory=memory)
    config = MatmulConfig(program, (8, 4), per_core_m=1, per_core_n=56)
    return OpDesc(OpFamily.MATMUL, (x, w), (TensorDesc((1, 1, 128, 14336)),), fidelity="LoFi", matmul=config)


def npe_fraction(size: int) -> float:
    """tt-npe's Wormhole per-transfer rate between its 512 B (18 B/cycle) and 2 KB (30) points,
    log-linear, as a fraction of the 2 KB rate."""
    return (18 + (30 - 18) * math.log2(size / 512) / 2) / 30


def test_a_2d_program_waits_for_its_in1_senders():
    """Only the grid's top row reads in1 in a 2-D multicast program: 8 cores each read 56 x 128
    bfloat4_b tiles (4.1 MB) at one core's read rate, a NoC read a tile (576 B: 63% of a 2 KB read's
    12 B/cycle), 543 us, longer than the tile multiplies (the model had 212 us: its DRAM term spread the
    weight over every bank at the whole chip's rate; then 344 us, at a 2 KB tile's byte rate)."""
    p = predict(prefill_mlp(MatmulProgram.MULTICAST_2D), "n150")
    sender_ns = 56 * 128 * 576 / (12.0 * npe_fraction(576))
    assert p.memory_ns == pytest.approx(sender_ns)
    assert p.kernel_ns > sender_ns > p.compute_ns
    one_d = predict(prefill_mlp(MatmulProgram.MULTICAST_1D), "n150")  # every core reads its own columns
    assert one_d.memory_ns < sender_ns
    in_l1 = predict(prefill_mlp(MatmulProgram.MULTICAST_2D, BufferType.L1), "n150")
    assert in_l1.memory_ns < sender_ns


@pytest.mark.parametrize(("dtype", "tile_bytes"), [("BFLOAT16", 2048), ("BFLOAT8_B", 1088), ("BFLOAT4_B", 576)])
def test_a_sender_reads_dram_a_tile_at_a_time(dtype, tile_bytes):
    """The in0 sender of a one-block-row 1-D program reads all of in0 with one NoC read a tile: a
    bfloat16 tile at the fitted 12 B/cycle, the block-float formats' smaller tiles at tt-npe's lower
    per-transfer rate (so bfloat4_b's 576 B tiles take 63% of bfloat16's time, not 28%)."""
    desc = chosen_config(mm(512, 1024, 1024, dtype), N150)
    expected = 16 * 32 * tile_bytes / (12.0 * npe_fraction(tile_bytes))
    assert activation_stream_cycles(desc, N150, 16, 32) == pytest.approx(expected)
    assert sender_read_cycles(N150, 512, tile_bytes) == pytest.approx(expected)
    if tile_bytes < 2048:
        assert expected > 16 * 32 * tile_bytes / 12.0


# --- the in0 sender's multicast: its time grows with the cores it writes to ----------------------


@pytest.mark.parametrize("dtype", ["BFLOAT16", "BFLOAT8_B", "BFLOAT4_B"])
def test_the_in0_multicast_grows_with_its_receivers(dtype):
    """512x1024xN with N = 1024 and 2048: the same in0 and the same per-core block (16 x 1 tiles),
    on 32 and on 64 cores; the wider one multicasts in0 to 32 more cores (GEMM_FLOPS's out-of-box
    table: +26 / +14 / +5 us for bfloat16 / bfloat8_b / bfloat4_b).  The sender reads and multicasts
    block by block, and the math runs behind it: the op lasts as long as the sender's stream."""
    narrow, wide = (chosen_config(mm(512, 1024, n, dtype), N150) for n in (1024, 2048))
    assert (narrow.matmul.per_core_n, wide.matmul.per_core_n) == (1, 1)
    assert (in0_multicast_cycles(narrow, N150, 32), in0_multicast_cycles(wide, N150, 64)) != (0, 0)
    in0_bytes = narrow.inputs[0].nbytes
    rate = N150.system.arch.multicast_byte_dests_per_cycle
    assert in0_multicast_cycles(wide, N150, 64) - in0_multicast_cycles(narrow, N150, 32) == pytest.approx(
        in0_bytes * 32 / rate
    )
    p_narrow, p_wide = predict(narrow, N150, traced=True), predict(wide, N150, traced=True)
    assert p_wide.kernel_ns - p_narrow.kernel_ns == pytest.approx(in0_bytes * 32 / rate)
    stream = activation_stream_cycles(wide, N150, 16, 32) + in0_multicast_cycles(wide, N150, 64)
    assert p_wide.compute_ns == pytest.approx(stream)  # the sender's stream, not the math plus it


def test_only_a_program_that_multicasts_in0_from_dram_pays_it():
    """ttnn's 1-D program for a tall output multicasts in1 (mcast_in0=False): no in0 multicast; nor
    an in0 that is sharded, nor a 2-D program (its in0 goes along one row of 8)."""
    tall = chosen_config(mm(4096, 1024, 64), N150)
    assert tall.matmul.program is MatmulProgram.MULTICAST_1D and tall.matmul.mcast_in0 is False
    assert in0_multicast_cycles(tall, N150, 64) == 0
    two_d = chosen_config(mm(1024, 1024, 2048), N150)
    assert in0_multicast_cycles(two_d, N150, 64) == 0
    a = TensorDesc((1, 1, 512, 1024), buffer=BufferType.L1, memory=MemoryLayout.WIDTH_SHARDED)
    sharded = OpDesc(
        OpFamily.MATMUL,
        (a, TensorDesc((1, 1, 1024, 1024))),
        (TensorDesc((1, 1, 512, 1024)),),
        matmul=MatmulConfig(MatmulProgram.MULTICAST_1D, (8, 8), 16, 1),
    )
    assert in0_multicast_cycles(sharded, N150, 64) == 0


def test_a_program_config_says_which_input_a_1d_program_multicasts():
    """ttnn's MatmulMultiCoreReuseMultiCast1DProgramConfig carries mcast_in0; a profiler CSV's
    attributes carry it as text."""

    class MatmulMultiCoreReuseMultiCast1DProgramConfig:  # ttnn's class name; the fields the model reads
        compute_with_storage_grid_size = None
        per_core_M, per_core_N, mcast_in0 = 2, 4, False

    config = matmul_config({"program_config": MatmulMultiCoreReuseMultiCast1DProgramConfig()})
    assert config.program is MatmulProgram.MULTICAST_1D and (config.per_core_m, config.per_core_n) == (2, 4)
    assert config.mcast_in0 is False
    text = "MatmulMultiCoreReuseMultiCast1DProgramConfig(per_core_M=2, per_core_N=4, mcast_in0=0)"
    assert _program(text).mcast_in0 is False and _program(text.replace("=0)", "=1)")).mcast_in0 is True


def test_a_matmuls_dram_side_keeps_blocks_of_reads_in_flight():
    """A matmul's senders issue a whole block of tile reads before they wait: the banks serve the
    grid at their interleaved rate whatever the tile's size, and the per-transfer rate of a small tile
    limits only each sender's own stream (:func:`sender_read_cycles`).  A copy's tile-at-a-time traffic
    keeps the per-transfer derating.  (GEMM_FLOPS's out-of-box P150 table: derated, its bfloat8_b and
    bfloat4_b rows had come out 15-38% slow.)"""
    p150 = machine("p150")
    tensors = [TensorDesc((1, 1, 1280, 1408), "BFLOAT4_B"), TensorDesc((1, 1, 1408, 1408), "BFLOAT4_B")]
    moves = [(t, 1.0) for t in tensors]
    whole = traffic(p150, moves, 110, blocks_in_flight=True)
    derated = traffic(p150, moves, 110)
    total = sum(t.nbytes for t in tensors)
    assert whole.dram_ns == pytest.approx(total / p150.system.dram_interleaved_bytes_per_s * 1e9)
    assert derated.dram_ns == pytest.approx(whole.dram_ns / transfer_efficiency(p150.system.arch, 576))
    desc = mm(1280, 1408, 1408, "BFLOAT4_B")
    p = predict(desc, p150, traced=True)
    sender_ns = p150.system.arch.cycles_ns(in1_sender_cycles(chosen_config(desc, p150), p150, 44))
    # the output drains after the math; the banks serve the 576 B tiles at tt-npe's Blackhole rate for that
    # size (meshnn.perf.matmul_banks: 232 GB/s), below the interleaved figure's 344 GB/s of 16 KB packets
    tile_rate = p150.system.dram_sharded_bytes_per_s * bank_transfer_efficiency(Arch.BLACKHOLE, 576)
    assert tile_rate < p150.system.dram_interleaved_bytes_per_s
    assert p.memory_ns == pytest.approx(max(sender_ns, total / tile_rate * 1e9))
