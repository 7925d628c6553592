"""``ttnn.transformer.exp_ring_joint_scaled_dot_product_attention`` (issue 30; ``models/tt_dit``'s Wan
2.2 attention on a Galaxy): the ring-gathered keys in the persistent buffers, the attention of every
device's rows against the first ``logical_n`` keys and the joint ones, an empty joint as none, and
tt-metal's checks, each refused before anything is allocated."""

from __future__ import annotations

import pytest
import torch

import meshnn as ttnn

from .test_dit_ops import BF16, TILE, assert_bf16_close, get, open_mesh, put, sdpa, semaphore

OP = ttnn.transformer.exp_ring_joint_scaled_dot_product_attention


def _call(mesh, q, k, v, joint=(None, None, None), **kwargs):
    """The op on ``q``, ``k``, ``v`` split along the ring (mesh axis 1), the joint tensors replicated."""
    kb, vb = (ttnn.from_torch(torch.zeros(t.shape), dtype=BF16, layout=TILE, device=mesh) for t in (k, v))
    options = dict(
        persistent_output_buffer_k=kb, persistent_output_buffer_v=vb, joint_strategy="rear",
        logical_n=q.shape[2],
        program_config=ttnn.SDPAProgramConfig(compute_with_storage_grid_size=(8, 8), q_chunk_size=32, k_chunk_size=32),
        dim=2, multi_device_global_semaphore=[semaphore(mesh)] * 2, num_links=2, cluster_axis=1, mesh_device=mesh,
        topology=ttnn.Topology.Ring, num_workers_per_link=5, num_buffers_per_channel=32,
    )  # fmt: skip
    options.update(kwargs)
    tensors = [put(mesh, t, (None, 2)) for t in (q, k, v)]
    joints = [t if t is None or isinstance(t, ttnn.Tensor) else put(mesh, t, (None, None)) for t in joint]
    return kb, OP(*tensors, *joints, **options)


@pytest.mark.parametrize("shape", [(1, 2), (2, 4)])
def test_it_attends_the_logical_keys_and_the_joint_ones_as_one_sequence(shape):
    mesh = open_mesh(shape)
    try:
        n, logical = shape[1], 32 * shape[1] - 5  # the split's last 5 rows are padding
        q, k, v = (torch.randn(1, 2, 32 * n, 64).bfloat16() for _ in range(3))
        joint = tuple(torch.randn(1, 2, 32, 64).bfloat16() for _ in range(3))
        kb, (out, joint_out, stats) = _call(mesh, q, k, v, joint, logical_n=logical)
        assert torch.equal(get(mesh, kb, (0, 3))[:1, :, :, :64], k)  # the gathered keys, in the persistent buffer
        ref = sdpa(torch.cat([q, joint[0]], 2), torch.cat([k[:, :, :logical], joint[1]], 2),
                   torch.cat([v[:, :, :logical], joint[2]], 2))  # fmt: skip
        assert_bf16_close(get(mesh, out, (0, 2))[:, :, : 32 * n][..., :64], ref[:, :, : 32 * n])
        assert_bf16_close(ttnn.to_torch(ttnn.get_device_tensors(joint_out)[0]), ref[:, :, 32 * n :])
        assert list(stats.shape) == [1, 2, 2 * (32 + 32), 1]
    finally:
        mesh.close()


def test_empty_joint_tensors_are_none_given_as_wan_passes_them():
    mesh = open_mesh((1, 2))
    try:
        q, k, v = (torch.randn(1, 2, 64, 64).bfloat16() for _ in range(3))
        empty = ttnn.from_torch(torch.zeros(1, 2, 0, 64), dtype=BF16, layout=TILE, device=mesh)
        _, (out, joint_out, stats) = _call(mesh, q, k, v, (empty, empty, empty), logical_n=60)
        assert_bf16_close(get(mesh, out, (0, 2))[:1], sdpa(q, k[:, :, :60], v[:, :, :60]))
        assert list(joint_out.shape) == [1, 2, 0, 64] and list(stats.shape) == [1, 2, 2 * 32, 1]
    finally:
        mesh.close()


_SMALL_CHUNKS = ttnn.SDPAProgramConfig(q_chunk_size=32, k_chunk_size=32)
_WIDE_CHUNKS = ttnn.SDPAProgramConfig(q_chunk_size=64, k_chunk_size=32)
CASES = {
    "one link": (dict(num_links=1), "exactly 2 links"),
    "a line": (dict(topology=ttnn.Topology.Linear), "Ring topology"),
    "padding past a device's share": (dict(logical_n=32), "Delta between global"),
    "a joint sequence of part of a q chunk": (
        dict(joint=(torch.zeros(1, 2, 32, 64),) * 3, program_config=_WIDE_CHUNKS),
        "divisible by q_chunk_size",
    ),
    "more q chunks than the grid's columns": (dict(program_config=_SMALL_CHUNKS, q_rows=32 * 16), "grid columns"),
    "one joint tensor of three": (dict(joint=(torch.zeros(1, 2, 32, 64), None, None)), "all be present"),
    "a strategy other than rear": (dict(joint_strategy="front"), "joint_strategy"),
}


@pytest.mark.parametrize("case", CASES)
def test_bad_arguments_are_refused(case):
    """(That nothing is allocated or changed by a refused call: the bad-input table's rows.)"""
    kwargs, message = CASES[case]
    kwargs = dict(kwargs)
    mesh = open_mesh((1, 2))
    try:
        rows = kwargs.pop("q_rows", 64)
        q, k, v = (torch.zeros(1, 2, rows, 64).bfloat16() for _ in range(3))
        with pytest.raises(ValueError, match=message):
            _call(mesh, q, k, v, kwargs.pop("joint", (None, None, None)), **kwargs)
    finally:
        mesh.close()


def test_grouped_query_heads_are_refused():
    mesh = open_mesh((1, 2))
    try:
        q, k, v = torch.zeros(1, 2, 64, 64), torch.zeros(1, 1, 64, 64), torch.zeros(1, 1, 64, 64)
        with pytest.raises(ValueError, match="heads"):
            _call(mesh, q, k, v)
    finally:
        mesh.close()
