"""``ttnn.experimental.all_to_all_dispatch_metadata``: the MoE token dispatch of tt-metal's fused
decode (gpt-oss, DeepSeek): every token to the devices of its experts along one cluster axis, and
every token's expert ids and scores gathered along it.

Per device: ``input_tensor`` ``[a, b, c, H]`` bfloat16 ROW_MAJOR holds ``T = a*b*c`` tokens (in
that order); ``expert_indices_tensor`` ``[a, b, c, K]`` uint16 and ``expert_scores_tensor`` of the
same shape, bfloat16, their top-K experts and scores (ROW_MAJOR, interleaved or sharded);
``expert_mapping_tensor`` ``[D, E]`` uint16 (D: the mesh's devices): row ``d`` is the owner's
row-major device index of each expert as source device ``d`` sees it.  The group: the devices on the
sender's line along ``cluster_axis`` (required), ``G`` of them, the sender at position ``p``.
``shared_expert_ids``: experts every token goes to besides its top K (ids appended after them,
scores 1.0).

Outputs per device (``T' = T*G``, ``K' = K + shared``):

- ``[1, T', H]`` bfloat16 DRAM: row ``p*T + t`` is token ``t`` of member ``p`` when one of its
  experts' owner (the sender's mapping row) is this device; owners off the sender's line are
  skipped, as ttnn's; rows nothing was sent to keep what the buffer held (ttnn: placeholders);
- ``[1, T', K']`` uint16 and bfloat16: every member's ids and scores (row ``p*T + t``), on every
  member, HEIGHT_SHARDED in L1 on ``drain_sync_tilizer_core`` (default (0, 0)), one shard.

Values move as bytes.  Preallocated ``output_tensors`` (all three) are written in place and give the
outputs' specs, as ttnn's.  ``worker_mode``, ``dispatch_algorithm``, the core range sets, the
semaphore and ``num_links`` choose hardware resources: checked, recorded.  Perf: the all-to-all
dispatch's line transfer (``min(K', G-1)`` shards over ``G-1`` hops).

May import: :mod:`meshnn.errors`, :mod:`meshnn.formats`, :mod:`meshnn.device`, :mod:`meshnn.mesh`,
:mod:`meshnn.tensor`, the ops' checks, launch, outputs, values and registry, and the collectives'
modules.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from meshnn.device.buffer import BufferType, ShardOrientation, ShardSpec, TensorMemoryLayout
from meshnn.device.core import CoreCoord, CoreRange, CoreRangeSet
from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.mesh.coord import MeshCoordinate
from meshnn.mesh.mesh_device import MeshDevice
from meshnn.ops.ccl.all_to_all import _preallocated, _token_bits
from meshnn.ops.ccl.arguments import checked_input
from meshnn.ops.ccl.broadcast import device_groups, whole_mesh
from meshnn.ops.ccl.moe_enums import DispatchAlgorithm, WorkerMode
from meshnn.ops.ccl.point_to_point import local_only
from meshnn.ops.checks import device_input, same_mesh
from meshnn.ops.launch import launch
from meshnn.ops.outputs import Output
from meshnn.ops.registry import OpKind, register
from meshnn.ops.values import logical_values
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig, TensorSpec
from meshnn.tensor.tensor import Tensor

OP = "experimental.all_to_all_dispatch_metadata"


def _inputs(tensors: dict[str, object]) -> tuple[list[Tensor], MeshDevice]:
    """The four inputs, checked as ttnn checks them (layouts, dtypes, ranks, shapes)."""
    first = checked_input(OP, tensors["input_tensor"], None)[0]  # type: ignore[arg-type]
    rest = [device_input(OP, name, value) for name, value in list(tensors.items())[1:]]
    checked = [first, *rest]
    mesh = same_mesh(OP, dict(zip(tensors, checked, strict=True)))
    tokens, ids, scores, mapping = checked
    for name, t, dtype in (("Input", tokens, DataType.BFLOAT16), ("Indices", ids, DataType.UINT16)):
        if t.layout is not Layout.ROW_MAJOR or t.dtype is not dtype:
            raise MeshnnValueError(f"ttnn.{OP}: {name} tensor must be in row major layout and {dtype}")
    if scores.layout is not Layout.ROW_MAJOR or scores.dtype is not DataType.BFLOAT16:
        raise MeshnnValueError(f"ttnn.{OP}: Scores tensor must be in row major layout and bfloat16")
    if tuple(scores.shape) != tuple(ids.shape):
        raise MeshnnValueError(f"ttnn.{OP}: Scores tensor shape {list(scores.shape)} must match {list(ids.shape)}")
    if len(tokens.shape) != 4 or len(ids.shape) != 4 or tuple(tokens.shape)[:-1] != tuple(ids.shape)[:-1]:
        raise MeshnnValueError(
            f"ttnn.{OP}: Input and indices tensor must be rank 4 with the same shape but the last dim, got "
            f"{list(tokens.shape)} and {list(ids.shape)}"
        )
    if mapping.layout is not Layout.ROW_MAJOR or mapping.dtype is not DataType.UINT16:
        raise MeshnnValueError(f"ttnn.{OP}: expert_mapping_tensor must be uint16 in row major layout")
    if len(mapping.shape) != 2 or mapping.shape[0] != mesh.get_num_devices():
        raise MeshnnValueError(
            f"ttnn.{OP}: Expert mapping tensor must have shape [devices ({mesh.get_num_devices()}), experts], got "
            f"{list(mapping.shape)}"
        )
    return checked, mesh


def _shared(value: object, experts: int) -> list[int]:
    if value is None:
        return []
    if not isinstance(value, Sequence) or isinstance(value, str | bytes):
        raise MeshnnTypeError(f"ttnn.{OP}: shared_expert_ids must be a list of ints, got {value!r}")
    ids = list(value)
    if not ids:
        raise MeshnnValueError(f"ttnn.{OP}: If shared_expert_ids is provided it must not be empty")
    if any(isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < experts for i in ids):
        raise MeshnnValueError(f"ttnn.{OP}: shared_expert_ids must be expert ids below {experts}, got {ids}")
    return ids


def _hardware(given: dict[str, object]) -> CoreCoord:
    """The hardware-only arguments, checked; the drain core."""
    for name, kind in (("worker_mode", WorkerMode), ("dispatch_algorithm", DispatchAlgorithm)):
        if not isinstance(given[name], kind):
            raise MeshnnTypeError(f"ttnn.{OP}: {name} must be a ttnn.{kind.__name__}, got {given[name]!r}")
    for name in ("worker_core_range_set", "mux_core_range_set"):
        if given[name] is not None and not isinstance(given[name], CoreRangeSet):
            raise MeshnnTypeError(f"ttnn.{OP}: {name} must be a ttnn.CoreRangeSet, got {given[name]!r}")
    links = given["num_links"]
    if links is not None and (isinstance(links, bool) or not isinstance(links, int) or links < 1):
        raise MeshnnValueError(f"ttnn.{OP}: Number of links must be greater than 0, got {links!r}")
    drain = given["drain_sync_tilizer_core"]
    if drain is None:
        return CoreCoord(0, 0)
    if not isinstance(drain, Sequence) or len(drain) != 2 or not all(isinstance(v, int) for v in drain):
        raise MeshnnTypeError(f"ttnn.{OP}: drain_sync_tilizer_core must be two ints (x, y), got {drain!r}")
    return CoreCoord(int(drain[0]), int(drain[1]))


def _drain(drain: CoreCoord, mesh: MeshDevice, allocating: bool) -> CoreCoord:
    """The drain core, inside the compute grid when the op allocates the ids and scores there."""
    grid = mesh.compute_with_storage_grid_size()
    if allocating and not (drain.x < grid.x and drain.y < grid.y):
        raise MeshnnValueError(
            f"ttnn.{OP}: drain_sync_tilizer_core ({drain.x}, {drain.y}) is outside the compute grid {grid.x}x{grid.y}"
        )
    return drain


def _specs(tokens: Tensor, ids: Tensor, scores: Tensor, rows: int, width: int, drain: CoreCoord) -> list[TensorSpec]:
    """ttnn's output specs: the tokens in DRAM, the ids and scores one L1 shard on the drain core."""
    dram = MemoryConfig(TensorMemoryLayout.INTERLEAVED, BufferType.DRAM)
    shard = ShardSpec(CoreRangeSet([CoreRange(drain, drain)]), (rows, width), ShardOrientation.ROW_MAJOR)
    l1 = MemoryConfig(TensorMemoryLayout.HEIGHT_SHARDED, BufferType.L1, shard)
    return [
        TensorSpec((1, rows, tokens.shape[-1]), DataType.BFLOAT16, Layout.ROW_MAJOR, memory_config=dram),
        TensorSpec((1, rows, width), ids.dtype, Layout.ROW_MAJOR, memory_config=l1),
        TensorSpec((1, rows, width), scores.dtype, Layout.ROW_MAJOR, memory_config=l1),
    ]


def dispatch_metadata_rows(sources: tuple, outputs: tuple, groups: list[list[int]], shared: list[int]) -> None:
    """Write every group member's tokens ``(devices, T, H)`` to their experts' owners in the group
    (the sender's mapping row ``(devices, D, E)``), and its ids and scores ``(devices, T, K)`` (with
    the shared experts appended) to every member, at the member's block of ``T`` rows of the
    outputs ``(devices, 1, T*G, *)``."""
    tokens, ids, scores, mapping = sources
    out, out_ids, out_scores = outputs
    count = tokens.shape[1]
    one = np.float32(1.0).view(np.uint32) >> 16  # bfloat16 1.0's bits
    for group in groups:
        for position, src in enumerate(group):
            chosen = ids[src].astype(np.int64)  # (T, K)
            if shared:
                chosen = np.concatenate([chosen, np.broadcast_to(np.array(shared), (count, len(shared)))], axis=1)
            table = mapping[src][src].astype(np.int64)  # the sender's row: each expert's owner
            valid = (chosen >= 0) & (chosen < table.shape[0])
            owners = np.where(valid, table[np.where(valid, chosen, 0)], -1)  # (T, K')
            block = slice(position * count, (position + 1) * count)
            for dst in group:
                hit = (owners == dst).any(axis=1)
                region = out[dst][0, block]
                region[hit] = tokens[src][hit]
                out_ids[dst][0, block] = chosen.astype(np.uint16)
                out_scores[dst][0, block, : scores.shape[2]] = scores[src]
                out_scores[dst][0, block, scores.shape[2] :] = one


def _rows_view(bits: np.ndarray, rows: int) -> np.ndarray:
    """``(k, 1, rows, width)``: a view of an output's elements whatever its shape (never a copy:
    the kernel writes through it)."""
    bits.shape = (bits.shape[0], 1, rows, -1)
    return bits


def _shard_rows(t: Tensor) -> int:
    """Rows a HEIGHT_SHARDED tensor's allocation holds: tt-metal reserves whole shards (every
    core of the grid a shard of ``shard_shape[0]`` rows) even where the tensor has fewer rows."""
    memory = t.spec.memory_config
    if memory.memory_layout is not TensorMemoryLayout.HEIGHT_SHARDED or memory.shard_spec is None:
        return 0
    return memory.shard_spec.shape[0] * memory.shard_spec.grid.num_cores()


def _held_rows(bits: np.ndarray, rows: int, width: int) -> tuple[np.ndarray, np.ndarray | None]:
    """``(rows to write, the output's own view or None)``: an output allocated whole-shard but
    holding fewer tensor rows is written through a scratch of ``rows`` (its first rows the
    output's), the tensor's rows copied back after (the rest land in the shard's reserve)."""
    view = _rows_view(bits, bits[0].size // width)
    if view.shape[2] >= rows:
        return view, None
    scratch = np.zeros((view.shape[0], 1, rows, width), view.dtype)
    scratch[:, :, : view.shape[2]] = view
    return scratch, view


def _dispatch_into(flat: tuple, outs: list[np.ndarray], specs: list[TensorSpec], rows: int, groups, shared) -> None:
    """:func:`dispatch_metadata_rows` into the three outputs' elements ``outs`` (those holding fewer
    tensor rows than ``rows`` written through a scratch, :func:`_held_rows`)."""
    held = [_held_rows(bits, rows, spec.shape[-1]) for bits, spec in zip(outs, specs, strict=True)]
    dispatch_metadata_rows(flat, tuple(out for out, _ in held), groups, shared)
    for out, view in held:
        if view is not None:
            view[:] = out[:, :, : view.shape[2]]


def _preallocated_outputs(value: object, specs: list[TensorSpec], mesh: MeshDevice) -> list[Tensor]:
    """ttnn's three persistent outputs: ROW_MAJOR device tensors of the mesh (they give the specs:
    ttnn compares them with themselves, so any shape holding the output's rows will do; meshnn
    checks that they hold them: the same rows of the same width and dtype, or fewer rows on a
    HEIGHT_SHARDED allocation whose whole shards hold them, as tt-metal reserves them)."""
    if not isinstance(value, list | tuple) or len(value) != 3:
        raise MeshnnTypeError(f"ttnn.{OP}: output_tensors must be three tensors (tokens, ids, scores), got {value!r}")
    checked = []
    for tensor, spec in zip(value, specs, strict=True):
        t = device_input(OP, "output_tensors", tensor)
        rows = int(np.prod(tuple(t.shape)[:-1])) if len(t.shape) else 0
        fits = rows == spec.shape[1] or rows < spec.shape[1] <= _shard_rows(t)
        if tuple(t.shape)[-1:] != tuple(spec.shape)[-1:] or not fits or t.dtype is not spec.dtype:
            raise MeshnnValueError(
                f"ttnn.{OP}: output_tensors {list(t.shape)} {t.dtype} do not hold the output's rows "
                f"{list(spec.shape)} {spec.dtype}"
            )
        checked.append(_preallocated(OP, "output_tensors", t, t.spec, mesh))
    return checked


@register(
    OP,
    kind=OpKind.COLLECTIVE,
    family=OpFamily.ALL_TO_ALL_DISPATCH,
    device_operation="AllToAllDispatchMetadataDeviceOperation",
)
def all_to_all_dispatch_metadata(
    input_tensor: Tensor,
    expert_indices_tensor: Tensor,
    expert_scores_tensor: Tensor,
    expert_mapping_tensor: Tensor,
    *,
    shared_expert_ids: list[int] | None = None,
    cluster_axis: int | None = None,
    output_tensors: tuple[Tensor, Tensor, Tensor] | None = None,
    num_links: int | None = None,
    drain_sync_tilizer_core: tuple[int, int] | None = None,
    worker_mode: WorkerMode = WorkerMode.DIRECT,
    dispatch_algorithm: DispatchAlgorithm = DispatchAlgorithm.SPARSE_MCAST_SHORTEST_PATH,
    worker_core_range_set: CoreRangeSet | None = None,
    mux_core_range_set: CoreRangeSet | None = None,
    cross_device_semaphore: object = None,
) -> tuple[Tensor, Tensor, Tensor]:
    """Each token to its experts' devices along ``cluster_axis``; the ids and scores gathered (see
    the module's text)."""
    names = ("input_tensor", "expert_indices_tensor", "expert_scores_tensor", "expert_mapping_tensor")
    given = (input_tensor, expert_indices_tensor, expert_scores_tensor, expert_mapping_tensor)
    (tokens, ids, scores, mapping), mesh = _inputs(dict(zip(names, given, strict=True)))
    if cluster_axis is None:
        raise MeshnnValueError(f"ttnn.{OP}: Cluster axis argument required")
    local_only(OP, mesh)
    shared = _shared(shared_expert_ids, mapping.shape[1])
    hardware = {"num_links": num_links, "drain_sync_tilizer_core": drain_sync_tilizer_core}
    hardware.update(worker_mode=worker_mode, dispatch_algorithm=dispatch_algorithm)
    hardware.update(worker_core_range_set=worker_core_range_set, mux_core_range_set=mux_core_range_set)
    drain = _drain(_hardware(hardware), mesh, output_tensors is None)
    if cross_device_semaphore is not None and output_tensors is None:
        raise MeshnnValueError(
            f"ttnn.{OP}: When cross_device_semaphore is provided, all 3 output tensors (tokens, indices, scores) "
            "must be provided as persistent buffers to enable semaphore-free mode"
        )
    groups = device_groups(OP, tokens, mesh, cluster_axis)
    count = int(np.prod(tuple(tokens.shape)[:-1]))
    width = ids.shape[-1] + len(shared)
    specs = _specs(tokens, ids, scores, count * len(groups[0]), width, drain)
    into = None if output_tensors is None else _preallocated_outputs(output_tensors, specs, mesh)
    if into is not None:
        specs = [t.spec for t in into]
    tokens_spec, ids_spec, scores_spec, mapping_spec = (t.spec for t in (tokens, ids, scores, mapping))  # (no tensor)

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], _coords: tuple[MeshCoordinate, ...]) -> None:
        n = in_rows[0].shape[0]
        flat = (_token_bits(in_rows[0], tokens_spec).reshape(n, count, -1),)
        flat += (_token_bits(in_rows[1], ids_spec).reshape(n, count, -1),)
        flat += (_token_bits(in_rows[2], scores_spec).reshape(n, count, -1),)
        flat += (np.asarray(logical_values(in_rows[3], mapping_spec, as_float=False)),)
        _dispatch_into(
            flat, [_token_bits(out_rows[i], specs[i]) for i in range(3)], specs, count * len(groups[0]), groups, shared
        )

    attrs = {"cluster_axis": cluster_axis, "peers": width, "shared_expert_ids": tuple(shared), **hardware}
    attrs["cross_device_semaphore"] = cross_device_semaphore
    outs = [Output(spec) for spec in specs]
    inputs = [tokens, ids, scores, mapping]
    result = launch(OP, mesh, inputs, outs, kernel, coords=whole_mesh(mesh), attrs=attrs, into=into)
    return result[0], result[1], result[2]
