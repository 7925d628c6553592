"""``ttnn.experimental.all_gather_minimal_matmul_async``: the tensor-parallel projection of the
diffusion transformers, an all-gather of the activation's last dimension (``K``) along
``cluster_axis`` fused with the minimal matmul.  The gathered activation (``[..., M, K * R]``) is
written into ``persistent_output_buffer`` when one is given (exactly ``all_gather_async``'s result);
the product, ``gathered @ weight [+ bias]`` then ``fused_activation``, or with ``scalar`` and the
two addcmul tensors ``addcmul_input_tensor1 + scalar * (gathered @ weight [+ bias]) *
addcmul_input_tensor2`` (``dit_minimal_matmul_addcmul_fused``), is returned as a list of ``chunks``
tensors of ``N / chunks`` columns each, as ttnn returns it (the gathered intermediate stripped).

The checks are the async gather's (:mod:`.async_arguments`: two semaphores, links, topology,
worker counts) and the minimal matmul's (:mod:`meshnn.ops.minimal_matmul`, TILE operands, a
weight with no batch, a ``[..., N]`` bias, the config), and tt-metal's own: ``dim == -1``,
``chunks >= 1`` with ``N`` split into whole tiles, the addcmul tensors given with ``scalar``, the
inner dimensions matching (``K * R`` against the weight's rows).  All before anything is
allocated.  The FSDP form (``fsdp_cluster_axis``: the weight gathered too) is refused
(``NotImplementedByMeshnn``).

May import: :mod:`meshnn.errors`, :mod:`meshnn.tensor`, the ops' checks, registry and minimal
matmul modules, and the collectives' modules.
"""

from __future__ import annotations

from meshnn.errors import MeshnnTypeError, MeshnnValueError, NotImplementedByMeshnn
from meshnn.ops.ccl.all_gather_async import gather_async
from meshnn.ops.ccl.arguments import Topology, checked_input
from meshnn.ops.ccl.async_arguments import ring_size
from meshnn.ops.checks import int_arg
from meshnn.ops.minimal_matmul import _checked, _operand
from meshnn.ops.minimal_matmul_fused import dit_minimal_matmul_addcmul_fused, minimal_matmul_split
from meshnn.ops.registry import OpKind, register
from meshnn.ops.split import split
from meshnn.perf.desc import OpFamily
from meshnn.tensor.lifetime import deallocate
from meshnn.tensor.tensor import Tensor

OP = "experimental.all_gather_minimal_matmul_async"


def _checks(x: Tensor, weight: object, bias: object, config: object, chunks: int, dim: int, gathered_k: int) -> None:
    """The product's operands, ``dim`` and ``chunks`` (tt-metal's rules)."""
    _, w = _checked(OP, x, weight, bias, config)
    if dim != -1:
        raise MeshnnValueError(f"ttnn.{OP}: only dim=-1 is supported, got dim={dim}")
    if chunks < 1:
        raise MeshnnValueError(f"ttnn.{OP}: chunks must be >= 1, got {chunks}")
    width = w.shape[-1]
    if width % chunks or (width // chunks) % 32:
        raise MeshnnValueError(f"ttnn.{OP}: the output width N={width} must divide into {chunks} chunks of whole tiles")
    if w.shape[-2] != gathered_k:
        raise MeshnnValueError(
            f"ttnn.{OP}: inner dimensions must match; the gathered input has K={gathered_k}, weight_tensor "
            f"{list(w.shape)}"
        )


@register(
    OP,
    kind=OpKind.COLLECTIVE,
    family=OpFamily.ALL_GATHER,
    device_operation="AllGatherMinimalMatmulAsyncOp",
    modelled=False,
)
def all_gather_minimal_matmul_async(
    input_tensor: Tensor,
    weight_tensor: Tensor,
    *,
    bias_tensor: Tensor | None = None,
    scalar: float | None = None,
    addcmul_input_tensor1: Tensor | None = None,
    addcmul_input_tensor2: Tensor | None = None,
    fused_activation: object = None,
    config: object = None,
    multi_device_global_semaphore: object,
    topology: Topology = Topology.Ring,
    memory_config: object = None,
    dtype: object = None,
    compute_kernel_config: object = None,
    persistent_output_buffer: Tensor | None = None,
    num_links: int = 1,
    cluster_axis: int | None = None,
    barrier_semaphore: object = None,
    force_transpose: bool = True,
    num_workers_per_link: int = 1,
    num_buffers_per_channel: int = 1,
    chunks: int = 1,
    dim: int = -1,
    fsdp_cluster_axis: int | None = None,
    fsdp_multi_device_global_semaphore: object = (),
    persistent_weight_buffer: Tensor | None = None,
    fsdp_topology: object = None,
) -> list[Tensor]:
    """``chunks`` tensors of ``all_gather(input_tensor, -1) @ weight_tensor [+ bias]`` (then the
    activation, or the addcmul), ``N / chunks`` columns each."""
    if fsdp_cluster_axis is not None or persistent_weight_buffer is not None:
        raise NotImplementedByMeshnn(f"ttnn.{OP}: the FSDP form (fsdp_cluster_axis: the weight gathered too)")
    tensor, mesh, axis_dim = checked_input(OP, input_tensor, -1)
    count, along = int_arg(OP, "chunks", chunks), int_arg(OP, "dim", dim)
    ring = ring_size(OP, mesh, cluster_axis, tensor)
    addcmul = (scalar, addcmul_input_tensor1, addcmul_input_tensor2)
    if any(v is not None for v in addcmul) and any(v is None for v in addcmul):
        raise MeshnnValueError(f"ttnn.{OP}: scalar, addcmul_input_tensor1 and addcmul_input_tensor2 go together")
    _checks(tensor, weight_tensor, bias_tensor, config, count, along, tensor.shape[-1] * ring)
    if addcmul_input_tensor1 is not None:
        _operand(OP, "addcmul_input_tensor1", addcmul_input_tensor1)
        _operand(OP, "addcmul_input_tensor2", addcmul_input_tensor2)
        if fused_activation is not None:
            raise MeshnnValueError(f"ttnn.{OP}: fused_activation cannot be combined with the addcmul")
    if not isinstance(force_transpose, bool):
        raise MeshnnTypeError(f"ttnn.{OP}: force_transpose must be a bool, got {force_transpose!r}")
    options = dict(num_links=num_links, memory_config=None, topology=topology, cluster_axis=cluster_axis)
    options.update(barrier_semaphore=barrier_semaphore, subdevice_id=None, chunks_per_sync=None)
    options.update(num_workers_per_link=num_workers_per_link, num_buffers_per_channel=num_buffers_per_channel)
    given = {"multi_device_global_semaphore": multi_device_global_semaphore}
    given["persistent_output_buffer"] = persistent_output_buffer
    gathered = gather_async(OP, tensor, mesh, axis_dim, given, options)  # type: ignore[arg-type]
    try:
        return _product(gathered, weight_tensor, bias_tensor, addcmul, fused_activation, config, memory_config, dtype,
                        compute_kernel_config, count)  # fmt: skip
    finally:
        if persistent_output_buffer is None:
            deallocate(gathered)


def _product(x, weight, bias, addcmul, activation, config, memory_config, dtype, kernel_config, count) -> list[Tensor]:
    """The minimal matmul (split into ``count`` chunks) or its addcmul form of the gathered input."""
    if addcmul[1] is None:
        return minimal_matmul_split(
            x, weight, chunks=count, bias_tensor=bias, fused_activation=activation, config=config,
            memory_config=memory_config, dtype=dtype, compute_kernel_config=kernel_config,
        )  # fmt: skip
    whole = dit_minimal_matmul_addcmul_fused(
        x, weight, addcmul[0], addcmul[1], addcmul[2], bias, config=config, memory_config=memory_config,
        dtype=dtype, compute_kernel_config=kernel_config,
    )  # fmt: skip
    if count == 1:
        return [whole]
    try:
        return split(whole, whole.shape[-1] // count, -1, memory_config=whole.memory_config())
    finally:
        deallocate(whole)
