"""``ttnn.experimental.selective_reduce_combine`` against a loop written from ttnn's description:
each device's local experts hold their active tokens (ascending ids) split evenly over
``token_parallel_core_dim`` parts (the first parts taking the remainder), each part's rows in its
workers' L1 shards (worker ``i``: part ``i // D``, hidden slice ``i % D``); every token's row of
every expert it picked lands in slot ``k`` (its rank in the token's top-k) of the output
``[K, T/G, H]`` on the line member that owns the token.  Bytes move unchanged: exact equality.
Meshes: 1x8 and 2x4 (T3000, both axes), 4x8 (Galaxy, gpt-oss's axis 0)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import meshnn as ttnn

RM = ttnn.ROW_MAJOR_LAYOUT
OP = ttnn.experimental.selective_reduce_combine
E, K, PER, H, TP, DP = 2, 2, 8, 64, 2, 2  # local experts, top-k, tokens a device, hidden, token / hidden parts


def line_of(shape, axis, r, c):
    return [(i, c) if axis == 0 else (r, i) for i in range(shape[axis])], (r if axis == 0 else c)


def routing(g, rng):
    """Each of the line's ``g*PER`` tokens picks K distinct of the line's ``g*E`` experts."""
    return [rng.permutation(g * E)[:K].tolist() for _ in range(g * PER)]


def device_inputs(member, picks, contrib, g):
    """One device's dense shards ``[TP*DP*E*rows, H/DP]``, activations, token maps, counts."""
    tokens, rows, w = g * PER, g * PER // TP, H // DP
    dense = np.zeros((TP * DP, E, rows, w), np.float32)
    maps = np.zeros((E, (tokens + 1) * 4), np.int64)
    counts = np.zeros(E, np.int64)
    stride = 8  # 2E+1 = 5 uint32s aligned to 32 B (DRAM)
    acts = np.full((tokens, stride), K, np.int64)
    n = 0
    for e in range(E):
        mine = [t for t in range(tokens) if member * E + e in picks[t]]
        counts[e] = len(mine)
        maps[e, : 4 * len(mine) : 4] = mine
        chunk, rem = divmod(len(mine), TP)
        at = 0
        for p in range(TP):
            take = chunk + (1 if p < rem else 0)
            for r, t in enumerate(mine[at : at + take]):
                for d in range(DP):
                    dense[p * DP + d, e, r] = contrib[member * E + e, t, d * w : (d + 1) * w]
            at += take
    for t in range(tokens):
        ks = [picks[t].index(member * E + e) if member * E + e in picks[t] else K for e in range(E)]
        if any(k != K for k in ks):
            acts[n, : 1 + E] = [t, *ks]
            n += 1
    return dense.reshape(-1, w), acts.reshape(-1), maps, counts


@pytest.mark.parametrize(
    "system,shape,axis", [("t3k", (1, 8), 1), ("t3k", (2, 4), 0), ("t3k", (2, 4), 1), ("galaxy", (4, 8), 0)]
)
def test_selective_combine_equals_the_loop(system, shape, axis):
    rows, cols = shape
    g = shape[axis]
    rng = np.random.default_rng(7)
    per_dev, expected = {}, {}
    for r in range(rows):
        for c in range(cols):
            line, me = line_of(shape, axis, r, c)
            if me == 0:  # the line's routing and every expert's row of every token
                picks = routing(g, rng)
                contrib = rng.standard_normal((g * E, g * PER, H)).astype(np.float32)
                contrib = torch.tensor(contrib).bfloat16().float().numpy()
                for m, coord in enumerate(line):
                    out = np.full((K, PER, H), -7.0, np.float32)
                    for t in range(m * PER, (m + 1) * PER):
                        for k, expert in enumerate(picks[t]):
                            out[k, t - m * PER] = contrib[expert, t]
                    expected[coord] = out
                    per_dev[coord] = device_inputs(m, picks, contrib, g)
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(*shape), system=system)
    try:
        coords = [(r, c) for r in range(rows) for c in range(cols)]

        def put(index, dtype, torch_dtype, memory_config=None):
            stacked = torch.stack([torch.tensor(per_dev[co][index]).to(torch_dtype) for co in coords])
            t = ttnn.from_torch(stacked, dtype=dtype, layout=RM, device=mesh,
                                mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0))  # fmt: skip
            return ttnn.reshape(t, list(per_dev[coords[0]][index].shape))

        grid = ttnn.CoreRangeSet([ttnn.CoreRange(ttnn.CoreCoord(1, 1), ttnn.CoreCoord(2, 2))])
        shard = ttnn.ShardSpec(grid, (E * g * PER // TP, H // DP), ttnn.ShardOrientation.ROW_MAJOR)
        sharded = ttnn.MemoryConfig(ttnn.TensorMemoryLayout.HEIGHT_SHARDED, ttnn.BufferType.L1, shard)
        dense = ttnn.to_memory_config(put(0, ttnn.bfloat16, torch.bfloat16), sharded)
        acts, maps, counts = (put(i, ttnn.uint32, torch.int64) for i in (1, 2, 3))
        fill = torch.full((K, PER, H), -7.0).bfloat16()
        out = ttnn.from_torch(fill, dtype=ttnn.bfloat16, layout=RM, device=mesh,
                              mesh_mapper=ttnn.ReplicateTensorToMesh(mesh))  # fmt: skip
        workers = ttnn.corerange_to_cores(grid, row_wise=True)  # worker i holds shard i
        mux = ttnn.CoreRangeSet([ttnn.CoreRange(ttnn.CoreCoord(5, 0), ttnn.CoreCoord(5, 3))])
        with ttnn.perf_capture() as capture:
            result = OP(dense, acts, maps, counts, H, g * PER, 1, K, axis, ttnn.Topology.Ring, 2, TP, DP, workers,
                        mux, output_tensor=out)  # fmt: skip
        (record,) = [
            r for r in capture.recorder(mesh).records if r.desc.family is ttnn.perf.OpFamily.ALL_TO_ALL_COMBINE
        ]
        out_bytes = K * PER * H * 2  # the perf model: all_to_all_combine's (G-1)/G of the output over the links
        links = record.desc.collective.num_links if record.desc.collective.num_links else 1
        assert record.prediction.link_bytes in {int((g - 1) / g * out_bytes / n) for n in (1, links)}
        assert result is out
        for co, shard_out in zip(coords, ttnn.get_device_tensors(result), strict=True):
            got = ttnn.to_torch(shard_out).float().numpy()
            np.testing.assert_array_equal(got, expected[co])
    finally:
        ttnn.close_mesh_device(mesh)


def test_data_parallel_split_is_ttnns():
    from meshnn.ops.ccl.selective_combine import data_parallel_split, token_split

    assert data_parallel_split(14336, 4096, 4) == [3584] * 4  # DeepSeek's 7168 bfloat16 hidden
    assert data_parallel_split(5760, 4096, 4) == [1440] * 4  # gpt-oss's 2880
    assert data_parallel_split(128, 4096, 2) == [64, 64]
    assert data_parallel_split(9216, 4096, 1) == [4608]  # one part: the split's second half is never sent
    assert [token_split(7, 3, p) for p in range(3)] == [(0, 3), (3, 2), (5, 2)]
