"""rotary_embedding_llama's prefill program on one sequence row, with sin / cos and the transformation matrix
DRAM-interleaved or L1 height-sharded: checks of meshnn.perf.rotary, but the all-sharded row (fitted: it set
``TILE_CALL_CYCLES``, a single-tile call's cost beyond its engines' busy time, as the row with nothing read but
its input).

Source: PR39572 = tt-metal PR #39572 (commit c425b07b57, 2026-03-16: height-sharded sin / cos / matrix for the
prefill program, rotary_embedding_llama_multi_core_prefill_sharded_program_factory.cpp), its table "Performance
of numbers with tracy for the Deepseek_v3 decode batch_size=32, seq_len=1, num_heads=1, head_dim=64 case":
tests/tt_eager/.../test_rotary_embedding_llama.py::test_rotary_embedding_llama_prefill_cos_sin_and_trans_mat_sharding
run on Wormhole chips (device ids 1-7 of a multi-chip machine; DeepSeek's work: a Galaxy, timed here on a Galaxy
chip; a T3000 chip gives the same within 2%), each case one eager call.  DeepSeek's decode rows are emulated in
prefill mode: the input [1, 1, 32, 64] (32 users as one sequence tile row, one head of 64: 2 tiles) DRAM-interleaved,
the output L1-interleaved, sin / cos [1, 1, 32, 64] and the matrix DRAM-interleaved ([1, 1, 32, 32]) or
L1 height-sharded (the matrix [1, 1, 1024, 32]: one tile on each of the 32 users' cores).  The table gives DEVICE
FW DURATION, which holds the kernels' time and the firmware's start and finish around them, so the model's kernel
time should come out a little under it (the fitted row's residual holds that start and finish too: the 70B prefill's
q against k, kernel times, checks the constant apart from it). The same PR's text gives the all-interleaved case as
about 10 us and the sharded one as about 3.9 us; PR #39575 (acd55ca853) measured the model's KV rope at about 3.9 us
with it.
"""

from __future__ import annotations

from meshnn.perf import BufferType, MemoryLayout, OpDesc, OpFamily, TensorDesc, predict

from .figure import Figure

PR39572 = "tt-metal PR #39572 (c425b07b57, 2026-03-16): tracy DEVICE FW DURATION, DeepSeek-V3 kv rope in prefill mode"
GROUP = "prefill ops"
ROTARY = "RotaryEmbeddingLlamaDeviceOperation"
L1_SHARDED = dict(buffer=BufferType.L1, memory=MemoryLayout.HEIGHT_SHARDED)


def kv_rope(cos_sharded: bool, trans_sharded: bool) -> OpDesc:
    """The PR's case: one sequence row of 2 tiles, sin / cos and the matrix interleaved in DRAM or sharded."""
    x, out = TensorDesc((1, 1, 32, 64)), TensorDesc((1, 1, 32, 64), buffer=BufferType.L1)
    cos = TensorDesc((1, 1, 32, 64), **(L1_SHARDED if cos_sharded else {}))
    trans = TensorDesc((1, 1, 1024, 32), **L1_SHARDED) if trans_sharded else TensorDesc((1, 1, 32, 32))
    return OpDesc(OpFamily.BINARY, (x, cos, cos, trans), (out,), op_code=ROTARY)


def us(desc: OpDesc) -> float:
    return predict(desc, "galaxy", mesh_shape=(1, 1), traced=True).kernel_ns / 1e3


def rotary_figures() -> list[Figure]:
    """The PR's four cases: sin / cos and the matrix each DRAM-interleaved or L1-sharded."""
    rows = [  # sin / cos sharded, matrix sharded, published us
        (False, False, 10.073),
        (False, True, 4.227),
        (True, False, 9.598),
        (True, True, 3.960),
    ]
    place = {False: "DRAM", True: "sharded"}
    return [
        Figure(
            f"rotary_embedding_llama prefill, 1 row of 2 tiles: sin/cos {place[cs]}, matrix {place[tm]} (WH)",
            PR39572, pub, pub, "us", lambda cs=cs, tm=tm: us(kv_rope(cs, tm)), fitted=cs and tm, group=GROUP,
        )
        for cs, tm, pub in rows
    ]  # fmt: skip
