"""Copies between tensors: ``ttnn.copy`` (one tensor's values written into another, in place),
``ttnn.assign`` (a new copy in a memory config and dtype, or into a preallocated tensor; or, given
two tensors, the first written into the second) and ``ttnn.experimental.typecast`` (the copy
operation with a dtype change).

A copy into a tensor of another dtype rounds the values into it; both tensors must have the same
padded shape, layout and memory layout, as ttnn's copy op checks.

May import: :mod:`meshnn.errors`, :mod:`meshnn.tensor` and the ops' checks, outputs, registry and
rearrange modules.
"""

from __future__ import annotations

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.ops.checks import device_input, same_mesh
from meshnn.ops.movement.rearrange import rearranged
from meshnn.ops.outputs import out_spec_like
from meshnn.ops.registry import OpKind, register, torch_golden
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor

_COPYABLE = (
    DataType.BFLOAT16,
    DataType.BFLOAT8_B,
    DataType.FLOAT32,
    DataType.BFLOAT4_B,
    DataType.UINT32,
    DataType.INT32,
)


def _dtypes(op: str, source: DataType, target: DataType) -> None:
    for name, dtype in (("input", source), ("output", target)):
        if dtype not in _COPYABLE:
            raise MeshnnValueError(f"ttnn.{op}: the {name} dtype {dtype} is not one the copy op takes")


def copied_into(op: str, source: Tensor, target: Tensor) -> Tensor:
    """``source``'s values written into ``target`` (its buffer, its dtype); returns ``target``."""
    a = device_input(op, "input_a", source)
    b = device_input(op, "input_b", target)
    same_mesh(op, {"input_a": a, "input_b": b})
    if tuple(a.padded_shape) != tuple(b.padded_shape) or tuple(a.shape) != tuple(b.shape):
        raise MeshnnValueError(
            f"ttnn.{op}: Input tensor padded shape ({list(a.padded_shape)}) must equal destination tensor padded "
            f"shape ({list(b.padded_shape)})"
        )
    if a.layout is not b.layout:
        raise MeshnnValueError(f"ttnn.{op}: Input tensor layout ({a.layout}) must equal destination tensor layout")
    if a.memory_config().memory_layout is not b.memory_config().memory_layout:
        raise MeshnnValueError(f"ttnn.{op}: Input tensor memory layout must equal destination tensor memory layout")
    _dtypes(op, a.dtype, b.dtype)
    return rearranged(op, a, b.spec, lambda x: x, into=b)


def _copy(op: str, tensor: Tensor, dtype: DataType | None, memory_config: MemoryConfig | None, output) -> Tensor:
    """A new copy of ``tensor`` in ``dtype`` and ``memory_config``, or into ``output``."""
    if dtype is not None and not isinstance(dtype, DataType):
        raise MeshnnTypeError(f"ttnn.{op}: dtype must be a ttnn DataType, got {dtype!r}")
    target = dtype or tensor.dtype
    _dtypes(op, tensor.dtype, target)
    if target.is_block_float and tensor.layout is not Layout.TILE:
        raise MeshnnValueError(f"ttnn.{op}: a {target} copy needs a TILE input_tensor")
    if output is not None:
        out = device_input(op, "output_tensor", output)
        if out.dtype is not target:
            raise MeshnnValueError(f"ttnn.{op}: output_tensor is {out.dtype}, the copy {target}")
        return copied_into(op, tensor, out)
    spec = out_spec_like(tensor, dtype=target, memory_config=memory_config, op=op)
    return rearranged(op, tensor, spec, lambda x: x)


@register(
    kind=OpKind.DATA_MOVEMENT,
    family=OpFamily.COPY,
    device_operation="CopyDeviceOperation",
    golden=torch_golden(lambda torch, input_a, input_b, **_: input_a.clone()),
)
def copy(input_a: Tensor, input_b: Tensor) -> Tensor:
    """Copy ``input_a``'s values into ``input_b`` (in place); returns ``input_b``."""
    return copied_into("copy", input_a, input_b)


@register(
    kind=OpKind.DATA_MOVEMENT,
    family=OpFamily.COPY,
    device_operation="CopyDeviceOperation",
    golden=torch_golden(lambda torch, input_tensor, *_, **__: input_tensor.clone()),
)
def assign(
    input_tensor: Tensor,
    input_b: Tensor | None = None,
    *,
    memory_config: MemoryConfig | None = None,
    dtype: DataType | None = None,
    output_tensor: Tensor | None = None,
) -> Tensor:
    """``assign(input_tensor, *, memory_config, dtype=None, output_tensor=None)``: a new copy (or
    one written into ``output_tensor``); ``assign(input_a, input_b)``: ``input_a`` written into
    ``input_b``, which is returned."""
    tensor = device_input("assign", "input_tensor", input_tensor)
    if input_b is not None:
        if memory_config is not None or dtype is not None or output_tensor is not None:
            raise MeshnnTypeError("ttnn.assign: the two-tensor form takes no memory_config, dtype or output_tensor")
        return copied_into("assign", tensor, input_b)
    if memory_config is None:
        raise MeshnnTypeError("ttnn.assign() missing required keyword argument 'memory_config'")
    if not isinstance(memory_config, MemoryConfig):
        raise MeshnnTypeError(f"ttnn.assign: memory_config must be a ttnn.MemoryConfig, got {memory_config!r}")
    return _copy("assign", tensor, dtype, memory_config, output_tensor)


@register(
    "experimental.typecast",
    kind=OpKind.DATA_MOVEMENT,
    family=OpFamily.TYPECAST,
    device_operation="CopyDeviceOperation",
    golden=torch_golden(lambda torch, input_tensor, *_, **__: input_tensor.clone()),
)
def experimental_typecast(
    input_tensor: Tensor,
    dtype: DataType,
    memory_config: MemoryConfig | None = None,
    optional_output_tensor: Tensor | None = None,
) -> Tensor:
    """The copy op with a dtype change (bfloat16, bfloat8_b, bfloat4_b, float32, int32, uint32)."""
    tensor = device_input("experimental.typecast", "input_tensor", input_tensor)
    return _copy("experimental.typecast", tensor, dtype, memory_config, optional_output_tensor)
