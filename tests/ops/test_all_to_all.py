"""all_to_all_dispatch and all_to_all_combine (MoE expert parallelism) on 1x2, 1x8, 2x4 and 8x4
meshes, against a numpy reference written from the ops' definition, token by token.

Tokens move as bytes: every routed row equals its source exactly; a row no token was routed to
keeps the preallocated output's sentinel (ttnn: placeholder garbage).
"""

from __future__ import annotations

import numpy as np
import pytest

import meshnn as ttnn

from .test_exchange import SYSTEMS, groups, meshes  # noqa: F401 (the module's mesh fixture)

RM, BF16, U16 = ttnn.ROW_MAJOR_LAYOUT, ttnn.bfloat16, ttnn.uint16
SENTINEL = 7.0
B, S, H, K = 2, 2, 32, 2


@pytest.fixture(params=list(SYSTEMS), ids=[f"{r}x{c}" for r, c in SYSTEMS])
def mesh(request, meshes):  # noqa: F811
    return meshes[request.param]


def on_mesh(mesh, values: np.ndarray, dtype, shard: bool) -> ttnn.Tensor:
    mapper = ttnn.ShardTensorToMesh(mesh, dim=0) if shard else ttnn.ReplicateTensorToMesh(mesh)
    return ttnn.from_torch(values, dtype=dtype, layout=RM, device=mesh, mesh_mapper=mapper)


def per_device(tensor: ttnn.Tensor) -> list[np.ndarray]:
    return [ttnn.to_numpy(t).astype(np.float64) for t in ttnn.get_device_tensors(tensor)]


def expert_setup(rng, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Two experts per device at random places: the [1, 1, E, D] mapping and each expert's device."""
    experts = 2 * n
    where = rng.permutation(np.repeat(np.arange(n), 2))
    mapping = np.zeros((1, 1, experts, n), np.float32)
    mapping[0, 0, np.arange(experts), where] = 1
    return mapping, where


def top_k(rng, rows: int, experts: int) -> np.ndarray:
    return np.stack([rng.choice(experts, K, replace=False) for _ in range(rows)]).astype(np.float32)


def cases(mesh):
    shape = tuple(mesh.shape)
    return [a for a in (None, 0, 1) if len(groups(shape, a)[0]) > 1]


def test_dispatch(mesh, rng):
    """Each token lands at its sender's batch block on every group member holding one of its experts;
    the metadata is every member's ids, gathered; other rows keep the output's sentinel."""
    n = mesh.get_num_devices()
    mapping, where = expert_setup(rng, n)
    for axis in cases(mesh):
        members = groups(tuple(mesh.shape), axis)
        g = len(members[0])
        tokens = rng.standard_normal((n * B, 1, S, H)).astype(np.float32)
        ids = top_k(rng, n * B * S, 2 * n).reshape(n * B, 1, S, K)
        tt = [on_mesh(mesh, tokens, BF16, True), on_mesh(mesh, ids, U16, True), on_mesh(mesh, mapping, U16, False)]
        sent = [
            on_mesh(mesh, np.full((n, B * g, S, w), SENTINEL, np.float32), dt, True) for w, dt in ((H, BF16), (K, U16))
        ]
        out, meta = ttnn.all_to_all_dispatch(*tt, cluster_axis=axis, output_tensors=sent)
        assert out is sent[0] and meta is sent[1]
        stored = np.concatenate(per_device(tt[0]))
        got_out, got_meta = per_device(out), per_device(meta)
        for group in members:
            for dst in group:
                expected = np.full((1, B * g, S, H), SENTINEL)
                for p, src in enumerate(group):
                    for b in range(B):
                        for s in range(S):
                            chosen = ids[src * B + b, 0, s].astype(int)
                            if dst in where[chosen]:
                                expected[0, p * B + b, s] = stored[src * B + b, 0, s]
                            assert (got_meta[dst][0, p * B + b, s] == ids[src * B + b, 0, s]).all()
                np.testing.assert_array_equal(got_out[dst], expected, err_msg=f"axis {axis} device {dst}")


@pytest.mark.parametrize("local_reduce", [False, True], ids=["experts", "local_reduce"])
def test_combine(mesh, rng, local_reduce):
    """Device q of a group gets, for its block of tokens and each k, the row of the group member
    holding the token's k-th expert (its local rank by id); with local_reduce, the member's one row
    at the k of its first expert by id; rows with no holder keep the sentinel."""
    n = mesh.get_num_devices()
    mapping, where = expert_setup(rng, n)
    for axis in [a for a in cases(mesh) if a is not None]:
        members = groups(tuple(mesh.shape), axis)
        g = len(members[0])
        rows = 1 if local_reduce else 2
        values = rng.standard_normal((n * rows, B * g, S, H)).astype(np.float32)
        meta = top_k(rng, B * g * S, 2 * n).reshape(1, B * g, S, K)
        tt = [on_mesh(mesh, values, BF16, True), on_mesh(mesh, meta, U16, False), on_mesh(mesh, mapping, U16, False)]
        sentinel = on_mesh(mesh, np.full((n * K, B, S, H), SENTINEL, np.float32), BF16, True)
        out = ttnn.all_to_all_combine(*tt, cluster_axis=axis, local_reduce=local_reduce, output_tensor=sentinel)
        stored = np.concatenate(per_device(tt[0])).reshape(n, rows, B * g, S, H)
        got = per_device(out)
        for group in members:
            for q, dst in enumerate(group):
                expected = np.full((K, B, S, H), SENTINEL)
                for b in range(B):
                    for s in range(S):
                        chosen = meta[0, q * B + b, s].astype(int)
                        for holder in group:
                            mine = [e for e in range(2 * n) if where[e] == holder]
                            hits = [k for k in range(K) if chosen[k] in mine]
                            if local_reduce and hits:
                                first = min(hits, key=lambda k: chosen[k])
                                expected[first, b, s] = stored[holder, 0, q * B + b, s]
                            for k in [] if local_reduce else hits:
                                expected[k, b, s] = stored[holder, mine.index(chosen[k]), q * B + b, s]
                np.testing.assert_array_equal(got[dst], expected, err_msg=f"axis {axis} device {dst}")


def test_dispatch_output_specs(meshes):  # noqa: F811
    """output_concat_dim=2 grows the sequence instead of the batch; the outputs are ROW_MAJOR of the
    inputs' dtypes."""
    mesh = meshes[(1, 8)]
    tokens = on_mesh(mesh, np.zeros((8 * B, 1, S, H), np.float32), BF16, True)
    ids = on_mesh(mesh, np.zeros((8 * B, 1, S, K), np.float32), U16, True)
    mapping = on_mesh(mesh, expert_setup(np.random.default_rng(1), 8)[0], U16, False)
    out, meta = ttnn.all_to_all_dispatch(tokens, ids, mapping, output_concat_dim=2)
    assert list(out.shape) == [1, B, S * 8, H] and list(meta.shape) == [1, B, S * 8, K]
    assert (out.dtype, meta.dtype, out.layout) == (BF16, U16, RM)


def test_traced_rounds_fit_the_trace_region_tt_metal_gives_them():
    """tt-metal's skew test: 5 warm-up and 20 measured rounds of apply_device_delay then
    all_to_all_dispatch, both traces live in a 50,000 B trace region (then the same of combine); the
    replay writes into sentinel-filled outputs what the eager dispatch wrote."""
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 8), system="t3k", trace_region_size=50000)
    try:
        mapping, _ = expert_setup(np.random.default_rng(3), 8)
        rng = np.random.default_rng(4)
        tokens = on_mesh(mesh, rng.standard_normal((8 * B, 1, S, H)).astype(np.float32), BF16, True)
        ids = on_mesh(mesh, top_k(rng, 8 * B * S, 16).reshape(8 * B, 1, S, K), U16, True)
        inputs = (tokens, ids, on_mesh(mesh, mapping, U16, False))

        def sentinels():
            return [
                on_mesh(mesh, np.full((8, 8 * B, S, w), SENTINEL, np.float32), dt, True)
                for w, dt in ((H, BF16), (K, U16))
            ]

        eager = [per_device(t) for t in ttnn.all_to_all_dispatch(*inputs, cluster_axis=1, output_tensors=sentinels())]
        outs, delays = sentinels(), [[400000] + [0] * 7]

        def dispatch_round():
            ttnn.apply_device_delay(mesh, delays)
            ttnn.all_to_all_dispatch(*inputs, cluster_axis=1, output_tensors=outs)

        def combine_round():
            ttnn.apply_device_delay(mesh, delays)
            ttnn.all_to_all_combine(*outs, inputs[2], cluster_axis=1, local_reduce=True)

        for one_round in (dispatch_round, combine_round):
            one_round()  # its programs compiled (and their semaphores made) before the captures
            if one_round is dispatch_round:
                ttnn.copy_host_to_device_tensor(ttnn.from_torch(np.full((8, 8 * B, S, H), SENTINEL, np.float32),
                    dtype=BF16, layout=RM, mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0)), outs[0])  # fmt: skip
            traces = []
            for count in (5, 20):
                traces.append(ttnn.begin_trace_capture(mesh, cq_id=0))
                for _ in range(count):
                    one_round()
                ttnn.end_trace_capture(mesh, traces[-1], cq_id=0)
            if one_round is dispatch_round:
                assert (per_device(outs[0])[0] == SENTINEL).all()  # the captures ran nothing
            ttnn.execute_trace(mesh, traces[-1], blocking=True)
            if one_round is dispatch_round:
                for got, expected in zip((per_device(outs[0]), per_device(outs[1])), eager, strict=True):
                    for device, values in enumerate(expected):
                        np.testing.assert_array_equal(got[device], values, err_msg=f"device {device}")
            for trace_id in traces:
                ttnn.release_trace(mesh, trace_id)
    finally:
        mesh.close()
