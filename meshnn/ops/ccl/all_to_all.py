"""``ttnn.all_to_all_dispatch`` and ``ttnn.all_to_all_combine``: the token exchange of Mixture-of-
Experts expert parallelism.

The devices: a group along ``cluster_axis`` (each row for 1, each column for 0; without it the
whole mesh in row-major order; combine needs it).  ``expert_mapping_tensor`` is ``[1, 1, E, D]``
per device (D: every device of the mesh, by row-major index): 1 where expert ``e`` lives on device
``d``.  Tokens are ``[B, 1, S, H]`` bfloat16 ROW_MAJOR per device, their top-k expert ids
``[B, 1, S, K]`` uint16 ROW_MAJOR.

- dispatch: the token ``(b, s)`` of the group member at position ``p`` goes to every member of the
  group that holds one of its experts (the sender's mapping decides), at batch row ``p*B + b`` of
  that device's ``[1, B*G, S, H]`` output (``output_concat_dim=1``; 2: ``[1, B, S*G, H]`` at
  ``p*S + s``).  The metadata output is every member's expert ids gathered the same way, on every
  device.  Rows no token was sent to keep what the output held (ttnn: placeholder garbage).
- combine: ``input_tensor`` is ``[E/D, B*G, S, H]`` per device, the experts' outputs for every
  dispatched row (by the device's experts in ascending id); device ``q`` of a group gets, for its
  share of the tokens (rows ``q*B .. (q+1)*B`` with ``output_shard_dim=1``, sequence positions with
  2), ``out[k, b, s] = `` the row of the group's device that holds the token's ``k``-th expert (the
  receiver's mapping decides).  ``local_reduce=True``: the input is ``[1, B*G, S, H]`` (each
  device's experts already summed) and row ``k`` is filled only for the first of the token's
  experts, by id, on each device.  Rows with no holder in the group keep what the output held.

Values move as bytes (exactly).  ttnn's checks: the layouts and dtypes above, rank 4, tokens and
ids of one shape but the last dim, an unsharded output memory config, ``num_links`` positive,
``output_concat_dim`` / ``output_shard_dim`` 1 or 2, E a multiple of the devices, combine's input
dim 0 and the group dividing the split dim; preallocated outputs of the computed specs.

May import: :mod:`meshnn.errors`, :mod:`meshnn.formats`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor`,
the ops' checks, launch, outputs, values and registry, and the collectives' modules.
"""

from __future__ import annotations

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError, WrongMeshError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.mesh.coord import MeshCoordinate
from meshnn.mesh.mesh_device import MeshDevice
from meshnn.ops.ccl.a2a_routes import Groups, combine_rows, dispatch_rows, mapping_tables
from meshnn.ops.ccl.arguments import FABRIC_KEYWORDS, Topology, checked_input, group_grid
from meshnn.ops.ccl.async_arguments import link_options
from meshnn.ops.ccl.broadcast import device_groups, whole_mesh
from meshnn.ops.ccl.point_to_point import local_only
from meshnn.ops.checks import device_input, same_mesh
from meshnn.ops.launch import launch
from meshnn.ops.outputs import Output, out_spec_like
from meshnn.ops.registry import OpKind, register
from meshnn.ops.values import logical_values
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig, TensorSpec
from meshnn.tensor.tensor import Tensor

TRACE_BYTES = 1536
"""Dispatch-command bytes a dispatch or combine program adds to a trace on each device (a model
figure, not a measurement). tt-metal's ``test_all_to_all_dispatch_skew`` captures 5 warm-up and 20
measured rounds of ``apply_device_delay`` then ``all_to_all_dispatch`` in a 50,000 B trace region
(here 12 DRAM banks of two 4 KiB pages, a trace taking whole pages across the banks), both traces
live: a round may add at most 2,457 B (the measured trace within one page a bank: 49,152 B over 20);
this figure and the delay's (:data:`meshnn.ops.ccl.barrier.TRACE_BYTES`) make 2,048 B. The 6,144 B
default refused that capture and ``test_all_to_all_dispatch_ring_trace``'s (5 + 10 dispatches)."""


def _check(op: str, name: str, tensor: Tensor, dtype: DataType | None) -> None:
    if tensor.layout is not Layout.ROW_MAJOR:
        raise MeshnnValueError(f"ttnn.{op}: {name} must be ROW_MAJOR, got {tensor.layout}")
    if dtype is not None and tensor.dtype is not dtype:
        raise MeshnnValueError(f"ttnn.{op}: {name} must be {dtype}, got {tensor.dtype}")
    if len(tensor.shape) != 4:
        raise MeshnnValueError(f"ttnn.{op}: {name} must be rank 4, got shape {list(tensor.shape)}")


def _inputs(op: str, tensors: dict[str, object]) -> tuple[list[Tensor], MeshDevice]:
    checked = [checked_input(op, value, None)[0] for value in tensors.values()]  # type: ignore[arg-type]
    mesh = same_mesh(op, dict(zip(tensors, checked, strict=True)))
    return checked, mesh


def _options(op: str, mesh: MeshDevice, given: dict[str, object]) -> MemoryConfig | None:
    local_only(op, mesh)
    link_options(op, mesh, {"num_links": given["num_links"]}, links_required=False)
    topology, memory_config = given["topology"], given["memory_config"]
    if topology is not None and not isinstance(topology, Topology):
        raise MeshnnTypeError(f"ttnn.{op}: topology must be a ttnn.Topology, got {topology!r}")
    if memory_config is not None and not isinstance(memory_config, MemoryConfig):
        raise MeshnnTypeError(f"ttnn.{op}: memory_config must be a ttnn.MemoryConfig, got {memory_config!r}")
    if memory_config is not None and memory_config.is_sharded():
        raise MeshnnValueError(f"ttnn.{op}: memory_config must not be sharded (the outputs are interleaved)")
    FABRIC_KEYWORDS["subdevice_id"].check(op, "subdevice_id", given["subdevice_id"])
    return memory_config  # type: ignore[return-value]


def _split_dim(op: str, name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise MeshnnTypeError(f"ttnn.{op}: {name} must be an int, got {value!r}")
    if value not in (1, 2):
        raise MeshnnValueError(f"ttnn.{op}: {name} must be 1 or 2, got {value}")
    return value


def _experts(op: str, mapping: Tensor, mesh: MeshDevice) -> int:
    _check(op, "expert_mapping_tensor", mapping, None)
    experts, devices = tuple(mapping.shape)[2:]
    if devices != mesh.get_num_devices() or experts % devices:
        raise MeshnnValueError(
            f"ttnn.{op}: expert_mapping_tensor must be [1, 1, E, {mesh.get_num_devices()}] with E a multiple of "
            f"the devices, got {list(mapping.shape)}"
        )
    return experts


def _preallocated(op: str, name: str, tensor: object, spec: TensorSpec, mesh: MeshDevice) -> Tensor:
    checked = device_input(op, name, tensor)
    if checked.storage.mesh_buffer.mesh_id != mesh.mesh_id:  # type: ignore[union-attr]
        raise WrongMeshError(f"ttnn.{op}: {name} is on another mesh device than input_tensor")
    if checked.layout is not Layout.ROW_MAJOR or checked.spec != spec:
        raise MeshnnValueError(
            f"ttnn.{op}: {name} is {list(checked.shape)} {checked.dtype} {checked.layout}; the output is "
            f"{list(spec.shape)} {spec.dtype} ROW_MAJOR {spec.memory_config.buffer_type}"
        )
    return checked


def _token_bits(rows: np.ndarray, spec: TensorSpec) -> np.ndarray:
    """The ``(k, *shape)`` 2-byte elements of ROW_MAJOR rows (bfloat16 or uint16): a view, never a
    copy (the kernel writes through it)."""
    size = spec.compute_packed_buffer_size_bytes()
    view = rows[:, :size].view(np.uint16)
    view.shape = (rows.shape[0], *tuple(spec.shape))  # raises rather than copy
    return view


@register(kind=OpKind.COLLECTIVE, family=OpFamily.ALL_TO_ALL_DISPATCH)
def all_to_all_dispatch(
    input_tensor: Tensor,
    expert_indices_tensor: Tensor,
    expert_mapping_tensor: Tensor,
    *,
    output_concat_dim: int = 1,
    cluster_axis: int | None = None,
    subdevice_id: object = None,
    memory_config: MemoryConfig | None = None,
    output_tensors: tuple[Tensor, Tensor] | None = None,
    num_links: int | None = None,
    topology: Topology | None = None,
) -> tuple[Tensor, Tensor]:
    """Each token to the devices of its experts, and the expert ids gathered (see the module's text)."""
    op = "all_to_all_dispatch"
    names = {"input_tensor": input_tensor, "expert_indices_tensor": expert_indices_tensor}
    (tokens, ids, mapping), mesh = _inputs(op, {**names, "expert_mapping_tensor": expert_mapping_tensor})
    _check(op, "input_tensor", tokens, DataType.BFLOAT16)
    _check(op, "expert_indices_tensor", ids, DataType.UINT16)
    _experts(op, mapping, mesh)
    if tuple(tokens.shape)[:-1] != tuple(ids.shape)[:-1] or tokens.shape[1] != 1:
        raise MeshnnValueError(
            f"ttnn.{op}: input_tensor {list(tokens.shape)} and expert_indices_tensor {list(ids.shape)} must be "
            "[B, 1, S, H] and [B, 1, S, K]"
        )
    concat = _split_dim(op, "output_concat_dim", output_concat_dim)
    given = {"num_links": num_links, "topology": topology, "memory_config": memory_config}
    config = _options(op, mesh, {**given, "subdevice_id": subdevice_id})
    groups = device_groups(op, tokens, mesh, cluster_axis)
    g = len(groups[0])
    b, _, s, _ = tuple(tokens.shape)
    grown = (1, b * g, s) if concat == 1 else (1, b, s * g)
    specs = tuple(out_spec_like(t, shape=(*grown, t.shape[-1]), memory_config=config, op=op) for t in (tokens, ids))
    into = None
    if output_tensors is not None:
        if not isinstance(output_tensors, list | tuple) or len(output_tensors) != 2:
            raise MeshnnTypeError(f"ttnn.{op}: output_tensors must be two tensors, got {output_tensors!r}")
        into = [_preallocated(op, "output_tensors", t, sp, mesh) for t, sp in zip(output_tensors, specs, strict=True)]
    tables = (groups, list(range(mesh.get_num_devices())))  # rows are row-major device indices

    ids_spec, mapping_spec, tokens_spec = (t.spec for t in (ids, mapping, tokens))  # (the kernel holds no tensor)

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], _coords: tuple[MeshCoordinate, ...]) -> None:
        experts = mapping_tables(logical_values(in_rows[2], mapping_spec, as_float=False))
        chosen = np.asarray(logical_values(in_rows[1], ids_spec, as_float=False)).astype(np.int64)
        dispatch_rows(
            (_token_bits(in_rows[0], tokens_spec), chosen, experts),
            (_token_bits(out_rows[0], specs[0]), _token_bits(out_rows[1], specs[1])),
            tables,
            concat,
        )

    attrs = {"cluster_axis": cluster_axis, "num_links": num_links, "topology": topology, "peers": ids.shape[-1]}
    attrs.update(output_concat_dim=concat, subdevice_id=subdevice_id, memory_config=specs[0].memory_config)
    outs, inputs = [Output(sp) for sp in specs], [tokens, ids, mapping]
    result = launch(op, mesh, inputs, outs, kernel, attrs=attrs, into=into, **_fabric(mesh))
    return result[0], result[1]


@register(kind=OpKind.COLLECTIVE, family=OpFamily.ALL_TO_ALL_COMBINE)
def all_to_all_combine(
    input_tensor: Tensor,
    expert_metadata_tensor: Tensor,
    expert_mapping_tensor: Tensor,
    *,
    local_reduce: bool = False,
    output_shard_dim: int = 1,
    cluster_axis: int | None = None,
    subdevice_id: object = None,
    memory_config: MemoryConfig | None = None,
    output_tensor: Tensor | None = None,
    num_links: int | None = None,
    topology: Topology | None = None,
) -> Tensor:
    """The experts' outputs back to their tokens' devices (see the module's text)."""
    op = "all_to_all_combine"
    names = {"input_tensor": input_tensor, "expert_metadata_tensor": expert_metadata_tensor}
    (values, meta, mapping), mesh = _inputs(op, {**names, "expert_mapping_tensor": expert_mapping_tensor})
    _check(op, "input_tensor", values, DataType.BFLOAT16)
    _check(op, "expert_metadata_tensor", meta, DataType.UINT16)
    experts = _experts(op, mapping, mesh)
    if mapping.dtype is not DataType.UINT16:
        raise MeshnnValueError(f"ttnn.{op}: expert_mapping_tensor must be {DataType.UINT16}, got {mapping.dtype}")
    if not isinstance(local_reduce, bool):
        raise MeshnnTypeError(f"ttnn.{op}: local_reduce must be a bool, got {local_reduce!r}")
    split = _split_dim(op, "output_shard_dim", output_shard_dim)
    given = {"num_links": num_links, "topology": topology, "memory_config": memory_config}
    config = _options(op, mesh, {**given, "subdevice_id": subdevice_id})
    if cluster_axis is None:
        raise MeshnnValueError(f"ttnn.{op}: cluster_axis must be given (the combine runs along one mesh axis)")
    g = group_size_of(op, mesh, cluster_axis)
    rows = 1 if local_reduce else experts // mesh.get_num_devices()
    if values.shape[0] != rows:
        raise MeshnnValueError(f"ttnn.{op}: input_tensor's dim 0 must be {rows} (local_reduce={local_reduce}), got "
                               f"{values.shape[0]}")  # fmt: skip
    _, batch, seq, k = tuple(meta.shape)
    if (batch if split == 1 else seq) % g:
        raise MeshnnValueError(f"ttnn.{op}: metadata dim {split} ({[batch, seq][split - 1]}) must divide by the {g} "
                               "devices of the group")  # fmt: skip
    out_shape = (k, batch // g, seq, values.shape[-1]) if split == 1 else (k, batch, seq // g, values.shape[-1])
    spec = out_spec_like(values, shape=out_shape, memory_config=config, op=op)
    into = None if output_tensor is None else [_preallocated(op, "output_tensor", output_tensor, spec, mesh)]
    groups: Groups = (device_groups(op, values, mesh, cluster_axis), list(range(mesh.get_num_devices())))

    # (the kernel holds no tensor: a trace must not keep it allocated)
    mapping_spec, meta_spec, values_spec = mapping.spec, meta.spec, values.spec

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], _coords: tuple[MeshCoordinate, ...]) -> None:
        tables = mapping_tables(logical_values(in_rows[2], mapping_spec, as_float=False))
        chosen = np.asarray(logical_values(in_rows[1], meta_spec, as_float=False)).astype(np.int64)
        sources = (_token_bits(in_rows[0], values_spec), chosen, tables)
        combine_rows(sources, _token_bits(out_rows[0], spec), groups, (split, local_reduce))

    attrs = {"cluster_axis": cluster_axis, "num_links": num_links, "topology": topology, "local_reduce": local_reduce}
    attrs.update(output_shard_dim=split, subdevice_id=subdevice_id, memory_config=spec.memory_config)
    return launch(op, mesh, [values, meta, mapping], [Output(spec)], kernel, attrs=attrs, into=into, **_fabric(mesh))[0]


def _fabric(mesh: MeshDevice) -> dict[str, object]:
    """launch's keywords for a dispatch or combine program: every device of the mesh, the two
    semaphores it makes for itself, its trace bytes."""
    return {"coords": whole_mesh(mesh), "semaphores": 2, "trace_bytes": TRACE_BYTES}


def group_size_of(op: str, mesh: MeshDevice, cluster_axis: object) -> int:
    shape, axis = group_grid(mesh, cluster_axis, op)  # type: ignore[arg-type]
    return int(np.prod(shape)) if axis is None else shape[axis]
