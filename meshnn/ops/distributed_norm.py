"""The two halves of a norm over a dimension split across devices (the 2-D meshes' distributed
RMS norm and layer norm): ``ttnn.rms_norm_pre_all_gather`` / ``layer_norm_pre_all_gather`` make
each device's partial statistics, an all-gather of them along the split axis follows, and
``rms_norm_post_all_gather`` / ``layer_norm_post_all_gather`` normalise each device's part with
the gathered statistics.

The statistics layout is ttnn's: one 32-wide tile per part for RMS norm, holding the row's
sum(x**2) in column 0; two for layer norm, sum(x**2) in column 0 of the first and sum(x) in
column 0 of the second; every other column 0 (sums in float32, rounded into ``dtype``, bfloat16 by
default).  The post half reads column 0 of every tile of the gathered stats and divides by the
full width (the input's width times the parts).  A sharded input runs ttnn's sharded kernels
instead: the stats are the part's means, E(x) first for layer norm (E(x), E(x**2)); the post half
averages the parts' means; and a residual is added into the input's own shard (the input holds
x + residual afterwards, as on the device).

May import: :mod:`meshnn.errors`, :mod:`meshnn.device`, :mod:`meshnn.formats`, :mod:`meshnn.tensor`
and the ops' checks, config, launch, outputs, values and normalization modules.
"""

from __future__ import annotations

import numpy as np

from meshnn.device.buffer import BufferType, ShardSpec, TensorMemoryLayout
from meshnn.device.core import CoreCoord, CoreRange, CoreRangeSet
from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.mesh.coord import MeshCoordinate
from meshnn.mesh.op_keywords import Keyword, ttnn_keywords
from meshnn.ops.checks import device_input, same_mesh
from meshnn.ops.config import check_distributed_norm_config
from meshnn.ops.launch import launch
from meshnn.ops.normalization import RECIP_TENSOR, norm_attrs
from meshnn.ops.outputs import Output, allocate_outputs, out_spec_like, output_tensors
from meshnn.ops.registry import OpKind, register
from meshnn.ops.values import logical_values, write_values
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig, TensorSpec
from meshnn.tensor.tensor import Tensor

TILE_W = 32
DISTRIBUTED = Keyword(None, lambda op, _keyword, value: check_distributed_norm_config(op, value))
"""``distributed_program_config=``: a LayerNormDistributedDefaultProgramConfig, checked and recorded."""
NORM_DTYPES = (DataType.BFLOAT16, DataType.BFLOAT8_B, DataType.FLOAT32)


def _tile_input(op: str, name: str, value: object) -> Tensor:
    tensor = device_input(op, name, value)
    if tensor.layout is not Layout.TILE:
        raise MeshnnValueError(f"ttnn.{op}: {name} must be TILE (only tilized inputs are supported)")
    if tensor.dtype not in NORM_DTYPES:
        raise MeshnnTypeError(f"ttnn.{op}: {name} must be bfloat16, bfloat8_b or float32, got {tensor.dtype}")
    if len(tensor.shape) < 2:
        raise MeshnnValueError(f"ttnn.{op}: {name} needs rank >= 2, got {list(tensor.shape)}")
    return tensor


def _stats_memory(tensor: Tensor, rows: int, tiles: int, memory_config: object) -> object:
    """The stats' memory config: the one given, the input's when interleaved, else one L1 core's shard."""
    if memory_config is not None or not tensor.spec.memory_config.is_sharded():
        return memory_config
    spec = ShardSpec(CoreRangeSet([CoreRange(CoreCoord(0, 0), CoreCoord(0, 0))]), (rows, tiles * TILE_W))
    return MemoryConfig(TensorMemoryLayout.WIDTH_SHARDED, BufferType.L1, spec)


def _pre(op: str, input_tensor, dtype, residual_input_tensor, configs, memory_config, *, tiles: int) -> Tensor:
    tensor = _tile_input(op, "input_tensor", input_tensor)
    named = {"input_tensor": tensor}
    if residual_input_tensor is not None:
        residual = _tile_input(op, "residual_input_tensor", residual_input_tensor)
        if residual.spec.padded_shape != tensor.spec.padded_shape or residual.shape != tensor.shape:
            raise MeshnnValueError(
                f"ttnn.{op}: residual_input_tensor {list(residual.shape)} must match input_tensor {list(tensor.shape)}"
            )
        named["residual_input_tensor"] = residual
    if not isinstance(dtype, DataType):
        raise MeshnnTypeError(f"ttnn.{op}: dtype must be a ttnn DataType, got {dtype!r}")
    mesh = same_mesh(op, named)
    attrs = norm_attrs(op, tensor, mesh, *configs)
    shape = (*tensor.shape[:-1], tiles * TILE_W)
    rows = int(tensor.spec.physical_shape[0])
    memory = _stats_memory(tensor, rows, tiles, memory_config)
    spec = out_spec_like(tensor, shape=shape, dtype=dtype, layout=Layout.TILE, memory_config=memory, op=op)
    specs = [t.spec for t in named.values()]
    attrs.update(memory_config=spec.memory_config, dtype=spec.dtype)
    sharded = tensor.spec.memory_config.is_sharded()
    fused = sharded and len(specs) > 1  # the sharded kernel adds the residual into the input's own shard

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]) -> None:
        x = logical_values(in_rows[0], specs[0])
        if len(specs) > 1:
            x = x + logical_values(in_rows[1], specs[1])
        stats = np.zeros((*x.shape[:-1], tiles * TILE_W), np.float32)
        squares = np.square(x, dtype=np.float32).sum(axis=-1, dtype=np.float32)
        if sharded:  # means over this part, E(x) first (ttnn's sharded kernel)
            stats[..., 0] = x.mean(axis=-1, dtype=np.float32) if tiles == 2 else squares / x.shape[-1]
            if tiles == 2:
                stats[..., TILE_W] = squares / x.shape[-1]
        else:  # sums over this part, sum(x**2) first (ttnn's interleaved kernel)
            stats[..., 0] = squares
            if tiles == 2:
                stats[..., TILE_W] = x.sum(axis=-1, dtype=np.float32)
        write_values(out_rows[0], stats, spec)
        if fused:
            write_values(out_rows[1], x, specs[0])

    inputs = list(named.values())
    outputs = [Output(spec), Output(tensor.spec)] if fused else [Output(spec)]
    into = [_new_stats(mesh, spec, tensor), tensor] if fused else None
    return launch(op, mesh, inputs, outputs, kernel, into=into, rowwise=True, reads_memos=True, attrs=attrs)[0]


def _new_stats(mesh, spec: TensorSpec, like: Tensor) -> Tensor:
    """A new device tensor for the stats, over ``like``'s devices (written with ``into=``)."""
    return output_tensors(mesh, [Output(spec)], allocate_outputs(mesh, [spec]), like, like.storage.coords)[0]  # type: ignore[union-attr]


@register(
    kind=OpKind.NORMALIZATION,
    family=OpFamily.NORM,
    device_operation="LayerNormPreAllGatherDeviceOperation",
)
@ttnn_keywords(records=("use_2d_core_grid",), distributed_program_config=DISTRIBUTED)
def rms_norm_pre_all_gather(
    input_tensor: Tensor,
    *,
    dtype: DataType = DataType.BFLOAT16,
    residual_input_tensor: Tensor | None = None,
    compute_kernel_config: object = None,
    program_config: object = None,
    memory_config: MemoryConfig | None = None,
    use_2d_core_grid: bool | None = None,
) -> Tensor:
    """Each row's sum(x**2) over this device's part, in column 0 of one tile: ``[..., rows, 32]``."""
    configs = (program_config, compute_kernel_config)
    op = "rms_norm_pre_all_gather"
    return _pre(op, input_tensor, dtype, residual_input_tensor, configs, memory_config, tiles=1)


@register(
    kind=OpKind.NORMALIZATION,
    family=OpFamily.NORM,
    device_operation="LayerNormPreAllGatherDeviceOperation",
    modelled=False,
)
@ttnn_keywords(records=("use_2d_core_grid",), recip_tensor=RECIP_TENSOR, distributed_program_config=DISTRIBUTED)
def layer_norm_pre_all_gather(
    input_tensor: Tensor,
    *,
    dtype: DataType = DataType.BFLOAT16,
    residual_input_tensor: Tensor | None = None,
    compute_kernel_config: object = None,
    program_config: object = None,
    memory_config: MemoryConfig | None = None,
    use_2d_core_grid: bool | None = None,
) -> Tensor:
    """Each row's sum(x**2) and sum(x), in column 0 of two tiles: ``[..., rows, 64]``."""
    configs = (program_config, compute_kernel_config)
    op = "layer_norm_pre_all_gather"
    return _pre(op, input_tensor, dtype, residual_input_tensor, configs, memory_config, tiles=2)


def _post(op: str, input_tensor, stats, epsilon, affine, configs, memory_config, dtype, *, tiles: int) -> Tensor:
    tensor = _tile_input(op, "input_tensor", input_tensor)
    gathered = device_input(op, "stats", stats)
    if gathered.layout is not Layout.TILE or gathered.shape[-1] % (tiles * TILE_W):
        raise MeshnnValueError(
            f"ttnn.{op}: stats {list(gathered.shape)} must be TILE and a whole number of {tiles * TILE_W}-wide parts"
        )
    if tuple(gathered.spec.padded_shape)[:-1] != tuple(tensor.spec.padded_shape)[:-1]:
        raise MeshnnValueError(
            f"ttnn.{op}: stats {list(gathered.shape)} must have input_tensor's {list(tensor.shape)} dims but the last"
        )
    if isinstance(epsilon, bool) or not isinstance(epsilon, int | float | np.floating) or not epsilon >= 0:
        raise MeshnnValueError(f"ttnn.{op}: epsilon must be a number >= 0, got {epsilon!r}")
    named = {"input_tensor": tensor, "stats": gathered}
    width = tensor.shape[-1]
    for name, value in zip(("weight", "bias"), affine, strict=True):
        if value is not None:
            named[name] = device_input(op, name, value)
            if named[name].logical_volume() != width:
                raise MeshnnValueError(
                    f"ttnn.{op}: {name} {list(named[name].shape)} must hold {width} values (input_tensor's last dim)"
                )
    mesh = same_mesh(op, named)
    attrs = norm_attrs(op, tensor, mesh, *configs)
    spec = out_spec_like(tensor, dtype=dtype, memory_config=memory_config, op=op)
    attrs.update(memory_config=spec.memory_config, dtype=spec.dtype, epsilon=float(epsilon))
    sharded = tensor.spec.memory_config.is_sharded()
    kernel = _post_kernel([t.spec for t in named.values()], list(named), spec, float(epsilon), tiles, sharded)
    inputs = list(named.values())
    return launch(op, mesh, inputs, [Output(spec)], kernel, rowwise=True, reads_memos=True, attrs=attrs)[0]


def _moments(stats: np.ndarray, width: int, tiles: int, sharded: bool) -> tuple[np.ndarray, np.ndarray | None]:
    """E(x**2) and (layer norm) E(x) of the full width from the gathered stats: every part's sums
    over its ``width`` columns (interleaved: sum(x**2) first), or its means (sharded: E(x) first)."""
    step = tiles * TILE_W
    parts = stats.shape[-1] // step
    first = stats[..., ::step].sum(axis=-1, keepdims=True, dtype=np.float32)
    second = stats[..., TILE_W::step].sum(axis=-1, keepdims=True, dtype=np.float32) if tiles == 2 else None
    if sharded:
        if tiles == 1:
            return first / np.float32(parts), None
        return second / np.float32(parts), first / np.float32(parts)
    n = np.float32(width * parts)
    return first / n, None if second is None else second / n


def _post_kernel(specs: list[TensorSpec], names: list[str], spec: TensorSpec, epsilon: float, tiles: int, sharded):
    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]) -> None:
        values = {n: logical_values(r, s) for n, r, s in zip(names, in_rows, specs, strict=True)}
        x, stats = values["input_tensor"], values["stats"]
        mean_square, mean = _moments(stats, x.shape[-1], tiles, sharded)
        if mean is not None:  # layer norm: centre with the mean, scale by the variance
            x = x - mean
            mean_square = mean_square - mean * mean
        y = x / np.sqrt(mean_square + np.float32(epsilon))
        k = y.shape[0]
        if "weight" in values:
            y = y * values["weight"].reshape(k, *([1] * (y.ndim - 2)), -1)
        if "bias" in values:
            y = y + values["bias"].reshape(k, *([1] * (y.ndim - 2)), -1)
        write_values(out_rows[0], y, spec)

    return kernel


@register(
    kind=OpKind.NORMALIZATION,
    family=OpFamily.NORM,
    device_operation="LayerNormPostAllGatherDeviceOperation",
)
@ttnn_keywords(records=("use_2d_core_grid",), distributed_program_config=DISTRIBUTED)
def rms_norm_post_all_gather(
    input_tensor: Tensor,
    stats: Tensor,
    *,
    epsilon: float = 1e-12,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    memory_config: MemoryConfig | None = None,
    compute_kernel_config: object = None,
    program_config: object = None,
    dtype: DataType | None = None,
    use_2d_core_grid: bool | None = None,
) -> Tensor:
    """``x / sqrt(sum of the gathered sum(x**2) / full width + epsilon) * weight + bias``."""
    configs = (program_config, compute_kernel_config)
    op = "rms_norm_post_all_gather"
    return _post(op, input_tensor, stats, epsilon, (weight, bias), configs, memory_config, dtype, tiles=1)


@register(
    kind=OpKind.NORMALIZATION,
    family=OpFamily.NORM,
    device_operation="LayerNormPostAllGatherDeviceOperation",
    modelled=False,
)
@ttnn_keywords(records=("use_2d_core_grid",), distributed_program_config=DISTRIBUTED)
def layer_norm_post_all_gather(
    input_tensor: Tensor,
    stats: Tensor,
    *,
    epsilon: float = 1e-12,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    memory_config: MemoryConfig | None = None,
    compute_kernel_config: object = None,
    program_config: object = None,
    dtype: DataType | None = None,
    use_2d_core_grid: bool | None = None,
) -> Tensor:
    """``(x - mean) / sqrt(var + epsilon) * weight + bias`` with the mean and variance of the full
    width from the gathered sums."""
    configs = (program_config, compute_kernel_config)
    op = "layer_norm_post_all_gather"
    return _post(op, input_tensor, stats, epsilon, (weight, bias), configs, memory_config, dtype, tiles=2)
