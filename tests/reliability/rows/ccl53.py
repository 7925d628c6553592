"""Bad calls of the strided gathers, ring attention's gather and the reduce-to-root (stop 53,
issue 30): ``experimental.strided_all_gather_async``,
``experimental.strided_all_gather_minimal_matmul_async``,
``experimental.ring_attention_all_gather_async`` and ``reduce_to_root``.  ``e.mesh`` is 2x4; ``e.heads`` bfloat16
TILE [1, 2, 32, 32] per device; ``e.sems`` semaphores; ``e.freed`` deallocated; ``e.other`` on
another mesh."""

from __future__ import annotations

import meshnn as ttnn

from ..cases import DEAD, TYPE, VALUE, WRONG_MESH, Case

SAG = "experimental.strided_all_gather_async"
SAGMM = "experimental.strided_all_gather_minimal_matmul_async"
RAAG = "experimental.ring_attention_all_gather_async"
RTR = "reduce_to_root"


def _sag(e, tensor=None, dim=3, sems=None, **kwargs):
    args = dict(cluster_axis=1, mm_block_ht=1, mm_block_wt=1)
    args.update(kwargs)
    tensor = e.heads if tensor is None else tensor
    return ttnn.experimental.strided_all_gather_async(tensor, None, dim, e.sems[:2] if sems is None else sems, **args)


def _sagmm(e, dim=3, flat=True, **kwargs):
    """The fused op on e.heads as [1, 1, 64, 32] (``flat``) or as it is (two channels), times itself."""
    config = ttnn.MinimalMatmulConfig(M_block_size=1, K_block_size=1, N_block_size=1, subblock_h=1, subblock_w=1,
                                      compute_with_storage_grid_size=ttnn.CoreCoord(2, 2))  # fmt: skip
    args = dict(
        cluster_axis=1, config=config, compute_kernel_config=ttnn.init_device_compute_kernel_config(e.mesh.arch())
    )
    args.update(kwargs)
    x = ttnn.reshape(e.heads, [1, 1, 64, 32]) if flat else e.heads
    return ttnn.experimental.strided_all_gather_minimal_matmul_async(
        x, x, None, dim, e.sems[:2], ttnn.CoreCoord(0, 6), **args
    )


def _raag(e, inputs=None, outputs=(), **kwargs):
    args = dict(multi_device_global_semaphore=e.sems[:2], cluster_axis=1, mesh_device=e.mesh,
                topology=ttnn.Topology.Linear)  # fmt: skip
    args.update(kwargs)
    inputs = [e.heads] if inputs is None else inputs
    return ttnn.experimental.ring_attention_all_gather_async(inputs, list(outputs), 2, **args)


def _rtr(e, l_tensor=None, root=None):
    root = ttnn.MeshCoordinate((0, 1)) if root is None else root
    return ttnn.reduce_to_root(e.heads if l_tensor is None else l_tensor, e.heads, e.heads, root)


def rows() -> list[Case]:
    return [
        Case(SAG, "dim 2", lambda e: _sag(e, dim=2), VALUE, "dim"),
        Case(SAG, "no mm_block_wt", lambda e: _sag(e, mm_block_wt=None), TYPE, "mm_block_wt"),
        Case(SAG, "mm_block_ht 0", lambda e: _sag(e, mm_block_ht=0), VALUE, "mm_block_ht"),
        Case(SAG, "one semaphore", lambda e: _sag(e, sems=e.sems[:1]), VALUE, "semaphore"),
        Case(SAG, "input deallocated", lambda e: _sag(e, tensor=e.freed), DEAD, "input_tensor"),
        Case(SAGMM, "dim 2", lambda e: _sagmm(e, dim=2), VALUE, "dim=3"),
        Case(SAGMM, "K x ring not the weight's rows", lambda e: _sagmm(e), VALUE, "inner dimensions"),
        Case(SAGMM, "no config", lambda e: _sagmm(e, config=None), TYPE, "config"),
        Case(
            SAGMM,
            "no compute_kernel_config",
            lambda e: _sagmm(e, compute_kernel_config=None),
            TYPE,
            "compute_kernel_config",
        ),
        Case(SAGMM, "an input of two channels", lambda e: _sagmm(e, flat=False), VALUE, "batch size 1"),
        Case(RAAG, "no inputs", lambda e: _raag(e, inputs=[]), VALUE, "Input tensor size"),
        Case(RAAG, "one tensor, not a list", lambda e: _raag(e, inputs=e.heads), TYPE, "input_tensor"),
        Case(
            RAAG, "two outputs for one input", lambda e: _raag(e, outputs=[e.heads, e.heads]), VALUE, "output tensors"
        ),
        Case(RAAG, "num_links 0", lambda e: _raag(e, num_links=0), VALUE, "num_links"),
        Case(
            RAAG,
            "mesh_device another mesh",
            lambda e: _raag(e, mesh_device=e.other.device()),
            WRONG_MESH,
            "mesh_device",
        ),
        Case(RAAG, "an input deallocated", lambda e: _raag(e, inputs=[e.heads, e.freed]), DEAD, "input_tensor"),
        Case(RTR, "a 2x4 mesh, not a line of 4", lambda e: _rtr(e), VALUE, "input_tensor_l's mesh"),
        Case(RTR, "root_coord a tuple", lambda e: _rtr(e, root=(0, 1)), TYPE, "root_coord"),
        Case(RTR, "l deallocated", lambda e: _rtr(e, l_tensor=e.freed), DEAD, "input_tensor_l"),
    ]
