"""``ttnn.experimental.deepseek_prefill.dispatch`` and ``combine`` against loops written from ttnn's
description: every (token, slot) of every device sent to its expert's chip in the dispatch group (the
mesh column) at the expert's offset, counted up; the metadata [source, token, slot, expert, weight
bits]; then combine bringing every dispatched row back to its token's slot.  Values move as bytes:
compared exactly."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import meshnn as ttnn

RM, TILE = ttnn.ROW_MAJOR_LAYOUT, ttnn.TILE_LAYOUT
DS = ttnn.experimental.deepseek_prefill


def routing_setup(rows: int, cols: int, per_chip: int, tokens: int, k: int, seed: int):
    """Tokens, weights, ids, the dispatch table (one row a mesh column) and each device's offsets."""
    rng = np.random.default_rng(seed)
    n = per_chip * rows * cols
    x = rng.standard_normal((rows * cols, tokens, 64)).astype(np.float32)
    w = rng.standard_normal((rows * cols, tokens, k)).astype(np.float32)
    ids = np.stack([rng.permutation(n)[:k] for _ in range(rows * cols * tokens)]).reshape(rows * cols, tokens, k)
    table = np.full((cols, n), -1, np.int32)
    for c in range(cols):
        for j in range(per_chip * rows):
            table[c, c * per_chip * rows + j] = j // per_chip
    counts = np.zeros((rows * cols, n), np.int64)
    for d in range(rows * cols):
        for e in ids[d].reshape(-1):
            if table[d % cols, e] != -1:
                counts[d, e] += 1
    offsets = np.zeros((rows * cols, n), np.int64)
    totals = np.zeros((cols, n), np.int64)
    for c in range(cols):
        totals[c] = counts[c::cols].sum(axis=0)
        region = np.zeros(n, np.int64)
        for e in range(n):
            start = e - e % per_chip
            region[e] = sum(-(-totals[c, x_] // 32) * 32 for x_ in range(start, e))
        for r in range(rows):
            offsets[r * cols + c] = region + counts[c : r * cols + c : cols].sum(axis=0)
    return x, w, ids, table, offsets, totals


def loop_dispatch(x, w, ids, table, offsets, rows, cols, capacity, metadata_len=5):
    buf = np.zeros((rows * cols, capacity, x.shape[-1]), np.float32)
    meta = np.zeros((rows * cols, capacity, metadata_len), np.int64)
    for d in range(rows * cols):
        counter = offsets[d].copy()
        for t in range(ids.shape[1]):
            for k in range(ids.shape[2]):
                e = ids[d, t, k]
                chip = table[d % cols, e]
                if chip == -1:
                    continue
                row = counter[e]
                counter[e] += 1
                if row >= capacity:
                    continue
                dest = chip * cols + d % cols
                buf[dest, row] = x[d, t]
                bits = np.array(w[d, t, k], np.float32).view(np.uint32) >> 16
                meta[dest, row, :5] = [d, t, k, e, np.array(bits, np.uint16).view(np.int16)]
    return buf, meta


def put(mesh, values, dtype, layout=RM):
    mapper = ttnn.ShardTensorToMesh(mesh, dim=0)
    return ttnn.from_torch(torch.from_numpy(values), dtype=dtype, layout=layout, device=mesh, mesh_mapper=mapper)


def per_device(tensor) -> list[np.ndarray]:
    return [ttnn.to_torch(t).float().numpy() for t in ttnn.get_device_tensors(tensor)]


@pytest.mark.parametrize("shape,layout", [((2, 1), RM), ((2, 4), TILE), ((4, 2), RM)])
def test_dispatch_then_combine(shape, layout):
    rows, cols = shape
    per_chip, tokens, k = 2, 32, 4
    x, w, ids, table, offsets, totals = routing_setup(rows, cols, per_chip, tokens, k, seed=rows * 10 + cols)
    x = torch.from_numpy(x).bfloat16().float().numpy()
    w = torch.from_numpy(w).bfloat16().float().numpy()
    capacity = 4 * 32 * per_chip  # every region fits
    system = {(2, 1): "n300", (2, 4): "t3k", (4, 2): "t3k"}[shape]
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(*shape), system=system)
    try:
        args = [put(mesh, x[:, None], ttnn.bfloat16, layout), put(mesh, w[:, None], ttnn.bfloat16),
                put(mesh, ids[:, None].astype(np.int32), ttnn.uint16),
                put(mesh, offsets[:, None].astype(np.int32), ttnn.int32),
                put(mesh, table[np.arange(rows * cols) % cols][:, None], ttnn.int32)]  # fmt: skip
        n = table.shape[1]
        buf, meta = DS.dispatch(*args, dispatch_group_size=rows, experts_per_chip=per_chip, num_routed_experts=n,
                                num_experts_per_tok=k, metadata_len=5, max_dispatch_buffer_token_size=capacity,
                                cluster_axis=0)  # fmt: skip
        assert tuple(buf.shape) == (1, 1, capacity, 64) and buf.dtype == ttnn.bfloat16 and buf.layout == RM
        assert tuple(meta.shape) == (1, 1, capacity, 5) and meta.dtype == ttnn.int32
        want_buf, want_meta = loop_dispatch(x, w, ids, table, offsets, rows, cols, capacity)
        for d, (got_b, got_m) in enumerate(zip(per_device(buf), per_device(meta), strict=True)):
            np.testing.assert_array_equal(got_b.reshape(capacity, 64), want_buf[d])
            np.testing.assert_array_equal(got_m.reshape(capacity, 5).astype(np.int64), want_meta[d])
        counts = put(mesh, totals[np.arange(rows * cols) % cols][:, None, None].astype(np.int32), ttnn.int32)
        if layout == TILE:  # the experts' outputs come back tiled: untilized by combine
            buf = ttnn.to_layout(buf, TILE)
        out = DS.combine(buf, meta, counts, counts, dispatch_group_size=rows, experts_per_chip=per_chip,
                         num_experts_per_tok=k, seq_len_per_chip=tokens, cluster_axis=0)  # fmt: skip
        assert tuple(out.shape) == (1, 1, tokens, k, 64) and out.dtype == ttnn.bfloat16
        for d, got in enumerate(per_device(out)):
            routed = table[d % cols, ids[d]] != -1  # (tokens, k): the slots this group's experts took
            want = np.where(routed[..., None], x[d][:, None, :], 0.0)
            np.testing.assert_array_equal(got.reshape(tokens, k, 64), want)
    finally:
        ttnn.close_mesh_device(mesh)


def test_dispatch_drops_past_the_buffer():
    rows, cols, per_chip, tokens, k = 2, 1, 2, 32, 4
    x, w, ids, table, offsets, _ = routing_setup(rows, cols, per_chip, tokens, k, seed=4)
    x, w = (torch.from_numpy(v).bfloat16().float().numpy() for v in (x, w))
    capacity = 40  # fewer rows than the regions need: later tokens dropped, counters still advance
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(2, 1), system="n300")
    try:
        args = [put(mesh, x[:, None], ttnn.bfloat16), put(mesh, w[:, None], ttnn.bfloat16),
                put(mesh, ids[:, None].astype(np.int32), ttnn.uint16),
                put(mesh, offsets[:, None].astype(np.int32), ttnn.uint32),
                put(mesh, table[np.zeros(2, int)][:, None], ttnn.int32)]  # fmt: skip
        buf, meta = DS.dispatch(*args, dispatch_group_size=2, experts_per_chip=2, num_routed_experts=4,
                                num_experts_per_tok=k, metadata_len=6, max_dispatch_buffer_token_size=capacity,
                                memory_config=ttnn.L1_MEMORY_CONFIG)  # fmt: skip
        assert buf.memory_config().buffer_type == ttnn.BufferType.L1 and tuple(meta.shape)[-1] == 6
        want_buf, want_meta = loop_dispatch(x, w, ids, table, offsets, rows, cols, capacity, metadata_len=6)
        for d, (got_b, got_m) in enumerate(zip(per_device(buf), per_device(meta), strict=True)):
            np.testing.assert_array_equal(got_b.reshape(capacity, 64), want_buf[d])
            np.testing.assert_array_equal(got_m.reshape(capacity, 6).astype(np.int64), want_meta[d])
    finally:
        ttnn.close_mesh_device(mesh)


def test_worker_core_checks_refuse_before_anything_is_allocated():
    rows, cols, per_chip, tokens, k = 2, 1, 2, 32, 4
    x, w, ids, table, offsets, totals = routing_setup(rows, cols, per_chip, tokens, k, seed=9)
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(2, 1), system="n300")
    try:
        args = [put(mesh, x[:, None], ttnn.bfloat16), put(mesh, w[:, None], ttnn.bfloat16),
                put(mesh, ids[:, None].astype(np.int32), ttnn.uint16),
                put(mesh, offsets[:, None].astype(np.int32), ttnn.int32),
                put(mesh, table[np.zeros(2, int)][:, None], ttnn.int32)]  # fmt: skip
        sizes = dict(dispatch_group_size=2, experts_per_chip=2, num_routed_experts=4, num_experts_per_tok=k,
                     metadata_len=5, max_dispatch_buffer_token_size=256)  # fmt: skip
        live = len(mesh.live_buffers())
        grid = mesh.compute_with_storage_grid_size()
        with pytest.raises(ttnn.MeshnnValueError, match="num_untilizers_per_sender"):
            DS.dispatch(*args, **sizes, num_untilizers_per_sender=grid.x)  # a row of grid.x cores: too few
        assert len(mesh.live_buffers()) == live
        buf, meta = DS.dispatch(*args, **sizes)
        counts = put(mesh, totals[np.zeros(2, int)][:, None, None].astype(np.int32), ttnn.int32)
        block = ttnn.CoreRangeSet({ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(2, 2))})
        manager = mesh.create_sub_device_manager([ttnn.SubDevice([block])], 0)
        mesh.load_sub_device_manager(manager)
        try:
            live = len(mesh.live_buffers())
            with pytest.raises(RuntimeError, match="2-D subdevice core grid"):
                sub = ttnn.SubDeviceId(0)
                DS.combine(buf, meta, counts, counts, dispatch_group_size=2, experts_per_chip=2,
                           num_experts_per_tok=k, seq_len_per_chip=tokens, subdevice_id=sub)  # fmt: skip
            assert len(mesh.live_buffers()) == live
        finally:
            mesh.clear_loaded_sub_device_manager()
            mesh.remove_sub_device_manager(manager)
    finally:
        ttnn.close_mesh_device(mesh)


def test_an_expert_id_past_the_experts_is_refused_when_met():
    rows, cols, per_chip, tokens, k = 2, 1, 2, 32, 4
    x, w, ids, table, offsets, _ = routing_setup(rows, cols, per_chip, tokens, k, seed=2)
    ids[1, 7, 2] = 4  # n is 4
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(2, 1), system="n300")
    try:
        args = [put(mesh, x[:, None], ttnn.bfloat16), put(mesh, w[:, None], ttnn.bfloat16),
                put(mesh, ids[:, None].astype(np.int32), ttnn.uint16),
                put(mesh, offsets[:, None].astype(np.int32), ttnn.int32),
                put(mesh, table[np.zeros(2, int)][:, None], ttnn.int32)]  # fmt: skip
        with pytest.raises(ttnn.MeshnnError, match=r"expert id 4 \(token 7, slot 2\) is past the 4 routed experts"):
            DS.dispatch(*args, dispatch_group_size=2, experts_per_chip=2, num_routed_experts=4,
                        num_experts_per_tok=k, metadata_len=5, max_dispatch_buffer_token_size=256)  # fmt: skip
            ttnn.synchronize_device(mesh)
    finally:
        ttnn.close_mesh_device(mesh)
