"""Data movement on device: layout and dtype changes, reshape, permute, transpose, concat, slice,
pad, repeat, memory-config changes, clone, move and reallocate.

Moves that keep every byte (to_memory_config, clone without a dtype) copy slab rows as they are:
a device's bytes are in host page order whatever its memory config.  The others decode each
device's shard, rearrange it with numpy, and encode it again.

May import: :mod:`meshnn.errors`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor` and the ops' launch,
checks, outputs and values modules.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Sequence

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.mesh.coord import MeshCoordinate
from meshnn.mesh.op_keywords import (
    NO_OUTPUT_TENSOR,
    QUEUE_ID,
    SUB_CORE_GRIDS,
    Keyword,
    choice,
    count,
    flag,
    number,
    only,
    ttnn_keywords,
)
from meshnn.mesh.transfers import ShardDataTransfer
from meshnn.ops import goldens
from meshnn.ops.checks import device_input, int_arg, int_list, same_mesh
from meshnn.ops.config import COMPUTE_KERNEL_CONFIG
from meshnn.ops.launch import launch
from meshnn.ops.outputs import Output, out_spec_like
from meshnn.ops.registry import OpKind, register
from meshnn.ops.values import logical_values, write_values
from meshnn.perf.desc import OpFamily
from meshnn.tensor import device_hooks
from meshnn.tensor.lifetime import allocate_mesh_buffer
from meshnn.tensor.lifetime import device_tensor as _device_tensor
from meshnn.tensor.spec import MemoryConfig, TensorSpec
from meshnn.tensor.tensor import Tensor


def _rearranged(
    op: str,
    tensor: Tensor,
    spec: TensorSpec,
    rearrange: Callable[[np.ndarray], np.ndarray],
    extra: Sequence[Tensor] = (),
    *,
    new_values: bool = False,
) -> Tensor:
    """Decode every device's shard, ``rearrange`` the stacked (device-first) values, encode.
    ``new_values``: ``rearrange`` adds values of its own (pad's), which the output dtype rounds."""
    inputs = [tensor, *extra]
    mesh = same_mesh(op, {f"input {i}": t for i, t in enumerate(inputs)})
    specs = [t.spec for t in inputs]
    # values of spec's (non-block) dtype, only moved: already what the output's bytes decode to
    exact = not new_values and not spec.dtype.is_block_float and all(s.dtype is spec.dtype for s in specs)

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]) -> None:
        values = [logical_values(r, s, as_float=False) for r, s in zip(in_rows, specs, strict=True)]
        result = rearrange(*values) if extra else rearrange(values[0])
        write_values(out_rows[0], np.ascontiguousarray(result), spec, exact=exact)

    attrs = {"memory_config": spec.memory_config, "dtype": spec.dtype}
    return launch(op, mesh, inputs, [Output(spec)], kernel, rowwise=True, reads_memos=True, attrs=attrs)[0]


def _copied(op: str, tensor: Tensor, spec: TensorSpec) -> Tensor:
    """A byte-for-byte copy into a buffer of ``spec`` (same bytes, other memory config)."""
    mesh = same_mesh(op, {"input_tensor": tensor})
    size = spec.compute_packed_buffer_size_bytes()

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]) -> None:
        out_rows[0][:, :size] = in_rows[0][:, :size]

    attrs = {"memory_config": spec.memory_config, "dtype": spec.dtype}
    return launch(op, mesh, [tensor], [Output(spec)], kernel, rowwise=True, attrs=attrs)[0]


_GROUPS = only(1, "grouped (interleaved) concatenation is not modelled; concatenate without groups", count)


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
    return _rearranged("to_layout", tensor, spec, lambda x: x)


def typecast(input_tensor: Tensor, dtype: DataType, *, memory_config: MemoryConfig | None = None) -> Tensor:
    tensor = device_input("typecast", "input_tensor", input_tensor)
    if isinstance(dtype, DataType) and dtype.is_block_float and tensor.layout is not Layout.TILE:
        raise MeshnnValueError(
            f"ttnn.typecast: {dtype} needs a TILE tensor, input_tensor {list(tensor.shape)} is {tensor.layout}; "
            "call ttnn.to_layout(..., TILE_LAYOUT) first"
        )
    spec = out_spec_like(tensor, dtype=dtype, memory_config=memory_config, op="typecast")
    return _rearranged("typecast", tensor, spec, lambda x: x)


def device_reshape(tensor: Tensor, shape: tuple[int, ...]) -> Tensor:
    spec = out_spec_like(tensor, shape=shape, op="reshape")
    return _rearranged("reshape", tensor, spec, lambda x: x.reshape((x.shape[0], *shape)))


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
    spec = out_spec_like(tensor, shape=shape, memory_config=memory_config, op="permute")
    return _rearranged("permute", tensor, spec, lambda x: np.transpose(x, (0, *(a + 1 for a in axes))))


@register(kind=OpKind.DATA_MOVEMENT, family=OpFamily.TRANSPOSE, golden=goldens.transpose)
@ttnn_keywords(pad_value=Keyword(0.0, number), queue_id=QUEUE_ID)
def transpose(input_tensor: Tensor, dim0: int, dim1: int, *, memory_config: MemoryConfig | None = None) -> Tensor:
    tensor = device_input("transpose", "input_tensor", input_tensor)
    rank = len(tensor.shape)
    order = list(range(rank))
    for name, d in (("dim0", dim0), ("dim1", dim1)):
        int_arg("transpose", name, d)
        if not -rank <= d < rank:
            raise MeshnnValueError(
                f"ttnn.transpose: dim {d} is out of range for input_tensor {list(tensor.shape)} (rank {rank})"
            )
    a, b = dim0 % rank, dim1 % rank
    order[a], order[b] = order[b], order[a]
    return permute(tensor, order, memory_config=memory_config)


@register(kind=OpKind.DATA_MOVEMENT, family=OpFamily.CONCAT, golden=goldens.concat)
@ttnn_keywords(output_tensor=NO_OUTPUT_TENSOR, groups=_GROUPS, sub_core_grids=SUB_CORE_GRIDS)
def concat(input_tensors: Sequence[Tensor], dim: int = 0, *, memory_config: MemoryConfig | None = None) -> Tensor:
    if isinstance(input_tensors, Tensor) or not isinstance(input_tensors, Sequence):
        raise MeshnnTypeError(
            f"ttnn.concat: input_tensors must be a list of tensors, got {type(input_tensors).__name__}"
        )
    tensors = [device_input("concat", f"input_tensors[{i}]", t) for i, t in enumerate(input_tensors)]
    if not tensors:
        raise MeshnnValueError("ttnn.concat: input_tensors needs at least one tensor")
    dim = int_arg("concat", "dim", dim)
    same_mesh("concat", {f"input_tensors[{i}]": t for i, t in enumerate(tensors)})
    first = tensors[0]
    rank = len(first.shape)
    axis = dim + rank if dim < 0 else dim
    if not 0 <= axis < rank:
        raise MeshnnValueError(
            f"ttnn.concat: dim {dim} is out of range for input_tensors[0] {list(first.shape)} (rank {rank})"
        )
    for i, t in enumerate(tensors[1:], 1):
        if t.dtype is not first.dtype:
            raise MeshnnValueError(
                f"ttnn.concat: input_tensors[{i}] is {t.dtype} and input_tensors[0] {first.dtype}; "
                "all must share a dtype"
            )
        same = len(t.shape) == rank and all(t.shape[d] == first.shape[d] for d in range(rank) if d != axis)
        if not same:
            raise MeshnnValueError(
                f"ttnn.concat: input_tensors[{i}] {list(t.shape)} does not match {list(first.shape)} outside dim {dim}"
            )
    shape = tuple(sum(t.shape[d] for t in tensors) if d == axis else first.shape[d] for d in range(rank))
    spec = out_spec_like(first, shape=shape, memory_config=memory_config, op="concat")
    return _rearranged("concat", first, spec, lambda *xs: np.concatenate(xs, axis=axis + 1), extra=tensors[1:])


@register(kind=OpKind.DATA_MOVEMENT, family=OpFamily.SLICE, golden=goldens.slice)
@ttnn_keywords(
    output_tensor=NO_OUTPUT_TENSOR, pad_value=Keyword(None, number), sub_core_grids=SUB_CORE_GRIDS, queue_id=QUEUE_ID
)
def slice(
    input_tensor: Tensor,
    slice_start: Sequence[int],
    slice_end: Sequence[int],
    slice_step: Sequence[int] | None = None,
    *,
    memory_config: MemoryConfig | None = None,
) -> Tensor:
    tensor = device_input("slice", "input_tensor", input_tensor)
    rank = len(tensor.shape)
    slice_start = int_list("slice", "slice_start", slice_start)
    slice_end = int_list("slice", "slice_end", slice_end)
    steps = int_list("slice", "slice_step", slice_step) if slice_step is not None else [1] * rank
    if not (len(slice_start) == len(slice_end) == len(steps) == rank):
        raise MeshnnValueError(
            f"ttnn.slice: starts, ends and steps need {rank} values each for input_tensor {list(tensor.shape)}, "
            f"got {list(slice_start)}, {list(slice_end)}, {steps}"
        )
    if any(s <= 0 for s in steps):
        raise MeshnnValueError(f"ttnn.slice: steps must be positive, got {steps}")
    index = tuple(builtins.slice(a, b, c) for a, b, c in zip(slice_start, slice_end, steps, strict=True))
    return getitem(tensor, index, memory_config=memory_config)


def getitem(tensor: Tensor, index: object, *, memory_config: MemoryConfig | None = None) -> Tensor:
    """``tensor[...]`` with slices (and ints, which keep the dim with size 1, as ttnn does)."""
    tensor = device_input("slice", "input_tensor", tensor)
    items = index if isinstance(index, tuple) else (index,)
    rank = len(tensor.shape)
    if len(items) > rank:
        raise MeshnnValueError(f"ttnn.slice: {len(items)} indices for a tensor of rank {rank}")
    selector = []
    for item, size in zip((*items, *[builtins.slice(None)] * (rank - len(items))), tensor.shape, strict=True):
        if isinstance(item, int) and not isinstance(item, bool):
            start = item + size if item < 0 else item
            if not 0 <= start < size:
                raise MeshnnValueError(f"ttnn.slice: index {item} is out of range for a dimension of {size}")
            selector.append(builtins.slice(start, start + 1))
        elif isinstance(item, builtins.slice):
            selector.append(item)
        else:
            raise MeshnnTypeError(f"ttnn.slice: indices must be ints or slices, got {type(item).__name__}")
    shape = tuple(len(range(*s.indices(d))) for s, d in zip(selector, tensor.shape, strict=True))
    spec = out_spec_like(tensor, shape=shape, memory_config=memory_config, op="slice")
    return _rearranged("slice", tensor, spec, lambda x: x[(builtins.slice(None), *selector)])


@register(kind=OpKind.DATA_MOVEMENT, family=OpFamily.PAD, golden=goldens.pad)
@ttnn_keywords(use_multicore=Keyword(True, flag), sub_core_grids=SUB_CORE_GRIDS, queue_id=QUEUE_ID)
def pad(
    input_tensor: Tensor,
    padding: Sequence[Sequence[int]] | Sequence[int],
    value: float = 0.0,
    input_tensor_start: Sequence[int] | None = None,
    *,
    memory_config: MemoryConfig | None = None,
) -> Tensor:
    """``ttnn.pad(t, [(before, after), ...], value)`` or ``ttnn.pad(t, output_shape, start, value)``."""
    tensor = device_input("pad", "input_tensor", input_tensor)
    rank = len(tensor.shape)
    if not isinstance(padding, Sequence) or isinstance(padding, str) or not padding:
        raise MeshnnTypeError(f"ttnn.pad: padding must be a list of (before, after) pairs or a shape, got {padding!r}")
    if not isinstance(value, int | float | np.number | list | tuple) or isinstance(value, bool):
        raise MeshnnTypeError(f"ttnn.pad: value must be a number, got {value!r}")
    if input_tensor_start is not None or (padding and isinstance(padding[0], int)):
        output = int_list("pad", "padding", padding)
        if isinstance(value, list | tuple):  # pad(t, output_shape, input_start, value) positionally
            start, value = list(value), float(input_tensor_start or 0)  # type: ignore[arg-type]
        else:
            start = list(input_tensor_start or [0] * rank)
        if len(output) != rank or len(start) != rank:
            raise MeshnnValueError(
                f"ttnn.pad: output shape {output} and start {start} need {rank} values each (input_tensor "
                f"{list(tensor.shape)})"
            )
        pairs = [(s, o - s - d) for s, o, d in zip(start, output, tensor.shape, strict=True)]
    else:
        pairs = [tuple(int_list("pad", "padding", p)) for p in padding]  # type: ignore[misc]
        pairs = [(0, 0)] * (rank - len(pairs)) + pairs
    if len(pairs) != rank or any(len(p) != 2 or p[0] < 0 or p[1] < 0 for p in pairs):
        raise MeshnnValueError(f"ttnn.pad: padding {list(padding)} does not give (before, after) >= 0 for {rank} dims")
    shape = tuple(d + a + b for d, (a, b) in zip(tensor.shape, pairs, strict=True))
    spec = out_spec_like(tensor, shape=shape, memory_config=memory_config, op="pad")
    widths = [(0, 0), *pairs]
    return _rearranged("pad", tensor, spec, lambda x: np.pad(x, widths, constant_values=value), new_values=True)


@register(
    kind=OpKind.DATA_MOVEMENT, family=OpFamily.COPY, device_operation="RepeatDeviceOperation", golden=goldens.repeat
)
@ttnn_keywords(implementation=Keyword("auto", choice("auto", "native", "codegen")))
def repeat(input_tensor: Tensor, repeat_dims: Sequence[int], *, memory_config: MemoryConfig | None = None) -> Tensor:
    tensor = device_input("repeat", "input_tensor", input_tensor)
    reps = int_list("repeat", "repeat_dims", repeat_dims)
    if len(reps) != len(tensor.shape) or any(r < 1 for r in reps):
        raise MeshnnValueError(
            f"ttnn.repeat: repeat_dims {reps} need {len(tensor.shape)} positive values for input_tensor "
            f"{list(tensor.shape)}"
        )
    shape = tuple(d * r for d, r in zip(tensor.shape, reps, strict=True))
    spec = out_spec_like(tensor, shape=shape, memory_config=memory_config, op="repeat")
    return _rearranged("repeat", tensor, spec, lambda x: np.tile(x, (1, *reps)))


@register(kind=OpKind.DATA_MOVEMENT, family=OpFamily.COPY, golden=goldens.identity, operator="to_memory_config")
@ttnn_keywords(output_tensor=NO_OUTPUT_TENSOR)
def to_memory_config(input_tensor: Tensor, memory_config: MemoryConfig, dtype: DataType | None = None) -> Tensor:
    tensor = device_input("to_memory_config", "input_tensor", input_tensor)
    if not isinstance(memory_config, MemoryConfig):
        raise MeshnnTypeError(f"ttnn.to_memory_config: memory_config must be a MemoryConfig, got {memory_config!r}")
    spec = out_spec_like(tensor, dtype=dtype, memory_config=memory_config, op="to_memory_config")
    if dtype not in (None, tensor.dtype):
        return _rearranged("to_memory_config", tensor, spec, lambda x: x)
    return _copied("to_memory_config", tensor, spec)


@register(kind=OpKind.DATA_MOVEMENT, family=OpFamily.COPY, device_operation="CloneOperation", golden=goldens.identity)
@ttnn_keywords(compute_kernel_config=COMPUTE_KERNEL_CONFIG)
def clone(input_tensor: Tensor, *, memory_config: MemoryConfig | None = None, dtype: DataType | None = None) -> Tensor:
    tensor = device_input("clone", "input_tensor", input_tensor)
    spec = out_spec_like(tensor, dtype=dtype, memory_config=memory_config, op="clone")
    if dtype not in (None, tensor.dtype):
        return _rearranged("clone", tensor, spec, lambda x: x)
    return _copied("clone", tensor, spec)


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
device_hooks.register("getitem", getitem)
