"""``ttnn.rotate``: an NHWC image ``[N, H, W, C]`` rotated by ``angle`` degrees (positive:
counter-clockwise) about ``center`` (pixel (x, y); default the image's centre ``((W-1)/2,
(H-1)/2)``), the same size out.  Output pixel ``p`` reads the input at ``R(angle) (p - c) + c``,
by nearest neighbour (rounded half away from zero) or bilinearly; what falls outside the image is
``fill``.  ``expand=True`` is refused, as ttnn refuses it.

May import: :mod:`meshnn.errors`, :mod:`meshnn.formats`, :mod:`meshnn.tensor`, the ops' registry
and the pool package.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.mesh.op_keywords import choice, number
from meshnn.ops.outputs import out_spec_like
from meshnn.ops.pool.common import pool_input, run_pool
from meshnn.ops.pool.goldens import golden_rotate
from meshnn.ops.registry import OpKind, register
from meshnn.perf.desc import OpFamily
from meshnn.tensor.memory_config import DRAM_MEMORY_CONFIG
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor


def source_points(
    height: int, width: int, angle: float, center: Sequence[float] | None
) -> tuple[np.ndarray, np.ndarray]:
    """The input (x, y) each output pixel reads, ``(H, W)`` each (float64)."""
    cx, cy = ((width - 1) / 2, (height - 1) / 2) if center is None else (center[0] - 0.5, center[1] - 0.5)
    radians = math.radians(angle)
    cos, sin = math.cos(radians), math.sin(radians)
    y, x = np.meshgrid(np.arange(height, dtype=np.float64) - cy, np.arange(width, dtype=np.float64) - cx, indexing="ij")
    return x * cos - y * sin + cx, x * sin + y * cos + cy


def rotated(image: np.ndarray, xs: np.ndarray, ys: np.ndarray, fill: float, bilinear: bool) -> np.ndarray:
    """``image`` ``[N, H, W, C]`` read at the points (xs, ys), ``fill`` outside it."""
    _, height, width, _ = image.shape
    out = np.zeros(image.shape, np.float32)
    if bilinear:
        x0, y0 = np.floor(xs), np.floor(ys)
        corners = ((0, 0, (1 - (ys - y0)) * (1 - (xs - x0))), (0, 1, (1 - (ys - y0)) * (xs - x0)))
        corners += ((1, 0, (ys - y0) * (1 - (xs - x0))), (1, 1, (ys - y0) * (xs - x0)))
    else:
        x0, y0 = np.trunc(xs + np.copysign(0.5, xs)), np.trunc(ys + np.copysign(0.5, ys))
        corners = ((0, 0, np.ones_like(xs)),)
    for dy, dx, weight in corners:
        rows, cols = (y0 + dy).astype(np.int64), (x0 + dx).astype(np.int64)
        inside = (rows >= 0) & (rows < height) & (cols >= 0) & (cols < width)
        picked = image[:, np.clip(rows, 0, height - 1), np.clip(cols, 0, width - 1)]
        out += np.where(inside[None, ..., None], picked, np.float32(fill)) * weight[None, ..., None].astype(np.float32)
    return out


@register(
    kind=OpKind.POOL,
    family=OpFamily.COPY,
    device_operation="RotateDeviceOperation",
    modelled=False,
    golden=golden_rotate,
)
def rotate(
    input_tensor: Tensor,
    angle: float,
    *,
    center: Sequence[float] | None = None,
    fill: float = 0.0,
    expand: bool = False,
    interpolation_mode: str = "nearest",
    memory_config: MemoryConfig | None = None,
) -> Tensor:
    """The image rotated (see the module's text)."""
    op = "rotate"
    number(op, "angle", angle)
    number(op, "fill", fill)
    choice("nearest", "bilinear")(op, "interpolation_mode", interpolation_mode)
    if not isinstance(expand, bool):
        raise MeshnnTypeError(f"ttnn.{op}: expand must be a bool, got {expand!r}")
    if expand:
        raise MeshnnValueError(f"ttnn.{op}: expand=True is not supported (ttnn keeps the input's size)")
    if center is not None and (not isinstance(center, Sequence) or len(center) != 2):
        raise MeshnnTypeError(f"ttnn.{op}: center must be (x, y) or None, got {center!r}")
    tensor = pool_input(op, input_tensor, (DataType.BFLOAT16, DataType.FLOAT32))
    if len(tensor.shape) != 4:
        raise MeshnnValueError(f"ttnn.{op}: input_tensor must be [N, H, W, C], got {list(tensor.shape)}")
    _, height, width, _ = tensor.shape
    xs, ys = source_points(height, width, float(angle), center)
    memory = memory_config or DRAM_MEMORY_CONFIG
    spec = out_spec_like(tensor, memory_config=memory, op=op)

    def compute(x: np.ndarray) -> list[np.ndarray]:
        return [rotated(np.asarray(x, np.float32), xs, ys, float(fill), interpolation_mode == "bilinear")]

    return run_pool(op, [tensor], [spec], compute, {"memory_config": memory})[0]
