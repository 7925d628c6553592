"""rotary_embedding_llama in prefill (meshnn/perf/rotary.py): the cores tt-metal's program uses (users x
sequence tiles, every head of a row on its core) and the work of a tile."""

from __future__ import annotations

import pytest

from meshnn.perf import BufferType, MemoryLayout, OpDesc, OpFamily, TensorDesc, machine, predict
from meshnn.perf.rotary import predict_rotary_prefill, rotary_prefill_split

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


def test_a_tile_is_a_tile_multiply_two_multiplies_and_an_add_at_hifi4():
    p = predict(rotary(1, 32, 128), "n150", traced=True)
    per_tile = 16 * 4 + (2 * 4 + 1) * 8 + 4 * (2 * 2048) / 140.0  # HiFi4: 4 phases; each op feeds two tiles
    assert p.cores == 4
    assert p.compute_ns == pytest.approx(128 * per_tile)
    assert p.fidelity is not None and p.fidelity.name == "HiFi4"
    more_heads = predict(rotary(1, 64, 128), "n150", traced=True)
    assert more_heads.compute_ns == pytest.approx(2 * p.compute_ns)  # the same 4 cores take twice the tiles


def test_decode_mode_is_not_the_prefill_program():
    """A decode rotary's input is height-sharded in L1: it keeps the element-wise timing over its grid."""
    l1 = dict(buffer=BufferType.L1, memory=MemoryLayout.HEIGHT_SHARDED)
    x = TensorDesc((1, 32, 32, 128), **l1)
    desc = OpDesc(OpFamily.BINARY, (x, x, x, TensorDesc((1, 1, 32, 32), **l1)), (x,), op_code=ROTARY)
    assert predict(desc, "n150").cores == 64  # its tiles over the grid
    assert predict_rotary_prefill(desc, N150).cores == 1  # the prefill split would give 1 user x 1 sequence tile
