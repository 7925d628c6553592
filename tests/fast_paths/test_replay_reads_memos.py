"""A decode layer's attention ops read their inputs through the memos their producers left (issue
34, stop 48: ``nlp_create_qkv_heads_decode``, ``rotary_embedding_llama_fused_qk``, the paged
cache updates, ``scaled_dot_product_attention_decode``, ``nlp_concat_heads_decode`` launched with
``reads_memos``; ``to_memory_config`` of an output whose bytes are still deferred copies its
memo), so a replay leaves those outputs' bytes unwritten.  Each test fails if a memo served a
value its bytes no longer hold: the bytes are those of memos off, after new inputs written into a
trace's input tensors between replays, caches updated at new positions, an input overwritten in
place, and a buffer freed and taken again at the same address."""

from __future__ import annotations

import functools

import numpy as np
import torch

import meshnn as ttnn
from meshnn.ops.memo import VALUES_MEMO

USERS, HQ, HK, D, SEQ, DEVICES = 32, 2, 1, 128, 64, 4


def _cores(count: int) -> ttnn.CoreRangeSet:
    """The first ``count`` cores of an 8-wide grid, row by row."""
    return ttnn.CoreRangeSet(
        [ttnn.CoreRange(ttnn.CoreCoord(0, y), ttnn.CoreCoord(min(8, count - 8 * y) - 1, y)) for y in range(count // 8)]
    )


def _height(width: int, count: int) -> ttnn.MemoryConfig:
    strategy = ttnn.ShardStrategy.HEIGHT
    return ttnn.create_sharded_memory_config(
        (32, width), _cores(count), strategy, use_height_and_width_as_shard_shape=True
    )


@functools.cache
def _values(seed: int) -> tuple[torch.Tensor, ...]:
    """The float32 inputs of ``seed`` (qkv, positions, cos rows, sin rows), made once a process:
    the two runs compared read the same values, whatever torch's math did.  (Made afresh for each
    run, they once differed: the suite's first ``torch.cos`` split over two threads met oneMKL's
    first-call race, pytorch/pytorch#188792, and gave half its table at VML's low accuracy, so
    the memos-on run rotated q by another cos table.  meshnn now settles torch's math before
    that: :mod:`meshnn.host.torch_math`.)"""
    gen = torch.Generator().manual_seed(seed)
    qkv = torch.randn(1, 1, USERS, DEVICES * (HQ + 2 * HK) * D, generator=gen)
    pos = torch.randint(0, SEQ - 1, (USERS,), generator=gen, dtype=torch.int32)
    angles = torch.rand(2 * USERS, D, generator=gen) * 6.28
    return qkv, pos, *(a[None, :, None] for a in (angles.cos(), angles.sin()))


class _Layer:
    """The attention half of a tt_transformers decode layer on a 1x4 mesh (one head group a device)."""

    def __init__(self, mesh) -> None:
        self.mesh = mesh
        rep = ttnn.ReplicateTensorToMesh(mesh)
        mat = torch.zeros(1, 1, 32, 32)
        mat[..., torch.arange(0, 32, 2), torch.arange(1, 32, 2)] = 1
        mat[..., torch.arange(1, 32, 2), torch.arange(0, 32, 2)] = -1
        tile = dict(layout=ttnn.TILE_LAYOUT, device=mesh)
        self.trans = ttnn.from_torch(
            mat.repeat(1, 1, 2 * USERS, 1), dtype=ttnn.bfloat16, mesh_mapper=rep, memory_config=_height(32, 64), **tile
        )
        zeros = torch.zeros(USERS, HK, SEQ, D)
        self.k, self.v = (ttnn.from_torch(zeros, dtype=ttnn.bfloat8_b, mesh_mapper=rep, **tile) for _ in range(2))
        self.inputs = [
            ttnn.to_device(host, mesh, memory_config=config)
            for host, config in zip(self.host_inputs(0), (None, None, _height(D, 64), _height(D, 64)), strict=True)
        ]

    def host_inputs(self, seed: int) -> list[ttnn.Tensor]:
        """qkv ``[1, 1, users, devices x (HQ + 2 HK) x D]`` (sharded by columns), positions, cos, sin."""
        qkv, pos, *rows = _values(seed)
        shard = ttnn.ShardTensorToMesh(self.mesh, dim=-1)
        return [
            ttnn.from_torch(qkv, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, mesh_mapper=shard),
            ttnn.from_torch(pos, dtype=ttnn.int32),
            *(ttnn.from_torch(r, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT) for r in rows),
        ]

    def write(self, seed: int) -> None:
        for host, device in zip(self.host_inputs(seed), self.inputs, strict=True):
            ttnn.copy_host_to_device_tensor(host, device)

    def step(self) -> ttnn.Tensor:
        qkv, pos, cos, sin = self.inputs
        q, k, v = ttnn.experimental.nlp_create_qkv_heads_decode(
            qkv, num_heads=HQ, num_kv_heads=HK, overlap_qk_coregrid=False
        )
        q, k = ttnn.experimental.rotary_embedding_llama_fused_qk(q, k, cos, sin, self.trans)
        ttnn.experimental.paged_fused_update_cache(self.k, k, self.v, v, update_idxs_tensor=pos)
        attn = ttnn.transformer.scaled_dot_product_attention_decode(q, self.k, self.v, cur_pos_tensor=pos)
        self.deferred = attn.storage.mesh_buffer.has_deferred_write()  # the fast paths' precondition
        return ttnn.experimental.nlp_concat_heads_decode(ttnn.to_memory_config(attn, _height(D, USERS)), num_heads=HQ)


def _bytes(*tensors: ttnn.Tensor) -> bytes:
    return b"".join(np.asarray(ttnn.to_numpy(d)).tobytes() for t in tensors for d in ttnn.get_device_tensors(t))


def _with_memos(memos: bool, run):
    limit = VALUES_MEMO.limit
    VALUES_MEMO.limit = (256 << 20) if memos else 0
    VALUES_MEMO.clear()
    try:
        return run()
    finally:
        VALUES_MEMO.clear()
        VALUES_MEMO.limit = limit


def _replays() -> tuple[list[bytes], bool, int]:
    """An eager step, a trace of the next, two replays with new inputs (new positions: the caches
    updated where the replay reads them) and an eager step after: each output's bytes, then the
    caches'."""
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, DEVICES), trace_region_size=1 << 20, system="t3k")
    try:
        layer = _Layer(mesh)
        seen = [_bytes(layer.step())]
        trace = ttnn.begin_trace_capture(mesh, cq_id=0)
        out = layer.step()
        ttnn.end_trace_capture(mesh, trace, cq_id=0)
        hits = VALUES_MEMO.hits
        for seed in (1, 2):
            layer.write(seed)
            ttnn.execute_trace(mesh, trace, cq_id=0, blocking=True)
            seen.append(_bytes(out))
        hits = VALUES_MEMO.hits - hits
        ttnn.release_trace(mesh, trace)
        seen.append(_bytes(layer.step()))  # (the same inputs: the same rows written again)
        seen.append(_bytes(layer.k, layer.v))
        return seen, layer.deferred, hits
    finally:
        ttnn.close_mesh_device(mesh)


def _where_they_differ(with_memos: list[bytes], without: list[bytes]) -> str:
    """Which outputs differ (0: the first eager step, 1-2: the replays, 3: the eager step after, 4:
    the caches: k's devices, then v's), in how many bytes, from which byte to which, and in which
    device blocks."""
    parts = []
    for i, (a, b) in enumerate(zip(with_memos, without, strict=True)):
        if a != b:
            at = np.flatnonzero(np.frombuffer(a, np.uint8) != np.frombuffer(b, np.uint8))
            block = len(a) // (DEVICES * (2 if i == len(with_memos) - 1 else 1))
            blocks = sorted({int(x) // block for x in at})
            parts.append(f"output {i}: {at.size} of {len(a)} bytes differ, {at[0]}..{at[-1]}, device blocks {blocks}")
    return "; ".join(parts)


def test_a_replayed_attention_reads_memos_and_writes_the_bytes_of_memos_off():
    with_memos, deferred, hits = _with_memos(True, _replays)
    without, _, _ = _with_memos(False, _replays)
    assert deferred and hits >= 10, "the ops read their inputs' memos, the attention's output left deferred"
    assert with_memos == without, _where_they_differ(with_memos, without)
    assert with_memos[2] != with_memos[1] and with_memos[1] != with_memos[0], "new inputs give new outputs"
    assert with_memos[3] == with_memos[2], "the replay gave the eager step's bytes"


def _copies(mesh) -> list[bytes]:
    """to_memory_config of a product's output (its bytes deferred): as made, after an in-place write
    into it, and after it is freed and another output takes its address."""
    fmt = dict(dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh)
    a, b, c = (
        ttnn.from_torch(torch.randn(1, 1, 64, 1024, generator=torch.Generator().manual_seed(s)), **fmt)
        for s in (3, 4, 5)
    )
    w = ttnn.from_torch(torch.randn(1024, 1024, generator=torch.Generator().manual_seed(6)), **fmt)
    y = ttnn.matmul(a, w)
    assert y.storage.mesh_buffer.has_deferred_write() == (VALUES_MEMO.limit > 0)
    seen = [_bytes(ttnn.to_memory_config(y, ttnn.L1_MEMORY_CONFIG), y)]
    ttnn.copy_host_to_device_tensor(
        ttnn.from_torch(torch.randn(1, 1, 64, 1024), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT), y
    )
    seen.append(_bytes(ttnn.to_memory_config(y, ttnn.L1_MEMORY_CONFIG), y))
    ttnn.add(a, c, output_tensor=y)  # (in place, by an op)
    seen.append(_bytes(ttnn.to_memory_config(y, ttnn.L1_MEMORY_CONFIG), y))
    address = y.buffer_address()
    ttnn.deallocate(y)
    z = ttnn.multiply(b, c)
    assert z.buffer_address() == address
    seen.append(_bytes(ttnn.to_memory_config(z, ttnn.L1_MEMORY_CONFIG), z))
    return seen


def test_to_memory_config_of_a_deferred_output_copies_what_its_bytes_hold(open_mesh):
    mesh = open_mesh((1, 1))
    torch.manual_seed(0)
    with_memos = _with_memos(True, lambda: _copies(mesh))
    torch.manual_seed(0)
    without = _with_memos(False, lambda: _copies(mesh))
    assert with_memos == without
    assert len(set(with_memos)) == 4
    for seen in with_memos:  # the copy holds the input's bytes
        half = len(seen) // 2
        assert seen[:half] == seen[half:]
