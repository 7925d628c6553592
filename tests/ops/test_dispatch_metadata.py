"""``ttnn.experimental.all_to_all_dispatch_metadata`` against a loop over tokens written from ttnn's
description: the tokens sharded along ``cluster_axis``, each sent to the owners of its experts
(the sender's row of the ``[D, E]`` mapping) that lie on its line along the axis, at row
``p*T + t`` of a ``[1, T*G, H]`` output; every member's ids and scores (shared experts appended,
score 1.0) gathered on every member; rows nothing was sent to keep what the buffer held.  Bytes
move unchanged, so equality is exact.  Meshes: 1x8 and 2x4 (T3000), 8x4 (Galaxy), both axes."""

from __future__ import annotations

import pytest
import torch

import meshnn as ttnn

RM = ttnn.ROW_MAJOR_LAYOUT
OP = ttnn.experimental.all_to_all_dispatch_metadata


def routing(shape, axis, per_device, k, hidden, experts_per_device, seed):
    """Tokens, ids, scores of every line (the global tensors the mapper shards) and a mapping in
    which expert e lives on device e // experts_per_device (the same row for every source)."""
    rows, cols = shape
    g = torch.Generator().manual_seed(seed)
    line = shape[axis]
    tokens = torch.randn(line * per_device, 1, 1, hidden, generator=g).bfloat16()
    experts = rows * cols * experts_per_device
    ids = torch.stack([torch.randperm(experts, generator=g)[:k] for _ in range(line * per_device)])
    ids = ids.reshape(line * per_device, 1, 1, k).to(torch.int32)
    scores = torch.rand(line * per_device, 1, 1, k, generator=g).bfloat16()
    owner = torch.arange(experts) // experts_per_device
    mapping = owner.unsqueeze(0).repeat(rows * cols, 1).to(torch.int32)
    return tokens, ids, scores, mapping


def expected(shape, axis, tokens, ids, scores, mapping, shared, fill):
    """Every device's three outputs, by loops (``fill``: the token output's prior contents)."""
    rows, cols = shape
    line = shape[axis]
    per = tokens.shape[0] // line
    width = ids.shape[-1] + len(shared)
    out = {}
    for r in range(rows):
        for c in range(cols):
            me, pos = r * cols + c, (r, c)[axis]
            tok = fill.clone()
            meta = torch.zeros(line * per, width, dtype=torch.int32)
            sc = torch.zeros(line * per, width)
            for p in range(line):
                src = (p, c) if axis == 0 else (r, p)
                src_lin = src[0] * cols + src[1]
                for t in range(per):
                    chosen = [int(e) for e in ids[p * per + t, 0, 0]] + shared
                    meta[p * per + t] = torch.tensor(chosen)
                    sc[p * per + t, : ids.shape[-1]] = scores[p * per + t, 0, 0].float()
                    sc[p * per + t, ids.shape[-1] :] = 1.0
                    owners = [int(mapping[src_lin, e]) for e in chosen]
                    if me in owners:
                        tok[p * per + t] = tokens[p * per + t, 0, 0]
            out[me] = (tok, meta, sc, pos)
    return out


def place(mesh, shape, axis, t, dtype):
    dims = (0, None) if axis == 0 else (None, 0)
    mapper = ttnn.ShardTensor2dMesh(mesh, dims=dims, mesh_shape=shape)
    return ttnn.from_torch(t, dtype=dtype, layout=RM, device=mesh, mesh_mapper=mapper)


@pytest.mark.parametrize(
    "system,shape,axis,shared",
    [
        ("t3k", (1, 8), 1, []),
        ("t3k", (2, 4), 0, []),
        ("t3k", (2, 4), 1, [5]),
        ("galaxy", (8, 4), 0, []),
        ("galaxy", (8, 4), 1, [0, 9]),
    ],
)
def test_dispatch_metadata_equals_the_loop(system, shape, axis, shared):
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(*shape), system=system)
    try:
        tokens, ids, scores, mapping = routing(shape, axis, per_device=4, k=2, hidden=64, experts_per_device=2, seed=3)
        sentinel = torch.full((shape[axis] * 4, 64), 7.0).bfloat16()
        rows = shape[axis] * 4
        persistent = ttnn.from_torch(
            sentinel.reshape(1, rows, 64).repeat(shape[0] * shape[1], 1, 1),
            dtype=ttnn.bfloat16,
            layout=RM,
            device=mesh,
            mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0),
        )
        tt = [place(mesh, shape, axis, x, d) for x, d in ((tokens, ttnn.bfloat16), (ids, ttnn.uint16))]
        tt.append(place(mesh, shape, axis, scores, ttnn.bfloat16))
        tm = ttnn.from_torch(mapping, dtype=ttnn.uint16, layout=RM, device=mesh)  # replicated
        out, meta, sc = OP(*tt, tm, cluster_axis=axis, shared_expert_ids=shared or None)
        assert tuple(out.shape) == (1, rows, 64) and tuple(meta.shape) == (1, rows, 2 + len(shared))
        assert meta.memory_config().buffer_type == ttnn.BufferType.L1 and meta.memory_config().is_sharded()
        again = OP(*tt, tm, cluster_axis=axis, shared_expert_ids=shared or None, output_tensors=(persistent, meta, sc))
        assert again[0] is persistent or again[0].buffer_address() == persistent.buffer_address()
        want = expected(shape, axis, tokens, ids, scores, mapping, shared, sentinel)
        devices = ttnn.get_device_tensors(persistent)
        metas, scs = ttnn.get_device_tensors(meta), ttnn.get_device_tensors(sc)
        for d, (tok, m, s, _) in want.items():
            assert torch.equal(ttnn.to_torch(devices[d]).reshape(rows, 64), tok)
            assert torch.equal(ttnn.to_torch(metas[d]).reshape(rows, -1).to(torch.int32), m)
            assert torch.equal(ttnn.to_torch(scs[d]).reshape(rows, -1).float(), s)
    finally:
        mesh.close()


def test_owners_off_the_line_are_skipped():
    """Axis 1 on 2x4: a row's tokens reach only that row's devices, whatever the mapping says."""
    shape = (2, 4)
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(*shape), system="t3k")
    try:
        tokens, ids, scores, _ = routing(shape, 1, per_device=2, k=1, hidden=32, experts_per_device=1, seed=1)
        ids.fill_(0)
        mapping = torch.full((8, 8), 6, dtype=torch.int32)  # expert 0 on device 6 (row 1) for every sender
        tt = [place(mesh, shape, 1, x, d) for x, d in ((tokens, ttnn.bfloat16), (ids, ttnn.uint16))]
        tt.append(place(mesh, shape, 1, scores, ttnn.bfloat16))
        tm = ttnn.from_torch(mapping, dtype=ttnn.uint16, layout=RM, device=mesh)
        zeros = torch.zeros(8, 8, 32).bfloat16()
        persistent = ttnn.from_torch(
            zeros, dtype=ttnn.bfloat16, layout=RM, device=mesh, mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0)
        )
        _, meta, sc = OP(*tt, tm, cluster_axis=1)
        OP(*tt, tm, cluster_axis=1, output_tensors=(persistent, meta, sc))
        got = [ttnn.to_torch(t).reshape(8, 32) for t in ttnn.get_device_tensors(persistent)]
        assert torch.equal(got[6], tokens.reshape(8, 32))  # row 1 gets its own (replicated) tokens
        assert all(not got[d].any() for d in range(8) if d != 6)
        # ttnn compares a persistent output's spec with itself: any shape holding the rows will do
        # (test_moe_gpt_e2e.py passes [rows, T/rows, H] a device)
        other = ttnn.from_torch(torch.zeros(16, 4, 32).bfloat16(), dtype=ttnn.bfloat16, layout=RM, device=mesh,
                                mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0))  # fmt: skip
        OP(*tt, tm, cluster_axis=1, output_tensors=(other, meta, sc))
        assert list(ttnn.get_device_tensors(other)[0].shape) == [2, 4, 32]
        again = [ttnn.to_torch(t).reshape(8, 32) for t in ttnn.get_device_tensors(other)]
        assert all(torch.equal(a, b) for a, b in zip(again, got, strict=True))
        short = ttnn.from_torch(torch.zeros(8, 7, 32).bfloat16(), dtype=ttnn.bfloat16, layout=RM, device=mesh,
                                mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0))  # fmt: skip
        with pytest.raises(ValueError, match="hold the output's rows"):
            OP(*tt, tm, cluster_axis=1, output_tensors=(short, meta, sc))
    finally:
        mesh.close()


def test_bad_calls_change_nothing():
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 8), system="t3k")
    try:
        tokens, ids, scores, mapping = routing((1, 8), 1, per_device=2, k=2, hidden=32, experts_per_device=1, seed=2)
        tt = [place(mesh, (1, 8), 1, x, d) for x, d in ((tokens, ttnn.bfloat16), (ids, ttnn.uint16))]
        ts = place(mesh, (1, 8), 1, scores, ttnn.bfloat16)
        tm = ttnn.from_torch(mapping, dtype=ttnn.uint16, layout=RM, device=mesh)
        before = (
            ttnn.get_memory_view(mesh, ttnn.BufferType.L1).total_bytes_allocated_per_bank,
            ttnn.get_memory_view(mesh, ttnn.BufferType.DRAM).total_bytes_allocated_per_bank,
        )
        cases = [
            ({"cluster_axis": None}, ValueError, "Cluster axis"),
            ({"cluster_axis": 1, "shared_expert_ids": []}, ValueError, "must not be empty"),
            ({"cluster_axis": 1, "num_links": 0}, ValueError, "links"),
            ({"cluster_axis": 1, "worker_mode": 0}, TypeError, "worker_mode"),
            ({"cluster_axis": 1, "drain_sync_tilizer_core": (9, 9)}, ValueError, "drain_sync_tilizer_core"),
            ({"cluster_axis": 1, "cross_device_semaphore": object()}, ValueError, "persistent"),
        ]
        for kwargs, error, match in cases:
            with pytest.raises(error, match=match):
                OP(*tt, ts, tm, **kwargs)
        with pytest.raises(ValueError, match="Scores tensor"):
            OP(*tt, tt[0], tm, cluster_axis=1)
        with pytest.raises(ValueError, match="mapping"):
            OP(*tt, ts, ts, cluster_axis=1)
        assert (
            ttnn.get_memory_view(mesh, ttnn.BufferType.L1).total_bytes_allocated_per_bank,
            ttnn.get_memory_view(mesh, ttnn.BufferType.DRAM).total_bytes_allocated_per_bank,
        ) == before
    finally:
        mesh.close()


def test_ids_on_a_whole_shard_of_more_rows():
    """tt-metal reserves a HEIGHT_SHARDED tensor's whole shards: persistent ids and scores of 2 rows
    a device on a 16-row shard take the gathered rows (8 here); the tensor shows its first 2, the
    rest land in the shard's reserve.  A shard too small for the rows is still refused."""
    shape = (2, 4)
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(*shape), system="t3k")
    try:
        tokens, ids, scores, mapping = routing(shape, 1, per_device=2, k=2, hidden=32, experts_per_device=1, seed=4)
        tt = [place(mesh, shape, 1, x, d) for x, d in ((tokens, ttnn.bfloat16), (ids, ttnn.uint16))]
        tt.append(place(mesh, shape, 1, scores, ttnn.bfloat16))
        tm = ttnn.from_torch(mapping, dtype=ttnn.uint16, layout=RM, device=mesh)
        out, meta, sc = OP(*tt, tm, cluster_axis=1)

        def small(rows_per_shard, dtype, torch_dtype):
            core = ttnn.CoreRangeSet([ttnn.CoreRange(ttnn.CoreCoord(1, 1), ttnn.CoreCoord(1, 1))])
            spec = ttnn.ShardSpec(core, (rows_per_shard, 2), ttnn.ShardOrientation.ROW_MAJOR)
            memory = ttnn.MemoryConfig(ttnn.TensorMemoryLayout.HEIGHT_SHARDED, ttnn.BufferType.L1, spec)
            return ttnn.from_torch(torch.zeros(8, 2, 2, dtype=torch_dtype), dtype=dtype, layout=RM, device=mesh,
                                   memory_config=memory, mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0))  # fmt: skip

        ids2, sc2 = small(16, ttnn.uint16, torch.int32), small(16, ttnn.bfloat16, torch.bfloat16)
        OP(*tt, tm, cluster_axis=1, output_tensors=(out, ids2, sc2))
        for full, part in ((meta, ids2), (sc, sc2)):
            for a, b in zip(ttnn.get_device_tensors(full), ttnn.get_device_tensors(part), strict=True):
                assert torch.equal(ttnn.to_torch(a).reshape(8, 2)[:2].float(), ttnn.to_torch(b).reshape(2, 2).float())
        with pytest.raises(ValueError, match="hold the output's rows"):
            OP(*tt, tm, cluster_axis=1, output_tensors=(out, small(4, ttnn.uint16, torch.int32), sc2))
    finally:
        mesh.close()
