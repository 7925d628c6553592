"""Repetition: ``ttnn.repeat`` (the tensor tiled ``repeat_dims`` times, as torch's ``repeat``; a
longer ``repeat_dims`` adds leading dims, a shorter one repeats the trailing dims, a 0 empties
the dim), ``ttnn.expand`` (size-1 dims repeated to a shape: a repeat), ``ttnn.roll`` (as
torch.roll), ``ttnn.repeat_interleave`` (each element repeated along ``dim``) and
``ttnn.experimental.broadcast_to`` (size-1 dims broadcast to a shape, as torch's ``broadcast_to``:
bfloat16 / float32 TILE tensors of rank 4 or less, as ttnn's kernel has them).

``repeat_interleave`` of a tensor not in bfloat16 goes through bfloat16 on ttnn (typecast,
repeat, typecast back), so its values round to bfloat16: meshnn rounds them the same way.

May import: :mod:`meshnn.errors`, :mod:`meshnn.formats`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor`
and the ops' checks, outputs, registry and rearrange modules.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.bfloat16 import round_to_bfloat16
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.mesh.op_keywords import Keyword, choice, ttnn_keywords
from meshnn.ops.checks import device_input, int_arg, int_list, same_mesh
from meshnn.ops.movement.rearrange import rearranged
from meshnn.ops.outputs import out_spec_like, output_into
from meshnn.ops.registry import OpKind, register, torch_golden
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor


def _repeat_golden(torch, input_tensor, repeat_dims, **_):
    return input_tensor.repeat(*repeat_dims)


@register(
    kind=OpKind.DATA_MOVEMENT,
    family=OpFamily.COPY,
    device_operation="RepeatDeviceOperation",
    golden=torch_golden(_repeat_golden),
)
@ttnn_keywords(implementation=Keyword("auto", choice("auto", "native", "codegen")))
def repeat(input_tensor: Tensor, repeat_dims: Sequence[int], *, memory_config: MemoryConfig | None = None) -> Tensor:
    """The tensor repeated ``repeat_dims[i]`` times along dim i (ttnn's rank matching: leading 1s
    added to the shorter of the shape and ``repeat_dims``)."""
    tensor = device_input("repeat", "input_tensor", input_tensor)
    reps = int_list("repeat", "repeat_dims", repeat_dims)
    shape = tuple(tensor.shape)
    if not shape:
        raise MeshnnValueError("ttnn.repeat: repeat does not support rank 0 tensors")
    if not reps or any(r < 0 for r in reps):
        raise MeshnnValueError(f"ttnn.repeat: repeat_dims {reps} must be non-negative counts")
    rank = max(len(shape), len(reps))
    shape = (1,) * (rank - len(shape)) + shape
    reps = [1] * (rank - len(reps)) + reps
    out_shape = tuple(d * r for d, r in zip(shape, reps, strict=True))
    spec = out_spec_like(tensor, shape=out_shape, memory_config=memory_config, op="repeat")
    return rearranged("repeat", tensor, spec, lambda x: np.tile(x.reshape((x.shape[0], *shape)), (1, *reps)))


@register(
    kind=OpKind.DATA_MOVEMENT,
    family=OpFamily.COPY,
    device_operation="RepeatDeviceOperation",
    golden=torch_golden(lambda torch, input_tensor, output_shape, **_: input_tensor.expand(output_shape)),
)
def expand(input_tensor: Tensor, output_shape: Sequence[int], *, memory_config: MemoryConfig | None = None) -> Tensor:
    """Size-1 dims repeated to ``output_shape`` (-1 or the dim's own size: kept), as a copy: ttnn's
    ``repeat`` with the counts ttnn derives.  As ttnn derives them, the shape is matched to the
    input's dims from the left; its dims beyond the input's rank are counts for :func:`repeat`."""
    tensor = device_input("expand", "input_tensor", input_tensor)
    wanted = int_list("expand", "output_shape", output_shape)
    have = tuple(tensor.shape)
    if len(have) > len(wanted):
        raise MeshnnValueError("ttnn.expand: Only size 1 dimensions can be expanded in the output shape")
    counts = []
    for index, size in enumerate(wanted):
        if index >= len(have):
            counts.append(size)
        elif size in (-1, have[index]):
            counts.append(1)
        elif have[index] != 1:
            raise MeshnnValueError(
                f"ttnn.expand: Only size 1 dimensions can be expanded in the output shape (dim {index}: "
                f"{have[index]} to {size}, input {list(have)}, output_shape {wanted})"
            )
        else:
            counts.append(size)
    return repeat(tensor, counts, memory_config=memory_config)


@register(
    kind=OpKind.DATA_MOVEMENT,
    family=OpFamily.CONCAT,
    device_operation="ConcatDeviceOperation",
    golden=torch_golden(lambda torch, input_tensor, shifts, dim=None, **_: torch.roll(input_tensor, shifts, dim)),
)
def roll(input_tensor: Tensor, shifts: int | Sequence[int], dim: int | Sequence[int] | None = None) -> Tensor:
    """Elements shifted ``shifts`` places along ``dim`` and wrapped round, as torch.roll (ttnn: a
    slice and a concat a dim): a list of shifts with a list of dims, an int with an int, or an int
    alone over the flattened tensor."""
    tensor = device_input("roll", "input_tensor", input_tensor)
    shape = tuple(tensor.shape)
    if dim is None:
        if not isinstance(shifts, int) or isinstance(shifts, bool):
            raise MeshnnTypeError(f"ttnn.roll: without dim, shifts must be an int, got {shifts!r}")
        count = int(np.prod(shape))
        spec = out_spec_like(tensor, shape=shape, op="roll")
        flat = lambda x: np.roll(x.reshape(x.shape[0], count), shifts, 1).reshape(x.shape[0], *shape)  # noqa: E731
        return rearranged("roll", tensor, spec, flat)
    many = not isinstance(shifts, int)
    steps = int_list("roll", "shifts", shifts) if many else [int_arg("roll", "shifts", shifts)]
    axes = int_list("roll", "dim", dim) if not isinstance(dim, int) else [int_arg("roll", "dim", dim)]
    if not steps or len(steps) != len(axes):
        raise MeshnnValueError(f"ttnn.roll: Roll expects shifts {steps} and dims {axes} to have the same length")
    for axis in axes:
        if not -len(shape) <= axis < len(shape):
            raise MeshnnValueError(
                f"ttnn.roll: Invalid dimension index {axis}. The dimension must be within the range "
                f"[{-len(shape)}, {len(shape) - 1}]."
            )
    places = [a % len(shape) + 1 for a in axes]  # (axis 0 of the kernel's array: the devices)
    spec = out_spec_like(tensor, shape=shape, op="roll")
    return rearranged("roll", tensor, spec, lambda x: np.roll(x.reshape(x.shape[0], *shape), steps, places))


@register(
    kind=OpKind.DATA_MOVEMENT,
    family=OpFamily.CONCAT,
    device_operation="ConcatDeviceOperation",
    golden=torch_golden(
        lambda torch, input_tensor, repeats, dim=0, **_: torch.repeat_interleave(input_tensor, repeats, dim)
    ),
)
def repeat_interleave(
    input_tensor: Tensor, repeats: int, dim: int, *, memory_config: MemoryConfig | None = None
) -> Tensor:
    """Each element repeated ``repeats`` times along ``dim`` (torch.repeat_interleave with an int)."""
    op = "repeat_interleave"
    tensor = device_input(op, "input_tensor", input_tensor)
    count = int_arg(op, "repeats", repeats)
    if count < 1:
        raise MeshnnValueError(f"ttnn.{op}: repeats must be >= 1, got {count}")
    rank = len(tensor.shape)
    axis = int_arg(op, "dim", dim)
    if not -rank <= axis < rank:
        raise MeshnnValueError(f"ttnn.{op}: dim {axis} is out of range for input_tensor {list(tensor.shape)}")
    axis %= rank
    shape = tuple(d * count if i == axis else d for i, d in enumerate(tensor.shape))
    spec = out_spec_like(tensor, shape=shape, memory_config=memory_config, op=op)
    through_bfloat16 = count > 1 and tensor.dtype is not DataType.BFLOAT16

    def interleave(x: np.ndarray) -> np.ndarray:
        out = np.repeat(x, count, axis=axis + 1)
        if through_bfloat16:
            kind = out.dtype
            out = round_to_bfloat16(out.astype(np.float32)).astype(kind)
        return out

    return rearranged(op, tensor, spec, interleave, new_values=through_bfloat16)


def _broadcast_shape(op: str, tensor: Tensor, output_shape: Sequence[int]) -> tuple[int, ...]:
    """``output_shape`` checked as ttnn checks it: rank 4 or less and no smaller than the input's,
    each input dim (from the right) equal to the output's or 1."""
    shape = tuple(tensor.shape)
    target = tuple(int_list(op, "output_shape", list(output_shape)))
    if len(shape) > len(target):
        raise MeshnnValueError(f"ttnn.{op}: input {list(shape)} has more dims than output_shape {list(target)}")
    if any(d < 0 for d in target):
        raise MeshnnValueError(f"ttnn.{op}: output_shape {list(target)} must hold non-negative sizes")
    if len(target) > 4:
        raise MeshnnValueError(f"ttnn.{op}: shapes must be at most 4D, got output_shape {list(target)}")
    for i in range(1, len(shape) + 1):
        if shape[-i] not in (1, target[-i]):
            raise MeshnnValueError(
                f"ttnn.{op}: input dim {-i} (size {shape[-i]}) cannot be broadcast to output dim {-i} "
                f"(size {target[-i]})"
            )
    return target


# The types ttnn's broadcast_to moves: bfloat16 and float32 in 0.81.1; 2026's kernel added int32, uint32
# and uint16 (tt-metal #36054, 2026-02: ``bcast_to_program_factory.cpp`` unpacks 32-bit formats to dest).
_BROADCAST_DTYPES = (DataType.BFLOAT16, DataType.FLOAT32, DataType.INT32, DataType.UINT32, DataType.UINT16)


@register(
    "experimental.broadcast_to",
    kind=OpKind.DATA_MOVEMENT,
    family=OpFamily.COPY,
    device_operation="BcastToOperation",
    golden=torch_golden(lambda torch, input, output_shape, **_: input.broadcast_to(tuple(output_shape))),
)
def broadcast_to(
    input: Tensor,
    output_shape: Sequence[int],
    *,
    memory_config: MemoryConfig | None = None,
    output: Tensor | None = None,
) -> Tensor:
    """``input`` with its size-1 dims broadcast to ``output_shape`` (torch's ``broadcast_to``),
    written into ``output`` when given (which must have that shape and the input's dtype and
    layout).  Interleaved memory only, as ttnn's kernel; the integer types as 2026's ttnn (a move:
    every value exactly)."""
    op = "experimental.broadcast_to"
    tensor = device_input(op, "input", input)
    target = _broadcast_shape(op, tensor, output_shape)
    if tensor.dtype not in _BROADCAST_DTYPES:
        raise MeshnnTypeError(
            f"ttnn.{op}: For input dtype {tensor.dtype}, only bfloat16, float32, int32, uint32 and uint16 are supported"
        )
    if tensor.layout is not Layout.TILE:
        raise MeshnnValueError(f"ttnn.{op}: the input must be in TILE layout, got {tensor.layout}")
    for name, config in (("input", tensor.memory_config()), ("output", memory_config)):
        if config is not None and config.is_sharded():
            raise MeshnnValueError(f"ttnn.{op}: {name} sharding is not supported (interleaved DRAM / L1 only)")
    spec = out_spec_like(tensor, shape=target, memory_config=memory_config, op=op)
    into = None
    if output is not None:
        mesh = same_mesh(op, {"input": tensor})
        probe = output.spec if isinstance(output, Tensor) else spec
        into = output_into(op, mesh, output, probe, tensor.storage.coords)  # type: ignore[union-attr]
        if tuple(into.shape) != target or into.layout is not tensor.layout or into.dtype is not tensor.dtype:
            raise MeshnnValueError(
                f"ttnn.{op}: output {list(into.shape)} {into.dtype} must be {list(target)} {tensor.dtype} "
                f"in {tensor.layout}, as the input"
            )
        if into.memory_config().is_sharded():
            raise MeshnnValueError(f"ttnn.{op}: output sharding is not supported (interleaved DRAM / L1 only)")
        spec = into.spec
    rank = len(target)

    def expand(x: np.ndarray) -> np.ndarray:
        values = x.reshape((x.shape[0],) + (1,) * (rank - (x.ndim - 1)) + x.shape[1:])
        return np.broadcast_to(values, (x.shape[0], *target))

    return rearranged(op, tensor, spec, expand, into=into)
