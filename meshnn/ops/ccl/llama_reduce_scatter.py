"""``ttnn.experimental.llama_reduce_scatter`` (the reduce-scatter after Llama-70B's FF1 / FF3 on a
Galaxy) and ``ttnn.experimental.llama_rs_create_heads`` (the same reduction fused with the split of
the summed QKV rows into heads).  Their arguments and checks: :mod:`.llama_arguments`.

llama_reduce_scatter: each device of a row group gets slice ``member`` of the group's sum along the
last dim.  The slice width is ``width / ring_devices`` when the input's width fills its shards
exactly; otherwise ttnn pads the width to whole tiles on every input core first (3584 over 24
cores of 5 tiles each: 3840) and the slice is ``padded / ring_devices``, the padding summing to
zeros.  The output takes ``memory_config`` when given, else the input's memory config with one
tile column per core over ``width / tile`` cores of the compute grid (``num_cores_to_corerangeset``
in the input's shard orientation).

llama_rs_create_heads: the group's sum ``(1, 1, rows, (num_heads + 2 num_kv_heads) x head_dim)``
is scattered by rows (``slice_size = rows / ring_devices`` users per device); a device's rows are
split into ``num_heads`` query heads, then ``num_kv_heads`` key and ``num_kv_heads`` value heads.
Each of q, k and v is ``(1, slice_size, num_heads, head_dim)`` (ttnn gives the three one shape),
sharded one user per core with ``qkv_memory_config``'s layout and buffer type: q from the first
core of its grid, k on the cores right after q's, v on those after k's
(``num_cores_to_corerangeset_in_subcoregrids`` row-wise, as ttnn places them).  The key and value heads fill the first
``num_kv_heads`` rows of a user's shard; ttnn's kernel writes nothing to the rest, which are zero
here.

May import: :mod:`meshnn.errors`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor`, the ops' launch,
outputs, values and registry modules and the collectives' modules.
"""

from __future__ import annotations

import numpy as np

from meshnn.device.buffer import ShardOrientation, ShardSpec
from meshnn.device.core import CoreCoord, num_cores_to_corerangeset, num_cores_to_corerangeset_in_subcoregrids
from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.mesh.coord import MeshCoordinate
from meshnn.mesh.mesh_device import MeshDevice
from meshnn.ops.ccl.arguments import Topology
from meshnn.ops.ccl.async_arguments import bind_overload
from meshnn.ops.ccl.groups import output_topology
from meshnn.ops.ccl.llama_arguments import TRACE_BYTES, checked_call, checked_memory_config, scattered_sums
from meshnn.ops.launch import launch
from meshnn.ops.outputs import Output, out_spec_like
from meshnn.ops.registry import OpKind, register
from meshnn.ops.values import logical_values, write_values
from meshnn.perf.desc import OpFamily
from meshnn.tensor.identity import operation_on
from meshnn.tensor.spec import MemoryConfig, TensorSpec
from meshnn.tensor.tensor import Tensor
from meshnn.tensor.topology import PlacementShard


def _reduce_scatter(input_tensor, intermediate_packet_buffer, dim, cross_device_semaphore, subdevice_id, cluster_axis,
                    mesh_device, *, num_links=1, memory_config=None, topology=Topology.Linear,
                    use_noc1_only=False):  # fmt: skip
    """(input_tensor, intermediate_packet_buffer, dim, cross_device_semaphore, subdevice_id, cluster_axis,
    mesh_device, *, ...)"""


def _create_heads(input_tensor, intermediate_packet_buffer, dim, cross_device_semaphore, subdevice_id, cluster_axis,
                  mesh_device, topology, *, num_links=1, num_heads, num_kv_heads, memory_config=None,
                  qkv_memory_config=None, use_noc1_only=False, use_optimal_ccl_for_llama=False):  # fmt: skip
    """(input_tensor, intermediate_packet_buffer, dim, cross_device_semaphore, subdevice_id, cluster_axis,
    mesh_device, topology, *, ...)"""


@register(
    "experimental.llama_reduce_scatter", kind=OpKind.COLLECTIVE, family=OpFamily.REDUCE_SCATTER,
    device_operation="LlamaReduceScatterDeviceOperation",
)  # fmt: skip
def llama_reduce_scatter(*args: object, **kwargs: object) -> Tensor:
    """Each device of a row group gets its slice of the group's sum along the last dim."""
    op = "experimental.llama_reduce_scatter"
    _, given = bind_overload(op, ((_reduce_scatter, lambda a: True),), args, kwargs)
    tensor, mesh, n, attrs = checked_call(op, given)
    memory_config = checked_memory_config(op, "memory_config", given["memory_config"])
    spec = scattered_spec(op, tensor.spec, mesh, n, memory_config)
    return run_llama_scatter(op, tensor, n, spec, attrs)


def scattered_spec(
    op: str, spec: TensorSpec, mesh: MeshDevice, n: int, memory_config: MemoryConfig | None
) -> TensorSpec:
    """The spec of a device's slice of a ``spec`` tensor's group sum over ``n`` devices (the
    width checked to divide), in ``memory_config`` or ttnn's default one tile column per core."""
    slice_width = _slice_width(op, spec, n)
    shape = (*spec.shape[:-1], slice_width)
    config = memory_config or _one_tile_per_core(spec, mesh, shape)
    return TensorSpec(shape, spec.dtype, spec.layout, tile=spec.tile, memory_config=config)


def run_llama_scatter(op: str, tensor: Tensor, n: int, spec: TensorSpec, attrs: dict[str, object]) -> Tensor:
    """Launch the reduce-scatter of ``tensor`` over its row groups of ``n`` into an output of
    ``spec`` (:func:`scattered_spec`); ``attrs`` gain the output memory config."""
    mesh = tensor.device()
    slice_width = spec.shape[-1]
    in_spec = tensor.spec
    label = operation_on(f"ttnn.{op}", tensor)

    def part(total: np.ndarray, member: int) -> np.ndarray:
        padded = total if total.shape[-1] == n * slice_width else _pad_width(total, n * slice_width)
        return padded[..., member * slice_width : (member + 1) * slice_width]

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]) -> None:
        values = logical_values(in_rows[0], in_spec)
        write_values(out_rows[0], np.ascontiguousarray(scattered_sums(mesh, values, coords, 1, label, part)), spec)

    out = Output(spec, topology=output_topology(tensor, 1, PlacementShard(3)))
    attrs["memory_config"] = spec.memory_config
    return launch(op, mesh, [tensor], [out], kernel, reads_memos=True, attrs=attrs, trace_bytes=TRACE_BYTES)[0]


def _slice_width(op: str, spec: TensorSpec, n: int) -> int:
    """A device's slice width (of the width padded to whole tiles on every input core when the
    shards do not divide it)."""
    width = spec.shape[-1]
    if width % n:
        raise MeshnnValueError(f"ttnn.{op}: input shape width {width} must be divisible by num_devices {n}")
    shard = spec.memory_config.shard_spec
    if width % shard.shape[1] == 0:  # type: ignore[union-attr]
        return width // n
    tile_w = spec.tile.tile_shape[1] if spec.tile is not None else 32
    cores = shard.num_cores()  # type: ignore[union-attr]
    tiles = -(-width // tile_w)
    padded = cores * (-(-tiles // cores)) * tile_w
    if padded % n:
        raise MeshnnValueError(f"ttnn.{op}: the padded width {padded} must be divisible by num_devices {n}")
    return padded // n


def _pad_width(values: np.ndarray, width: int) -> np.ndarray:
    pad = [(0, 0)] * (values.ndim - 1) + [(0, width - values.shape[-1])]
    return np.pad(values, pad)


def _one_tile_per_core(spec: TensorSpec, mesh: MeshDevice, shape: tuple[int, ...]) -> MemoryConfig:
    """ttnn's default output memory config: the input's, one tile column per core."""
    tile_w = spec.tile.tile_shape[1] if spec.tile is not None else 32
    shard = spec.memory_config.shard_spec
    row_wise = shard.orientation is ShardOrientation.ROW_MAJOR  # type: ignore[union-attr]
    grid = mesh.compute_with_storage_grid_size()
    cores = num_cores_to_corerangeset(max(1, shape[-1] // tile_w), grid, row_wise)
    shard_spec = ShardSpec(cores, (shape[-2], tile_w), shard.orientation)  # type: ignore[union-attr]
    base = spec.memory_config
    return MemoryConfig(base.memory_layout, base.buffer_type, shard_spec)


@register(
    "experimental.llama_rs_create_heads", kind=OpKind.COLLECTIVE, family=OpFamily.REDUCE_SCATTER,
    device_operation="LlamaReduceScatterCreateHeadsDeviceOperation",
)  # fmt: skip
def llama_rs_create_heads(*args: object, **kwargs: object) -> tuple[Tensor, Tensor, Tensor]:
    """The row group's sum scattered by rows (users) and split into q, k and v heads."""
    op = "experimental.llama_rs_create_heads"
    _, given = bind_overload(op, ((_create_heads, lambda a: True),), args, kwargs)
    tensor, mesh, n, attrs = checked_call(op, given)
    checked_memory_config(op, "memory_config", given["memory_config"])
    qkv_config = checked_memory_config(op, "qkv_memory_config", given["qkv_memory_config"])
    heads, kv_heads = (_heads(op, name, given[name]) for name in ("num_heads", "num_kv_heads"))
    if qkv_config is None:
        raise MeshnnValueError(f"ttnn.{op}: qkv_memory_config is required (the q, k and v shards are placed by it)")
    if not isinstance(given["use_optimal_ccl_for_llama"], bool):
        raise MeshnnTypeError(f"ttnn.{op}: use_optimal_ccl_for_llama must be a bool")
    padded = tuple(tensor.spec.padded_shape)
    if len(padded) != 4:
        raise MeshnnValueError(f"ttnn.{op}: input_tensor must be 4-D (1, 1, rows, width), got {list(tensor.shape)}")
    if padded[-1] % (heads + 2 * kv_heads) or padded[-2] % n:
        raise MeshnnValueError(
            f"ttnn.{op}: input_tensor's padded shape {list(padded)} must split into {heads} + 2 x {kv_heads} heads "
            f"along its width and {n} devices along its height"
        )
    head_dim, users = padded[-1] // (heads + 2 * kv_heads), padded[-2] // n
    specs = _qkv_specs(tensor, qkv_config, (tensor.shape[0], users, heads, head_dim))
    attrs.update(memory_config=given["memory_config"], qkv_memory_config=qkv_config, num_heads=heads,
                 num_kv_heads=kv_heads, use_optimal_ccl_for_llama=given["use_optimal_ccl_for_llama"])  # fmt: skip
    label = operation_on(f"ttnn.{op}", tensor)

    def part(total: np.ndarray, member: int) -> np.ndarray:
        whole = _pad_width(total[0, 0], padded[-1]) if total.shape[-1] < padded[-1] else total[0, 0]
        if whole.shape[0] < padded[-2]:  # the tile rows past the logical ones hold zeros
            whole = np.concatenate([whole, np.zeros((padded[-2] - whole.shape[0], whole.shape[1]), whole.dtype)])
        rows = whole[member * users : (member + 1) * users]
        split = rows.reshape(users, heads + 2 * kv_heads, head_dim)
        out = np.zeros((3, users, heads, head_dim), np.float32)
        out[0] = split[:, :heads]
        out[1, :, :kv_heads] = split[:, heads : heads + kv_heads]
        out[2, :, :kv_heads] = split[:, heads + kv_heads :]
        return out

    tensor_spec = tensor.spec  # (the kernel holds no tensor: a trace must not keep it allocated)

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]) -> None:
        values = logical_values(in_rows[0], tensor_spec)
        parts = scattered_sums(mesh, values, coords, 1, label, part)  # (k, 3, users, heads, head_dim)
        for index in range(3):
            write_values(out_rows[index], np.ascontiguousarray(parts[:, index, None]), specs[index])

    outs = [Output(spec, topology=output_topology(tensor, 1, PlacementShard(1))) for spec in specs]
    q, k, v = launch(op, mesh, [tensor], outs, kernel, reads_memos=True, attrs=attrs, trace_bytes=TRACE_BYTES)
    return q, k, v


def _heads(op: str, name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise MeshnnTypeError(f"ttnn.{op}: {name} must be an int, got {value!r}")
    if value < 1:
        raise MeshnnValueError(f"ttnn.{op}: {name} must be positive, got {value}")
    return value


def _qkv_specs(tensor: Tensor, config: MemoryConfig, shape: tuple[int, ...]) -> list[TensorSpec]:
    """q, k and v's specs: one user per core, q from the grid's first core, k and v after it."""
    users, heads, head_dim = shape[1:]
    grid = config.shard_spec.grid  # type: ignore[union-attr]
    start = grid.bounding_box().start_coord

    def cores(first: CoreCoord, count: int):
        return num_cores_to_corerangeset_in_subcoregrids(first, count, grid, row_wise=True)

    def after(count: int) -> CoreCoord:
        ranges = cores(start, count).ranges()
        return ranges[-1].end_coord if ranges else start

    firsts = (start, after(users + 1), after(2 * users + 1))
    configs = [
        MemoryConfig(config.memory_layout, config.buffer_type, ShardSpec(cores(first, users), (heads, head_dim)))
        for first in firsts
    ]
    return [out_spec_like(tensor, shape=shape, memory_config=c) for c in configs]
