"""ttnn.transformer.ring_distributed_scaled_dot_product_attention and
ttnn.experimental.all_gather_async_reversed, on 1x8, 2x4 and 8x4 meshes.

Ring SDPA: the sequence is cut into ``2 * ring_size`` chunks and the device at ring position ``r``
outputs the causal attention rows of chunks ``r`` and ``2 * ring_size - 1 - r``, one after the
other.  Each device's output is compared with those rows of a float64 causal SDPA of the inputs as
the device holds them, within test_transformer's bound (the float32 compute error, then one
rounding into the output dtype); the chunk pairs of a whole ring, put back in sequence order, are
the full causal attention.  The ring position is inferred from the mesh coordinate (the row for a
ring of the mesh's height, else the column) or given.  tt-metal's checks raise a meshnn error
before anything is allocated.  The reversed all-gather is all_gather's bytes with the group's
shards in reversed order.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import meshnn as ttnn
from meshnn.mesh.observers import OBSERVERS, MeshObserver
from meshnn.ops.costs import op_desc
from meshnn.perf import predict

from .reference import (
    BF16,
    BFP8,
    TILE,
    assert_within,
    exceeds,
    mesh_fixtures,
    output_bound,
    rounding_error,
)
from .test_op_contract import snapshot
from .test_transformer import held, sdpa_reference

SHAPES = [(1, 8), (2, 4), (8, 4)]
RING = ttnn.transformer.ring_distributed_scaled_dot_product_attention
GATHER_REVERSED = ttnn.experimental.all_gather_async_reversed


meshes, mesh = mesh_fixtures(SHAPES)


@pytest.fixture
def rng():
    return np.random.default_rng(2222)


def replicated(mesh, values, dtype=BF16, memory_config=None):
    return ttnn.from_torch(
        torch.from_numpy(np.ascontiguousarray(values, np.float32)), dtype=dtype, layout=TILE, device=mesh,
        mesh_mapper=ttnn.ReplicateTensorToMesh(mesh), memory_config=memory_config,
    )  # fmt: skip


def per_device(tensor):
    return [ttnn.to_torch(t).double().numpy() for t in ttnn.get_device_tensors(tensor)]


def coords(mesh):
    rows, cols = tuple(mesh.shape)
    return [(r, c) for r in range(rows) for c in range(cols)]


def chunk_rows(values, r, ring_size):
    """Rows of chunks r and 2 * ring_size - 1 - r of ``values`` [..., s, d], one after the other."""
    c = values.shape[-2] // (2 * ring_size)
    late = 2 * ring_size - 1 - r
    return np.concatenate([values[..., r * c : (r + 1) * c, :], values[..., late * c : (late + 1) * c, :]], axis=-2)


def causal(q, k, v, dtype, scale):
    """The float64 causal attention of the held inputs and its bound in ``dtype``."""
    ref, compute = sdpa_reference(*(held(x, dtype) for x in (q, k, v)), scale=scale, causal=True)
    return ref, output_bound(ref, compute, dtype)


def rings(mesh):
    """(ring_size, the coordinate axis giving a device's position) for the ring sizes the mesh infers."""
    rows, cols = tuple(mesh.shape)
    found = []
    if rows % 2 == 0:
        found.append((rows, 0))
    if cols % 2 == 0 and cols != rows:
        found.append((cols, 1))
    return found


@pytest.mark.parametrize(("nqh", "nkv"), [(4, 4), (8, 2)], ids=["mha", "gqa4"])
def test_each_device_outputs_its_chunk_pair_of_the_causal_rows(mesh, rng, nqh, nkv):
    d = 64
    for ring_size, axis in rings(mesh):
        s = 64 * ring_size  # 2 * ring_size chunks of one tile each
        q, k, v = (rng.standard_normal((1, h, s, d)) for h in (nqh, nkv, nkv))
        out = RING(*(replicated(mesh, x) for x in (q, k, v)), ring_size)
        assert tuple(out.shape) == (1, nqh, s // ring_size, d) and out.dtype is BF16 and out.layout is TILE
        ref, bound = causal(q, k, v, BF16, 1 / math.sqrt(d))
        got = per_device(out)
        for value, coord in zip(got, coords(mesh), strict=True):
            r = coord[axis]
            assert_within(value, chunk_rows(ref, r, ring_size), chunk_rows(bound, r, ring_size), f"ring {r}")
        # one ring's outputs, put back in sequence order, are the whole causal attention
        c = s // (2 * ring_size)
        ring = {coord[axis]: value for value, coord in zip(got, coords(mesh), strict=True)}
        pieces = [ring[r][..., :c, :] for r in range(ring_size)] + [
            ring[r][..., c:, :] for r in reversed(range(ring_size))
        ]
        assert_within(np.concatenate(pieces, axis=-2), ref, bound, "the ring reassembled")
        wrong = chunk_rows(ref, 1, ring_size)  # another position's rows
        assert exceeds(wrong, chunk_rows(ref, 0, ring_size), chunk_rows(bound, 0, ring_size)), "positions differ"


def test_a_given_ring_id_is_every_devices_and_chunks_span_q_chunks(meshes, rng):
    mesh = meshes[(2, 4)]
    ring_size, d, s = 2, 64, 512  # chunks of 128 rows, two q chunks of 64
    q, k, v = (rng.standard_normal((1, h, s, d)) for h in (4, 2, 2))
    config = ttnn.SDPAProgramConfig(compute_with_storage_grid_size=(8, 7), q_chunk_size=64, k_chunk_size=128)
    kernel = ttnn.WormholeComputeKernelConfig(math_fidelity=ttnn.MathFidelity.HiFi4)
    tensors = [replicated(mesh, x, BFP8) for x in (q, k, v)]
    out = RING(*tensors, ring_size, 1, scale=0.2, program_config=config, compute_kernel_config=kernel)
    assert out.dtype is BFP8 and tuple(out.shape) == (1, 4, s // ring_size, d)
    ref, compute = sdpa_reference(*(held(x, BFP8) for x in (q, k, v)), scale=0.2, causal=True)
    rows, err = chunk_rows(ref, 1, ring_size), chunk_rows(compute, 1, ring_size)
    for value in per_device(out):
        assert_within(value, rows, err + rounding_error(np.abs(rows) + err, BFP8), "ring_id 1 on every device")


def test_the_ring_feeds_a_reversed_gather_and_an_all_gather(meshes, rng):
    """What llama3_70b_galaxy's prefill does: ring SDPA along a Galaxy row (ring_size 4), then the
    chunk pairs gathered along cluster axis 1; the reversed gather puts the late chunks in order."""
    mesh = meshes[(8, 4)]
    ring_size, s, d = 4, 256, 64
    q, k, v = (rng.standard_normal((1, h, s, d)) for h in (2, 1, 1))
    out = RING(*(replicated(mesh, x) for x in (q, k, v)), ring_size)
    c = s // (2 * ring_size)
    early = ttnn.slice(out, [0, 0, 0, 0], [1, 2, c, d])
    late = ttnn.slice(out, [0, 0, c, 0], [1, 2, 2 * c, d])
    sems = semaphores(mesh, 2)
    first = ttnn.experimental.all_gather_async(early, None, 2, sems, cluster_axis=1)
    second = GATHER_REVERSED(late, None, 2, sems, cluster_axis=1)
    ref, bound = causal(q, k, v, BF16, 1 / math.sqrt(d))
    for a, b in zip(per_device(first), per_device(second), strict=True):
        assert_within(np.concatenate([a, b], axis=-2), ref, bound, "sequence restored")


def _bad_env(mesh, rng):
    x = rng.standard_normal((1, 2, 256, 64))
    t = {name: replicated(mesh, x) for name in ("q", "k", "v")}
    t["k8"] = replicated(mesh, x, BFP8)
    t["short"] = replicated(mesh, rng.standard_normal((1, 2, 128, 64)))
    t["tiny"] = replicated(mesh, rng.standard_normal((1, 2, 96, 64)))
    t["l1"] = replicated(mesh, x, memory_config=ttnn.L1_MEMORY_CONFIG)
    t["f32"] = replicated(mesh, x, ttnn.float32)
    t["long"] = replicated(mesh, rng.standard_normal((1, 2, 512, 64)))
    t["k3"] = replicated(mesh, rng.standard_normal((1, 3, 256, 64)))
    return t


BAD = {
    "ring_size odd": (lambda t: RING(t["q"], t["k"], t["v"], 3), ttnn.MeshnnValueError, r"ring_size must be even"),
    "ring_size 0": (lambda t: RING(t["q"], t["k"], t["v"], 0), ttnn.MeshnnValueError, r"ring_size must be in 1\.\.32"),
    "ring_size 34": (lambda t: RING(t["q"], t["k"], t["v"], 34), ttnn.MeshnnValueError, r"ring_size must be in"),
    "ring_size a float": (lambda t: RING(t["q"], t["k"], t["v"], 4.0), ttnn.MeshnnTypeError, r"ring_size must be an"),
    "ring_id past the ring": (lambda t: RING(t["q"], t["k"], t["v"], 4, 4), ttnn.MeshnnValueError, r"ring_id must"),
    "ring_id a bool": (lambda t: RING(t["q"], t["k"], t["v"], 4, True), ttnn.MeshnnTypeError, r"ring_id must be an"),
    "ring of no mesh dim": (
        lambda t: RING(t["long"], t["long"], t["long"], 8),
        ttnn.MeshnnValueError,
        r"ring_size 8 matches neither",
    ),
    "mixed dtypes": (lambda t: RING(t["q"], t["k8"], t["v"], 4), ttnn.MeshnnTypeError, r"one dtype; input_tensor_k"),
    "float32": (lambda t: RING(t["f32"], t["f32"], t["f32"], 4), ttnn.MeshnnTypeError, r"input_tensor_q must be one"),
    "L1": (lambda t: RING(t["q"], t["k"], t["l1"], 4), ttnn.MeshnnValueError, r"input_tensor_v must be in DRAM"),
    "k shorter": (lambda t: RING(t["q"], t["short"], t["short"], 4), ttnn.MeshnnValueError, r"one sequence length"),
    "heads": (lambda t: RING(t["q"], t["k3"], t["k3"], 4), ttnn.MeshnnValueError, r"multiple of k's and v's 3"),
    "too few tiles": (lambda t: RING(t["tiny"], t["tiny"], t["tiny"], 4), ttnn.MeshnnValueError, r"2 \* ring_size"),
    "chunk not whole q chunks": (
        lambda t: RING(t["q"], t["k"], t["v"], 4, program_config=ttnn.SDPAProgramConfig(q_chunk_size=64)),
        ttnn.MeshnnValueError,
        r"multiple of program_config's q_chunk_size \(64\)",
    ),
    "scale a string": (lambda t: RING(t["q"], t["k"], t["v"], 4, scale="0.1"), ttnn.MeshnnTypeError, r"scale must"),
    "unknown keyword": (
        lambda t: RING(t["q"], t["k"], t["v"], 4, is_causal=True),
        ttnn.MeshnnTypeError,
        r"unexpected keyword argument 'is_causal'",
    ),
    "compute kernel config": (
        lambda t: RING(t["q"], t["k"], t["v"], 4, compute_kernel_config="hifi4"),
        ttnn.MeshnnTypeError,
        r"compute_kernel_config must be",
    ),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_ring_arguments_are_refused_before_anything_changes(meshes, rng, case):
    mesh = meshes[(2, 4)]
    t = _bad_env(mesh, rng)
    call, error, message = BAD[case]
    before = snapshot(mesh)
    with pytest.raises(error, match=message):
        call(t)
    assert snapshot(mesh) == before


# ------------------------------------------------------------------------------ reversed gather


def semaphores(mesh, count):
    grid = mesh.compute_with_storage_grid_size()
    cores = ttnn.CoreRangeSet([ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(grid.x - 1, grid.y - 1))])
    return [ttnn.create_global_semaphore(mesh, cores, 0) for _ in range(count)]


def reversed_pieces(values, n, dim):
    """``values`` cut into n pieces along ``dim`` and put back last piece first."""
    return np.concatenate(np.split(values, n, axis=dim)[::-1], axis=dim)


@pytest.mark.parametrize("dim", [2, 3])
def test_all_gather_async_reversed_is_all_gather_in_reversed_order(mesh, rng, dim):
    n = mesh.get_num_devices()
    x = ttnn.from_torch(
        torch.from_numpy(rng.standard_normal((n, 1, 32, 64)).astype(np.float32)), dtype=BF16, layout=TILE,
        device=mesh, mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0),
    )  # fmt: skip
    sems = semaphores(mesh, 2)
    for axis in [None, 0, 1]:
        size = n if axis is None else tuple(mesh.shape)[axis]
        if size == 1:
            continue
        plain = per_device(ttnn.all_gather(x, dim, cluster_axis=axis))
        got = GATHER_REVERSED(
            x, persistent_output_buffer=None, dim=dim, multi_device_global_semaphore=sems, num_links=1,
            cluster_axis=axis, topology=ttnn.Topology.Linear, chunks_per_sync=10, num_workers_per_link=2,
        )  # fmt: skip
        for a, b in zip(per_device(got), plain, strict=True):
            np.testing.assert_array_equal(a, reversed_pieces(b, size, dim))
    if tuple(mesh.shape)[1] > 1:  # (input, dim, cluster_axis, mesh_device, topology, semaphores)
        axis_form = GATHER_REVERSED(x, dim, 1, mesh, ttnn.Topology.Linear, sems)
        plain = per_device(ttnn.all_gather(x, dim, cluster_axis=1))
        for a, b in zip(per_device(axis_form), plain, strict=True):
            np.testing.assert_array_equal(a, reversed_pieces(b, tuple(mesh.shape)[1], dim))
    whole = per_device(GATHER_REVERSED(x, dim, sems))  # (input, dim, semaphores): every device
    for a, b in zip(whole, per_device(ttnn.all_gather(x, dim)), strict=True):
        np.testing.assert_array_equal(a, reversed_pieces(b, n, dim))


def test_a_persistent_buffer_takes_the_reversed_gather_in_place(meshes, rng):
    mesh = meshes[(2, 4)]
    x = ttnn.from_torch(
        torch.from_numpy(rng.standard_normal((8, 1, 32, 32)).astype(np.float32)), dtype=BF16, layout=TILE,
        device=mesh, mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0),
    )  # fmt: skip
    plain = ttnn.all_gather(x, 3, cluster_axis=1)
    buffer = ttnn.allocate_tensor_on_device(plain.spec, mesh)
    address = buffer.buffer_address()
    out = GATHER_REVERSED(x, buffer, 3, semaphores(mesh, 2), cluster_axis=1)
    assert out is buffer and out.buffer_address() == address
    for a, b in zip(per_device(out), per_device(plain), strict=True):
        np.testing.assert_array_equal(a, reversed_pieces(b, 4, 3))
    with pytest.raises(ttnn.MeshnnValueError, match="persistent_output_buffer"):
        GATHER_REVERSED(x, x, 3, semaphores(mesh, 2), cluster_axis=1)
    with pytest.raises(ttnn.MeshnnValueError, match="multi_device_global_semaphore"):
        GATHER_REVERSED(x, None, 3, semaphores(mesh, 1), cluster_axis=1)


def test_the_perf_model_times_a_device_s_rows_only(meshes, rng):
    """A ring device computes 2 / (2 * ring_size) of the rows at half the keys on average: about
    1 / ring_size of the causal SDPA's work; the model's op name is tt-metal's."""

    class Last(MeshObserver):
        def on_op_end(self, event, outputs):
            self.desc = op_desc(event, outputs)

    mesh = meshes[(1, 8)]
    last = Last()
    OBSERVERS.add(last)
    try:
        tensors = [replicated(mesh, rng.standard_normal((1, 8, 2048, 64))) for _ in range(3)]
        config = ttnn.SDPAProgramConfig(q_chunk_size=128, k_chunk_size=128)
        ttnn.transformer.scaled_dot_product_attention(*tensors, is_causal=True, program_config=config)
        full = last.desc
        RING(*tensors, 8, program_config=config)
        ring = last.desc
    finally:
        OBSERVERS.remove(last)
    assert ring.op_code == "RingDistributedSdpaDeviceOperation" and ring.attention.causal
    ratio = predict(ring, "t3k").flops / predict(full, "t3k").flops
    assert 0.9 / 8 < ratio < 1.1 / 8, ratio
