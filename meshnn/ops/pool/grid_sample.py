"""``ttnn.grid_sample`` and ``ttnn.prepare_grid_sample_grid``: an NHWC image ``[N, H, W, C]``
sampled at the normalised points of a grid ``[N, HO, WO, 2]`` ((x, y) in [-1, 1], corners at
the pixels' outer edges: ``align_corners=False``), bilinearly, zero outside the image; the output
is ``[N, HO, WO, C]`` bfloat16, ROW_MAJOR.

``prepare_grid_sample_grid`` precomputes, per output point, the north-west pixel (row, column)
and the four bilinear weights (NW, NE, SW, SE; a corner outside the image weighs 0):
``[N, HO, WO, 6]``; ``grid_sample(use_precomputed_grid=True)`` takes that grid.

May import: :mod:`meshnn.errors`, :mod:`meshnn.formats`, :mod:`meshnn.tensor`, the ops' registry,
the conv geometry and the pool package.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from meshnn.device.buffer import BufferType, ShardSpec, TensorMemoryLayout
from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.mesh.op_keywords import choice, flag
from meshnn.ops.checks import device_input
from meshnn.ops.config import check_compute_kernel_config
from meshnn.ops.conv.geometry import positive
from meshnn.ops.outputs import out_spec_like
from meshnn.ops.pool.common import pool_input, run_pool
from meshnn.ops.pool.goldens import golden_grid_sample
from meshnn.ops.registry import DeviceWork, OpKind, register
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.storage import DeviceStorage
from meshnn.tensor.tensor import Tensor, check_tensor


def corners(grid: np.ndarray, height: int, width: int, align_corners: bool = False) -> np.ndarray:
    """``[..., 2]`` normalised (x, y) points as ``[..., 6]``: the north-west pixel's row and
    column and the NW, NE, SW, SE bilinear weights (0 for a corner outside the image).  -1 and 1
    are the image's outer edges, or with ``align_corners`` its corner pixels' centres (torch's rule)."""
    if align_corners:
        x = (grid[..., 0].astype(np.float64) + 1) * (width - 1) / 2
        y = (grid[..., 1].astype(np.float64) + 1) * (height - 1) / 2
    else:
        x = ((grid[..., 0].astype(np.float64) + 1) * width - 1) / 2
        y = ((grid[..., 1].astype(np.float64) + 1) * height - 1) / 2
    x0, y0 = np.floor(x), np.floor(y)
    fx, fy = x - x0, y - y0
    weights = [(1 - fy) * (1 - fx), (1 - fy) * fx, fy * (1 - fx), fy * fx]
    inside = [
        (y0 + dy >= 0) & (y0 + dy < height) & (x0 + dx >= 0) & (x0 + dx < width)
        for dy, dx in ((0, 0), (0, 1), (1, 0), (1, 1))
    ]
    return np.stack([y0, x0, *(w * m for w, m in zip(weights, inside, strict=True))], axis=-1)


def sample(image: np.ndarray, table: np.ndarray) -> np.ndarray:
    """``image`` ``[N, H, W, C]`` sampled at a precomputed ``[N, ..., 6]`` table (``[N, HO, WO, 6]``,
    or ``[N, HO, WO, K, 6]`` for K points per grid position): ``[N, ..., C]``."""
    n, height, width, _ = image.shape
    y0, x0 = table[..., 0].astype(np.int64), table[..., 1].astype(np.int64)
    batch = np.arange(n).reshape(n, *([1] * (table.ndim - 2)))
    out = np.zeros((*table.shape[:-1], image.shape[-1]), np.float32)
    for k, (dy, dx) in enumerate(((0, 0), (0, 1), (1, 0), (1, 1))):
        rows, cols = np.clip(y0 + dy, 0, height - 1), np.clip(x0 + dx, 0, width - 1)
        out += table[..., 2 + k, None].astype(np.float32) * image[batch, rows, cols]
    return out


@register(
    kind=OpKind.POOL,
    family=OpFamily.COPY,
    device_operation="GridSampleOperation",
    modelled=False,
    golden=golden_grid_sample,
)
def grid_sample(
    input_tensor: Tensor,
    grid: Tensor,
    *,
    mode: str = "bilinear",
    padding_mode: str = "zeros",
    align_corners: bool = False,
    use_precomputed_grid: bool = False,
    batch_output_channels: bool = False,
    memory_config: MemoryConfig | None = None,
    compute_kernel_config: object = None,
) -> Tensor:
    """The image sampled at the grid's points (see the module's text); a grid row of ``K`` points
    (last dim ``2K``, or ``6K`` precomputed) gives ``[N, HO, WO * K, C]``, or with
    ``batch_output_channels`` ``[N, HO, WO, K * C]`` (point k's channels at ``k * C``)."""
    op = "grid_sample"
    choice("bilinear")(op, "mode", mode)
    choice("zeros")(op, "padding_mode", padding_mode)
    flag(op, "use_precomputed_grid", use_precomputed_grid)
    flag(op, "align_corners", align_corners)  # (tt-metal of 2026; a precomputed grid has it built in)
    check_compute_kernel_config(op, compute_kernel_config)
    flag(op, "batch_output_channels", batch_output_channels)
    tensor = pool_input(op, input_tensor, (DataType.BFLOAT16, DataType.FLOAT32))
    points = device_input(op, "grid", grid)
    if tensor.layout is not Layout.ROW_MAJOR or points.layout is not Layout.ROW_MAJOR or len(tensor.shape) != 4:
        raise MeshnnValueError(f"ttnn.{op}: input_tensor [N, H, W, C] and grid must be ROW_MAJOR")
    per = 6 if use_precomputed_grid else 2
    if len(points.shape) != 4 or points.shape[0] != tensor.shape[0] or points.shape[-1] % per or not points.shape[-1]:
        raise MeshnnValueError(
            f"ttnn.{op}: grid must be [N, HO, WO, {per} * K] with N = {tensor.shape[0]}, got {list(points.shape)}"
        )
    k = points.shape[-1] // per
    if batch_output_channels and k == 1:
        raise MeshnnValueError(
            f"ttnn.{op}: batch_output_channels=True requires grid batching factor K > 1 (a grid of {per} * K values "
            "per point row)"
        )
    n, height, width, c = tensor.shape
    ho, wo = points.shape[1], points.shape[2]
    shape = (n, ho, wo, c * k) if batch_output_channels else (n, ho, wo * k, c)
    memory_config = _output_memory(points, tensor, k, batch_output_channels, memory_config)
    spec = out_spec_like(tensor, shape=shape, dtype=DataType.BFLOAT16, memory_config=memory_config, op=op)

    def compute(x: np.ndarray, g: np.ndarray) -> list[np.ndarray]:
        g = g.reshape(n, ho, wo, k, per)
        out = sample(x, g if use_precomputed_grid else corners(g, height, width, align_corners))  # (n, ho, wo, k, c)
        return [out.reshape(shape)]

    attrs = {"memory_config": spec.memory_config, "batch_output_channels": batch_output_channels}
    attrs |= {"align_corners": align_corners, "compute_kernel_config": compute_kernel_config}
    return run_pool(op, [tensor, points], [spec], compute, attrs)[0]


def _output_memory(points: Tensor, tensor: Tensor, k: int, channels: bool, memory_config: object) -> object:
    """ttnn's output memory config: a sharded grid gives an L1 HEIGHT_SHARDED output on the grid's
    cores, shards of the grid's rows (times K unless the channels take the points) by the input's
    padded channels (times K when they do); else the one given, or the grid's (ttnn's default)."""
    shard = points.spec.memory_config.shard_spec
    if not points.spec.memory_config.is_sharded() or shard is None:
        return memory_config if memory_config is not None else points.spec.memory_config
    height = shard.shape[0] * (1 if channels else k)
    width = tensor.spec.padded_shape[-1] * (k if channels else 1)
    spec = ShardSpec(shard.grid, (height, width), shard.orientation)
    return MemoryConfig(TensorMemoryLayout.HEIGHT_SHARDED, BufferType.L1, spec)


@register(kind=OpKind.POOL, family=OpFamily.COPY, modelled=False, runs=DeviceWork.HOST)
def prepare_grid_sample_grid(
    grid: Tensor,
    input_shape: Sequence[int],
    *,
    mode: str = "bilinear",
    padding_mode: str = "zeros",
    align_corners: bool = False,
    output_dtype: DataType | None = None,
) -> Tensor:
    """The precomputed table of ``grid`` (``[N, HO, WO, 2]``, float32) for an input of
    ``input_shape`` ``[N, H, W, C]``: ``[N, HO, WO, 6]`` in ``output_dtype`` (None: bfloat16), on
    the host or the device as ``grid`` is."""
    op = "prepare_grid_sample_grid"
    choice("bilinear")(op, "mode", mode)
    choice("zeros")(op, "padding_mode", padding_mode)
    flag(op, "align_corners", align_corners)
    tensor = check_tensor(grid, f"ttnn.{op}: grid")
    if len(tensor.shape) != 4 or tensor.shape[-1] != 2:
        raise MeshnnValueError(f"ttnn.{op}: grid must be [N, HO, WO, 2], got {list(tensor.shape)}")
    if not isinstance(input_shape, Sequence) or len(input_shape) != 4:
        raise MeshnnTypeError(f"ttnn.{op}: input_shape must be [N, H, W, C], got {input_shape!r}")
    height, width = positive(op, "input_shape", input_shape[1]), positive(op, "input_shape", input_shape[2])
    dtype = output_dtype or DataType.BFLOAT16
    if not isinstance(dtype, DataType):
        raise MeshnnTypeError(f"ttnn.{op}: output_dtype must be a ttnn DataType, got {output_dtype!r}")
    from meshnn.tensor.interop import to_numpy

    table = corners(np.asarray(to_numpy(tensor), np.float32), height, width, align_corners).astype(np.float32)
    device = tensor.storage.mesh_buffer.device() if isinstance(tensor.storage, DeviceStorage) else None
    return Tensor(table, dtype, device=device, layout=Layout.ROW_MAJOR)
