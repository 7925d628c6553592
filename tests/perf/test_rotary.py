"""rotary_embedding_llama in prefill (meshnn/perf/rotary.py): the cores tt-metal's program uses (users x
sequence tiles, every head of a row on its core) and the work of a tile."""

from __future__ import annotations

import pytest

from meshnn.perf import BufferType, MathFidelity, MemoryLayout, OpDesc, OpFamily, TensorDesc, machine, predict
from meshnn.perf.movement_programs import waited_read_cycles, waited_write_cycles
from meshnn.perf.rotary import (
    TILE_CALL_CYCLES,
    gate_rows,
    grid_cycles,
    in_place,
    pipeline_cycles,
    predict_rotary_prefill,
    rotary_prefill_split,
    shared_page_ns,
    sin_cos_reads,
    stage_pack_cycles,
    tile_cycles,
)
from meshnn.perf.traffic import transfer_efficiency

N150 = machine("n150")
ROTARY = "RotaryEmbeddingLlamaDeviceOperation"


def rotary(batch: int, heads: int, seq: int, **memory) -> OpDesc:
    x = TensorDesc((batch, heads, seq, 128), **memory)
    cos = TensorDesc((1, 1, seq, 128))
    return OpDesc(OpFamily.BINARY, (x, cos, cos, TensorDesc((1, 1, 32, 32))), (x,), op_code=ROTARY)


@pytest.mark.parametrize(
    ("batch", "heads", "seq", "cores", "tiles"),
    [
        (1, 32, 128, 4, 32 * 4),  # one user's 128 tokens: 4 sequence tiles, 4 cores, whatever the heads
        (1, 8, 128, 4, 8 * 4),
        (1, 8, 4096, 64, 2 * 8 * 4),  # 128 sequence tiles over the 64 cores: 2 rows a core
        (2, 8, 256, 16, 8 * 4),  # 2 users x 8 sequence tiles
    ],
)
def test_a_prefill_splits_users_and_sequence_tiles_only(batch, heads, seq, cores, tiles):
    assert rotary_prefill_split(rotary(batch, heads, seq), N150) == (cores, tiles)


def test_a_tile_is_a_tile_multiply_two_multiplies_and_an_add_at_hifi4_and_four_packs():
    per_tile = 16 * 4 + (2 * 4 + 1) * 8 + 4 * (2 * 2048) / 140.0  # HiFi4: 4 phases; each op feeds two tiles
    per_tile += 4 * 2048 / 64.0  # the rotated tile, the two products and the output, packed to L1
    per_tile += 4 * TILE_CALL_CYCLES  # each of the four is a single-tile call of its own
    assert tile_cycles(rotary(1, 32, 128), N150, MathFidelity.HiFi4) == pytest.approx(per_tile)
    p = predict(rotary(1, 32, 128), "n150", traced=True)
    assert p.cores == 4
    assert p.fidelity is not None and p.fidelity.name == "HiFi4"


def test_a_core_runs_its_rows_through_a_read_compute_write_pipeline():
    """32 heads x 1 sequence tile a core (reloading sin and cos): the first row's waited read, then each
    row's slowest stage (its compute: 4 tiles), then the last row's waited write."""
    desc = rotary(1, 32, 128)
    row = 4 * tile_cycles(desc, N150, MathFidelity.HiFi4)
    first = waited_read_cycles(N150, 3 * 4 * 2048)  # input, sin and cos tiles of the row
    last = waited_write_cycles(N150, 4 * 2048)
    assert row > waited_read_cycles(N150, 3 * 4 * 2048)  # compute is the slowest stage here
    assert pipeline_cycles(desc, N150, MathFidelity.HiFi4) == pytest.approx(first + 32 * row + last)
    p = predict(desc, "n150", traced=True)
    assert p.compute_ns == pytest.approx((first + 32 * row + last) / 1.0)  # N150 at 1 GHz
    more_heads = predict(rotary(1, 64, 128), "n150", traced=True)
    assert more_heads.compute_ns == pytest.approx(first + 64 * row + last)  # the same 4 cores, twice the rows


def test_one_row_a_core_pays_its_read_compute_and_write_in_turn():
    """k's call at 128 tokens: one row a core, so nothing overlaps: read, compute, write summed."""
    desc = rotary(1, 1, 128)
    row = 4 * tile_cycles(desc, N150, MathFidelity.HiFi4)
    expected = waited_read_cycles(N150, 3 * 4 * 2048) + row + waited_write_cycles(N150, 4 * 2048)
    assert pipeline_cycles(desc, N150, MathFidelity.HiFi4) == pytest.approx(expected)


def test_without_reloads_only_a_users_first_heads_rows_bring_sin_and_cos():
    """4 heads x 2 sequence rows a core (8 rows: kept): the first head's 2 rows read sin and cos with their input,
    the other 6 rows their input only; the compute waits for both rows of sin and cos before its first row, and the
    64 cores read those rows together, at the DRAM's rate."""
    desc = rotary(1, 4, 4096)
    assert sin_cos_reads(desc, N150) == 1
    assert gate_rows(desc, N150) == 2
    compute = 4 * tile_cycles(desc, N150, MathFidelity.HiFi4)
    write = waited_write_cycles(N150, 4 * 2048)
    with_sc, without = waited_read_cycles(N150, 3 * 4 * 2048), waited_read_cycles(N150, 4 * 2048)
    start = max(2 * with_sc, grid_cycles(desc, N150, 2, 0))
    steps = 6 * max(compute, write, without) + 2 * max(compute, write)
    last = max(write, grid_cycles(desc, N150, 0, 1))
    assert pipeline_cycles(desc, N150, MathFidelity.HiFi4) == pytest.approx(start + steps + last)


@pytest.mark.parametrize(
    ("heads", "seq", "gate"),
    [
        (8, 128, 1),  # one sequence row a core
        (1, 4096, 2),  # 2 sequence rows a core, sin and cos kept: both read before the first row's compute
        (8, 4096, 1),  # 16 rows a core: reloading, each row waits for its own sin and cos only
    ],
)
def test_the_compute_waits_for_all_its_kept_rows_of_sin_and_cos(heads, seq, gate):
    assert gate_rows(rotary(1, heads, seq), N150) == gate


def test_the_grids_reads_of_the_gated_rows_take_their_bytes_at_the_dram_rate():
    """k at 4096 tokens on N150: 64 cores x 2 rows x (4 input + 4 sin + 4 cos tiles) read together, each 2 KB tile
    at the interleaved rate's single-transfer share."""
    desc = rotary(1, 1, 4096)
    arch = N150.system.arch
    rate = N150.system.dram_interleaved_bytes_per_s * transfer_efficiency(arch, 2048)
    expected_ns = 64 * 2 * 12 * 2048 / rate * 1e9
    assert grid_cycles(desc, N150, 2, 0) == pytest.approx(expected_ns * arch.clock_hz / 1e9)
    assert grid_cycles(desc, N150, 0, 1) == pytest.approx(64 * 4 * 2048 / rate * 1e9 * arch.clock_hz / 1e9)


def test_decode_mode_is_not_the_prefill_program():
    """A decode rotary's input is height-sharded in L1: it keeps the element-wise timing over its grid."""
    l1 = dict(buffer=BufferType.L1, memory=MemoryLayout.HEIGHT_SHARDED)
    x = TensorDesc((1, 32, 32, 128), **l1)
    desc = OpDesc(OpFamily.BINARY, (x, x, x, TensorDesc((1, 1, 32, 32), **l1)), (x,), op_code=ROTARY)
    assert predict(desc, "n150").cores == 64  # its tiles over the grid
    assert predict_rotary_prefill(desc, N150).cores == 1  # the prefill split would give 1 user x 1 sequence tile


def test_cores_beyond_the_last_run_of_sequence_tiles_get_none():
    """128 sequence tiles on a Galaxy chip's 72 cores: runs of 2 tiles, so 64 cores have work."""
    assert rotary_prefill_split(rotary(1, 8, 4096), machine("galaxy", (8, 4))) == (64, 2 * 8 * 4)


@pytest.mark.parametrize(
    ("heads", "seq", "reads"),
    [
        (8, 128, 1),  # 1 sequence row x 8 heads a core: sin and cos kept
        (32, 128, 32),  # 32 rows a core: re-read for every row, once per head
        (1, 4096, 1),  # 2 rows a core
        (8, 4096, 8),  # 16 rows a core
    ],
)
def test_a_core_of_more_than_8_rows_rereads_sin_and_cos_every_row(heads, seq, reads):
    desc = rotary(1, heads, seq)
    assert sin_cos_reads(desc, N150) == reads
    cos_bytes = 2 * desc.inputs[1].nbytes
    once = desc.inputs[0].nbytes + desc.outputs[0].nbytes + desc.inputs[3].nbytes
    assert predict(desc, "n150").dram_bytes == once + reads * cos_bytes


def test_sin_and_cos_per_head_are_read_per_head():
    x = TensorDesc((1, 4, 128, 128))
    cos = TensorDesc((1, 4, 128, 128))
    desc = OpDesc(OpFamily.BINARY, (x, cos, cos, TensorDesc((1, 1, 32, 32))), (x,), op_code=ROTARY)
    assert sin_cos_reads(desc, N150) == 4


def test_every_core_of_the_grid_reads_the_one_page_transformation_matrix_from_one_bank():
    """The reader runs on the whole grid and reads the DRAM-interleaved matrix first: the grid's reads of
    its one page through one bank's share of the DRAM rate (N150: 64 cores x 2 KB); an L1-sharded
    matrix costs nothing of the kind."""
    desc = rotary(1, 8, 128)
    bank = N150.system.dram_sharded_bytes_per_s / N150.system.arch.num_dram_banks
    assert shared_page_ns(desc, N150) == pytest.approx(64 * 2048 / bank * 1e9)
    galaxy = machine("galaxy", (8, 4))
    assert shared_page_ns(desc, galaxy) == pytest.approx(
        72 * 2048 / (galaxy.system.dram_sharded_bytes_per_s / 12) * 1e9
    )
    p = predict(desc, "n150", traced=True)
    assert p.fixed_ns == pytest.approx(N150.system.arch.op_launch_ns + shared_page_ns(desc, N150))
    l1 = TensorDesc((1, 1, 32, 32), buffer=BufferType.L1, memory=MemoryLayout.HEIGHT_SHARDED)
    sharded = OpDesc(OpFamily.BINARY, (*desc.inputs[:3], l1), desc.outputs, op_code=ROTARY)
    assert shared_page_ns(sharded, N150) == 0.0


def test_each_stage_packs_its_result_in_its_buffers_format():
    """The rotated tile in the input's format, the sin / cos products in sin's / cos's, the output in its own:
    a bfloat8_b output packs 1088 bytes where a bfloat16 one packs 2048."""
    x, cos = TensorDesc((1, 8, 128, 128)), TensorDesc((1, 1, 128, 128))
    out = TensorDesc((1, 8, 128, 128), "BFLOAT8_B")
    desc = OpDesc(OpFamily.BINARY, (x, cos, cos, TensorDesc((1, 1, 32, 32))), (out,), op_code=ROTARY)
    assert stage_pack_cycles(desc, N150) == (3 * 2048 + 1088) / N150.system.arch.packer_bytes_per_cycle
    assert stage_pack_cycles(rotary(1, 8, 128), N150) == 4 * 2048 / 64.0


def test_deepseeks_indexed_rotary_is_timed_as_the_same_program():
    """rotary_embedding_indexed forks the reader alone (it starts at a per-device row of sin and cos):
    the same split, tile work and HiFi4 default."""
    llama = predict(rotary(1, 8, 256), "n150", traced=True)
    x, cos = TensorDesc((1, 8, 256, 128)), TensorDesc((1, 1, 4096, 128))  # a taller (sharded) cache
    desc = OpDesc(OpFamily.BINARY, (x, cos, cos, TensorDesc((1, 1, 32, 32))), (x,),
                  op_code="RotaryEmbeddingIndexedDeviceOperation")  # fmt: skip
    indexed = predict(desc, "n150", traced=True)
    assert indexed.cores == llama.cores == 8
    assert indexed.compute_ns == pytest.approx(llama.compute_ns)
    assert indexed.fidelity is not None and indexed.fidelity.name == "HiFi4"


def _deepseek_kv_rope(cos_sharded: bool, trans_sharded: bool) -> OpDesc:
    """DeepSeek-V3's kv rope in prefill mode (tt-metal #39572): 32 users as one sequence tile row of one 64-wide
    head, the input in DRAM, the output L1-interleaved; sin / cos and the matrix DRAM-interleaved or L1
    height-sharded (the matrix then one tile on each of the 32 users' cores)."""
    l1 = dict(buffer=BufferType.L1, memory=MemoryLayout.HEIGHT_SHARDED)
    x, out = TensorDesc((1, 1, 32, 64)), TensorDesc((1, 1, 32, 64), buffer=BufferType.L1)
    cos = TensorDesc((1, 1, 32, 64), **(l1 if cos_sharded else {}))
    trans = TensorDesc((1, 1, 1024, 32), **l1) if trans_sharded else TensorDesc((1, 1, 32, 32))
    return OpDesc(OpFamily.BINARY, (x, cos, cos, trans), (out,), op_code=ROTARY)


def test_a_sharded_matrix_is_read_in_place_and_an_interleaved_one_a_tile_at_most():
    """The sharded program puts the matrix's circular buffer on each core's shard: no read, no queue at a bank;
    an interleaved matrix is read one tile, whatever its size (the 2025 prefill matrix is 128 x 128)."""
    sharded = _deepseek_kv_rope(cos_sharded=False, trans_sharded=True)
    assert in_place(sharded, N150) == (False, True)
    assert shared_page_ns(sharded, N150) == 0.0
    x, cos = sharded.inputs[0], sharded.inputs[1]
    read = x.nbytes + 2 * cos.nbytes  # the input and one read of sin and cos, all DRAM
    assert predict(sharded, "n150").dram_bytes == read
    big = TensorDesc((1, 1, 128, 128))  # 16 tiles in DRAM: its first is read
    desc = OpDesc(OpFamily.BINARY, (*sharded.inputs[:3], big), sharded.outputs, op_code=ROTARY)
    assert predict(desc, "n150").dram_bytes == read + big.tile_bytes


def test_sharded_sin_and_cos_are_read_in_place_by_cores_of_one_row():
    """One sequence row a core: sin and cos come from the core's shards, so a row's waited read is its input's
    alone; with more rows a core the program reads each row's sin and cos through the NoC (reloading)."""
    desc = _deepseek_kv_rope(cos_sharded=True, trans_sharded=True)
    assert in_place(desc, N150) == (True, True)
    row = 2 * tile_cycles(desc, N150, MathFidelity.HiFi4)
    expected = waited_read_cycles(N150, 2 * 2048) + row + waited_write_cycles(N150, 2 * 2048)
    assert pipeline_cycles(desc, N150, MathFidelity.HiFi4) == pytest.approx(expected)
    assert predict(desc, "n150").dram_bytes == desc.inputs[0].nbytes
    l1 = dict(buffer=BufferType.L1, memory=MemoryLayout.HEIGHT_SHARDED)
    x, cos = TensorDesc((1, 8, 8192, 128)), TensorDesc((1, 1, 8192, 128), **l1)  # 4 rows a core on 64 cores
    tall = OpDesc(OpFamily.BINARY, (x, cos, cos, desc.inputs[3]), (x,), op_code=ROTARY)
    assert in_place(tall, N150) == (False, True)
    assert sin_cos_reads(tall, N150) == 8  # the sharded program always reloads: once per head


def test_a_cores_further_rows_each_cost_their_tiles_calls():
    """q's 8 rows a core at 128 tokens against k's 1 (both 4 tiles a row, the same cores, reads and matrix queue):
    the 7 further rows are compute-bound steps of the pipeline, each 4 tiles of 4 single-tile calls."""
    galaxy = machine("galaxy", (8, 4))
    q, k = rotary(1, 8, 128), rotary(1, 1, 128)
    extra = predict(q, galaxy, traced=True).kernel_ns - predict(k, galaxy, traced=True).kernel_ns
    assert extra == pytest.approx(7 * 4 * tile_cycles(q, galaxy, MathFidelity.HiFi4))  # Wormhole: 1 cycle = 1 ns
    without_calls = 7 * 4 * (tile_cycles(q, galaxy, MathFidelity.HiFi4) - 4 * TILE_CALL_CYCLES)
    assert extra - without_calls == pytest.approx(7 * 4 * 4 * TILE_CALL_CYCLES)
