"""ttnn.topk timed as its programs run (meshnn/perf/topk.py)."""

from __future__ import annotations

import math

import pytest

from meshnn.perf import OpDesc, OpFamily, TensorDesc, predict
from meshnn.perf.latency import op_latency
from meshnn.perf.topk import multicore_split, sfpu_instructions, sorted_tiles
from meshnn.perf.topk_sfpu import (
    bitonic_instructions,
    insertion_instructions,
    merge_instructions,
    rebuild_instructions,
    sort_instructions,
)


def test_the_galaxy_tails_rows_split_over_sixteen_cores_of_the_topk_sub_grid():
    # (1,0)-(3,9): x span 2, y span 8 (as find_topk_core_config counts): 16 cores, a power-of-two share first
    assert multicore_split(16384, 32, (3, 10)) == (16, 1024)
    assert multicore_split(19456, 32, (3, 10)) == (16, 1216)  # 38 tiles a core: the row over 16, whole tiles


def test_a_share_needs_a_block_of_cores_the_range_holds():
    # an 8x8 grid counts 7 x 6: 32 cores is no block of it, so the share doubles to 16 cores
    assert multicore_split(32768, 32, (8, 8)) == (16, 2048)


@pytest.mark.parametrize(
    "width, k",
    [(65536, 32), (4096, 32), (32768, 96)],
    ids=["uint16 indices overflow", "below 8192", "k above 64"],
)
def test_the_single_core_program_where_multi_core_cannot_run(width, k):
    assert multicore_split(width, k, (8, 8)) is None
    assert sorted_tiles(width, k, (8, 8)) == (math.ceil(width / 32), 1)


def test_a_multi_core_call_sorts_a_share_then_the_shares_top_k():
    assert sorted_tiles(16384, 32, (3, 10)) == (32 + 16, 17)
    assert sorted_tiles(16384, 64, (3, 10)) == (32 + 32, 17)


def topk(width: int) -> OpDesc:
    x, ids = TensorDesc((1, 1, 32, width), "BFLOAT16"), TensorDesc((1, 1, 32, width), "UINT16")
    outs = (TensorDesc((1, 1, 32, 32), "BFLOAT16"), TensorDesc((1, 1, 32, 32), "UINT16"))
    return OpDesc(OpFamily.COPY, (x, ids), outs, op_code="TopKDeviceOperation")


def test_the_kernel_is_the_busiest_paths_counted_instructions():
    cycles = op_latency("wormhole_b0").topk_instruction_cycles
    multi, single = (predict(topk(w), "n300", mesh_shape=(1, 2), traced=True) for w in (32768, 65536))
    local, final = bitonic_instructions(64, 32, presort=True), bitonic_instructions(16, 32, presort=False)
    assert multi.compute_ns == pytest.approx((local + final) * cycles)  # 16 cores of 64 tiles, then 16 tiles
    assert single.compute_ns == pytest.approx(2047 * sort_instructions(5) * cycles)  # one core inserts each tile
    assert single.cores == 1 and multi.cores == 17


def test_a_sort_counts_its_phases_face_column_by_face_column():
    # phases 0-3: four 16-value groups of load (8), network (7, 8, 13, 2 x 7) and store (8)
    assert sort_instructions(0) == 4 * 4 * (8 + 7 + 8)
    assert sort_instructions(3) - sort_instructions(2) == 4 * 4 * (8 + 14 + 8)
    assert sort_instructions(5) == 4 * (92 + 96 + 116 + 120 + 210 + 304)
    with pytest.raises(ValueError, match="phases 0 to 5"):
        sort_instructions(6)


def test_a_merge_compares_eight_values_an_instruction_group():
    assert merge_instructions(32, 0) == 4 * 8 * 9  # 64 values a face column
    assert merge_instructions(32, 3) == 4 * 8 * 9  # never fewer than 2 k
    assert merge_instructions(8, 3) == 4 * 2 * 9  # 64 >> 3 = 8 < 2 x 8: 16 values
    assert rebuild_instructions(32, 0, False) == 4 * (90 + 120)  # phase 4: step 5, then steps 4 to 1
    assert rebuild_instructions(64, 0, False) == 4 * (94 + 90 + 120)


def test_the_bitonic_rounds_of_a_power_of_two_row():
    # 32 tiles, k 32: 16 pair sorts to phase 4, 16 + 8 + 4 + 2 + 1 merges, 8 + 4 + 2 + 1 rebuilds and a last single one
    sorts, merge, rebuild = 16 * sort_instructions(4), merge_instructions(32, 0), rebuild_instructions(32, 0, False)
    assert bitonic_instructions(32, 32, presort=True) == sorts + 31 * merge + 16 * rebuild
    assert bitonic_instructions(16, 32, presort=False) == 15 * merge + 8 * rebuild
    assert bitonic_instructions(1, 32, presort=False) == 0


def test_the_single_core_program_inserts_every_tile_into_the_kept_k():
    assert insertion_instructions(2048, 32) == 2047 * sort_instructions(5)
    assert insertion_instructions(2048, 64) == 2 * 2047 * sort_instructions(5)  # two kept tiles
    assert insertion_instructions(1, 32) == sort_instructions(5)


def test_a_single_core_tile_costs_more_than_a_multi_core_one():
    # the same row width: the insertion's full sort a tile against the pair sorts and rounds of the split
    single, _ = sfpu_instructions(65536, 32, (8, 8))
    multi, cores = sfpu_instructions(32768, 32, (8, 8))
    per_tile_single, per_tile_multi = single / 2048, multi / (64 + 16)
    assert cores == 17 and per_tile_single > 1.5 * per_tile_multi


@pytest.mark.parametrize(
    ("width", "measured_us", "within"),
    [
        (16160, 8995.514, 0.01),  # fitted: DeepSeek-V3's sampling, a Galaxy device's share (tt-metal #43933)
        (25152, 14000.0, 0.10),  # checked: gpt-oss-120B's sampling step, ~14 ms (tt-metal PR #38509)
    ],
)
def test_the_single_core_program_on_a_galaxy_devices_logits(width, measured_us, within):
    assert multicore_split(width, 32, (7, 10)) is None  # not a power of two: one core inserts every tile
    kernel = predict(topk(width), "galaxy", mesh_shape=(8, 4), traced=True).kernel_ns / 1e3
    assert kernel == pytest.approx(measured_us, rel=within)


def test_the_single_core_programs_tile_moves_are_taken_with_uint16_indices_only():
    moves = op_latency("wormhole_b0").topk_insertion_tile_cycles
    uint16, uint32 = (predict(topk(w), "n150", traced=True).compute_ns for w in (65504, 65536))
    sorts = sort_instructions(5) * op_latency("wormhole_b0").topk_instruction_cycles
    assert uint16 == pytest.approx(2046 * sorts + 2047 * moves)  # 65,504 values: 2,047 tiles, uint16 indices
    assert uint32 == pytest.approx(2047 * sorts)  # 65,536: uint32 indices, the counted sorts alone
