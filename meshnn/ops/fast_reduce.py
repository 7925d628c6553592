"""``ttnn.experimental.fast_reduce_nc``: the sum over outer dims (not the last two: those of the
tiles), each kept with size 1, as the 2-D meshes' all-reduce (gather along dim 0, then this) uses
it.  As ttnn runs it, one program per dim (the last first), each summing in float32 and rounding
into the input's dtype; ``output=`` is written in place by the last.

``ttnn.experimental.deepseek_moe_fast_reduce_nc`` (DeepSeek's MoE decode, tt-metal 2026): the same
sum over one outer ``dim`` (kept as 1) of a bfloat16 / bfloat8_b TILE tensor, its last dim cut into
``width / split_size`` outputs of ``split_size`` columns: one program, a list of tensors.

May import: :mod:`meshnn.errors`, :mod:`meshnn.formats`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor`
and the ops' checks, config, launch, outputs and values modules.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.mesh.coord import MeshCoordinate
from meshnn.ops.checks import device_input, int_arg, same_mesh
from meshnn.ops.config import check_compute_kernel_config
from meshnn.ops.launch import launch
from meshnn.ops.outputs import Output, out_spec_like, output_into
from meshnn.ops.registry import OpKind, register
from meshnn.ops.values import logical_values, write_values
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor


@register(
    "experimental.fast_reduce_nc",
    kind=OpKind.REDUCTION,
    family=OpFamily.REDUCTION,
    device_operation="FastReduceNCDeviceOperation",
)
def fast_reduce_nc(
    input: Tensor,
    *,
    dims: Sequence[int],
    output: Tensor | None = None,
    compute_kernel_config: object = None,
    memory_config: MemoryConfig | None = None,
) -> Tensor:
    """The sum of ``input`` over ``dims`` (outer dims only), each kept with size 1."""
    op = "experimental.fast_reduce_nc"
    tensor = device_input(op, "input", input)
    mesh = same_mesh(op, {"input": tensor})
    if tensor.layout is not Layout.TILE:
        raise MeshnnValueError(f"ttnn.{op}: input must be TILE, it is {tensor.layout}")
    if isinstance(dims, str) or not isinstance(dims, Sequence) or not dims:
        raise MeshnnTypeError(f"ttnn.{op}: dims must be a non-empty list of ints, got {dims!r}")
    rank = len(tensor.shape)
    axes = sorted({int_arg(op, "dims", d) % rank if -rank <= int_arg(op, "dims", d) < rank else rank for d in dims})
    if axes[-1] >= rank - 2:
        raise MeshnnValueError(
            f"ttnn.{op}: dims {list(dims)} must name outer dims of input {list(tensor.shape)} (not its last two)"
        )
    kernel_config = check_compute_kernel_config(op, compute_kernel_config)
    if output is not None:  # checked before any step runs
        final = out_spec_like(tensor, shape=_kept(tensor.shape, axes), memory_config=memory_config, op=op)
        output_into(op, mesh, output, final, tensor.storage.coords)  # type: ignore[union-attr]
    current = tensor
    for step, axis in enumerate(reversed(axes)):  # one program per dim, the last dim first (as ttnn runs it)
        last = step == len(axes) - 1
        reduced = _reduce_one(op, mesh, current, axis, output if last else None, memory_config, kernel_config)
        if current is not tensor:
            current.deallocate()
        current = reduced
    return current


def _kept(shape, axes) -> tuple[int, ...]:
    return tuple(1 if i in axes else d for i, d in enumerate(shape))


def _reduce_one(op, mesh, tensor: Tensor, axis: int, output, memory_config, kernel_config) -> Tensor:
    """One program: the sum over ``axis`` (kept as 1), rounded into the input's dtype."""
    spec = out_spec_like(tensor, shape=_kept(tensor.shape, (axis,)), memory_config=memory_config, op=op)
    into = None if output is None else [output_into(op, mesh, output, spec, tensor.storage.coords)]  # type: ignore[union-attr]

    tensor_spec = tensor.spec  # (the kernel holds no tensor: a trace must not keep it allocated)

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]) -> None:
        values = logical_values(in_rows[0], tensor_spec)
        write_values(out_rows[0], values.sum(axis=axis + 1, keepdims=True, dtype=np.float32), spec)

    attrs = {"dims": (axis,), "memory_config": spec.memory_config, "compute_kernel_config": kernel_config}
    return launch(op, mesh, [tensor], [Output(spec)], kernel, into=into, rowwise=True, reads_memos=True, attrs=attrs)[0]


@register(
    "experimental.deepseek_moe_fast_reduce_nc",
    kind=OpKind.REDUCTION,
    family=OpFamily.REDUCTION,
    device_operation="DeepseekMoEFastReduceNCDeviceOperation",
)
def deepseek_moe_fast_reduce_nc(
    input_tensor: Tensor,
    dim: int,
    *,
    split_size: int,
    output_memory_config: MemoryConfig | None = None,
    compute_kernel_config: object = None,
) -> list[Tensor]:
    """The sum of ``input_tensor`` over the outer ``dim`` (kept as 1), split on the last dim into
    tensors of ``split_size`` columns (ttnn's checks: TILE, rank > 2, the width a multiple of the
    outputs times 32)."""
    op = "experimental.deepseek_moe_fast_reduce_nc"
    tensor = device_input(op, "input_tensor", input_tensor)
    mesh = same_mesh(op, {"input_tensor": tensor})
    axis, size = int_arg(op, "dim", dim), int_arg(op, "split_size", split_size)  # the binding's conversions first
    if tensor.layout is not Layout.TILE or tensor.dtype not in (DataType.BFLOAT16, DataType.BFLOAT8_B):
        raise MeshnnValueError(f"ttnn.{op}: input tensor must be bfloat16 or bfloat8_b TILE, got {tensor.dtype}")
    rank = len(tensor.shape)
    if rank <= 2:
        raise MeshnnValueError(f"ttnn.{op}: input tensor rank must be greater than 2, but has {rank}")
    if not 0 <= axis <= rank - 3:
        raise MeshnnValueError(f"ttnn.{op}: reduction dim must be between 0 and {rank - 3}, but has {dim}")
    width = tensor.shape[-1]
    if size < 1 or width // size < 1 or width % (width // size * 32):
        raise MeshnnValueError(
            f"ttnn.{op}: input tensor width must be divisible by {max(1, width // max(size, 1)) * 32}"
        )
    kernel_config = check_compute_kernel_config(op, compute_kernel_config)
    parts = width // size
    shape = (*_kept(tensor.shape, (axis,))[:-1], width // parts)
    spec = out_spec_like(tensor, shape=shape, memory_config=output_memory_config, op=op)

    tensor_spec = tensor.spec  # (the kernel holds no tensor: a trace must not keep it allocated)

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]) -> None:
        total = logical_values(in_rows[0], tensor_spec).sum(axis=axis + 1, keepdims=True, dtype=np.float32)
        for i, rows in enumerate(out_rows):
            write_values(rows, total[..., i * shape[-1] : (i + 1) * shape[-1]], spec)

    attrs = {"dim": axis, "split_size": size, "memory_config": spec.memory_config}
    attrs["compute_kernel_config"] = kernel_config
    outs = [Output(spec) for _ in range(parts)]
    return launch(op, mesh, [tensor], outs, kernel, rowwise=True, reads_memos=True, attrs=attrs)
