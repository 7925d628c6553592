"""Data movement on device: layout and dtype changes, reshape, permute, transpose, concat, slice,
pad, repeat, memory-config changes, clone, move and reallocate.

Moves that keep every byte (to_memory_config, clone without a dtype) copy slab rows as they are:
a device's bytes are in host page order whatever its memory config.  The others decode each
device's shard, rearrange it with numpy, and encode it again.

May import: :mod:`meshnn.errors`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor` and the ops' launch,
checks, outputs and values modules.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.mesh.op_keywords import (
    NO_OUTPUT_TENSOR,
    QUEUE_ID,
    SUB_CORE_GRIDS,
    Keyword,
    number,
    recorded,
    ttnn_keywords,
)
from meshnn.mesh.transfers import ShardDataTransfer
from meshnn.ops import goldens
from meshnn.ops.checks import device_input, int_arg, int_list
from meshnn.ops.config import COMPUTE_KERNEL_CONFIG
from meshnn.ops.movement.rearrange import copied, rearranged
from meshnn.ops.outputs import out_spec_like, output_into
from meshnn.ops.registry import OpKind, register
from meshnn.perf.desc import OpFamily
from meshnn.tensor import device_hooks
from meshnn.tensor.lifetime import allocate_mesh_buffer, handle_copy
from meshnn.tensor.lifetime import device_tensor as _device_tensor
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor


def to_layout(
    input_tensor: Tensor,
    layout: Layout,
    dtype: DataType | None = None,
    *,
    memory_config: MemoryConfig | None = None,
    pad_value: float | None = None,
) -> Tensor:
    """A device tensor's ``ttnn.to_layout`` (reached through :mod:`meshnn.tensor.device_hooks`);
    ``pad_value`` fills tile padding, which a device tensor's values do not hold."""
    tensor = device_input("to_layout", "input_tensor", input_tensor)
    if not isinstance(layout, Layout):
        raise MeshnnTypeError(f"ttnn.to_layout: layout must be a ttnn Layout, got {layout!r}")
    if layout is tensor.layout and dtype in (None, tensor.dtype) and memory_config is None:
        return tensor
    if dtype is None and layout is Layout.ROW_MAJOR and tensor.dtype.is_block_float:
        dtype = DataType.BFLOAT16  # ttnn untilizes a block float into bfloat16
    spec = out_spec_like(tensor, layout=layout, dtype=dtype, memory_config=memory_config, op="to_layout")
    return rearranged("to_layout", tensor, spec, lambda x: x)


def typecast(
    input_tensor: Tensor, dtype: DataType, *, memory_config: MemoryConfig | None = None, output_tensor: object = None
) -> Tensor:
    """A device tensor's ``ttnn.typecast`` (into ``output_tensor`` when given: a device tensor of
    ``dtype`` and the input's shape and layout)."""
    tensor = device_input("typecast", "input_tensor", input_tensor)
    if isinstance(dtype, DataType) and dtype.is_block_float and tensor.layout is not Layout.TILE:
        raise MeshnnValueError(
            f"ttnn.typecast: {dtype} needs a TILE tensor, input_tensor {list(tensor.shape)} is {tensor.layout}; "
            "call ttnn.to_layout(..., TILE_LAYOUT) first"
        )
    spec = out_spec_like(tensor, dtype=dtype, memory_config=memory_config, op="typecast")
    if output_tensor is None:
        return rearranged("typecast", tensor, spec, lambda x: x)
    target = device_input("typecast", "output_tensor", output_tensor)
    mesh = tensor.storage.mesh_buffer.device()  # type: ignore[union-attr]
    wanted = spec.with_memory_config(target.memory_config())
    out = output_into("typecast", mesh, target, wanted, tensor.storage.coords)  # type: ignore[union-attr]
    return rearranged("typecast", tensor, out.spec, lambda x: x, into=out)


def device_reshape(tensor: Tensor, shape: tuple[int, ...]) -> Tensor:
    """The device reshape op (a reshape that is not a view).  A TILE result's tile padding holds
    ``pad_value`` when ``ttnn.reshape`` was given one and not ``skip_padding_fill`` (ignored for
    BFLOAT8_B), through ``fill_implicit_tile_padding``: tt-metal 2026's ``reshape_tiled`` (issue
    #22178), which fills only on an explicit pad_value; without one the padding stays as it is."""
    spec = out_spec_like(tensor, shape=shape, op="reshape")
    out = rearranged("reshape", tensor, spec, lambda x: x.reshape((x.shape[0], *shape)))
    given = recorded()
    pad = given.get("pad_value")
    skip = bool(given.get("skip_padding_fill")) and tensor.dtype is not DataType.BFLOAT8_B
    if pad is None or skip or tensor.layout is not Layout.TILE:
        return out
    from meshnn.ops.movement.padding import fill_implicit_tile_padding

    return fill_implicit_tile_padding(out, pad)  # (a tensor without tile padding comes back as it is)


def _dims(op: str, dims: Sequence[int], shape: Sequence[int]) -> list[int]:
    rank = len(shape)
    axes = [d + rank if d < 0 else d for d in dims]
    if sorted(axes) != list(range(rank)):
        raise MeshnnValueError(
            f"ttnn.{op}: dims {list(dims)} are not a permutation of the {rank} dimensions of input_tensor {list(shape)}"
        )
    return axes


@register(kind=OpKind.DATA_MOVEMENT, family=OpFamily.PERMUTE, golden=goldens.permute)
@ttnn_keywords(pad_value=Keyword(0.0, number), sub_core_grids=SUB_CORE_GRIDS, queue_id=QUEUE_ID)
def permute(input_tensor: Tensor, dims: Sequence[int], *, memory_config: MemoryConfig | None = None) -> Tensor:
    tensor = device_input("permute", "input_tensor", input_tensor)
    axes = _dims("permute", int_list("permute", "dims", dims), tuple(tensor.shape))
    shape = tuple(tensor.shape[a] for a in axes)
    given = tensor.spec.memory_config
    if memory_config is None and given.is_sharded() and shape != tuple(tensor.shape):
        # ttnn keeps a sharded input's sharding: its layout and buffer type, the shard spec derived
        memory_config = MemoryConfig(given.memory_layout, given.buffer_type)
    spec = out_spec_like(tensor, shape=shape, memory_config=memory_config, op="permute")
    move = lambda x: np.transpose(x, (0, *(a + 1 for a in axes)))  # noqa: E731
    return rearranged("permute", tensor, spec, move, attrs={"dims": tuple(axes)})


@register(kind=OpKind.DATA_MOVEMENT, family=OpFamily.TRANSPOSE, golden=goldens.transpose)
@ttnn_keywords(pad_value=Keyword(0.0, number), queue_id=QUEUE_ID)
def transpose(input_tensor: Tensor, dim1: int, dim2: int, *, memory_config: MemoryConfig | None = None) -> Tensor:
    tensor = device_input("transpose", "input_tensor", input_tensor)
    rank = len(tensor.shape)
    order = list(range(rank))
    for name, d in (("dim1", dim1), ("dim2", dim2)):
        int_arg("transpose", name, d)
        if not -rank <= d < rank:
            raise MeshnnValueError(
                f"ttnn.transpose: dim {d} is out of range for input_tensor {list(tensor.shape)} (rank {rank})"
            )
    a, b = dim1 % rank, dim2 % rank
    order[a], order[b] = order[b], order[a]
    return permute(tensor, order, memory_config=memory_config)


@register(kind=OpKind.DATA_MOVEMENT, family=OpFamily.COPY, golden=goldens.identity, operator="to_memory_config")
@ttnn_keywords(output_tensor=NO_OUTPUT_TENSOR)
def to_memory_config(input_tensor: Tensor, memory_config: MemoryConfig, dtype: DataType | None = None) -> Tensor:
    """``ttnn.to_memory_config``: the tensor in ``memory_config`` (and ``dtype``).  A tensor already in
    ``memory_config`` is returned as it is, no program run, as tt-metal's ``to_memory_config`` returns it
    (``to_memory_config_op.cpp``; a ``dtype`` asked then is ignored there too): another handle on the
    same memory, which ``deallocate(force=False)`` of either handle leaves in place."""
    tensor = device_input("to_memory_config", "input_tensor", input_tensor)
    if not isinstance(memory_config, MemoryConfig):
        raise MeshnnTypeError(f"ttnn.to_memory_config: memory_config must be a MemoryConfig, got {memory_config!r}")
    out_spec_like(tensor, dtype=dtype, memory_config=memory_config, op="to_memory_config")  # (its checks)
    if memory_config == tensor.memory_config():
        return handle_copy(tensor)
    return memory_config_copy(tensor, memory_config, dtype)


def memory_config_copy(tensor: Tensor, memory_config: MemoryConfig, dtype: DataType | None = None) -> Tensor:
    """The device tensor ``tensor`` copied into ``memory_config`` (and ``dtype``) by the program
    tt-metal runs for it (interleaved to sharded, sharded to interleaved, reshard or copy), always a
    new tensor (``interleaved_to_sharded`` / ``reshard``... run theirs whatever the configs)."""
    spec = out_spec_like(tensor, dtype=dtype, memory_config=memory_config, op="to_memory_config")
    if dtype not in (None, tensor.dtype):
        return rearranged("to_memory_config", tensor, spec, lambda x: x)
    return copied("to_memory_config", tensor, spec)


@register(kind=OpKind.DATA_MOVEMENT, family=OpFamily.COPY, device_operation="CloneOperation", golden=goldens.identity)
@ttnn_keywords(compute_kernel_config=COMPUTE_KERNEL_CONFIG)
def clone(input_tensor: Tensor, *, memory_config: MemoryConfig | None = None, dtype: DataType | None = None) -> Tensor:
    tensor = device_input("clone", "input_tensor", input_tensor)
    spec = out_spec_like(tensor, dtype=dtype, memory_config=memory_config, op="clone")
    if dtype not in (None, tensor.dtype):
        return rearranged("clone", tensor, spec, lambda x: x)
    return copied("clone", tensor, spec)


@register(
    kind=OpKind.DATA_MOVEMENT, family=OpFamily.COPY, device_operation="MoveDeviceOperation", golden=goldens.identity
)
@ttnn_keywords(queue_id=QUEUE_ID)
def move(input_tensor: Tensor, memory_config: MemoryConfig | None = None) -> Tensor:
    """Free the input, then allocate the output (so it may land lower) and copy the bytes back.

    When the output cannot reuse the input's range (another buffer type or memory layout, or more
    bytes), the output is allocated FIRST: a move that fails for lack of memory then leaves the input
    and the allocator exactly as they were."""
    tensor = device_input("move", "input_tensor", input_tensor)
    spec = out_spec_like(tensor, memory_config=memory_config, op="move")
    buffer = tensor.storage.mesh_buffer  # type: ignore[union-attr]
    mesh = buffer.device()
    queue = mesh.mesh_command_queue(0)
    queue.finish()
    size = spec.compute_packed_buffer_size_bytes()
    coords = [c for c in tensor.storage.coords if mesh.is_local(c)]  # type: ignore[union-attr]
    rows = [mesh.local_row(c) for c in coords]
    old, new = tensor.spec.memory_config, spec.memory_config
    reuses_range = (
        old.buffer_type is new.buffer_type
        and old.memory_layout is new.memory_layout
        and spec.buffer_layout().size <= buffer.device_local_size()
    )
    target = None if reuses_range else allocate_mesh_buffer(spec, mesh)  # may fail: nothing changed yet
    saved = np.array(buffer.slab()[:, :size]) if mesh.executes else None  # the bytes, off the device while free
    buffer.deallocated_at = "ttnn.move"  # type: ignore[attr-defined]
    buffer.deallocate()
    if target is None:
        target = allocate_mesh_buffer(spec, mesh)  # fits: the input's own range is free
    if saved is not None:
        writes = [ShardDataTransfer(c, saved[r]) for c, r in zip(coords, rows, strict=True)]
        queue.enqueue_write_shards(target, writes, True)
    return _device_tensor(spec, target, tensor.storage.coords, tensor.tensor_topology())  # type: ignore[union-attr]


@register(
    kind=OpKind.DATA_MOVEMENT, family=OpFamily.COPY, device_operation="MoveDeviceOperation", golden=goldens.identity
)
@ttnn_keywords()
def reallocate(input_tensor: Tensor, memory_config: MemoryConfig | None = None) -> Tensor:
    """``ttnn.reallocate``: the tensor moved to a fresh (usually lower, defragmented) address."""
    return move(input_tensor, memory_config)


device_hooks.register("to_layout", to_layout)  # the tensor layer's ttnn.to_layout of a device tensor
device_hooks.register("typecast", typecast)
device_hooks.register("reshape", device_reshape)
