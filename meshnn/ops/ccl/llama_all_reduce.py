"""``ttnn.experimental.all_reduce_create_qkv_heads`` (Llama-70B's QKV all-reduce on a Galaxy, fused
with the decode split into heads): returns the all-reduced rows and each device's q, k and v heads.

``(input_tensor, buffer_tensor, batch_offset, cluster_axis, mesh_device,
multi_device_global_semaphore, num_heads, *, memory_config=None, topology=Linear, num_links=None,
subdevice_id=None, num_kv_heads=None, slice_size=None, final_memory_config=None, dtype=None,
use_noc1_only=False)``.  The input is ``(1, 1, users, (num_heads + 2 num_kv_heads) x head_dim)``
TILE rows (at most 32 users) on every device; each device of a ``cluster_axis`` group gets the
group's sum (float32, rounded into ``dtype``, default the input's) in ``memory_config`` (default the
input's).  From it each device takes ``slice_size`` users (default all) starting at the user its
``batch_offset`` holds (an int32 tensor of one value per device) and splits them into q
``(1, slice_size, num_heads, head_dim)``, k and v ``(1, slice_size, num_kv_heads, head_dim)`` (ttnn
takes ``head_dim`` from ``num_kv_heads`` defaulting to ``num_heads`` and the split from it
defaulting to 1, as here).  q, k and v are sharded one user per core with
``final_memory_config``'s layout (required: its grid places them), q from the grid's first core,
k on the cores after q's, v after k's; a user's heads are one tile row high.  ``buffer_tensor``
(the op's scratch) is checked and left as it is; the semaphore and link options are checked and
recorded.

May import: :mod:`meshnn.errors`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor`, the ops' launch,
outputs, values and registry modules and the collectives' modules.
"""

from __future__ import annotations

import numpy as np

from meshnn.device.buffer import ShardSpec
from meshnn.device.core import num_cores_to_corerangeset_in_subcoregrids
from meshnn.errors import MeshnnTypeError, MeshnnValueError, WrongMeshError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.mesh.coord import MeshCoordinate
from meshnn.mesh.global_semaphore import check_semaphore
from meshnn.ops.ccl.arguments import Topology, checked_input
from meshnn.ops.ccl.async_arguments import bind_overload, link_options, ring_size, same_mesh_device
from meshnn.ops.ccl.llama_arguments import TRACE_BYTES, scattered_sums
from meshnn.ops.checks import device_input
from meshnn.ops.launch import launch
from meshnn.ops.outputs import Output, out_spec_like
from meshnn.ops.registry import OpKind, register
from meshnn.ops.values import logical_values, write_values
from meshnn.perf.desc import OpFamily
from meshnn.tensor.identity import operation_on
from meshnn.tensor.spec import MemoryConfig, TensorSpec
from meshnn.tensor.tensor import Tensor


def _signature(input_tensor, buffer_tensor, batch_offset, cluster_axis, mesh_device, multi_device_global_semaphore,
               num_heads, *, memory_config=None, topology=Topology.Linear, num_links=None, subdevice_id=None,
               num_kv_heads=None, slice_size=None, final_memory_config=None, dtype=None,
               use_noc1_only=False):  # fmt: skip
    """(input_tensor, buffer_tensor, batch_offset, cluster_axis, mesh_device, multi_device_global_semaphore,
    num_heads, *, ...)"""


def _count(op: str, name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise MeshnnTypeError(f"ttnn.{op}: {name} must be an int, got {value!r}")
    if value < 1:
        raise MeshnnValueError(f"ttnn.{op}: {name} must be positive, got {value}")
    return value


def _on_mesh(op: str, name: str, value: object, mesh: object) -> Tensor:
    tensor = device_input(op, name, value)
    if tensor.storage.mesh_buffer.mesh_id != mesh.mesh_id:  # type: ignore[union-attr, attr-defined]
        raise WrongMeshError(f"ttnn.{op}: {name} is on another mesh device than input_tensor")
    return tensor


@register(
    "experimental.all_reduce_create_qkv_heads", kind=OpKind.COLLECTIVE, family=OpFamily.ALL_REDUCE,
    device_operation="AllReduceCreateQkvHeads",
)  # fmt: skip
def all_reduce_create_qkv_heads(*args: object, **kwargs: object) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """The group's sum on every device of the group, and each device's users split into q, k, v heads."""
    op = "experimental.all_reduce_create_qkv_heads"
    _, given = bind_overload(op, ((_signature, lambda a: True),), args, kwargs)
    tensor, mesh, _ = checked_input(op, given["input_tensor"], None)
    same_mesh_device(op, given["mesh_device"], mesh)
    axis = given["cluster_axis"]
    ring_size(op, mesh, axis)
    attrs = link_options(
        op, mesh, {k: given[k] for k in ("num_links", "topology", "subdevice_id")}, links_required=False
    )
    attrs["multi_device_global_semaphore"] = check_semaphore(
        op, "multi_device_global_semaphore", given["multi_device_global_semaphore"], mesh
    )
    buffer = _on_mesh(op, "buffer_tensor", given["buffer_tensor"], mesh)
    offsets = _on_mesh(op, "batch_offset", given["batch_offset"], mesh)
    if offsets.dtype not in (DataType.INT32, DataType.UINT32):
        raise MeshnnValueError(f"ttnn.{op}: batch_offset must hold int32 user offsets, got {offsets.dtype}")
    heads = _count(op, "num_heads", given["num_heads"])
    kv_for_width = heads if given["num_kv_heads"] is None else _count(op, "num_kv_heads", given["num_kv_heads"])
    kv = 1 if given["num_kv_heads"] is None else kv_for_width
    shape = _checked_rows(op, tensor, heads + 2 * kv_for_width)
    users = shape[2] if given["slice_size"] is None else _count(op, "slice_size", given["slice_size"])
    head_dim = tensor.spec.padded_shape[-1] // (heads + 2 * kv_for_width)
    if users > shape[2] or heads > 32:
        raise MeshnnValueError(f"ttnn.{op}: slice_size {users} exceeds the {shape[2]} users, or over 32 q heads")
    dtype = given["dtype"] or tensor.dtype
    reduced = out_spec_like(tensor, dtype=dtype, memory_config=given["memory_config"], op=op)
    specs = [reduced, *_head_specs(op, reduced, given["final_memory_config"], users, (heads, kv, head_dim))]
    attrs.update(buffer_tensor=buffer, cluster_axis=axis, num_heads=heads, num_kv_heads=kv, slice_size=users,
                 final_memory_config=given["final_memory_config"], use_noc1_only=given["use_noc1_only"])  # fmt: skip
    label = operation_on(f"ttnn.{op}", tensor)

    tensor_spec, offsets_spec = tensor.spec, offsets.spec  # (the kernel holds no tensor: a trace must not keep it)

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]) -> None:
        values = logical_values(in_rows[0], tensor_spec)
        totals = scattered_sums(mesh, values, coords, axis, label, lambda total, member: total)
        write_values(out_rows[0], np.ascontiguousarray(totals), reduced)
        firsts = logical_values(in_rows[1], offsets_spec, as_float=False).reshape(len(coords), -1)[:, 0]
        if (firsts < 0).any() or (firsts + users > shape[2]).any():
            raise MeshnnValueError(f"ttnn.{op}: batch_offset {firsts.tolist()} + {users} users leave the {shape[2]}")
        rows = np.stack([totals[i, 0, 0, f : f + users, : head_dim * (heads + 2 * kv)] for i, f in enumerate(firsts)])
        split = rows.reshape(len(coords), 1, users, heads + 2 * kv, head_dim)
        parts = (split[:, :, :, :heads], split[:, :, :, heads : heads + kv], split[:, :, :, heads + kv :])
        for out, part, spec in zip(out_rows[1:], parts, specs[1:], strict=True):
            write_values(out, np.ascontiguousarray(part), spec)

    outs = [Output(spec) for spec in specs]
    made = launch(op, mesh, [tensor, offsets], outs, kernel, reads_memos=True, attrs=attrs, trace_bytes=TRACE_BYTES)
    return made[0], made[1], made[2], made[3]


def _checked_rows(op: str, tensor: Tensor, split: int) -> tuple[int, ...]:
    """``(1, 1, users <= 32, width)`` TILE rows whose width splits into ``split`` heads."""
    padded = tuple(tensor.spec.padded_shape)
    if len(padded) != 4:
        raise MeshnnValueError(f"ttnn.{op}: Input Tensor dim must be 4 while given dim = {len(padded)}")
    if padded[-1] % split:
        raise MeshnnValueError(f"ttnn.{op}: input_tensor width {padded[-1]} must be divisible by {split} heads")
    if tensor.layout is not Layout.TILE:
        raise MeshnnValueError(f"ttnn.{op}: Only tile layout is supported for input tensor, got {tensor.layout}")
    shape = tuple(tensor.shape)
    if shape[0] != 1 or shape[1] != 1 or shape[2] > 32:
        raise MeshnnValueError(f"ttnn.{op}: Unsupported input shape = {list(shape)}: (1, 1, users <= 32, width)")
    return shape


def _head_specs(op: str, reduced: TensorSpec, config: object, users: int, heads: tuple[int, int, int]):
    """q, k and v's specs, one user per core of ``config``'s grid: q first, then k, then v."""
    if not isinstance(config, MemoryConfig) or config.shard_spec is None:
        raise MeshnnValueError(f"ttnn.{op}: final_memory_config must be a sharded ttnn.MemoryConfig, got {config!r}")
    q_heads, kv_heads, head_dim = heads
    grid = config.shard_spec.grid
    start = grid.bounding_box().start_coord

    def cores(first, count: int):
        return num_cores_to_corerangeset_in_subcoregrids(first, count, grid, row_wise=True)

    def after(count: int):
        ranges = cores(start, count).ranges()
        return ranges[-1].end_coord if ranges else start

    padded = 32 * -(-q_heads // 32)  # a user's heads: whole tile rows (ttnn pads k and v by the q count too)
    specs = []
    for first, count in ((start, q_heads), (after(users + 1), kv_heads), (after(2 * users + 1), kv_heads)):
        memory = MemoryConfig(
            config.memory_layout, config.buffer_type, ShardSpec(cores(first, users), (padded, head_dim))
        )
        like = TensorSpec((1, users, count, head_dim), reduced.dtype, reduced.layout, memory_config=memory)
        specs.append(like)
    return specs
