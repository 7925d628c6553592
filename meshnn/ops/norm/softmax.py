"""``ttnn.softmax`` and its fused forms: ``softmax_in_place``, ``scale_mask_softmax``,
``scale_mask_softmax_in_place`` and ``scale_causal_mask_hw_dims_softmax_in_place``.

``softmax(x) = exp(x - max) / sum(exp(x - max))`` along ``dim`` (``numeric_stable``; without it
``exp(x) / sum(exp(x))`` in float32 as the device computes it, so inputs past 88.7 overflow to
NaN as there).
The fused forms compute ``softmax(x * scale + mask)`` over the last dim, with ttnn's rules:

- inputs FLOAT32 / BFLOAT16 / BFLOAT8_B; the output is TILE of the input's dtype (the in-place
  forms write the input's own buffer and return it);
- ``scale`` only with a ``mask``; a mask is broadcast over the input's batch dims (its batch equal
  to the input's, its other outer dims 1); a ``[b, 1, 1, W]`` mask (or, without
  ``is_causal_mask``, the first row of a tile-high one) applies to every row, a causal mask
  ``[b, 1, H, W]`` row by row; a ROW_MAJOR mask holds W values as ``[b, 1, W / 32, 32]``; a sharded
  mask has the input's shape;
- ``softmax_in_place`` needs a rank-4 input and ``dim`` the last; a
  :class:`~meshnn.ops.config.SoftmaxShardedMultiCoreProgramConfig` needs a sharded input whose
  rows fill ``block_h`` x ``block_w`` tiles per core of its grid, ``block_w`` tiles the whole width;
  ``scale_causal_mask_hw_dims_softmax_in_place`` needs it, a ROW_MAJOR-oriented sharded input, a
  scale and an interleaved TILE mask ``[1, 1, H, W]`` added to every head.

Computed in float64 (the stable form) and rounded once into the output dtype.

May import: every layer below the ops and the ops' launch, checks, outputs, values and config.
"""

from __future__ import annotations

import numpy as np

from meshnn.device.buffer import ShardOrientation
from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.mesh.coord import MeshCoordinate
from meshnn.mesh.op_keywords import ttnn_keywords
from meshnn.ops.checks import device_input, int_arg, same_mesh
from meshnn.ops.config import (
    SoftmaxDefaultProgramConfig,
    SoftmaxShardedMultiCoreProgramConfig,
    check_compute_kernel_config,
    check_softmax_program_config,
)
from meshnn.ops.launch import launch
from meshnn.ops.outputs import Output, out_spec_like
from meshnn.ops.registry import OpKind, register, torch_golden
from meshnn.ops.values import logical_values, write_values
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor

DTYPES = (DataType.FLOAT32, DataType.BFLOAT16, DataType.BFLOAT8_B)
TILE = 32


def _golden_softmax(torch, input_tensor, dim=None, **_):
    return torch.softmax(input_tensor, dim if dim is not None else -1)


def _golden_scaled(torch, input_tensor, scalar=None, attention_mask=None, *, scale=None, mask=None, **_):
    factor = scale if scale is not None else scalar
    x = input_tensor.float() * (factor if factor is not None else 1.0)
    mask = mask if mask is not None else attention_mask
    return torch.softmax(x + mask if mask is not None else x, dim=-1)


def _input(op: str, input_tensor: object) -> Tensor:
    x = device_input(op, "input_tensor", input_tensor)
    if x.dtype not in DTYPES:
        raise MeshnnTypeError(f"ttnn.{op}: input_tensor must be FLOAT32, BFLOAT16 or BFLOAT8_B, got {x.dtype.name}")
    return x


def _flag(op: str, name: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise MeshnnTypeError(f"ttnn.{op}: {name} must be a bool, got {value!r}")
    return value


def softmax_values(x: np.ndarray, axis: int, stable: bool) -> np.ndarray:
    """Softmax of ``x`` along ``axis``: in float64 with the max subtracted first (``stable``), else
    in float32 as the device's exp overflows (past 88.7: inf, then NaN)."""
    wide = x.astype(np.float64 if stable else np.float32)
    if stable:
        top = wide.max(axis=axis, keepdims=True)
        wide = wide - np.where(np.isfinite(top), top, 0.0)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        e = np.exp(wide)
        return e / e.sum(axis=axis, keepdims=True)


def _run(op, x, mesh, spec, into, axis, stable, mask=None, scale=None, rows_of_mask=None, attrs=None) -> Tensor:
    """Launch the softmax of ``x`` (plus its scaled mask) into ``spec`` / ``into``."""
    inputs = [x] if mask is None else [x, mask]

    x_spec, mask_spec = (
        x.spec,
        (None if mask is None else mask.spec),
    )  # (the kernel holds no tensor: a trace must not keep it allocated)

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]) -> None:
        values = logical_values(in_rows[0], x_spec).astype(np.float64)
        if scale is not None:
            values = values * scale
        if mask_spec is not None:
            values = values + rows_of_mask(logical_values(in_rows[1], mask_spec), values.shape)
        write_values(out_rows[0], softmax_values(values, axis, stable).astype(np.float32), spec)

    return launch(op, mesh, inputs, [Output(spec)], kernel, into=into, rowwise=True, attrs=attrs or {})[0]


@register(kind=OpKind.NORMALIZATION, family=OpFamily.SOFTMAX, device_operation="SoftmaxDeviceOperation",
          golden=torch_golden(_golden_softmax))  # fmt: skip
@ttnn_keywords(records=("compute_kernel_config",))
def softmax(
    input_tensor: Tensor,
    dim: int = -1,
    *,
    memory_config: MemoryConfig | None = None,
    compute_kernel_config: object = None,
    numeric_stable: bool = True,
) -> Tensor:
    """Softmax along ``dim`` (see the module docstring)."""
    op = "softmax"
    x = _input(op, input_tensor)
    mesh = same_mesh(op, {"input_tensor": x})
    stable = _flag(op, "numeric_stable", numeric_stable)
    check_compute_kernel_config(op, compute_kernel_config)
    rank = len(x.shape)
    axis = int_arg(op, "dim", dim)
    if not -rank <= axis < rank:
        raise MeshnnValueError(f"ttnn.{op}: dim {axis} is out of range for input_tensor {list(x.shape)}")
    axis %= rank
    if x.layout is not Layout.TILE and axis != rank - 1:
        raise MeshnnValueError(f"ttnn.{op}: Inputs to softmax must be tilized (a dim other than the last)")
    spec = out_spec_like(x, layout=Layout.TILE, memory_config=memory_config, op=op)
    attrs = {"dim": axis, "numeric_stable": stable, "memory_config": spec.memory_config}
    return _run(op, x, mesh, spec, None, axis + 1, stable, attrs=attrs)


def _mask_reader(op: str, x: Tensor, mask: Tensor, causal: bool):
    """Check ``mask`` against ``x`` and return how its values become addable to x's ``(k, *shape)``."""
    xs, ms = tuple(x.padded_shape), tuple(mask.padded_shape)
    if mask.spec.memory_config.is_sharded():
        if mask.layout is not Layout.TILE or ms != xs:
            raise MeshnnValueError(f"ttnn.{op}: a sharded mask must be TILE with input_tensor's shape {list(x.shape)}")
        return lambda m, shape: m
    if mask.layout is Layout.ROW_MAJOR:
        if len(ms) != 4 or ms[1:] != (1, xs[-1] // TILE, TILE):
            raise MeshnnValueError(
                f"ttnn.{op}: a ROW_MAJOR mask must be [b, 1, {xs[-1] // TILE}, 32] (W values as rows of 32), got "
                f"{list(mask.shape)}"
            )
        return lambda m, shape: m.reshape(m.shape[0], m.shape[1], *([1] * (len(shape) - 3)), shape[-1])
    if ms[-1] != xs[-1] or ms[0] not in (1, xs[0]) or any(d != 1 for d in ms[1:-2]) or len(ms) != len(xs):
        raise MeshnnValueError(
            f"ttnn.{op}: mask {list(mask.shape)} must be [{xs[0]}, 1.., 1 or H, {x.shape[-1]}] for input_tensor "
            f"{list(x.shape)}"
        )
    rows = mask.shape[-2]

    def read(m: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
        if rows != shape[-2] and not causal:
            return m[..., :1, :]  # the tile's first row, broadcast over every row
        return m

    return read


def _scaled(op, input_tensor, scale, mask, causal, config, compute_kernel_config, stable, *, in_place,
            memory_config=None, hw_dims=False) -> Tensor:  # fmt: skip
    """The scaled, masked softmax over the last dim (see the module docstring)."""
    x = _input(op, input_tensor)
    causal = _flag(op, "is_causal_mask", causal)
    stable = _flag(op, "numeric_stable", stable)
    check_compute_kernel_config(op, compute_kernel_config)
    if scale is not None and (isinstance(scale, bool) or not isinstance(scale, int | float | np.floating)):
        raise MeshnnTypeError(f"ttnn.{op}: scale must be a number or None, got {scale!r}")
    named = {"input_tensor": x}
    reader = None
    if mask is None:
        if scale is not None:
            raise MeshnnValueError(f"ttnn.{op}: Scale value must not be set when mask is not present")
    else:
        named["mask"] = device_input(op, "mask", mask)
        reader = _mask_reader(op, x, named["mask"], causal)
    config = check_softmax_program_config(op, config)
    if in_place:
        _check_in_place_config(op, x, config, hw_dims, named.get("mask"), scale)
    mesh = same_mesh(op, named)
    if in_place:
        spec, into = x.spec, [x]
    else:
        spec, into = out_spec_like(x, layout=Layout.TILE, memory_config=memory_config, op=op), None
    attrs = {"scale": scale, "is_causal_mask": causal, "numeric_stable": stable, "program_config": config}
    rank = len(x.shape)
    return _run(op, x, mesh, spec, into, rank, stable, named.get("mask"), scale, reader, attrs)


def _check_in_place_config(op, x: Tensor, config, hw_dims: bool, mask: Tensor | None, scale) -> None:
    """The sharded program config's checks (and the HW-dims causal form's)."""
    if hw_dims and not isinstance(config, SoftmaxShardedMultiCoreProgramConfig):
        raise MeshnnValueError(f"ttnn.{op}: Scale causal mask HW dims softmax not supported in default program config")
    if not isinstance(config, SoftmaxShardedMultiCoreProgramConfig):
        return
    shape = tuple(x.padded_shape)
    rows, width = int(np.prod(shape[:-1])), shape[-1]
    if not x.spec.memory_config.is_sharded() or x.layout is not Layout.TILE:
        raise MeshnnValueError(f"ttnn.{op}: a SoftmaxShardedMultiCoreProgramConfig needs a sharded TILE input_tensor")
    if config.block_w % config.subblock_w or config.block_w * TILE != width:
        raise MeshnnValueError(
            f"ttnn.{op}: block_w ({config.block_w} tiles) must be divisible by subblock_w ({config.subblock_w}) and "
            f"span the input's width ({width})"
        )
    grid = config.compute_with_storage_grid_size
    if not hw_dims and rows * width // (config.block_w * config.block_h * TILE * TILE) != grid.x * grid.y:
        raise MeshnnValueError(
            f"ttnn.{op}: number of shards must equal to number of cores: {rows} x {width} in blocks of "
            f"{config.block_h} x {config.block_w} tiles on a {grid.x} x {grid.y} grid"
        )
    if hw_dims:
        spec = x.spec.memory_config.shard_spec
        if mask is None or mask.layout is not Layout.TILE or mask.spec.memory_config.is_sharded() or scale is None:
            raise MeshnnValueError(f"ttnn.{op}: needs a scale and an interleaved TILE causal mask")
        if spec is not None and spec.orientation is not ShardOrientation.ROW_MAJOR:
            raise MeshnnValueError(f"ttnn.{op}: Input must have ROW_MAJOR shard orientation")


@register(kind=OpKind.NORMALIZATION, family=OpFamily.SOFTMAX, device_operation="SoftmaxDeviceOperation",
          golden=torch_golden(_golden_scaled))  # fmt: skip
@ttnn_keywords(records=("compute_kernel_config",))
def scale_mask_softmax(
    input_tensor: Tensor,
    scale: float | None = None,
    mask: Tensor | None = None,
    *,
    memory_config: MemoryConfig | None = None,
    is_causal_mask: bool = False,
    compute_kernel_config: object = None,
    numeric_stable: bool = True,
) -> Tensor:
    """softmax(input_tensor * scale + mask) over the last dim, into a new tensor."""
    return _scaled("scale_mask_softmax", input_tensor, scale, mask, is_causal_mask, None, compute_kernel_config,
                   numeric_stable, in_place=False, memory_config=memory_config)  # fmt: skip


@register(kind=OpKind.NORMALIZATION, family=OpFamily.SOFTMAX, device_operation="SoftmaxDeviceOperation",
          golden=torch_golden(_golden_softmax))  # fmt: skip
@ttnn_keywords(records=("compute_kernel_config", "program_config"))
def softmax_in_place(
    input_tensor: Tensor,
    dim: int = -1,
    *,
    program_config: object = SoftmaxDefaultProgramConfig(),
    compute_kernel_config: object = None,
    numeric_stable: bool = True,
) -> Tensor:
    """Softmax over the last dim of a rank-4 tensor, written into its own buffer."""
    op = "softmax_in_place"
    x = _input(op, input_tensor)
    rank = len(x.shape)
    if int_arg(op, "dim", dim) not in (-1, rank - 1) or rank != 4:
        raise MeshnnValueError(
            f"ttnn.{op}: softmax in place supports dim -1 of a 4D tensor (dim {dim}, input_tensor {list(x.shape)})"
        )
    return _scaled(op, x, None, None, False, program_config, compute_kernel_config, numeric_stable, in_place=True)


@register(kind=OpKind.NORMALIZATION, family=OpFamily.SOFTMAX, device_operation="SoftmaxDeviceOperation",
          golden=torch_golden(_golden_scaled))  # fmt: skip
@ttnn_keywords(records=("compute_kernel_config", "program_config"))
def scale_mask_softmax_in_place(
    input_tensor: Tensor,
    scale: float | None = None,
    mask: Tensor | None = None,
    *,
    program_config: object = SoftmaxDefaultProgramConfig(),
    is_causal_mask: bool = False,
    compute_kernel_config: object = None,
    numeric_stable: bool = False,
) -> Tensor:
    """softmax(input_tensor * scale + mask) over the last dim, written into input_tensor's buffer."""
    return _scaled("scale_mask_softmax_in_place", input_tensor, scale, mask, is_causal_mask, program_config,
                   compute_kernel_config, numeric_stable, in_place=True)  # fmt: skip


@register(kind=OpKind.NORMALIZATION, family=OpFamily.SOFTMAX, device_operation="SoftmaxDeviceOperation",
          golden=torch_golden(_golden_scaled))  # fmt: skip
@ttnn_keywords(records=("compute_kernel_config", "program_config"))
def scale_causal_mask_hw_dims_softmax_in_place(
    input_tensor: Tensor,
    scale: float | None = None,
    mask: Tensor | None = None,
    *,
    program_config: object = SoftmaxDefaultProgramConfig(),
    compute_kernel_config: object = None,
    numeric_stable: bool = False,
) -> Tensor:
    """softmax(input_tensor * scale + mask) with a ``[1, 1, H, W]`` causal mask on every head, in place
    (a sharded input and a SoftmaxShardedMultiCoreProgramConfig)."""
    return _scaled("scale_causal_mask_hw_dims_softmax_in_place", input_tensor, scale, mask, True, program_config,
                   compute_kernel_config, numeric_stable, in_place=True, hw_dims=True)  # fmt: skip
