"""``ttnn.experimental.moe_gpt`` against numpy: gpt-oss's fused decode experts.

Weights are packed here by :mod:`moe_gpt_packing` (written forward from gpt-oss's packing), put on
the 12 DRAM banks in ring order as gpt-oss's config puts them, and read back quantized
(bfloat4_b); the reference unpacks those values through the same packing of index arrays, runs
``x W0 + b0``, ``x W1 + b1``, the clamped SwiGLU and ``a W2 + b2`` in float32 with bfloat16
roundings where the kernel packs bfloat16, and routes tokens as ttnn describes.  Routing metadata
is exact; the expert outputs differ from the reference by float32 summation order only, bounded
by two bfloat16 units (2^-7 relative) of every intermediate activation's contribution plus the
output's own rounding.  Meshes: 1x8 (T3000, dispatch along axis 1) and 4x8 (Galaxy, gpt-oss's
axis 0, end to end: dispatch metadata, moe_gpt, selective_reduce_combine)."""

from __future__ import annotations

import functools

import numpy as np
import torch

import meshnn as ttnn

from .moe_gpt_packing import HIDDEN, TILE, pack_w0_w1, pack_w2, unpack, with_bias

RM = ttnn.ROW_MAJOR_LAYOUT
BF16_ULP = 2.0**-8


def bf16(a):
    return torch.tensor(np.ascontiguousarray(a, np.float32)).bfloat16().float().numpy()


def swiglu(g, u):
    g = np.minimum(g, 7.0)
    return (np.clip(u, -7.0, 7.0) + 1.0) * g / (1.0 + np.exp(-1.702 * g))


def ring_banks(mesh):
    cores = mesh.get_optimal_dram_bank_to_logical_worker_assignment(0)
    return sorted(range(len(cores)), key=lambda b: (cores[b].y, cores[b].x), reverse=True)


def dram_ring(mesh, shard_rows):
    grid = ttnn.CoreRangeSet([ttnn.CoreRange(ttnn.CoreCoord(b, 0), ttnn.CoreCoord(b, 0)) for b in ring_banks(mesh)])
    spec = ttnn.ShardSpec(grid, (shard_rows, 4 * TILE), ttnn.ShardOrientation.ROW_MAJOR)
    return ttnn.MemoryConfig(ttnn.TensorMemoryLayout.HEIGHT_SHARDED, ttnn.BufferType.DRAM, spec)


def expert_weights(rng, experts):
    """Per expert: augmented gate, up (K+32, N) and down (N+32, K) with their bias tiles."""
    scale = 1.0 / np.sqrt(HIDDEN)
    out = []
    for _ in range(experts):
        w = [rng.standard_normal((HIDDEN, HIDDEN), dtype=np.float32) * np.float32(scale) for _ in range(3)]
        b = [rng.standard_normal(HIDDEN, dtype=np.float32) * np.float32(0.1) for _ in range(3)]
        out.append([with_bias(w[i], b[i]) for i in range(3)])
    return out


@functools.lru_cache(maxsize=1)
def packed_weights(seed, experts):
    """Packed (12, 1, E, groups, rows, 128) host tensors of ``experts`` random experts (made once)."""
    dev = expert_weights(np.random.default_rng(seed), experts)
    w01 = np.stack([pack_w0_w1(g, u) for g, u, _ in dev], axis=1)[:, None]
    w2 = np.stack([pack_w2(d) for _, _, d in dev], axis=1)[:, None]
    return torch.tensor(w01), torch.tensor(w2)


def put_weights(mesh, seed, experts):
    """The packed weights on every device, bfloat4_b, shard i on ring position i's bank."""
    tensors = []
    for arr in packed_weights(seed, experts):
        tensors.append(ttnn.from_torch(arr, dtype=ttnn.bfloat4_b, layout=ttnn.TILE_LAYOUT, device=mesh,
                                       memory_config=dram_ring(mesh, int(np.prod(arr.shape[1:5]))),
                                       mesh_mapper=ttnn.ReplicateTensorToMesh(mesh)))  # fmt: skip
    return tensors


def quantized_experts(tensor01, tensor2, device):
    """The reference's float32 weights: device ``device``'s quantized packed values unpacked."""
    v01 = ttnn.to_torch(ttnn.get_device_tensors(tensor01)[device]).float().numpy()[:, 0]  # (12, E, 4, r, 128)
    v2 = ttnn.to_torch(ttnn.get_device_tensors(tensor2)[device]).float().numpy()[:, 0]
    rows = HIDDEN + TILE
    idx = np.arange(rows * HIDDEN).reshape(rows, HIDDEN)
    i01 = pack_w0_w1(idx, idx + rows * HIDDEN, pad=-1)
    i2 = pack_w2(idx, pad=-1)
    out = []
    for e in range(v01.shape[1]):
        both = unpack(v01[:, e], i01, (2 * rows, HIDDEN))
        gate, up, down = both[:rows], both[rows:], unpack(v2[:, e], i2, (rows, HIDDEN))
        parts = [(np.ascontiguousarray(m[:HIDDEN].T), m[HIDDEN:].sum(0)) for m in (gate, up, down)]
        out.append([*parts, np.abs(parts[2][0])])
    return out


def reference(x, weights):
    """bfloat16 outputs of one expert (transposed weights, as :func:`quantized_experts` keeps
    them) and the bound of each element."""
    (g, gb), (u, ub), (d, db), abs_d = weights
    a = bf16(swiglu(bf16((g @ x.T).T + gb), bf16((u @ x.T).T + ub)))
    y = (d @ a.T).T + db
    bound = 2 * 2 * BF16_ULP * (abs_d @ np.abs(a).T).T + BF16_ULP * np.abs(y) + 1e-6
    return bf16(y), bound


def routed(ids, mapping, me, sources, experts):
    """ttnn's routing of one device: local experts, their tokens, activation rows."""
    local = [x for x in range(mapping.shape[1]) if mapping[me, x] == me][:experts]
    tokens, rows = [[] for _ in local], []
    for t, row in enumerate(ids):
        if len(row) > 1 and len(set(row)) == 1:
            continue
        picks = {local.index(x): k for k, x in enumerate(row) if mapping[sources[t], x] == me and x in local}
        for e in picks:
            tokens[e].append(t)
        if picks:
            rows.append((t, picks))
    return tokens, rows


def check_metadata(outs, device, tokens, rows, scores, experts, k_sel):
    counts, acts, maps = (ttnn.to_torch(ttnn.get_device_tensors(o)[device]).numpy().astype(np.int64) & 0xFFFFFFFF
                          for o in outs[:3])  # fmt: skip
    width = -(-(2 * experts + 1) // 4) * 4
    assert counts.reshape(-1)[:experts].tolist() == [len(t) for t in tokens]
    table = acts.reshape(-1, width)
    for i, (t, picks) in enumerate([*rows, (0xFFFFFFFF, {})]):
        want = [t] + [picks.get(e, k_sel + 1) for e in range(experts)]
        want += [int(scores[t, picks[e]]) if e in picks else 0 for e in range(experts)]
        assert table[i, : 2 * experts + 1].tolist() == want
    entries = maps.reshape(experts, -1, 4)[:, :, 0]
    for e in range(experts):
        assert entries[e, : len(tokens[e]) + 1].tolist() == [*tokens[e], 0xFFFFFFFF]


def combine_rows(dense, device, mesh, tokens_total, experts, width=3, height=4):
    """The combine cores' rows of each expert: ``rows[e][j]`` the ``j``-th token's bfloat16 output."""
    values = ttnn.to_torch(ttnn.get_device_tensors(dense)[device]).float().numpy()
    grid = mesh.compute_with_storage_grid_size()
    taken = {(c.x, c.y) for c in mesh.get_optimal_dram_bank_to_logical_worker_assignment(0)}
    rect = next((sx, sy) for sy in range(grid.y - height + 1) for sx in range(grid.x - width + 1)
                if all((sx + dx, sy + dy) not in taken for dy in range(height) for dx in range(width)))  # fmt: skip
    seg, per = HIDDEN // width, tokens_total // height
    shards = values.reshape(values.shape[0], -1)
    out = []
    for e, n in enumerate(experts):
        chunk, rem = divmod(n, height)
        rows = []
        for h in range(height):
            for r in range(chunk + (h < rem)):
                parts = [shards[(rect[1] + h) * grid.x + rect[0] + w, (e * per + r) * seg : (e * per + r + 1) * seg]
                         for w in range(width)]  # fmt: skip
                rows.append(np.concatenate(parts))
        out.append(np.array(rows).reshape(n, HIDDEN))
    return out


def sharded_l1(mesh, per_device, dtype, torch_dtype, core=(1, 1)):
    rows, width = per_device[0].shape[-2:]
    grid = ttnn.CoreRangeSet([ttnn.CoreRange(ttnn.CoreCoord(*core), ttnn.CoreCoord(*core))])
    spec = ttnn.ShardSpec(grid, (rows, width), ttnn.ShardOrientation.ROW_MAJOR)
    memory = ttnn.MemoryConfig(ttnn.TensorMemoryLayout.HEIGHT_SHARDED, ttnn.BufferType.L1, spec)
    stacked = torch.stack([torch.tensor(p).to(torch_dtype) for p in per_device])
    return ttnn.from_torch(stacked, dtype=dtype, layout=RM, device=mesh, memory_config=memory,
                           mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0))  # fmt: skip


def test_moe_gpt_on_a_t3000_line():
    """1x8, dispatch along axis 1: 16 experts (two a device; every device holds the same two
    weight sets, one quantization), 32 tokens, top 2, a placeholder row (equal ids) skipped, rows
    no token of the device's experts reads poisoned."""
    rng = np.random.default_rng(3)
    devices, tokens, k_sel, experts = 8, 32, 2, 2
    ids = np.array([rng.permutation(devices * experts)[:k_sel] for _ in range(tokens)])
    ids[5] = [6, 6]  # not dispatched anywhere: skipped although expert 6 is in it
    mapping = np.tile(np.arange(devices * experts) // experts, (devices, 1))
    x = bf16(rng.standard_normal((tokens, HIDDEN)))
    scores = torch.tensor(rng.random((tokens, k_sel)), dtype=torch.bfloat16)
    score_bits = scores.view(torch.int16).numpy().astype(np.int64) & 0xFFFF
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, devices), system="t3k")
    try:
        w01, w2 = put_weights(mesh, 100, experts)
        mine = [[t for t in range(tokens) if any(mapping[d, i] == d for i in ids[t])] for d in range(devices)]
        sparse = np.stack([np.where(np.isin(np.arange(tokens), mine[d])[:, None], x, 1000.0) for d in range(devices)])
        x_t = ttnn.from_torch(
            torch.tensor(sparse).bfloat16(),
            layout=RM,
            device=mesh,
            memory_config=ttnn.L1_MEMORY_CONFIG,
            mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0),
        )
        x_t = ttnn.reshape(x_t, [tokens, HIDDEN])
        id_t = sharded_l1(mesh, [ids[None]] * devices, ttnn.uint16, torch.int32)
        score_t = sharded_l1(mesh, [scores.float().numpy()[None]] * devices, ttnn.bfloat16, torch.bfloat16)
        map_t = ttnn.from_torch(
            torch.tensor(mapping, dtype=torch.int32),
            dtype=ttnn.uint16,
            layout=RM,
            device=mesh,
            memory_config=ttnn.L1_MEMORY_CONFIG,
            mesh_mapper=ttnn.ReplicateTensorToMesh(mesh),
        )
        with ttnn.perf_capture() as capture:
            outs = ttnn.experimental.moe_gpt(
                x_t,
                expert_indices=ttnn.reshape(id_t, [1, tokens, k_sel]),
                expert_scores=ttnn.reshape(score_t, [1, tokens, k_sel]),
                expert_mapping=map_t,
                w0_w1_tensor=w01,
                w2_tensor=w2,
                cluster_axis=1,
            )
        (record,) = [r for r in capture.recorder(mesh).records if r.desc.family is ttnn.perf.OpFamily.MOE_GPT]
        tiles = (4 + 2) * 12 * experts * (HIDDEN + TILE) * 4 * TILE // TILE**2  # w0_w1 and w2, one device
        assert record.prediction.dram_bytes == tiles * 576  # each bfloat4_b tile read once (a decode's load)
        assert record.prediction.cores == 12 and record.prediction.memory_ns > 0
        assert [o.layout for o in outs[3:]] == [ttnn.TILE_LAYOUT, RM] and outs[3].shape == outs[4].shape
        quantized = quantized_experts(w01, w2, 0)
        for d in (0, 3, 7):
            tokens_of, rows = routed(ids, mapping, d, [d] * tokens, experts)
            check_metadata(outs, d, tokens_of, rows, score_bits, experts, k_sel)
            got = combine_rows(outs[4], d, mesh, tokens, [len(t) for t in tokens_of])
            for e, expert in enumerate(quantized):
                want, bound = reference(x[tokens_of[e]], expert)
                assert np.all(np.abs(got[e] - want) <= bound)
    finally:
        ttnn.close_mesh_device(mesh)


def test_fused_decode_on_a_galaxy():
    """4x8, gpt-oss's path along axis 0: all_to_all_dispatch_metadata, moe_gpt,
    selective_reduce_combine; 64 experts (8 a column, 2 a device: the same two weight sets on
    every device), 8 tokens a device, top 2 of their column's experts: every token's slot k holds
    its k-th expert's output."""
    rows, cols, per, k_sel, experts = 4, 8, 8, 2, 2
    rng = np.random.default_rng(5)
    epc = rows * experts  # experts a column (cluster)
    owner = np.array([(x % epc) // experts * cols + x // epc for x in range(cols * epc)])
    ids = np.zeros((rows, cols, per, k_sel), np.int64)
    for r in range(rows):
        for c in range(cols):
            ids[r, c] = [c * epc + rng.permutation(epc)[:k_sel] for _ in range(per)]
    x = bf16(rng.standard_normal((rows, cols, per, HIDDEN)))
    scores = torch.tensor(rng.random((rows, cols, per, k_sel)), dtype=torch.bfloat16)
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(rows, cols), system="galaxy")
    try:
        w01, w2 = put_weights(mesh, 100, experts)
        shard = ttnn.ShardTensor2dMesh(mesh, dims=(0, 1), mesh_shape=(rows, cols))

        def put(a, dtype, layout=RM, memory=ttnn.L1_MEMORY_CONFIG):
            return ttnn.from_torch(a, dtype=dtype, layout=layout, device=mesh, memory_config=memory, mesh_mapper=shard)

        tokens = ttnn.reshape(put(torch.tensor(x).bfloat16().reshape(rows, cols, per, HIDDEN), ttnn.bfloat16),
                              [per, 1, 1, HIDDEN])  # fmt: skip
        id_t = ttnn.reshape(put(torch.tensor(ids, dtype=torch.int32), ttnn.uint16), [per, 1, 1, k_sel])
        score_t = ttnn.reshape(put(scores, ttnn.bfloat16), [per, 1, 1, k_sel])
        mapping = ttnn.from_torch(torch.tensor(np.tile(owner, (rows * cols, 1)), dtype=torch.int32), dtype=ttnn.uint16,
                                  layout=RM, device=mesh, memory_config=ttnn.L1_MEMORY_CONFIG,
                                  mesh_mapper=ttnn.ReplicateTensorToMesh(mesh))  # fmt: skip
        sparse, d_ids, d_scores = ttnn.experimental.all_to_all_dispatch_metadata(
            tokens, id_t, score_t, mapping, cluster_axis=0, drain_sync_tilizer_core=(6, 8)
        )
        sparse = ttnn.reshape(ttnn.to_memory_config(sparse, ttnn.L1_MEMORY_CONFIG), [rows * per, HIDDEN])
        outs = ttnn.experimental.moe_gpt(sparse, expert_indices=d_ids, expert_scores=d_scores, expert_mapping=mapping,
                                         w0_w1_tensor=w01, w2_tensor=w2, cluster_axis=0)  # fmt: skip
        taken = {(c.x, c.y) for c in mesh.get_optimal_dram_bank_to_logical_worker_assignment(0)}
        grid = mesh.compute_with_storage_grid_size()
        sx, sy = next((sx, sy) for sy in range(grid.y - 3) for sx in range(grid.x - 2)
                      if all((sx + i, sy + j) not in taken for j in range(4) for i in range(3)))  # fmt: skip
        workers = [ttnn.CoreCoord(sx + i, sy + j) for j in range(4) for i in range(3)]
        mux = ttnn.CoreRangeSet([ttnn.CoreRange(ttnn.CoreCoord(sx + 3, sy), ttnn.CoreCoord(sx + 4, sy + 3))])
        combined = ttnn.experimental.selective_reduce_combine(
            outs[4], outs[1], outs[2], outs[0], HIDDEN, rows * per, 1, k_sel, 0, ttnn.Topology.Ring, 1, 4, 3,
            workers, mux)  # fmt: skip
        values = np.stack([ttnn.to_torch(t).float().numpy() for t in ttnn.get_device_tensors(combined)])
        values = values.reshape(rows, cols, k_sel, per, HIDDEN)
        for e, expert in enumerate(quantized_experts(w01, w2, 0)):  # every slot of every token expert e serves
            where = np.nonzero((ids % epc) % experts == e)  # (r, c, t, k)
            want, bound = reference(x[where[:3]], expert)
            got = values[where[0], where[1], where[3], where[2]]
            assert len(got) and np.all(np.abs(got - want) <= bound)
    finally:
        ttnn.close_mesh_device(mesh)
