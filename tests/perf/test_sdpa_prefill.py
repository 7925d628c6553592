"""Prefill attention timed as the flash kernel splits its work (meshnn/perf/attention.py)."""

from __future__ import annotations

import math

import pytest

from meshnn.perf import AttentionConfig, MathFidelity, OpDesc, OpFamily, TensorDesc, machine, predict
from meshnn.perf.attention import busiest_core_steps, diagonal_mask_reads, exposed_cycles
from meshnn.perf.movement_programs import waited_read_cycles, waited_write_cycles


def causal_steps(j: int) -> int:
    return j + 1  # equal Q and K chunks: Q chunk j attends K chunks 0..j


def test_an_odd_share_of_q_chunks_leaves_the_last_chunks_core_the_busiest():
    # 128 tokens in chunks of 64, 8 heads on 70 cores: 16 cores of one chunk; the second chunk's core runs 2 steps
    assert busiest_core_steps(1, 8, 2, causal_steps, 70, causal=True) == (2, 16)


def test_an_even_share_pairs_a_low_chunk_with_a_high_one():
    # 4096 tokens in chunks of 256, 8 heads on 70 cores: 8 cores a head, chunks i and 15 - i: 17 steps each
    assert busiest_core_steps(1, 8, 16, causal_steps, 70, causal=True) == (17, 64)
    # unbalanced (non-causal split of the same chunks), each core runs its chunks' whole K
    assert busiest_core_steps(1, 8, 16, lambda j: 16, 70, causal=False) == (32, 64)


def test_heads_beyond_the_grid_queue_on_their_cores():
    steps, cores = busiest_core_steps(2, 64, 4, causal_steps, 64, causal=True)
    assert cores == 64 and steps == math.ceil(64 / 32) * 10  # 32 heads' cores a batch, 2 heads each, all 4 chunks


def sdpa(tokens: int, chunk: int) -> OpDesc:
    q, kv = TensorDesc((1, 8, tokens, 128), "BFLOAT8_B"), TensorDesc((1, 1, tokens, 128), "BFLOAT8_B")
    config = AttentionConfig(q_chunk=chunk, k_chunk=chunk, causal=True)
    return OpDesc(OpFamily.SDPA, (q, kv, kv), (q,), fidelity="HiFi4", core_grid=(7, 10), attention=config)


def test_the_kernel_is_its_busiest_cores_steps():
    one, two = (predict(sdpa(t, 64), "galaxy", mesh_shape=(8, 4), traced=True) for t in (64, 128))
    # 64 tokens: one step a core; 128: the busiest core runs two of the same steps (its launch aside)
    assert math.isclose(two.compute_ns, 2 * one.compute_ns)


def test_a_causal_mask_is_read_only_where_chunks_cross_the_diagonal():
    # 4 Q chunks of 64 rows, K chunks of 64: each Q chunk reads one 2x2-tile block, 16 of the mask's 64 tiles
    assert diagonal_mask_reads(1, 4, 64, 64, 256) == 16 / 64
    # Q chunks of 128, K chunks of 64: each Q chunk crosses two K chunks, 4x2 tiles each; 8 heads read it each
    assert diagonal_mask_reads(8, 2, 128, 64, 256) == 8 * 2 * 2 * 8 / 64
    # K chunks of 128 over Q chunks of 64: each Q chunk's diagonal lies in one 2x4-tile block
    assert diagonal_mask_reads(1, 4, 64, 128, 256) == 4 * 8 / 64


def chart_call(mask: bool) -> OpDesc:
    x = TensorDesc((32, 16, 512, 128), "BFLOAT16")
    inputs = (x, x, x, TensorDesc((32, 1, 512, 512), "BFLOAT16")) if mask else (x, x, x)
    config = AttentionConfig(q_chunk=256, k_chunk=64, causal=True)
    return OpDesc(OpFamily.SDPA, inputs, (x,), fidelity="HiFi2", core_grid=(8, 8), attention=config)


def test_a_causal_calls_mask_adds_its_diagonal_reads_not_the_whole_mask():
    bare, masked = (predict(chart_call(m), "n150", mesh_shape=(1, 1), traced=True) for m in (False, True))
    mask = TensorDesc((32, 1, 512, 512), "BFLOAT16")
    # 16 heads, each Q chunk of 8 rows crossing 4 K chunks of 2 tiles: 2 x 8 x 8 of the 256 tiles a batch
    assert masked.dram_bytes - bare.dram_bytes == int(mask.nbytes * 16 * 2 * 8 * 8 / 256)
    assert masked.compute_ns == bare.compute_ns and masked.memory_ns > bare.memory_ns


def test_the_first_chunks_reads_and_the_last_chunks_output_are_exposed():
    """Before its first step a core waits for its first Q chunk's read, then its first K chunk's; after its last
    it normalises and writes its output block: those are the call's fixed cost beyond the launch."""
    galaxy = machine("galaxy", (8, 4))
    desc = sdpa(128, 64)  # Q and K chunks of 2 x 4 bfloat8_b tiles (1088 B)
    cycles = exposed_cycles(desc, galaxy, 2, 2, 4, MathFidelity.HiFi4)
    reads = 2 * waited_read_cycles(galaxy, 8 * 1088)
    write = waited_write_cycles(galaxy, 8 * 1088)
    assert reads + write < cycles < reads + write + 8 * 200  # plus the 8 output tiles' normalising multiply
    p = predict(desc, "galaxy", mesh_shape=(8, 4), traced=True)
    launch = galaxy.system.arch.op_launch_ns
    assert p.fixed_ns == pytest.approx(launch + galaxy.system.arch.cycles_ns(cycles))
    # the same call on 4x the tokens has 4x larger chunks' reads exposed, once, whatever its steps
    big = exposed_cycles(sdpa(4096, 256), galaxy, 8, 8, 4, MathFidelity.HiFi4)
    assert big > cycles
