"""A 1-D matmul that multicasts in0 streams its interleaved DRAM weight block by block (meshnn/perf/matmul_blocks.py):
each core reads ``in0_block_w x per_core_N`` tiles, waits for them, and only then reads the next block, so at decode
sizes the op's time follows its block count, not the DRAM's aggregate rate; and ttnn's config for a width-sharded
in0 given no program config."""

from __future__ import annotations

import math

import pytest

from meshnn.perf import (
    BufferType,
    Layout,
    MathFidelity,
    MatmulConfig,
    MatmulProgram,
    MemoryLayout,
    OpDesc,
    OpFamily,
    TensorDesc,
    machine,
    predict,
)
from meshnn.perf.latency import op_latency
from meshnn.perf.matmul import chosen_config, sender_read_cycles
from meshnn.perf.matmul_blocks import (
    in1_block_stream_cycles,
    is_plain_program,
    output_block_write_cycles,
    plain_reads_cycles,
    plain_weight_banks_ns,
    width_sharded_config,
)

GALAXY = machine("galaxy")
ROUND_TRIP = op_latency(GALAXY.system.arch.arch).tile_round_trip_cycles


def l1(shape: tuple[int, ...], memory: MemoryLayout = MemoryLayout.INTERLEAVED) -> TensorDesc:
    return TensorDesc(shape, "BFLOAT16", Layout.TILE, BufferType.L1, memory)


def dram(shape: tuple[int, ...]) -> TensorDesc:
    return TensorDesc(shape, "BFLOAT16", Layout.TILE, BufferType.DRAM, MemoryLayout.INTERLEAVED)


def linear(a: TensorDesc, b: TensorDesc, out: TensorDesc, grid: tuple[int, int] | None = None) -> OpDesc:
    return OpDesc(OpFamily.MATMUL, (a, b), (out,), fidelity=MathFidelity.HiFi2, core_grid=grid, matmul=MatmulConfig())


def sharded_linear(k: int, n: int, cores: int) -> OpDesc:
    """A decode linear whose in0 [32, k] is width-sharded over ``cores`` cores, its output too."""
    w = MemoryLayout.WIDTH_SHARDED
    return linear(l1((1, 1, 32, k), w), dram((k, n)), l1((1, 1, 32, n), w), grid=(cores, 1))


def test_a_width_sharded_in0_gets_ttnns_1d_config():
    """get_matmul_program_config: mcast_in0, per_core_N = ceil(Nt / cores), in0_block_w = gcd(Kt / cores, Kt)."""
    desc = width_sharded_config(sharded_linear(896, 2112, 28))
    assert desc is not None and desc.matmul is not None
    config = desc.matmul
    assert config.program is MatmulProgram.MULTICAST_1D and config.mcast_in0
    assert (config.per_core_m, config.per_core_n, config.in0_block_w, config.grid) == (1, 3, 1, (28, 1))
    wide = width_sharded_config(sharded_linear(1536, 3072, 16))
    assert wide is not None and wide.matmul is not None
    assert (wide.matmul.per_core_n, wide.matmul.in0_block_w) == (6, 3)
    user = linear(l1((1, 1, 32, 896), MemoryLayout.WIDTH_SHARDED), dram((896, 2112)), l1((1, 1, 32, 2112)))
    given = OpDesc(
        OpFamily.MATMUL, user.inputs, user.outputs, core_grid=(28, 1), matmul=MatmulConfig(user_core_grid=True)
    )
    assert width_sharded_config(given) is None  # a core grid given by the caller: create_matmul_program_config's path
    assert width_sharded_config(linear(l1((1, 1, 32, 896)), dram((896, 2112)), l1((1, 1, 32, 2112)))) is None


def test_ttnns_own_1d_config_blocks_k_by_two_where_even():
    """get_mcast_1d_config: in0_block_w 2 where Kt is even, else 1."""
    even = chosen_config(linear(l1((1, 1, 32, 16384)), dram((16384, 896)), l1((1, 1, 32, 896))), GALAXY)
    odd = chosen_config(linear(l1((1, 1, 32, 16352)), dram((16352, 896)), l1((1, 1, 32, 896))), GALAXY)
    assert even.matmul is not None and odd.matmul is not None
    assert even.matmul.program is MatmulProgram.MULTICAST_1D and even.matmul.in0_block_w == 2
    assert odd.matmul.in0_block_w == 1


def test_the_weight_streams_one_block_round_trip_at_a_time():
    """Each block costs the round trip plus the longer of the core's own bytes and the K-step's bytes at the
    banks' rate: with 3 tiles a core over 22 cores the core's own read binds.  Twice the K over the same cores
    doubles the shard, so ttnn's blocks are twice as deep, not twice as many: the round trips stay 28."""
    desc = width_sharded_config(sharded_linear(896, 2112, 28))
    assert desc is not None
    per_block = ROUND_TRIP + sender_read_cycles(GALAXY, 3, 2048)
    stream = in1_block_stream_cycles(desc, GALAXY, (1, 28, 66), per_multiply=36.0)
    assert stream >= 28 * per_block
    assert stream == pytest.approx(28 * per_block, rel=0.1)
    twice = width_sharded_config(sharded_linear(1792, 2112, 28))
    assert twice is not None
    assert twice.matmul is not None and twice.matmul.in0_block_w == 2
    deeper = in1_block_stream_cycles(twice, GALAXY, (1, 56, 66), per_multiply=36.0)
    assert deeper == pytest.approx(28 * (ROUND_TRIP + sender_read_cycles(GALAXY, 6, 2048)), rel=0.1)
    assert stream < deeper < 2 * stream


def test_a_stream_of_small_blocks_outlasts_the_weights_bytes():
    """The same 29 MB weight in 256 blocks of 2 tiles a core takes longer than in 16 blocks of 32: the round
    trips, not the bytes, set a decode linear's time (tt-metal: wo of DeepSeek MLA, 259.56 us for 29.4 MB)."""
    wo = predict(linear(l1((1, 1, 32, 16384)), dram((16384, 896)), l1((1, 1, 32, 896))), "galaxy", traced=True)
    bytes_only = 16384 * 896 * 2 / GALAXY.system.dram_interleaved_bytes_per_s * 1e9
    assert wo.memory_ns > 1.5 * bytes_only
    assert wo.memory_ns >= 256 * (ROUND_TRIP + sender_read_cycles(GALAXY, 2, 2048)) * 0.999


def test_an_interleaved_output_is_written_before_the_next_blocks_weight():
    """The in1 reader writes each output block (an unfused batch: one a matrix) before it reads on; a sharded
    output costs nothing there."""
    batched = chosen_config(linear(l1((1, 16, 32, 128)), dram((128, 512)), l1((1, 16, 32, 512))), GALAXY)
    assert batched.matmul is not None and batched.matmul.program is MatmulProgram.MULTICAST_1D
    write = output_block_write_cycles(batched, GALAXY, 1, 36.0)
    assert write > 0
    stream = in1_block_stream_cycles(batched, GALAXY, (16, 4, 16), per_multiply=36.0)
    per_block = ROUND_TRIP + sender_read_cycles(GALAXY, 2, 2048)
    assert stream == pytest.approx(16 * (2 * per_block + write), rel=0.15)
    sharded = width_sharded_config(sharded_linear(896, 2112, 28))
    assert sharded is not None and output_block_write_cycles(sharded, GALAXY, 3, 36.0) == 0.0


def test_other_programs_have_no_block_stream():
    """A 2-D program, a DRAM-sharded one, an in1 in L1 and a config without in0_block_w: no term."""
    base = sharded_linear(896, 2112, 28)
    for config in (
        MatmulConfig(MatmulProgram.MULTICAST_2D, (7, 4), 1, 3, in0_block_w=1),
        MatmulConfig(MatmulProgram.DRAM_SHARDED, in0_block_w=1, per_core_n=3),
        MatmulConfig(MatmulProgram.MULTICAST_1D, (28, 1), 1, 3),
    ):
        desc = OpDesc(OpFamily.MATMUL, base.inputs, base.outputs, matmul=config)
        assert in1_block_stream_cycles(desc, GALAXY, (1, 28, 66), 36.0) == 0.0
    in_l1 = OpDesc(
        OpFamily.MATMUL,
        (base.inputs[0], l1((896, 2112))),
        base.outputs,
        matmul=MatmulConfig(MatmulProgram.MULTICAST_1D, (28, 1), 1, 3, in0_block_w=1),
    )
    assert in1_block_stream_cycles(in_l1, GALAXY, (1, 28, 66), 36.0) == 0.0
    assert math.isfinite(predict(base, "galaxy").kernel_ns)


def test_the_plain_program_reads_each_operand_tile_and_waits():
    """ttnn's plain multi-core program (no multicast config fits: DeepSeek MLA's wkv_b2, [128 x 32, 512] by
    [512, 128]): per output tile and K tile, an in0 read (L1: the NoC's latency) and an in1 read (DRAM: a round
    trip), each waited for; 512 output tiles over the grid, the weight read again for every one of them."""
    a = l1((1, 128, 32, 512))
    desc = chosen_config(linear(a, dram((512, 128)), l1((1, 128, 32, 128))), GALAXY)
    assert is_plain_program(desc)
    latency = op_latency(GALAXY.system.arch.arch)
    per_k = latency.tile_round_trip_cycles + latency.dram_read_latency_cycles + 2 * sender_read_cycles(GALAXY, 1, 2048)
    assert plain_reads_cycles(desc, GALAXY, 8, 16) == pytest.approx(8 * 16 * per_k)
    p = predict(desc, "galaxy", traced=True)
    cores = min(512, GALAXY.system.spec.compute_grid[0] * GALAXY.system.spec.compute_grid[1])
    waited = GALAXY.system.arch.cycles_ns(math.ceil(512 / cores) * 16 * per_k)
    assert p.memory_ns == pytest.approx(max(waited, plain_weight_banks_ns(desc, GALAXY, cores)))
    in_dram = OpDesc(OpFamily.MATMUL, (dram(a.shape), desc.inputs[1]), desc.outputs, matmul=MatmulConfig())
    assert plain_reads_cycles(in_dram, GALAXY, 8, 16) > plain_reads_cycles(desc, GALAXY, 8, 16)
    given = OpDesc(
        OpFamily.MATMUL, desc.inputs, desc.outputs, core_grid=(8, 8), matmul=MatmulConfig(user_core_grid=True)
    )
    assert not is_plain_program(given) and not is_plain_program(sharded_linear(896, 2112, 28))


def test_the_plain_programs_shared_weight_is_read_from_as_many_banks_as_its_columns():
    """wkv_b2's weight [512, 128] (4 tile columns) is shared by its 128 batches: each K step's reads, on every
    core at once, are of one weight row's 4 tiles, pages on 4 of Wormhole's 12 banks, so the 8192 tile reads
    (128 batches x 4 columns x 16 K tiles) take their bytes at 4 banks' share of the interleaved rate."""
    system = GALAXY.system
    desc = chosen_config(linear(l1((1, 128, 32, 512)), dram((512, 128)), l1((1, 128, 32, 128))), GALAXY)
    four = 4 * system.dram_interleaved_bytes_per_s / system.arch.num_dram_banks
    assert plain_weight_banks_ns(desc, GALAXY, 72) == pytest.approx(8192 * 2048 / four * 1e9)
    assert plain_weight_banks_ns(desc, GALAXY, 2) == pytest.approx(2 * plain_weight_banks_ns(desc, GALAXY, 72))
    wide = chosen_config(linear(l1((1, 128, 32, 512)), dram((512, 1024)), l1((1, 128, 32, 1024))), GALAXY)
    twelve = 12 * system.dram_interleaved_bytes_per_s / system.arch.num_dram_banks  # 32 columns: every bank
    assert plain_weight_banks_ns(wide, GALAXY, 72) == pytest.approx(128 * 32 * 16 * 2048 / twelve * 1e9)
    per_batch = OpDesc(OpFamily.MATMUL, (desc.inputs[0], dram((128, 512, 128))), desc.outputs, matmul=MatmulConfig())
    assert plain_weight_banks_ns(per_batch, GALAXY, 72) == 0.0
    in_l1 = OpDesc(OpFamily.MATMUL, (desc.inputs[0], l1((512, 128))), desc.outputs, matmul=MatmulConfig())
    assert plain_weight_banks_ns(in_l1, GALAXY, 72) == 0.0
