"""Slicing: ``ttnn.slice`` (ttnn's three overloads: ``slice_start`` / ``slice_end`` /
``slice_step`` lists, the ``starts`` / ``ends`` / ``steps`` arrays, and ``starts`` / ``ends`` given
as integer tensors), ``tensor[...]`` as ttnn's ``__getitem__`` (an int index removes its dim, one
``...`` stands for the dims not indexed; a host tensor is sliced on the host, with unit steps),
and ``ttnn.slice_write`` (a tensor written into a strided window of another, in place).

Starts and ends follow Python's rules (negative counts from the end, ends clamp), steps are
positive, as ttnn's slice normalises them.

May import: :mod:`meshnn.errors`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor` and the ops' checks,
outputs, registry and rearrange modules.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.codec import encode
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.mesh.coord import MeshCoordinate
from meshnn.mesh.op_keywords import QUEUE_ID, SUB_CORE_GRIDS, Keyword, count, number, ttnn_keywords
from meshnn.ops.checks import device_input, int_list, same_mesh
from meshnn.ops.data_movement import to_layout, to_memory_config
from meshnn.ops.launch import launch
from meshnn.ops.movement.conv_slices import flat_window_rows
from meshnn.ops.movement.copying import copied_into
from meshnn.ops.movement.rearrange import rearranged
from meshnn.ops.outputs import Output, out_spec_like
from meshnn.ops.registry import OpKind, alias, register, torch_golden
from meshnn.ops.values import logical_values, write_values
from meshnn.perf.desc import OpFamily
from meshnn.tensor import device_hooks
from meshnn.tensor.interop import to_numpy
from meshnn.tensor.lifetime import handle_copy
from meshnn.tensor.readback import decoded_shards
from meshnn.tensor.reshape import reshape
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.storage import DeviceStorage
from meshnn.tensor.tensor import Tensor, check_tensor


def _golden(torch, input_tensor, slice_start, slice_end, slice_step=None, **_):
    steps = slice_step or [1] * len(slice_start)
    return input_tensor[tuple(builtins.slice(a, b, c) for a, b, c in zip(slice_start, slice_end, steps, strict=True))]


def _bounds(op: str, name: str, values: object) -> list[int]:
    """A list of ints, or the ints of a 1-D integer ttnn tensor (host or device: read back)."""
    if isinstance(values, Tensor):
        check_tensor(values, f"ttnn.{op}: {name}")
        if not values.dtype.is_integer or len(values.shape) != 1:
            raise MeshnnTypeError(
                f"ttnn.{op}: {name} must be a 1-D integer tensor, got {values.dtype} {list(values.shape)}"
            )
        return [int(v) for v in decoded_shards(values)[0]]
    return int_list(op, name, values)


def _selector(
    op: str, shape: Sequence[int], starts: list[int], ends: list[int], steps: list[int]
) -> list[builtins.slice]:
    rank = len(shape)
    if not (len(starts) == len(ends) == len(steps) == rank):
        raise MeshnnValueError(
            f"ttnn.{op}: starts, ends and steps need {rank} values each for input_tensor {list(shape)}, "
            f"got {starts}, {ends}, {steps}"
        )
    if any(s <= 0 for s in steps):
        raise MeshnnValueError(f"ttnn.{op}: steps must be positive, got {steps}")
    return [builtins.slice(a, b, c) for a, b, c in zip(starts, ends, steps, strict=True)]


@register(kind=OpKind.DATA_MOVEMENT, family=OpFamily.SLICE, golden=torch_golden(_golden))
@ttnn_keywords(
    pad_value=Keyword(None, number),
    slice_dim=Keyword(None, count),
    num_devices=Keyword(None, count),
    sub_core_grids=SUB_CORE_GRIDS,
    queue_id=QUEUE_ID,
)
def slice(
    input_tensor: Tensor,
    slice_start: Sequence[int] | Tensor | None = None,
    slice_end: Sequence[int] | Tensor | None = None,
    slice_step: Sequence[int] | None = None,
    *,
    memory_config: MemoryConfig | None = None,
    starts: Sequence[int] | Tensor | None = None,
    ends: Sequence[int] | Tensor | None = None,
    steps: Sequence[int] | None = None,
    output_tensor: Tensor | None = None,
) -> Tensor:
    """``input_tensor[start:end:step, ...]``, every dim given; ``starts`` / ``ends`` / ``steps`` are
    the names of ttnn's other overloads (the bounds may be 1-D integer tensors); ``output_tensor``
    (a live tensor of the slice's shape, dtype and layout) is written and returned."""
    op = "slice"
    tensor = device_input(op, "input_tensor", input_tensor)
    first = _either(op, "slice_start", slice_start, "starts", starts)
    last = _either(op, "slice_end", slice_end, "ends", ends)
    stride = slice_step if steps is None else steps
    lo, hi = _bounds(op, "slice_start", first), _bounds(op, "slice_end", last)
    step = [1] * len(lo) if stride is None else int_list(op, "slice_step", stride)
    selector = _selector(op, tensor.shape, lo, hi, step)
    if output_tensor is None:
        return _sliced(tensor, selector, memory_config)
    target = _output(tensor, selector, output_tensor)
    result = _sliced(tensor, selector, memory_config)
    copied_into(op, result, target)
    if result is not tensor:
        result.deallocate()
    return target


def _output(tensor: Tensor, selector: list[builtins.slice], output_tensor: object) -> Tensor:
    """``output_tensor`` checked to take the slice: on the input's mesh, the slice's shape, the
    input's dtype and layout (ttnn: "Its shape must match the slice output")."""
    op = "slice"
    target = device_input(op, "output_tensor", output_tensor)
    same_mesh(op, {"input_tensor": tensor, "output_tensor": target})
    shape = tuple(len(range(*s.indices(d))) for s, d in zip(selector, tensor.shape, strict=True))
    if tuple(target.shape) != shape or target.dtype is not tensor.dtype or target.layout is not tensor.layout:
        raise MeshnnValueError(
            f"ttnn.{op}: output_tensor is {list(target.shape)} {target.dtype} {target.layout}; the slice is "
            f"{list(shape)} {tensor.dtype} {tensor.layout}"
        )
    return target


def _either(op: str, name: str, value: object, other_name: str, other: object) -> object:
    if value is not None and other is not None:
        raise MeshnnTypeError(f"ttnn.{op}: give {name} or {other_name}, not both")
    if value is None and other is None:
        raise MeshnnTypeError(f"ttnn.{op}() missing required argument {name!r}")
    return value if value is not None else other


def _sliced(tensor: Tensor, selector: list[builtins.slice], memory_config: MemoryConfig | None) -> Tensor:
    """The slice as ttnn runs it: nothing for a slice of everything (a memory config change at
    most; else the same memory under another handle); a TILE slice with steps, of rank 1, sharded
    or starting inside a tile goes through ROW_MAJOR (``to_layout`` there and back, which ttnn
    cannot do for uint16)."""
    shape = tuple(tensor.shape)
    bounds = [s.indices(d) for s, d in zip(selector, shape, strict=True)]
    for dim, (start, stop, _) in enumerate(bounds):
        if stop < start:
            raise MeshnnValueError(f"ttnn.slice: End {stop} must be greater than or equal to start {start} (dim {dim})")
    if not shape or all(b == (0, d, 1) for b, d in zip(bounds, shape, strict=True)):
        if memory_config is None or memory_config == tensor.memory_config():
            return handle_copy(tensor)  # ttnn returns the input: another handle on its memory
        return to_memory_config(tensor, memory_config)
    starts = [b[0] for b in bounds]
    strided = any(b[2] != 1 for b in bounds)
    unaligned = len(shape) > 1 and (starts[-1] % tensor.tile.tile_shape[1] or starts[-2] % tensor.tile.tile_shape[0])
    if tensor.layout is Layout.TILE and (strided or len(shape) == 1 or tensor.is_sharded() or unaligned):
        if tensor.dtype is DataType.UINT16:
            raise MeshnnValueError(
                "ttnn.slice: This slice requires an implicit Tile->RM conversion and that is not currently supported "
                "for uint16"
            )
        if strided and tensor.dtype is DataType.BFLOAT8_B:
            raise MeshnnValueError("ttnn.slice: Strided slice is not supported for BFLOAT8 tensors")
        if memory_config is None:
            rows = to_layout(tensor, Layout.ROW_MAJOR)
            return to_layout(_sliced_rows(rows, selector, None), Layout.TILE, dtype=tensor.dtype)
        # the output's memory config fits the slice, not the whole input: the rows go interleaved
        rows = to_layout(tensor, Layout.ROW_MAJOR, memory_config=MemoryConfig(buffer_type=memory_config.buffer_type))
        sliced = _sliced_rows(rows, selector, None)
        return to_layout(sliced, Layout.TILE, dtype=tensor.dtype, memory_config=memory_config)
    return _sliced_rows(tensor, selector, memory_config)


def _sliced_rows(tensor: Tensor, selector: list[builtins.slice], memory_config: MemoryConfig | None) -> Tensor:
    shape = tuple(len(range(*s.indices(d))) for s, d in zip(selector, tensor.shape, strict=True))
    spec = out_spec_like(tensor, shape=shape, memory_config=memory_config, op="slice")
    return rearranged("slice", tensor, spec, lambda x: x[(builtins.slice(None), *selector)])


def _index_items(tensor: Tensor, index: object) -> tuple[list[builtins.slice], list[int]]:
    """ttnn's ``__getitem__`` rules: the slices of every dim, and the dims an int picked."""
    items = list(index) if isinstance(index, tuple) else [index]
    rank = len(tensor.shape)
    if items.count(Ellipsis) > 1:
        raise MeshnnValueError("ttnn.slice: only one ellipsis ('...') is allowed in an index")
    if Ellipsis in items:
        at = items.index(Ellipsis)
        items[at : at + 1] = [builtins.slice(None)] * (rank - len(items) + 1)
    if len(items) > rank:
        raise MeshnnValueError(f"ttnn.slice: {len(items)} indices for a tensor of rank {rank}")
    items += [builtins.slice(None)] * (rank - len(items))
    selector, picked = [], []
    for dim, (item, size) in enumerate(zip(items, tensor.shape, strict=True)):
        if isinstance(item, int | np.integer) and not isinstance(item, bool):
            start = int(item) + size if item < 0 else int(item)
            if not 0 <= start < size:
                raise MeshnnValueError(f"ttnn.slice: index {item} is out of range for dim {dim} of size {size}")
            selector.append(builtins.slice(start, start + 1))
            picked.append(dim)
        elif isinstance(item, builtins.slice):
            if item.step is not None and item.step <= 0:
                raise MeshnnValueError(f"ttnn.slice: steps must be positive, got {item.step}")
            selector.append(item)
        else:
            raise MeshnnTypeError(f"ttnn.slice: indices must be ints, slices or ..., got {type(item).__name__}")
    return selector, picked


def getitem(tensor: Tensor, index: object, *, memory_config: MemoryConfig | None = None) -> Tensor:
    """``tensor[...]``: slices, ints (their dims removed) and one ``...``, as ttnn's ``__getitem__``."""
    check_tensor(tensor, "ttnn.slice: input_tensor")
    selector, picked = _index_items(tensor, index)
    if isinstance(tensor.storage, DeviceStorage):
        out = _sliced(device_input("slice", "input_tensor", tensor), selector, memory_config)
    else:
        out = _host_sliced(tensor, selector)
    if not picked:
        return out
    shape = [d for i, d in enumerate(out.shape) if i not in picked]
    return reshape(out, shape)


def _host_sliced(tensor: Tensor, selector: list[builtins.slice]) -> Tensor:
    """A host tensor's slice, made on the host (ttnn takes unit steps only there)."""
    if any(s.step not in (None, 1) for s in selector):
        raise MeshnnValueError("ttnn.slice: host tensors cannot be accessed with non-unit stride")
    values = np.ascontiguousarray(to_numpy(tensor)[tuple(selector)])
    return Tensor(values, tensor.dtype, layout=tensor.layout, tile=tensor.tile)


@register(
    kind=OpKind.DATA_MOVEMENT,
    family=OpFamily.SLICE,
    device_operation="SliceWriteDeviceOperation",
    modelled=False,
)
def slice_write(
    input_tensor: Tensor, output_tensor: Tensor, start: Sequence[int], end: Sequence[int], step: Sequence[int]
) -> Tensor:
    """Write ``input_tensor`` into the window ``start:end:step`` of ``output_tensor`` (in place:
    the output keeps its buffer); the window must have ``input_tensor``'s shape, or, for a sharded
    ``[1, 1, rows, C]`` input, hold its rows flattened (conv2d's slices: :func:`flat_window_rows`).
    Returns the output."""
    op = "slice_write"
    source = device_input(op, "input_tensor", input_tensor)
    target = device_input(op, "output_tensor", output_tensor)
    selector = _selector(
        op, target.shape, int_list(op, "start", start), int_list(op, "end", end), int_list(op, "step", step)
    )
    window = tuple(len(range(*s.indices(d))) for s, d in zip(selector, target.shape, strict=True))
    flat = source.is_sharded() and len(source.shape) == len(window) == 4 and tuple(source.shape[:2]) == (1, 1)
    padded_window = flat_window_rows(op, source, target, selector) if flat else window
    sizes = window
    if not flat and window != tuple(source.shape):
        raise MeshnnValueError(
            f"ttnn.{op}: the window {window} of output_tensor {list(target.shape)} is not input_tensor's shape "
            f"{list(source.shape)}"
        )
    if source.dtype is not target.dtype:
        raise MeshnnValueError(f"ttnn.{op}: input_tensor is {source.dtype} and output_tensor {target.dtype}")
    mesh = same_mesh(op, {"input_tensor": source, "output_tensor": target})
    spec = target.spec
    in_place = spec.layout is Layout.ROW_MAJOR and spec.explicit_padded_shape is None and not spec.dtype.is_block_float
    window = (builtins.slice(None), *selector)

    source_spec = source.spec  # (the kernel holds no tensor: a trace must not keep it allocated)

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]) -> None:
        part = logical_values(in_rows[0], source_spec, as_float=False)
        if flat:  # ttnn's sharded [1, 1, rows, C]: the padded window's rows, cut to the window
            part = part.reshape(part.shape[0], *padded_window[:-1], part.shape[-1])
            part = part[(builtins.slice(None), *(builtins.slice(0, n) for n in sizes))]
        if in_place:  # ROW_MAJOR bytes are the values: only the window's elements are written
            size = spec.compute_packed_buffer_size_bytes()
            rows = out_rows[0][:, :size].view(spec.dtype.storage_dtype).reshape((-1, *spec.shape))
            rows[window] = (
                encode(np.ascontiguousarray(part), spec.dtype, Layout.ROW_MAJOR).view(rows.dtype).reshape(part.shape)
            )
            return
        whole = np.array(logical_values(in_rows[1], spec, as_float=False), copy=True)
        whole[window] = part
        write_values(out_rows[0], whole, spec, exact=True)

    attrs = {"memory_config": spec.memory_config, "start": start, "end": end, "step": step}
    launch(op, mesh, [source, target], [Output(spec)], kernel, rowwise=True, into=[target], attrs=attrs)
    return target


device_hooks.register("getitem", getitem)


alias("experimental.slice_write", "slice_write")  # tt-metal of 2026 binds it under ttnn.experimental
