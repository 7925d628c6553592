"""``ttnn.group_norm``: group normalisation of a ``[N, 1, H * W, C]`` BFLOAT16 tensor (channels
last), the channels split into ``num_groups`` groups, each normalised over its H * W rows and its
channels per batch: ``(x - mean) / sqrt(var + epsilon) * weight + bias`` (biased variance).

ttnn's rules, followed here:

- no ``core_grid``: tt-metal 2026's pick (a sharded input's shard box, else the DRAM grid search of
  ``group_norm_grid``; ttnn 0.81.1 asked for one); an interleaved input's grid must fit its tile rows
  and ``num_out_blocks`` its blocks; the input is not width sharded; ``C`` divides by ``num_groups``;
  ``N * H * W`` (padded) is a multiple of 32;
- ``inplace`` (the default) needs a sharded ROW_MAJOR input whose layout the output keeps: the
  output is then the input tensor itself; otherwise the output is a new BFLOAT16 tensor of
  ``output_layout`` (default: the input's) in ``memory_config`` (default: DRAM interleaved);
- ``weight`` / ``bias`` are laid out as ttnn lays them out: ROW_MAJOR ``[1, 1, rows, 32]`` BFLOAT16
  of ``create_group_norm_weight_bias_rm`` (one chunk per core across the channels: a sharded
  input's channels per shard give the chunks; an interleaved input's, the DRAM virtual columns of
  ``core_grid``), or TILE with ``C`` values in their last dim;
- ``input_mask`` / ``negative_mask`` (TILE ``[1, G, 32, 32 * span]``) and ``reciprocals`` (FLOAT32,
  with ``use_welford``) are checked as ttnn checks them; the kernel here computes the groups from
  ``num_groups`` (the masks are the device's way of finding them) and the exact mean (the
  reciprocals are the Welford kernel's way of dividing).

Statistics are accumulated in float64; the output is rounded once into BFLOAT16.

May import: every layer below the ops and the ops' launch, checks, outputs, values, config and
norm.group_norm_params.
"""

from __future__ import annotations

import numpy as np

from meshnn.device.buffer import TensorMemoryLayout
from meshnn.device.core import CoreGrid
from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.mesh.coord import MeshCoordinate
from meshnn.mesh.op_keywords import ttnn_keywords
from meshnn.ops.checks import device_input, int_arg, same_mesh
from meshnn.ops.config import check_compute_kernel_config
from meshnn.ops.launch import launch
from meshnn.ops.norm.group_norm_grid import resolved_grid
from meshnn.ops.norm.group_norm_params import dram_group_norm_virtual_columns, get_group_norm_cores_across_channel
from meshnn.ops.outputs import Output, out_spec_like
from meshnn.ops.registry import OpKind, register
from meshnn.ops.values import logical_values, write_values
from meshnn.perf.desc import OpFamily
from meshnn.tensor.memory_config import DRAM_MEMORY_CONFIG
from meshnn.tensor.spec import MemoryConfig, TensorSpec
from meshnn.tensor.tensor import Tensor

TILE = 32


def _golden(input_tensor, *, num_groups, epsilon=1e-05, weight=None, bias=None, memory_config=None, core_grid=None,
            **_):  # fmt: skip
    """ttnn's golden function: the weight's chunks taken back out, then torch's group norm."""
    import torch

    channels = input_tensor.shape[-1]
    layout = getattr(memory_config, "memory_layout", TensorMemoryLayout.INTERLEAVED)
    cores = get_group_norm_cores_across_channel(layout, core_grid)

    def chunks(t):
        return t.reshape((cores, -1))[:, : channels // cores].flatten().float()

    x = input_tensor.permute(0, 3, 1, 2).float()
    out = torch.nn.functional.group_norm(
        x, num_groups, chunks(weight), None if bias is None else chunks(bias), eps=epsilon
    )
    return out.permute(0, 2, 3, 1)


def _check_affine(op: str, name: str, t: Tensor, channels: int) -> None:
    if t.layout is Layout.TILE:
        if t.padded_shape[-1] != channels or t.padded_shape[-2] != TILE:
            raise MeshnnValueError(
                f"ttnn.{op}: a TILE {name} must be [.., 32, {channels}] padded, got {list(t.padded_shape)}"
            )
        return
    if t.padded_shape[-1] != TILE or t.dtype is not DataType.BFLOAT16:
        raise MeshnnValueError(
            f"ttnn.{op}: a ROW_MAJOR {name} must be BFLOAT16 [1, 1, rows, 32] (create_group_norm_weight_bias_rm), "
            f"got {list(t.shape)} {t.dtype.name}"
        )


def _check_mask(op: str, name: str, t: Tensor, groups: int) -> None:
    shape = tuple(t.padded_shape)
    if t.layout is not Layout.TILE or len(shape) != 4 or shape[1] != groups or shape[2] != TILE or shape[3] % TILE:
        raise MeshnnValueError(
            f"ttnn.{op}: {name} must be a TILE [1, {groups}, 32, 32 * span] tensor (num_groups {groups}), got "
            f"{list(t.shape)} {t.layout}"
        )


def _chunks(x: Tensor, core_grid: CoreGrid, groups: int) -> int:
    """How many chunks the channels of a ROW_MAJOR weight are laid out in (see the docstring)."""
    channels = x.shape[-1]
    config = x.spec.memory_config
    if config.is_sharded() and config.shard_spec is not None:
        return max(channels // config.shard_spec.shape[1], 1)
    return dram_group_norm_virtual_columns(core_grid, channels, groups)


def _affine_values(values: np.ndarray, spec: TensorSpec, channels: int, chunks: int) -> np.ndarray:
    """``(k, C)`` weights from ``(k, *shape)`` values laid out in ``chunks`` padded chunks."""
    k = values.shape[0]
    flat = values.reshape(k, -1)
    if spec.layout is Layout.TILE:
        return flat[:, :channels]
    per = channels // chunks
    padded = -(-per // TILE) * TILE
    return flat[:, : chunks * padded].reshape(k, chunks, padded)[:, :, :per].reshape(k, channels)


def _normalised(x: np.ndarray, groups: int, epsilon: float) -> np.ndarray:
    """``(k, N, 1, HW, C)`` values group-normalised (float32).  The statistics are float64 sums of
    x and x**2 (x is bfloat16, so x**2 is exact in float32), taken down the rows in blocks (the
    channels stay the contiguous inner axis) and then over each group's channels; the variance is
    E(x**2) - E(x)**2 in float64 (clamped at 0)."""
    k, n, _, rows, channels = x.shape
    flat = x.reshape(k * n, rows, channels)
    sums = np.zeros((2, k * n, channels), np.float64)
    for start in range(0, rows, ROW_BLOCK):
        block = flat[:, start : start + ROW_BLOCK]
        sums[0] += block.sum(axis=1, dtype=np.float64)
        sums[1] += np.square(block).sum(axis=1, dtype=np.float64)
    count = rows * (channels // groups)
    moments = sums.reshape(2, k * n, groups, channels // groups).sum(axis=-1) / count
    mean, var = moments[0], np.maximum(moments[1] - moments[0] * moments[0], 0.0)
    scale = 1.0 / np.sqrt(var + epsilon)
    per_channel = channels // groups
    shift = np.repeat(mean, per_channel, axis=-1).astype(np.float32).reshape(k, n, 1, 1, channels)
    factor = np.repeat(scale, per_channel, axis=-1).astype(np.float32).reshape(k, n, 1, 1, channels)
    out = np.subtract(x, shift, dtype=np.float32)
    out *= factor
    return out


ROW_BLOCK = 8192
"""Rows summed at a time by :func:`_normalised` (keeps the squares' scratch small)."""


def _check_call(op, x, groups, core_grid, inplace, output_layout) -> None:
    """ttnn's checks of the call, in its order (before any device work)."""
    if not isinstance(inplace, bool):
        raise MeshnnTypeError(f"ttnn.{op}: inplace must be a bool, got {inplace!r}")
    if output_layout is not None and not isinstance(output_layout, Layout):
        raise MeshnnTypeError(f"ttnn.{op}: output_layout must be a ttnn Layout or None, got {output_layout!r}")
    if inplace and x.layout is Layout.TILE:
        raise MeshnnValueError(f"ttnn.{op}: In-place operation not supported: Tile layout requires inplace=False")
    if inplace and output_layout not in (None, x.layout):
        raise MeshnnValueError(
            f"ttnn.{op}: inplace needs output_layout ({output_layout}) to be the input layout ({x.layout})"
        )
    if core_grid is not None and not isinstance(core_grid, CoreGrid):
        raise MeshnnTypeError(f"ttnn.{op}: core_grid must be a ttnn.CoreGrid or None (picked), got {core_grid!r}")
    config = x.spec.memory_config
    if config.memory_layout is TensorMemoryLayout.WIDTH_SHARDED:
        raise MeshnnValueError(f"ttnn.{op}: input_tensor cannot be width-sharded")
    shape = tuple(x.shape)
    if len(shape) != 4 or shape[1] != 1:
        raise MeshnnValueError(f"ttnn.{op}: input_tensor must be [N, 1, H * W, C], got {list(shape)}")
    if shape[-1] % groups:
        raise MeshnnValueError(f"ttnn.{op}: channels ({shape[-1]}) must be divisible by num_groups ({groups})")
    padded = tuple(x.padded_shape)
    if (padded[0] * padded[1] * padded[2]) % TILE:
        raise MeshnnValueError(f"ttnn.{op}: N * H * W ({padded[0] * padded[2]}) must be a multiple of 32")
    if x.dtype is not DataType.BFLOAT16:
        raise MeshnnTypeError(f"ttnn.{op}: Input tensor must be BFLOAT16, got: {x.dtype.name}")
    if inplace and not config.is_sharded():
        raise MeshnnValueError(f"ttnn.{op}: inplace groupnorm not supported for unsharded tensors (give inplace=False)")


def _optional_inputs(op, x, groups, tensors, use_welford) -> dict[str, Tensor]:
    """The optional tensors given, checked."""
    named = {"input_tensor": x}
    for name, value in tensors.items():
        if value is not None:
            named[name] = device_input(op, name, value)
    for name in ("weight", "bias"):
        if name in named:
            _check_affine(op, name, named[name], x.shape[-1])
    if "weight" in named and "bias" in named and named["weight"].layout is not named["bias"].layout:
        raise MeshnnValueError(f"ttnn.{op}: Gamma and beta must have the same layout (weight, bias)")
    for name in ("input_mask", "negative_mask"):
        if name in named:
            _check_mask(op, name, named[name], groups)
    if "negative_mask" in named and (not x.spec.memory_config.is_sharded() or x.layout is not Layout.ROW_MAJOR):
        raise MeshnnValueError(f"ttnn.{op}: negative_mask needs a sharded ROW_MAJOR input_tensor")
    if "reciprocals" in named:
        if not use_welford:
            raise MeshnnValueError(f"ttnn.{op}: Reciprocals tensor can only be provided when use_welford is True")
        if named["reciprocals"].dtype is not DataType.FLOAT32:
            raise MeshnnTypeError(f"ttnn.{op}: Reciprocals tensor must be FLOAT32 (reciprocals)")
    return named


@register(kind=OpKind.NORMALIZATION, family=OpFamily.NORM, device_operation="GroupNorm", golden=_golden)
@ttnn_keywords(records=("num_out_blocks", "compute_kernel_config", "use_welford", "dtype"))
def group_norm(
    input_tensor: Tensor,
    *,
    num_groups: int,
    epsilon: float = 1e-12,
    input_mask: Tensor | None = None,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    reciprocals: Tensor | None = None,
    memory_config: MemoryConfig | None = None,
    dtype: DataType | None = None,
    core_grid: CoreGrid | None = None,
    inplace: bool = True,
    output_layout: Layout | None = None,
    num_out_blocks: int | None = None,
    compute_kernel_config: object = None,
    negative_mask: Tensor | None = None,
    use_welford: bool = False,
) -> Tensor:
    """Group normalisation of ``[N, 1, H * W, C]`` (see the module docstring)."""
    op = "group_norm"
    x = device_input(op, "input_tensor", input_tensor)
    groups = int_arg(op, "num_groups", num_groups)
    if groups < 1:
        raise MeshnnValueError(f"ttnn.{op}: num_groups must be positive, got {groups}")
    if isinstance(epsilon, bool) or not isinstance(epsilon, int | float | np.floating):
        raise MeshnnTypeError(f"ttnn.{op}: epsilon must be a number, got {epsilon!r}")
    if not isinstance(use_welford, bool):
        raise MeshnnTypeError(f"ttnn.{op}: use_welford must be a bool, got {use_welford!r}")
    check_compute_kernel_config(op, compute_kernel_config)
    _check_call(op, x, groups, core_grid, inplace, output_layout)
    tensors = {"weight": weight, "bias": bias, "input_mask": input_mask, "negative_mask": negative_mask,
               "reciprocals": reciprocals}  # fmt: skip
    named = _optional_inputs(op, x, groups, tensors, use_welford)
    core_grid = resolved_grid(op, x, core_grid, groups, num_out_blocks, tensors)
    mesh = same_mesh(op, named)
    if inplace:
        spec, into = x.spec, [x]
    else:
        config = memory_config if memory_config is not None else DRAM_MEMORY_CONFIG
        spec = out_spec_like(x, dtype=DataType.BFLOAT16, layout=output_layout or x.layout, memory_config=config, op=op)
        into = None
    chunks = _chunks(x, core_grid, groups)
    names, specs = list(named), [t.spec for t in named.values()]
    eps = float(epsilon)

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]) -> None:
        values = dict(zip(names, in_rows, strict=True))
        y = _normalised(logical_values(values["input_tensor"], specs[0])[:, :, :, :, :], groups, eps)
        k, channels = y.shape[0], y.shape[-1]
        for name, combine in (("weight", np.multiply), ("bias", np.add)):
            if name in values:
                spec_i = specs[names.index(name)]
                affine = _affine_values(logical_values(values[name], spec_i), spec_i, channels, chunks)
                combine(y, affine.reshape(k, 1, 1, 1, channels), out=y)
        write_values(out_rows[0], y, spec)

    attrs = {"num_groups": groups, "epsilon": eps, "inplace": inplace, "memory_config": spec.memory_config,
             "core_grid": core_grid}  # fmt: skip
    return launch(op, mesh, list(named.values()), [Output(spec)], kernel, into=into, rowwise=True, attrs=attrs)[0]
