"""ttnn.topk timed as its programs run (meshnn/perf/topk.py)."""

from __future__ import annotations

import math

import pytest

from meshnn.perf import OpDesc, OpFamily, TensorDesc, predict
from meshnn.perf.latency import op_latency
from meshnn.perf.topk import multicore_split, sorted_tiles


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


def test_the_kernel_is_the_busiest_paths_sorted_tiles():
    cycles = op_latency("wormhole_b0").topk_tile_cycles
    multi, single = (predict(topk(w), "n300", mesh_shape=(1, 2), traced=True) for w in (32768, 65536))
    assert multi.compute_ns == pytest.approx((64 + 16) * cycles)  # 16 cores of 64 tiles, then 16 tiles
    assert single.compute_ns == pytest.approx(2048 * cycles)  # one core, the whole row
    assert single.cores == 1 and multi.cores == 17
