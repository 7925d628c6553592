"""The diffusion transformers' ops (stop 49, ``models/tt_dit``) against torch / numpy references.

Data movement (neighbor_pad_async, slice_reshard_async, the gather of all_gather_minimal_matmul_async
and ring joint attention's persistent buffers) is compared exactly.  Attention and the layer norm
compute in float32 from bfloat16 inputs (exact on the device) and round once into bfloat16: the
bound is half a bfloat16 ulp of the reference plus float32 noise (``2**-16`` of the values' scale).
The collectives run on 1x2, 2x4 and 4x8 meshes.
"""

from __future__ import annotations

import pytest
import torch

import meshnn as ttnn
from meshnn.perf.desc import CollectiveConfig, OpDesc, OpFamily, TensorDesc
from meshnn.perf.exchange import route

SHAPES = [(1, 2), (2, 4), (4, 8)]
SYSTEMS = {(1, 2): "t3k", (2, 4): "t3k", (4, 8): "galaxy", (1, 1): "n150"}
RM, TILE, BF16 = ttnn.ROW_MAJOR_LAYOUT, ttnn.TILE_LAYOUT, ttnn.bfloat16


def open_mesh(shape):
    return ttnn.open_mesh_device(ttnn.MeshShape(*shape), system=SYSTEMS[shape])


def semaphore(mesh):
    grid = ttnn.CoreRangeSet({ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(1, 0))})
    return ttnn.create_global_semaphore(mesh, grid, 0)


def put(mesh, x, dims, layout=TILE):
    mapper = ttnn.ShardTensor2dMesh(mesh, mesh_shape=tuple(mesh.shape), dims=dims)
    return ttnn.from_torch(x, dtype=BF16, layout=layout, device=mesh, mesh_mapper=mapper)


def get(mesh, t, dims):
    return ttnn.to_torch(t, mesh_composer=ttnn.ConcatMesh2dToTensor(mesh, mesh_shape=tuple(mesh.shape), dims=dims))


def assert_bf16_close(out: torch.Tensor, ref: torch.Tensor) -> None:
    """Within half a bfloat16 ulp of the reference plus float32 noise at the values' scale."""
    out, ref = out.double(), ref.double()
    bound = 2.0**-8 * ref.abs() + 2.0**-16 * ref.abs().max()
    worst = ((out - ref).abs() - bound).max().item()
    assert worst <= 0, f"off by {worst} beyond the bound"


def halo(chunks, dim, left, right, mode):
    """The tt-metal test's reference: each chunk with its neighbours' edge rows (zeros / its own edge at the ends)."""
    out = []
    for i, c in enumerate(chunks):
        edge_l, edge_r = c.narrow(dim, 0, 1), c.narrow(dim, c.shape[dim] - 1, 1)
        if i:
            before = chunks[i - 1].narrow(dim, chunks[i - 1].shape[dim] - left, left)
        else:
            before = (edge_l if mode == "replicate" else torch.zeros_like(edge_l)).repeat_interleave(left, dim)
        if i < len(chunks) - 1:
            after = chunks[i + 1].narrow(dim, 0, right)
        else:
            after = (edge_r if mode == "replicate" else torch.zeros_like(edge_r)).repeat_interleave(right, dim)
        out.append(torch.cat([before, c, after], dim))
    return out


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("mode", ["zeros", "replicate"])
def test_neighbor_pad_gives_each_piece_its_neighbours_edge_rows(shape, mode):
    mesh = open_mesh(shape)
    try:
        n = shape[1]
        x = torch.rand(2, 3 * n, 5, 16).bfloat16()
        s = semaphore(mesh)
        out = ttnn.experimental.neighbor_pad_async(put(mesh, x, (None, 1), RM), [1], [2], [1], mode, [1], [s], [s])
        assert list(out.shape) == [2, 6, 5, 16]
        ref = torch.cat(halo(list(torch.chunk(x, n, 1)), 1, 2, 1, mode), 1)
        assert torch.equal(get(mesh, out, (0, 1))[:2], ref)
    finally:
        mesh.close()


def test_neighbor_pad_of_two_dims_takes_the_corners_from_the_diagonal_neighbours():
    mesh = open_mesh((2, 4))
    try:
        x = torch.rand(1, 4, 8, 16).bfloat16()
        s = semaphore(mesh)
        t = put(mesh, x, (1, 2), RM)
        out = ttnn.experimental.neighbor_pad_async(t, [1, 2], [1, 1], [1, 0], "zeros", [0, 1], [s, s], [s])
        rows = halo(list(torch.chunk(x, 2, 1)), 1, 1, 1, "zeros")
        ref = torch.cat([torch.cat(halo(list(torch.chunk(r, 4, 2)), 2, 1, 0, "zeros"), 2) for r in rows], 1)
        assert torch.equal(get(mesh, out, (1, 2)), ref)
    finally:
        mesh.close()


@pytest.mark.parametrize("shape", SHAPES)
def test_slice_reshard_splits_a_slice_of_the_whole_again(shape):
    mesh = open_mesh(shape)
    try:
        n = shape[1]
        x = torch.rand(3 * n, 4, 32).bfloat16()
        s = semaphore(mesh)
        offset, length = 2, 3 * n  # two rows past the whole's end: zeros
        out = ttnn.experimental.slice_reshard_async(put(mesh, x, (None, 0), RM), 0, offset, length, 1, s, s)
        ref = torch.cat([x[offset:], torch.zeros(offset, 4, 32, dtype=x.dtype)])
        assert torch.equal(get(mesh, out, (1, 0))[:, :4], ref)
    finally:
        mesh.close()


def sdpa(q, k, v, mask=None):
    return torch.nn.functional.scaled_dot_product_attention(q.double(), k.double(), v.double(), attn_mask=mask)


def test_joint_attention_attends_both_sequences_and_skips_their_padding():
    mesh = open_mesh((1, 1))
    try:
        shapes = [(1, 2, 40, 64)] * 3 + [(1, 2, 19, 64)] * 3
        qkv = [torch.randn(s).bfloat16() for s in shapes]
        on = [ttnn.from_torch(t, dtype=BF16, layout=TILE, device=mesh) for t in qkv]
        config = ttnn.SDPAProgramConfig(q_chunk_size=32, k_chunk_size=32)
        out, joint = ttnn.transformer.joint_scaled_dot_product_attention(
            *on, joint_strategy="rear", program_config=config
        )
        ref = sdpa(*(torch.cat([a, b], 2) for a, b in zip(qkv[:3], qkv[3:], strict=True)))
        assert_bf16_close(ttnn.to_torch(out), ref[:, :, :40])
        assert_bf16_close(ttnn.to_torch(joint), ref[:, :, 40:])
    finally:
        mesh.close()


def ring_call(mesh, q, k, v, joint=(None, None, None), **kwargs):
    axis = 1
    kb, vb = (
        ttnn.from_torch(torch.zeros(t.shape), dtype=BF16, layout=TILE, device=mesh) for t in (k, v)
    )  # [b, nh, N, d]
    options = dict(
        persistent_output_buffer_k=kb, persistent_output_buffer_v=vb, joint_strategy="rear",
        program_config=ttnn.SDPAProgramConfig(compute_with_storage_grid_size=(8, 4), q_chunk_size=32, k_chunk_size=32),
        dim=2, multi_device_global_semaphore=[semaphore(mesh)] * 2, num_links=1, cluster_axis=axis,
        mesh_device=mesh, topology=ttnn.Topology.Linear, ccl_core_grid_offset=(0, 4),
    )  # fmt: skip
    options.update(kwargs)
    dims = (None, 2)
    tensors = [put(mesh, t, dims) for t in (q, k, v)]
    joints = [None if t is None else put(mesh, t, (None, None)) for t in joint]
    return kb, vb, ttnn.transformer.ring_joint_scaled_dot_product_attention(*tensors, *joints, **options)


@pytest.mark.parametrize("shape", SHAPES)
def test_ring_joint_attention_matches_joint_attention_over_the_whole_sequence(shape):
    mesh = open_mesh(shape)
    try:
        n, logical = shape[1], 32 * shape[1] - 5  # the split's last 5 rows are padding
        q, k, v = (torch.randn(1, 2, 32 * n, 64).bfloat16() for _ in range(3))
        joint = tuple(torch.randn(1, 2, 19, 64).bfloat16() for _ in range(3))
        kb, _, (out, joint_out, stats) = ring_call(mesh, q, k, v, joint, logical_n=logical)
        assert torch.equal(get(mesh, kb, (0, 3))[:1, :, :, :64], k)  # the gathered keys, in the persistent buffer
        keys = torch.cat([k[:, :, :logical], joint[1]], 2)
        values = torch.cat([v[:, :, :logical], joint[2]], 2)
        ref = sdpa(torch.cat([q, joint[0]], 2), keys, values)
        assert_bf16_close(get(mesh, out, (0, 2))[:, :, : 32 * n][..., :64], ref[:, :, : 32 * n])
        assert_bf16_close(ttnn.to_torch(ttnn.get_device_tensors(joint_out)[0]), ref[:, :, 32 * n :])
        assert list(stats.shape) == [1, 2, 2 * (32 + 32), 1]
    finally:
        mesh.close()


@pytest.mark.parametrize("shape", [(1, 2), (2, 4)])
def test_balanced_causal_ring_attention_follows_the_zigzag(shape):
    mesh = open_mesh(shape)
    try:
        ring, chunk = shape[1], 32
        seq = torch.randn(3, 1, 2, 2 * ring * chunk, 64).bfloat16()
        pieces = seq.reshape(3, 1, 2, 2 * ring, chunk, 64)
        order = [i for r in range(ring) for i in (r, 2 * ring - 1 - r)]  # device r holds chunks r and 2R-1-r
        zig = pieces[:, :, :, order].reshape(seq.shape)
        _, _, (out, _, _) = ring_call(
            mesh, *zig, logical_n=seq.shape[3], is_causal=True, is_balanced=True,
            program_config=ttnn.SDPAProgramConfig(compute_with_storage_grid_size=(8, 4), q_chunk_size=32,
                                                  k_chunk_size=32),
        )  # fmt: skip
        causal = torch.full((seq.shape[3],) * 2, float("-inf")).triu(1).double()
        ref = sdpa(*seq, causal).reshape(1, 2, 2 * ring, chunk, 64)[:, :, order].reshape(1, 2, -1, 64)
        assert_bf16_close(get(mesh, out, (0, 2))[:, :, : seq.shape[3]], ref)
    finally:
        mesh.close()


def test_dit_layer_norm_over_a_split_width_matches_the_stats_it_was_given():
    mesh = open_mesh((2, 4))
    try:
        x = (torch.randn(1, 1, 64, 512) * 3 + 1).bfloat16()
        w, b = torch.rand(1, 512).bfloat16(), torch.rand(1, 512).bfloat16()
        tx, tw, tb = put(mesh, x, (None, 3)), put(mesh, w, (None, 1)), put(mesh, b, (None, 1))
        recip = ttnn.create_layer_norm_reciprocals(mesh, ttnn.CoreRangeSet({ttnn.CoreRange((0, 0), (7, 7))}), 128)
        stats = ttnn.experimental.dit_layernorm_pre_allgather(tx, recip)
        local = get(mesh, stats, (0, 3))[:1].double()  # [1, 1, 64, 4 * 64]: each device's pair
        parts = x.double().reshape(1, 1, 64, 4, 128)
        assert_bf16_close(local[..., 0::64], parts.mean(-1))
        assert_bf16_close(local[..., 32::64], parts.var(-1, unbiased=False))
        gathered = ttnn.all_gather(stats, dim=3, cluster_axis=1)
        out = ttnn.experimental.dit_layernorm_post_allgather(tx, gathered, weight=tw, bias=tb)
        pairs = get(mesh, gathered, (0, 2))[:1, :, :64].double().reshape(1, 1, 64, 4, 64)  # what the post half read
        mean = pairs[..., 0].mean(-1, keepdim=True)
        var = pairs[..., 32].mean(-1, keepdim=True) + (pairs[..., 0] - mean).square().mean(-1, keepdim=True)
        ref = (x.double() - mean) / (var + 1e-5).sqrt() * w.double() + b.double()
        assert_bf16_close(get(mesh, out, (0, 3))[:1], ref)
    finally:
        mesh.close()


@pytest.mark.parametrize("shape", [(1, 2), (2, 4)])
def test_all_gather_minimal_matmul_is_the_gather_then_the_split_product(shape):
    mesh = open_mesh(shape)
    try:
        n = shape[1]
        x, w = torch.randn(1, 1, 64, 32 * n).bfloat16(), torch.randn(32 * n, 128).bfloat16()
        tx = put(mesh, x, (None, 3))
        tw = ttnn.from_torch(w, dtype=BF16, layout=TILE, device=mesh)
        buffer = ttnn.from_torch(torch.zeros(1, 1, 64, 32 * n), dtype=BF16, layout=TILE, device=mesh)
        outs = ttnn.experimental.all_gather_minimal_matmul_async(
            tx, tw, multi_device_global_semaphore=[semaphore(mesh)] * 2, persistent_output_buffer=buffer,
            cluster_axis=1, chunks=2,
        )  # fmt: skip
        assert len(outs) == 2 and list(outs[0].shape) == [1, 1, 64, 64]
        assert torch.equal(ttnn.to_torch(ttnn.get_device_tensors(buffer)[0]), x)
        plain = ttnn.experimental.minimal_matmul_split(buffer, tw, chunks=2)
        for fused, unfused in zip(outs, plain, strict=True):
            assert torch.equal(ttnn.to_torch(fused, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0)),
                               ttnn.to_torch(unfused, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0)))  # fmt: skip
    finally:
        mesh.close()


def test_the_halo_exchanges_move_their_halos_over_one_hop():
    x, padded = TensorDesc((1, 60, 106, 768), layout=ttnn.ROW_MAJOR_LAYOUT), TensorDesc((1, 64, 106, 768))
    pad = OpDesc(OpFamily.NEIGHBOR_PAD, (x,), (padded,), collective=CollectiveConfig(hops=1))
    assert route(pad, 4) == (float(padded.nbytes - x.nbytes), 1)
    half = TensorDesc((1, 30, 106, 768))
    reshard = OpDesc(OpFamily.SLICE_RESHARD, (x,), (half,))
    assert route(reshard, 8) == (float(half.nbytes), 1)
