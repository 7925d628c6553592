"""Bad calls of the diffusion transformers' ops (stop 49, ``models/tt_dit``): joint, ring joint and
(stop 51) exp ring joint attention, the DiT layer norm's two halves, the halo collectives (neighbor
pad, slice reshard) and the all-gather fused minimal matmul.  ``e.mesh`` is 2x4; ``e.heads``
bfloat16 TILE [1, 2, 32, 32] per device; ``e.a`` float32 TILE [1, 3, 40]; ``e.w`` [40, 24];
``e.rm`` its ROW_MAJOR twin; ``e.sems`` semaphores."""

from __future__ import annotations

import meshnn as ttnn

from ..cases import TYPE, VALUE, Case


def _joint(e, **kwargs):
    h = e.heads
    options = {"joint_strategy": "rear", "program_config": ttnn.SDPAProgramConfig(q_chunk_size=32, k_chunk_size=32)}
    return ttnn.transformer.joint_scaled_dot_product_attention(h, h, h, h, h, h, **{**options, **kwargs})


def _ring(e, **kwargs):
    h = e.heads
    options = dict(
        persistent_output_buffer_k=h, persistent_output_buffer_v=h, joint_strategy="rear", logical_n=64,
        program_config=ttnn.SDPAProgramConfig(compute_with_storage_grid_size=(8, 4), q_chunk_size=32, k_chunk_size=32),
        dim=2, multi_device_global_semaphore=e.sems[:2], num_links=1, cluster_axis=1, mesh_device=e.mesh,
        topology=ttnn.Topology.Linear, ccl_core_grid_offset=(0, 4),
    )  # fmt: skip
    return ttnn.transformer.ring_joint_scaled_dot_product_attention(h, h, h, **{**options, **kwargs})


def _exp(e, **kwargs):
    h = e.heads
    options = dict(
        persistent_output_buffer_k=h, persistent_output_buffer_v=h, joint_strategy="rear", logical_n=100,
        program_config=ttnn.SDPAProgramConfig(q_chunk_size=32, k_chunk_size=32), dim=2,
        multi_device_global_semaphore=e.sems[:2], num_links=2, cluster_axis=1, mesh_device=e.mesh,
        topology=ttnn.Topology.Ring,
    )  # fmt: skip
    return ttnn.transformer.exp_ring_joint_scaled_dot_product_attention(h, h, h, **{**options, **kwargs})


def _mmrs(e, **kwargs):
    config = ttnn.init_device_compute_kernel_config(e.mesh.arch())
    args = dict(dim=3, sems=e.sems[:3])
    args.update(kwargs)
    dim, sems = args.pop("dim"), args.pop("sems")
    return ttnn.experimental.minimal_matmul_strided_reduce_scatter_async(
        e.heads, e.heads, dim, sems, ttnn.CoreCoord(0, 6), compute_kernel_config=config, cluster_axis=1, **args
    )


def _srs(e, **kwargs):
    args = dict(dim=3, mm_block_ht=1, mm_block_wt=1, cluster_axis=1)
    args.update(kwargs)
    dim = args.pop("dim")
    return ttnn.experimental.strided_reduce_scatter_async(e.heads, None, dim, e.sems[:3], **args)


def _pad(e, tensor=None, **kwargs):
    args = dict(dim=[1], padding_left=[1], padding_right=[1], padding_mode="zeros", cluster_axis=[1])
    args.update(kwargs)
    return ttnn.experimental.neighbor_pad_async(
        e.rm if tensor is None else tensor, args["dim"], args["padding_left"], args["padding_right"],
        args["padding_mode"], args["cluster_axis"], [e.sems[0]], [e.sems[1]],
    )  # fmt: skip


def _agmm(e, **kwargs):
    return ttnn.experimental.all_gather_minimal_matmul_async(
        e.a, e.w, multi_device_global_semaphore=e.sems[:2], cluster_axis=1, **kwargs
    )


def rows() -> list[Case]:
    x, tr = ttnn.experimental, "transformer."
    joint, ring = tr + "joint_scaled_dot_product_attention", tr + "ring_joint_scaled_dot_product_attention"
    exp = tr + "exp_ring_joint_scaled_dot_product_attention"
    mmrs, srs = "experimental.minimal_matmul_strided_reduce_scatter_async", "experimental.strided_reduce_scatter_async"
    pre, post = "experimental.dit_layernorm_pre_allgather", "experimental.dit_layernorm_post_allgather"
    pad, reshard = "experimental.neighbor_pad_async", "experimental.slice_reshard_async"
    agmm = "experimental.all_gather_minimal_matmul_async"
    return [
        Case(joint, "a strategy other than rear", lambda e: _joint(e, joint_strategy="front"), VALUE, "joint_strategy"),
        Case(joint, "no program config", lambda e: _joint(e, program_config=None), TYPE, "program_config"),
        Case(joint, "a float32 input", lambda e: ttnn.transformer.joint_scaled_dot_product_attention(
            e.a, e.heads, e.heads, e.heads, e.heads, e.heads, joint_strategy="rear",
            program_config=ttnn.SDPAProgramConfig()), TYPE, "input_tensor_q"),
        Case(ring, "one joint tensor of three", lambda e: _ring(e, joint_tensor_q=e.heads), VALUE, "joint"),
        Case(ring, "the SDPA grid over the gather's cores", lambda e: _ring(e, ccl_core_grid_offset=(0, 2)),
             VALUE, "overlaps"),
        Case(ring, "logical_n past the gathered sequence", lambda e: _ring(e, logical_n=4096), VALUE, "logical_n"),
        Case(exp, "one link", lambda e: _exp(e, num_links=1), VALUE, "2 links"),
        Case(exp, "a Linear topology", lambda e: _exp(e, topology=ttnn.Topology.Linear), VALUE, "Ring"),
        Case(exp, "padding past a device's share", lambda e: _exp(e, logical_n=64), VALUE, "Delta"),
        Case(exp, "one joint tensor of three", lambda e: _exp(e, joint_tensor_q=e.heads), VALUE, "joint"),
        Case(exp, "a list for logical_n", lambda e: _exp(e, logical_n=[100]), TYPE, "logical_n"),
        Case(mmrs, "dim 2", lambda e: _mmrs(e, dim=2), VALUE, "dim=3"),
        Case(mmrs, "an input of two channels", lambda e: _mmrs(e), VALUE, "batch size 1"),
        Case(srs, "dim 2", lambda e: _srs(e, dim=2), VALUE, "dim=3"),
        Case(srs, "a Linear topology", lambda e: _srs(e, topology=ttnn.Topology.Linear), VALUE, "Ring"),
        Case(srs, "an input of two channels", lambda e: _srs(e), VALUE, "C=1"),
        Case(pre, "a ROW_MAJOR input", lambda e: x.dit_layernorm_pre_allgather(e.rm, e.a), VALUE, "TILE"),
        Case(post, "stats not of 64-wide pairs", lambda e: x.dit_layernorm_post_allgather(e.a_bf16, e.a_bf16),
             VALUE, "stats"),
        Case(post, "a weight without a bias", lambda e: x.dit_layernorm_post_allgather(
            e.heads, e.heads, weight=e.heads), VALUE, "bias"),
        Case(pad, "a TILE input", lambda e: _pad(e, e.a), VALUE, "ROW_MAJOR"),
        Case(pad, "an unknown padding mode", lambda e: _pad(e, padding_mode="reflect"), VALUE, "padding mode"),
        Case(pad, "the last dim", lambda e: _pad(e, dim=[2]), VALUE, "non-last dim"),
        Case(pad, "padding lists of two lengths", lambda e: _pad(e, padding_left=[1, 1]), VALUE, "padding_left"),
        Case(pad, "cluster axis 2", lambda e: _pad(e, cluster_axis=[2]), VALUE, "cluster axis"),
        Case(reshard, "dim 1", lambda e: x.slice_reshard_async(e.rm, 1, 0, 4, 1, e.sems[0], e.sems[1]),
             VALUE, "dim 0"),
        Case(reshard, "a shape the devices do not divide", lambda e: x.slice_reshard_async(
            e.rm, 0, 0, 6, 1, e.sems[0], e.sems[1]), VALUE, "output_dim_shape"),
        Case(agmm, "dim other than -1", lambda e: _agmm(e, dim=0), VALUE, "dim"),
        Case(agmm, "chunks of part tiles", lambda e: _agmm(e, chunks=3), VALUE, "chunks"),
        Case(agmm, "scalar without the addcmul tensors", lambda e: _agmm(e, scalar=1.0), VALUE, "addcmul"),
    ]  # fmt: skip
