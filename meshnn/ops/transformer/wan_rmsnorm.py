"""``ttnn.experimental.wan_fused_rmsnorm_pre_allgather`` / ``wan_fused_rmsnorm_post_allgather``:
the Wan 2.2 video model's RMS norm over a hidden dimension split across devices, with the split
into heads, the weight and the rotary embedding fused into the second half.

The pre half makes each row's sum(x**2) over this device's part, in column 0 of one 32-wide tile
(every other column 0).  After an all-gather of those tiles along the split (``D`` tiles, one per
device), the post half sums every column of the gathered tiles, scales by ``1 / (W * D)`` (``W``:
the input's width; ttnn's kernel rounds that scalar to bfloat16), and computes
``y = x / sqrt(mean + epsilon) * weight``; with ``transformation_mat``, ``rope_cos`` and
``rope_sin`` it then applies the rotary embedding tile by tile, ``y * cos + (y @ T) * sin``, where
``T`` is the 32x32 transformation matrix applied to every 32-wide tile and the caches' columns
are those of the head (``[1, 1, S, head_dim]``).  The output is split into heads:
``[1, 1, S, W]`` becomes ``[1, heads, S, W / heads]``.

ttnn's checks, kept: bfloat16 TILE inputs on the device; the pre half's input interleaved; the
post half's input ``[1, 1, S, W]`` with ``W`` its padded width and a multiple of the heads; stats
with the input's leading padded dims and a whole number of tiles; weight ``[1, W]``; the three
rope tensors together, ``T`` ``[1, 1, 32, 32]`` and the caches ``[1, 1, S_padded, head_dim]``.
meshnn also refuses a head width that is not a whole number of tiles, which ttnn's kernel (it
walks the caches a tile at a time) does not check and would compute wrongly.

May import: :mod:`meshnn.errors`, :mod:`meshnn.formats`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor`,
the ops' checks, config, launch, outputs, registry and values modules and
:mod:`meshnn.ops.transformer.checks`.
"""

from __future__ import annotations

import numpy as np

from meshnn.device.buffer import TensorMemoryLayout
from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.bfloat16 import round_to_bfloat16
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.mesh.coord import MeshCoordinate
from meshnn.ops.checks import same_mesh
from meshnn.ops.config import check_compute_kernel_config
from meshnn.ops.launch import Kernel, launch
from meshnn.ops.outputs import Output, out_spec_like
from meshnn.ops.registry import OpKind, register
from meshnn.ops.transformer.checks import tile_input
from meshnn.ops.values import logical_values, write_values
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig, TensorSpec
from meshnn.tensor.tensor import Tensor

TILE = 32
BF16 = (DataType.BFLOAT16,)
STATS_DTYPES = (DataType.BFLOAT16, DataType.FLOAT32)  # the post op takes either (tt-metal 2026-02)
PRE = "experimental.wan_fused_rmsnorm_pre_allgather"
POST = "experimental.wan_fused_rmsnorm_post_allgather"


@register(PRE, kind=OpKind.NORMALIZATION, family=OpFamily.NORM, device_operation="FusedRMSNormPreAllGather")
def wan_fused_rmsnorm_pre_allgather(
    input_tensor: Tensor,
    *,
    dtype: DataType = DataType.BFLOAT16,
    compute_kernel_config: object = None,
    memory_config: MemoryConfig | None = None,
) -> Tensor:
    """Each row's sum(x**2) over the last dimension, in column 0 of one tile: ``[..., rows, 32]``
    (the other columns 0), of ``dtype`` in the input's memory config unless one is given."""
    x = tile_input(PRE, "input_tensor", input_tensor, BF16)
    if x.spec.memory_config.memory_layout is not TensorMemoryLayout.INTERLEAVED:
        raise MeshnnValueError(
            f"ttnn.{PRE}: input_tensor must be INTERLEAVED, it is {x.spec.memory_config.memory_layout.name}"
        )
    if not isinstance(dtype, DataType):
        raise MeshnnTypeError(f"ttnn.{PRE}: dtype must be a ttnn DataType, got {dtype!r}")
    kernel_config = check_compute_kernel_config(PRE, compute_kernel_config)
    mesh = same_mesh(PRE, {"input_tensor": x})
    shape = (*x.shape[:-1], TILE)
    spec = out_spec_like(x, shape=shape, dtype=dtype, layout=Layout.TILE, memory_config=memory_config, op=PRE)
    attrs = {"memory_config": spec.memory_config, "dtype": spec.dtype, "compute_kernel_config": kernel_config}
    in_spec = x.spec

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]) -> None:
        values = logical_values(in_rows[0], in_spec)
        stats = np.zeros((*values.shape[:-1], TILE), np.float32)
        stats[..., 0] = np.square(values, dtype=np.float32).sum(axis=-1, dtype=np.float32)
        write_values(out_rows[0], stats, spec)

    return launch(PRE, mesh, [x], [Output(spec)], kernel, rowwise=True, reads_memos=True, attrs=attrs)[0]


def _check_post(x: Tensor, stats: Tensor, heads: object) -> int:
    """The input ``[1, 1, S, W]`` and the gathered stats checked as ttnn checks them; the head width."""
    if isinstance(heads, bool) or not isinstance(heads, int | np.integer) or heads <= 0:
        raise MeshnnValueError(f"ttnn.{POST}: num_heads_per_device must be an int > 0, got {heads!r}")
    shape, padded = tuple(x.shape), tuple(x.spec.padded_shape)
    if len(shape) != 4 or shape[:2] != (1, 1):
        raise MeshnnValueError(f"ttnn.{POST}: input_tensor must be [1, 1, S, W], got {list(shape)}")
    if shape[-1] != padded[-1]:
        raise MeshnnValueError(
            f"ttnn.{POST}: input_tensor's last dim {shape[-1]} must equal its padded last dim {padded[-1]}"
        )
    if shape[-1] % heads or (shape[-1] // heads) % TILE:
        raise MeshnnValueError(
            f"ttnn.{POST}: input_tensor's width {shape[-1]} must split into num_heads_per_device={heads} heads "
            f"of whole {TILE}-wide tiles"
        )
    stats_padded = tuple(stats.spec.padded_shape)
    if len(stats_padded) != 4 or stats_padded[:-1] != padded[:-1] or stats_padded[-1] % TILE:
        raise MeshnnValueError(
            f"ttnn.{POST}: stats {list(stats.shape)} must have input_tensor's padded dims {list(padded[:-1])} "
            f"and a whole number of {TILE}-wide tiles (one per device)"
        )
    return shape[-1] // int(heads)


def _check_weight(weight: Tensor, width: int) -> None:
    """Weight ``[1, W]``: rank 2, one row, the input's padded width."""
    shape, padded = tuple(weight.shape), tuple(weight.spec.padded_shape)
    if len(shape) != 2 or shape[0] != 1 or padded[-1] != width:
        raise MeshnnValueError(f"ttnn.{POST}: weight must be [1, {width}], got {list(shape)}")


def _check_rope(named: dict[str, Tensor], rows: int, head_dim: int) -> None:
    """``transformation_mat`` ``[1, 1, 32, 32]``; the caches ``[1, 1, rows, head_dim]`` (padded)."""
    mat = tuple(named["transformation_mat"].spec.padded_shape)
    if mat != (1, 1, TILE, TILE):
        raise MeshnnValueError(
            f"ttnn.{POST}: transformation_mat must be [1, 1, 32, 32], got {list(named['transformation_mat'].shape)}"
        )
    for name in ("rope_cos", "rope_sin"):
        padded = tuple(named[name].spec.padded_shape)
        if padded != (1, 1, rows, head_dim):
            raise MeshnnValueError(
                f"ttnn.{POST}: {name} must be [1, 1, {rows}, {head_dim}] (padded), got {list(named[name].shape)}"
            )


def _post_inputs(x: Tensor, stats: object, weight: object, rope: dict[str, object], heads: object):
    """The post half's inputs by name, checked; the head width."""
    named = {"input_tensor": x, "stats": tile_input(POST, "stats", stats, STATS_DTYPES)}
    same_mesh(POST, named)  # a foreign tensor is refused by name before its shape is read
    head_dim = _check_post(x, named["stats"], heads)
    if weight is not None:
        named["weight"] = tile_input(POST, "weight", weight, BF16)
        _check_weight(named["weight"], x.shape[-1])
    given = [name for name, value in rope.items() if value is not None]
    if given and len(given) != len(rope):
        missing = ", ".join(name for name in rope if name not in given)
        raise MeshnnValueError(f"ttnn.{POST}: the rotary embedding needs {missing} as well as {', '.join(given)}")
    if given:
        named.update({name: tile_input(POST, name, value, BF16) for name, value in rope.items()})
        _check_rope(named, tuple(x.spec.padded_shape)[2], head_dim)
    return named, head_dim


@register(POST, kind=OpKind.NORMALIZATION, family=OpFamily.NORM, device_operation="FusedRMSNormPostAllGather")
def wan_fused_rmsnorm_post_allgather(
    input_tensor: Tensor,
    stats: Tensor,
    *,
    epsilon: float = 1e-5,
    num_heads_per_device: int = 1,
    weight: Tensor | None = None,
    transformation_mat: Tensor | None = None,
    rope_cos: Tensor | None = None,
    rope_sin: Tensor | None = None,
    memory_config: MemoryConfig | None = None,
    compute_kernel_config: object = None,
    dtype: DataType | None = None,
) -> Tensor:
    """``x / sqrt(sum(stats) / (W * D) + epsilon) * weight``, rotated by the rope caches when given,
    split into heads: ``[1, 1, S, W]`` -> ``[1, num_heads_per_device, S, W / num_heads_per_device]``."""
    x = tile_input(POST, "input_tensor", input_tensor, BF16)
    rope = {"transformation_mat": transformation_mat, "rope_cos": rope_cos, "rope_sin": rope_sin}
    named, head_dim = _post_inputs(x, stats, weight, rope, num_heads_per_device)
    if isinstance(epsilon, bool) or not isinstance(epsilon, int | float | np.floating) or not epsilon >= 0:
        raise MeshnnValueError(f"ttnn.{POST}: epsilon must be a number >= 0, got {epsilon!r}")
    kernel_config = check_compute_kernel_config(POST, compute_kernel_config)
    mesh = same_mesh(POST, named)
    heads = int(num_heads_per_device)
    shape = (1, heads, x.shape[2], head_dim)
    spec = out_spec_like(x, shape=shape, dtype=dtype, memory_config=memory_config, op=POST)
    attrs = {
        "memory_config": spec.memory_config,
        "dtype": spec.dtype,
        "epsilon": float(epsilon),
        "num_heads_per_device": heads,
        "compute_kernel_config": kernel_config,
    }
    kernel = _post_kernel({n: t.spec for n, t in named.items()}, spec, float(epsilon), heads)
    inputs = list(named.values())
    return launch(POST, mesh, inputs, [Output(spec)], kernel, rowwise=True, reads_memos=True, attrs=attrs)[0]


def _rotate(y: np.ndarray, values: dict[str, np.ndarray], heads: int) -> np.ndarray:
    """``y * cos + (y @ T) * sin`` tile by tile (``y``: ``[n, 1, 1, S, W]``; the caches per head)."""
    mat = values["transformation_mat"].reshape(-1, TILE, TILE)[0]
    rotated = (y.reshape(*y.shape[:-1], -1, TILE) @ mat).reshape(y.shape)
    n, rows = y.shape[0], y.shape[-2]
    cos = values["rope_cos"].reshape(n, 1, 1, -1, y.shape[-1] // heads)[..., :rows, :]
    sin = values["rope_sin"].reshape(n, 1, 1, -1, y.shape[-1] // heads)[..., :rows, :]
    cos, sin = np.tile(cos, (1, 1, 1, 1, heads)), np.tile(sin, (1, 1, 1, 1, heads))
    return y * cos + rotated * sin


def _post_kernel(specs: dict[str, TensorSpec], spec: TensorSpec, epsilon: float, heads: int) -> Kernel:
    """The kernel: every device's rows normalised in float32, weighted, rotated, split into heads."""

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]) -> None:
        values = {n: logical_values(r, s) for (n, s), r in zip(specs.items(), in_rows, strict=True)}
        x, stats = values["input_tensor"], values["stats"]
        parts = stats.shape[-1] // TILE
        scale = round_to_bfloat16(np.array([1.0 / (x.shape[-1] * parts)], np.float32))[0]
        mean = stats.sum(axis=-1, keepdims=True, dtype=np.float32) * scale
        y = x * (np.float32(1) / np.sqrt(mean + np.float32(epsilon)))
        if "weight" in values:
            y = y * values["weight"].reshape(x.shape[0], 1, 1, 1, -1)
        if "rope_cos" in values:
            y = _rotate(y, values, heads)
        n, rows, width = y.shape[0], y.shape[-2], y.shape[-1]
        split = y.reshape(n, 1, rows, heads, width // heads).transpose(0, 1, 3, 2, 4)
        write_values(out_rows[0], np.ascontiguousarray(split), spec)

    return kernel
