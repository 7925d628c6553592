"""``ttnn.experimental.dit_layernorm_pre_allgather`` / ``dit_layernorm_post_allgather``: the
diffusion transformers' layer norm over a hidden dimension split across devices (Welford's form).

The pre half gives each row's mean and (population) variance over this device's part of the
width: ``[..., rows, 64]``, the mean in column 0 and the variance in column 32 (the first column of
each of two tiles; every other column 0).  After an all-gather of those stats along the split
(``[..., rows, 64 * D]``, device ``i``'s pair at columns ``64 i`` and ``64 i + 32``), the post half
combines the ``D`` pairs of equal-width parts, ``mean = avg(mean_i)`` and
``var = avg(var_i) + avg((mean_i - mean) ** 2)``, and gives
``(x - mean) / sqrt(var + epsilon) * weight + bias``, all in float32, rounded once into ``dtype``
(the input's by default).

The weight and the bias (both or neither): TILE ``[..., 32, W]`` (row 0 used; a leading dim -3
either 1 or the input's, one affine per slice of the input's dim -3), or ROW_MAJOR ``[W / 32,
32]`` (the width in row-major order).

ttnn's checks, kept: inputs TILE, interleaved, on the device; bfloat16, bfloat8_b or float32 (the
weight and bias bfloat16 or float32); the stats a whole number of 64-wide pairs with the input's
leading padded dims (meshnn also asks the logical width to be whole pairs: its stats are read by
value); the weight's and bias's shapes as above.  The pre half's ``recip_tensor``
(``ttnn.create_layer_norm_reciprocals``: the ``1 / n`` table of Welford's update) is checked to be
a device tensor of the mesh and recorded; the float32 update needs no table.

May import: :mod:`meshnn.errors`, :mod:`meshnn.formats`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor`,
the ops' checks, config, launch, outputs, registry and values modules and
:mod:`meshnn.ops.transformer.checks`.
"""

from __future__ import annotations

import numpy as np

from meshnn.device.buffer import TensorMemoryLayout
from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.mesh.coord import MeshCoordinate
from meshnn.ops.checks import device_input, same_mesh
from meshnn.ops.config import check_compute_kernel_config
from meshnn.ops.launch import launch
from meshnn.ops.outputs import Output, out_spec_like
from meshnn.ops.registry import OpKind, register
from meshnn.ops.transformer.checks import tile_input
from meshnn.ops.values import logical_values, write_values
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig, TensorSpec
from meshnn.tensor.tensor import Tensor

TILE = 32
PAIR = 2 * TILE
"""Columns of one device's stats: the mean's tile and the variance's."""
IN_DTYPES = (DataType.BFLOAT16, DataType.BFLOAT8_B, DataType.FLOAT32)
AFFINE_DTYPES = (DataType.BFLOAT16, DataType.FLOAT32)
PRE = "experimental.dit_layernorm_pre_allgather"
POST = "experimental.dit_layernorm_post_allgather"


def _interleaved_tile(op: str, name: str, tensor: object) -> Tensor:
    t = tile_input(op, name, tensor, IN_DTYPES)
    if t.spec.memory_config.memory_layout is not TensorMemoryLayout.INTERLEAVED:
        raise MeshnnValueError(
            f"ttnn.{op}: {name} must be INTERLEAVED (sharded inputs are not supported), it is "
            f"{t.spec.memory_config.memory_layout.name}"
        )
    return t


@register(PRE, kind=OpKind.NORMALIZATION, family=OpFamily.NORM, device_operation="PreAllGatherDeviceOperation")
def dit_layernorm_pre_allgather(
    input_tensor: Tensor,
    recip_tensor: Tensor,
    *,
    dtype: DataType = DataType.BFLOAT16,
    compute_kernel_config: object = None,
    memory_config: MemoryConfig | None = None,
) -> Tensor:
    """Each row's mean (column 0) and population variance (column 32) over the last dimension:
    ``[..., rows, 64]`` of ``dtype``, in the input's memory config unless one is given."""
    x = _interleaved_tile(PRE, "input_tensor", input_tensor)
    recip = device_input(PRE, "recip_tensor", recip_tensor)
    if not isinstance(dtype, DataType):
        raise MeshnnTypeError(f"ttnn.{PRE}: dtype must be a ttnn DataType, got {dtype!r}")
    kernel_config = check_compute_kernel_config(PRE, compute_kernel_config)
    mesh = same_mesh(PRE, {"input_tensor": x, "recip_tensor": recip})
    shape = (*x.shape[:-1], PAIR)
    spec = out_spec_like(x, shape=shape, dtype=dtype, layout=Layout.TILE, memory_config=memory_config, op=PRE)
    attrs = {"memory_config": spec.memory_config, "dtype": spec.dtype, "compute_kernel_config": kernel_config}
    in_spec = x.spec

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]) -> None:
        values = logical_values(in_rows[0], in_spec).astype(np.float64)
        stats = np.zeros((*values.shape[:-1], PAIR), np.float32)
        stats[..., 0] = values.mean(axis=-1)
        stats[..., TILE] = values.var(axis=-1)
        write_values(out_rows[0], stats, spec, owned=True)

    return launch(PRE, mesh, [x], [Output(spec)], kernel, rowwise=True, reads_memos=True, attrs=attrs)[0]


def _check_stats(x: Tensor, stats: Tensor) -> None:
    """Stats: a whole number of 64-wide pairs, the input's leading padded dims."""
    padded, mine = tuple(stats.spec.padded_shape), tuple(x.spec.padded_shape)
    if padded[-1] % PAIR or stats.shape[-1] % PAIR:
        raise MeshnnValueError(
            f"ttnn.{POST}: stats' inner dimension must be a multiple of {PAIR} (two tiles a device), got {padded[-1]}"
        )
    if len(padded) != len(mine) or padded[:-1] != mine[:-1]:
        raise MeshnnValueError(
            f"ttnn.{POST}: stats {list(stats.shape)} must have input_tensor's leading padded dims {list(mine[:-1])}"
        )


def _check_affine(name: str, t: Tensor, x: Tensor) -> None:
    """A weight or bias: TILE ``[..., 32, W]`` or ROW_MAJOR ``[W / 32, 32]``; dim -3 1 or the input's."""
    shape, width = tuple(t.spec.padded_shape), x.spec.padded_shape[-1]
    rank = len(tuple(x.spec.padded_shape))
    if not 1 <= len(shape) <= rank:
        raise MeshnnValueError(f"ttnn.{POST}: {name} must have 1 to {rank} dimensions, got {list(t.shape)}")
    if t.layout is Layout.TILE:
        if shape[-1] != width or shape[-2] != TILE:
            raise MeshnnValueError(
                f"ttnn.{POST}: a TILE {name} must be [..., {TILE}, {width}] (padded), got {list(shape)}"
            )
    elif shape[-1] != TILE or int(np.prod(shape)) // TILE != width // TILE:
        raise MeshnnValueError(
            f"ttnn.{POST}: a ROW_MAJOR {name} must be [{width // TILE}, {TILE}] (the width in rows of 32), "
            f"got {list(t.shape)}"
        )
    if len(shape) >= 3 and shape[-3] not in (1, x.spec.padded_shape[-3]):
        raise MeshnnValueError(
            f"ttnn.{POST}: {name}'s dim -3 must be 1 or input_tensor's {x.spec.padded_shape[-3]}, got {shape[-3]}"
        )
    if len(shape) >= 3 and shape[-3] > 1 and t.layout is not Layout.TILE:
        raise MeshnnValueError(f"ttnn.{POST}: a {name} with a batch dimension > 1 must be TILE")


def _affine(weight: object, bias: object) -> dict[str, Tensor]:
    if (weight is None) != (bias is None):
        raise MeshnnValueError(f"ttnn.{POST}: weight and bias must be given together (or neither)")
    named = {}
    for name, value in (("weight", weight), ("bias", bias)):
        if value is None:
            continue
        t = device_input(POST, name, value)
        if t.dtype not in AFFINE_DTYPES:
            raise MeshnnTypeError(f"ttnn.{POST}: {name} must be BFLOAT16 or FLOAT32, got {t.dtype}")
        if t.layout not in (Layout.TILE, Layout.ROW_MAJOR):
            raise MeshnnValueError(f"ttnn.{POST}: {name} must be TILE or ROW_MAJOR, got {t.layout}")
        named[name] = t
    return named


@register(POST, kind=OpKind.NORMALIZATION, family=OpFamily.NORM, device_operation="PostAllGatherDeviceOperation")
def dit_layernorm_post_allgather(
    input_tensor: Tensor,
    stats: Tensor,
    *,
    epsilon: float = 1e-5,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    memory_config: MemoryConfig | None = None,
    compute_kernel_config: object = None,
    dtype: DataType | None = None,
) -> Tensor:
    """``(x - mean) / sqrt(var + epsilon) * weight + bias`` with the mean and variance of the whole
    (split) width from the gathered stats; the input's shape, ``dtype`` or the input's."""
    x = _interleaved_tile(POST, "input_tensor", input_tensor)
    named = {"input_tensor": x, "stats": tile_input(POST, "stats", stats, IN_DTYPES)}
    named.update(_affine(weight, bias))
    mesh = same_mesh(POST, named)
    _check_stats(x, named["stats"])
    for name in ("weight", "bias"):
        if name in named:
            _check_affine(name, named[name], x)
    if isinstance(epsilon, bool) or not isinstance(epsilon, int | float | np.floating) or not epsilon >= 0:
        raise MeshnnValueError(f"ttnn.{POST}: epsilon must be a number >= 0, got {epsilon!r}")
    kernel_config = check_compute_kernel_config(POST, compute_kernel_config)
    spec = out_spec_like(x, dtype=dtype, memory_config=memory_config, op=POST)
    attrs = {"epsilon": float(epsilon), "memory_config": spec.memory_config, "dtype": spec.dtype}
    attrs["compute_kernel_config"] = kernel_config
    specs = {n: t.spec for n, t in named.items()}
    kernel = _post_kernel(specs, spec, np.float32(epsilon))
    inputs = list(named.values())
    return launch(POST, mesh, inputs, [Output(spec)], kernel, rowwise=True, reads_memos=True, attrs=attrs)[0]


def _affine_rows(values: np.ndarray, spec: TensorSpec, x_rank: int, width: int) -> np.ndarray:
    """A weight's or bias's values ``(n, ...)`` as ``(n, [slices of dim -3,] 1, W)`` against the input."""
    n = values.shape[0]
    if spec.layout is not Layout.TILE:
        return values.reshape(n, *([1] * (x_rank - 1)), -1)[..., :width]
    row = values[..., :1, :]  # row 0 of the tile rows
    slices = row.shape[-3] if row.ndim >= 4 else 1
    lead = [1] * (x_rank - 3)
    return row.reshape(n, *lead, slices, 1, row.shape[-1])


def _post_kernel(specs: dict[str, TensorSpec], spec: TensorSpec, epsilon: np.float32):
    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]) -> None:
        values = {n: logical_values(r, s) for (n, s), r in zip(specs.items(), in_rows, strict=True)}
        x, stats = values["input_tensor"], values["stats"]
        pairs = stats.shape[-1] // PAIR
        per = stats.reshape(*stats.shape[:-1], pairs, PAIR)
        means, variances = per[..., 0], per[..., TILE]
        mean = means.mean(axis=-1, keepdims=True)
        var = variances.mean(axis=-1, keepdims=True) + np.square(means - mean).mean(axis=-1, keepdims=True)
        y = (x - mean) / np.sqrt(var + epsilon)
        if "weight" in values:
            rank, width = x.ndim - 1, x.shape[-1]
            y = y * _affine_rows(values["weight"], specs["weight"], rank, width)
            y = y + _affine_rows(values["bias"], specs["bias"], rank, width)
        write_values(out_rows[0], y.astype(np.float32, copy=False), spec, owned=True)

    return kernel
