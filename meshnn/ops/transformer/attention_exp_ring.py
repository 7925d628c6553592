"""``ttnn.transformer.exp_ring_joint_scaled_dot_product_attention``: the newer, non-causal ring
joint attention of the video DiTs (``models/tt_dit``'s Wan 2.2 runs it with empty joint tensors
as ring self-attention).

The arithmetic is :mod:`.attention_ring_joint`'s non-causal form: k and v gathered along
``cluster_axis`` into the caller's persistent buffers, each device's query rows (then the joint
rows) attending the first ``logical_n`` gathered keys and the joint keys; outputs ``[b, nh, N /
R, d]``, ``[b, nh, L, d]`` (``L`` 0 without joint tensors) and the statistics ``[b, nh, 2 x (N / R
+ L, each padded to tiles), 1]`` (row maxima, then sums of exponentials), all bfloat16 TILE.

tt-metal's checks (``exp_ring_joint_sdpa_device_operation.cpp`` and the op's wrapper), before
anything is allocated: a joint tensor of no elements counts as absent, then the joint tensors all
or none; ``"rear"``; a program config; TILE device tensors in DRAM, one dtype of bfloat16 /
bfloat8_b / bfloat4_b, padded on the sequence alone; q, k and v of one batch, one head count and
one head size (a multiple of 32); a per-device sequence of whole tiles; ``logical_n`` at most the
gathered ``N`` and short of it by less than a device's share; exactly 2 links on a Ring; a device
grid of at least 3 columns (its last one drives the fabric), ``b x nh`` at most its rows, and the
q chunks of one head (the device's, then the joint's, which must be whole chunks) at most its
other columns.  ``num_workers_per_link`` and ``num_buffers_per_channel`` (fabric tuning) are
checked positive and recorded.

May import: :mod:`meshnn.errors`, :mod:`meshnn.tensor`, the ops' checks, config and registry
modules, the collectives' argument checks and :mod:`.attention_ring_joint` / :mod:`.attention_joint`.
"""

from __future__ import annotations

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.ops.ccl.arguments import Topology
from meshnn.ops.ccl.async_arguments import link_options, ring_size, same_mesh_device, semaphores
from meshnn.ops.config import check_compute_kernel_config
from meshnn.ops.registry import OpKind, register
from meshnn.ops.transformer.attention import SDPA_DTYPES
from meshnn.ops.transformer.attention_joint import check_program_config, check_strategy, joint_inputs, scale_of
from meshnn.ops.transformer.attention_ring_joint import attend, check_dims, gather_kv
from meshnn.perf.desc import OpFamily
from meshnn.tensor.tensor import Tensor

OP = "transformer.exp_ring_joint_scaled_dot_product_attention"
TILE = 32
LINKS = 2  # the op's fabric set-up: one link each way round the ring


@register(OP, kind=OpKind.TRANSFORMER, family=OpFamily.SDPA, device_operation="ExpRingJointSDPADeviceOperation")
def exp_ring_joint_scaled_dot_product_attention(
    input_tensor_q: Tensor,
    input_tensor_k: Tensor,
    input_tensor_v: Tensor,
    joint_tensor_q: Tensor | None = None,
    joint_tensor_k: Tensor | None = None,
    joint_tensor_v: Tensor | None = None,
    *,
    persistent_output_buffer_k: Tensor,
    persistent_output_buffer_v: Tensor,
    joint_strategy: str,
    logical_n: int,
    program_config: object,
    scale: float | None = None,
    compute_kernel_config: object = None,
    dim: int,
    multi_device_global_semaphore: object,
    num_links: int,
    cluster_axis: int,
    mesh_device: object,
    topology: object,
    subdevice_id: object = None,
    num_workers_per_link: int = 1,
    num_buffers_per_channel: int = 8,
) -> tuple[Tensor, Tensor, Tensor]:
    """k and v gathered along the ring into the persistent buffers, then non-causal joint attention
    of this device's query rows (and the joint rows): ``(out, joint_out, stats)``."""
    check_strategy(OP, joint_strategy)
    named = _inputs((input_tensor_q, input_tensor_k, input_tensor_v), (joint_tensor_q, joint_tensor_k, joint_tensor_v))
    mesh = named["input_tensor_q"].storage.mesh_buffer.device()  # type: ignore[union-attr]
    same_mesh_device(OP, mesh_device, mesh)
    config = check_program_config(OP, program_config, required=True)
    if isinstance(dim, bool) or not isinstance(dim, int):
        raise MeshnnTypeError(f"ttnn.{OP}: dim must be an int, got {dim!r}")
    if dim not in (2, -2):
        raise MeshnnValueError(f"ttnn.{OP}: the ring gathers the sequence, dim 2; got dim={dim!r}")
    ring = ring_size(OP, mesh, cluster_axis, named["input_tensor_q"])
    b, nh, n_local, length, d, _ = check_dims(named, logical_n, ring, (False, False), config.q_chunk_size, OP)
    _check_exp(named, (b, nh, n_local, length, d), int(logical_n), ring)
    _check_grid(mesh, (b, nh, n_local, length), config.q_chunk_size)
    sems = semaphores(OP, "multi_device_global_semaphore", multi_device_global_semaphore, mesh, None)
    options = dict(
        num_links=num_links, topology=topology, subdevice_id=subdevice_id, cluster_axis=cluster_axis,
        num_workers_per_link=num_workers_per_link, num_buffers_per_channel=num_buffers_per_channel,
    )  # fmt: skip
    attrs = _links(mesh, options)
    factor = scale_of(OP, scale, d)
    kernel_config = check_compute_kernel_config(OP, compute_kernel_config)
    attrs.update(dim=2, multi_device_global_semaphore=sems)
    given = {"k": persistent_output_buffer_k, "v": persistent_output_buffer_v}
    gathered = gather_kv(named, mesh, given, cluster_axis, attrs, OP)
    dims = (b, nh, n_local, length, d)
    flags = (False, False, int(logical_n), ring, int(cluster_axis))
    extra = {"program_config": config, "compute_kernel_config": kernel_config}
    return attend(named, gathered, dims, flags, factor, extra, OP)


def _inputs(tensors: tuple[object, ...], joint: tuple[object, ...]) -> dict[str, Tensor]:
    """The tensors checked by name; a joint tensor of no elements counts as none given (ttnn's
    wrapper drops it), then the joint tensors all or none."""
    joint = tuple(None if isinstance(t, Tensor) and 0 in tuple(t.shape) else t for t in joint)
    if any(t is None for t in joint) and not all(t is None for t in joint):
        raise MeshnnValueError(f"ttnn.{OP}: joint q/k/v must all be present or all absent")
    names = ("input_tensor_q", "input_tensor_k", "input_tensor_v")
    if joint[0] is not None:
        names, tensors = (*names, "joint_tensor_q", "joint_tensor_k", "joint_tensor_v"), (*tensors, *joint)
    return joint_inputs(OP, tensors, names, SDPA_DTYPES)


def _links(mesh, options: dict[str, object]) -> dict[str, object]:
    """The link options checked as every async collective's, then this op's own: 2 links, a Ring."""
    attrs = link_options(OP, mesh, options, links_required=True)
    if options["num_links"] != LINKS:
        raise MeshnnValueError(
            f"ttnn.{OP}: Exp ring joint SDPA requires exactly {LINKS} links. Got {options['num_links']}."
        )
    if options["topology"] is not Topology.Ring:
        raise MeshnnValueError(f"ttnn.{OP}: Exp ring joint SDPA requires Ring topology, got {options['topology']!r}")
    return attrs


def _check_exp(named: dict[str, Tensor], dims: tuple[int, ...], logical_n: int, ring: int) -> None:
    """What this op checks beyond the ring joint attention's: one head count for q, k and v, a
    head size of whole tiles, and padding of less than a device's share of the sequence."""
    _, nh, n_local, _, d = dims
    heads = {n: t.shape[1] for n, t in named.items()}
    if len(set(heads.values())) != 1:
        raise MeshnnValueError(f"ttnn.{OP}: Q, K and V (and the joint tensors) must have {nh} heads each, got {heads}")
    if d % TILE:
        raise MeshnnValueError(f"ttnn.{OP}: Head dimension ({d}) must be divisible by TILE_WIDTH ({TILE})")
    gathered = n_local * ring
    if gathered - logical_n >= n_local:
        raise MeshnnValueError(
            f"ttnn.{OP}: Delta between global (padded) and logical (unpadded) sequence length must be less than "
            f"local (per device) sequence length. Got delta: {gathered - logical_n}, local sequence length: {n_local}"
        )


def _check_grid(mesh, dims: tuple[int, int, int, int], q_chunk: int) -> None:
    """The device grid's columns but the last (the fabric's) hold one head's q chunks, its rows
    the (batch, head) pairs."""
    b, nh, n_local, length = dims
    grid = mesh.compute_with_storage_grid_size()
    if grid.x < 3:
        raise MeshnnValueError(
            f"ttnn.{OP}: Device grid must have at least 3 columns (2 reserved for fabric MUX + at least 1 for SDPA "
            f"workers). Got {grid.x} columns."
        )
    if length % q_chunk:
        raise MeshnnValueError(
            f"ttnn.{OP}: Joint sequence length ({length}) must be 0 or divisible by q_chunk_size ({q_chunk})."
        )
    if b * nh > grid.y:
        raise MeshnnValueError(
            f"ttnn.{OP}: Number of (batch x heads) combinations (B={b} x NQH={nh} = {b * nh}) exceeds SDPA grid "
            f"rows ({grid.y}) on device grid {grid.x}x{grid.y}"
        )
    chunks = -(-n_local // q_chunk) + length // q_chunk
    if chunks > grid.x - 1:
        raise MeshnnValueError(
            f"ttnn.{OP}: Q chunks per head ({chunks}) exceeds SDPA grid columns ({grid.x - 1}) on device grid "
            f"{grid.x}x{grid.y}. Increase q_chunk_size or reduce sequence length."
        )
