"""The prefill head ops as their programs run (meshnn.perf.heads): a block is a tile row of the
sequence, so a short prompt uses few cores; each tile is read alone (a DRAM round trip); a long
sequence spreads over the grid and its bytes bound it; sharded inputs are timed as copies."""

from __future__ import annotations

import pytest

from meshnn.perf import BufferType, MemoryLayout, OpDesc, OpFamily, TensorDesc, predict
from meshnn.perf.heads import CONCAT, CREATE, heads_split, is_heads_prefill
from meshnn.perf.latency import WORMHOLE_B0 as LAT
from meshnn.perf.systems import machine
from meshnn.perf.traffic import transfer_efficiency


def create(tokens: int, heads: int = 8, kv: int = 1, dtype: str = "BFLOAT8_B") -> OpDesc:
    qkv = TensorDesc((1, 1, tokens, (heads + 2 * kv) * 128), dtype)
    q, k = TensorDesc((1, heads, tokens, 128), dtype), TensorDesc((1, kv, tokens, 128), dtype)
    return OpDesc(OpFamily.COPY, (qkv,), (q, k, k), op_code=CREATE)


def concat(tokens: int, heads: int = 8) -> OpDesc:
    x = TensorDesc((1, heads, tokens, 128))
    return OpDesc(OpFamily.COPY, (x,), (TensorDesc((1, 1, tokens, heads * 128)),), op_code=CONCAT)


def test_a_short_prompt_runs_on_a_core_per_tile_row_whatever_its_heads():
    n150 = machine("n150")
    assert heads_split(create(128), n150) == (4, 40)  # 4 tile rows; (8 + 2) x 4 tiles a row
    assert heads_split(create(128, heads=32, kv=8), n150) == (4, 192)
    assert heads_split(concat(128), n150) == (4, 32)
    assert heads_split(concat(4096), n150) == (64, 2 * 32)  # 128 tile rows over the 8x8 grid


def test_each_tile_costs_a_round_trip():
    small, big = (predict(concat(128, heads), "n150") for heads in (8, 32))
    extra_tiles = 4 * (32 - 8)  # a core's tiles: 4 per head
    per_tile = (big.compute_ns - small.compute_ns) / extra_tiles
    assert per_tile == pytest.approx(LAT.tile_round_trip_cycles + 2048 / 30.0)  # 1 GHz: cycles = ns
    assert big.kernel_ns > 3 * small.memory_ns  # not the bytes: the waits
    assert "read one at a time" in small.notes[0]


def test_a_long_sequence_is_bound_by_its_bytes():
    long = predict(concat(4096 * 4), "n150")
    assert long.memory_ns > long.compute_ns and long.kernel_ns >= long.memory_ns


def test_a_sharded_input_is_not_this_program():
    l1 = {"buffer": BufferType.L1, "memory": MemoryLayout.HEIGHT_SHARDED}
    sharded = OpDesc(OpFamily.COPY, (TensorDesc((1, 8, 128, 128), **l1),), (TensorDesc((1, 1, 128, 1024)),))
    sharded = OpDesc(sharded.family, sharded.inputs, sharded.outputs, op_code=CONCAT)
    assert is_heads_prefill(concat(128)) and not is_heads_prefill(sharded)
    assert predict(sharded, "n150").notes == ()
    assert LAT.sources["tile_round_trip_cycles"].startswith("fitted")


def test_a_block_float_tile_waits_the_same_round_trip_and_moves_fewer_bytes():
    """The 70B layer's SDPA output is bfloat8_b (q is typecast to bfloat8_b before it): the concat's
    reads wait the same round trip, and each 1088 B tile crosses the NoC at tt-npe's rate for its size."""
    n150 = machine("n150")

    def bfp8(tokens: int) -> OpDesc:
        x, out = TensorDesc((1, 8, tokens, 128), "BFLOAT8_B"), TensorDesc((1, 1, tokens, 1024), "BFLOAT8_B")
        return OpDesc(OpFamily.COPY, (x,), (out,), op_code=CONCAT)

    bf16, bf8 = predict(concat(128), n150), predict(bfp8(128), n150)
    transfer = 1088 / (30.0 * transfer_efficiency(n150.system.arch, 1088))
    assert bf8.compute_ns == pytest.approx(32 * (LAT.tile_round_trip_cycles + transfer))
    assert bf16.compute_ns - bf8.compute_ns == pytest.approx(32 * (2048 / 30.0 - transfer))
