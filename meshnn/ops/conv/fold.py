"""The CNN data-movement ops: ``ttnn.fold`` (space to depth: each ``stride_h x stride_w`` patch
of an NHWC image becomes one pixel of ``C * stride_h * stride_w`` channels, in (row, column,
channel) order).

``fold`` zero-pads first (``[h, w]`` or ``[top, bottom, left, right]``); its output is
``[N, H/sh, W/sw, C*sh*sw]`` for a DRAM input and ttnn's flattened ``[1, 1, N*H/sh*W/sw,
C*sh*sw]`` for an L1 one.  With ``use_transpose_as_fold`` the input is NCHW, the padding may be
6 values (the last two pad the channels at the front and back), and ``output_shape`` crops the
folded image to its height and width.  Pure data movement: values are copied exactly.

May import: :mod:`meshnn.errors`, :mod:`meshnn.formats`, :mod:`meshnn.tensor`, the ops' registry
and the pool package's launch.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from meshnn.device.buffer import BufferType
from meshnn.device.core import CoreRangeSet
from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.ops.checks import device_input
from meshnn.ops.conv.geometry import positive
from meshnn.ops.outputs import out_spec_like
from meshnn.ops.pool.common import run_pool
from meshnn.ops.registry import OpKind, register
from meshnn.perf.desc import OpFamily
from meshnn.tensor.memory_config import L1_MEMORY_CONFIG
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor


def _padding(padding: object, transposed: bool) -> tuple[int, ...]:
    """fold's padding as (top, bottom, left, right, channels front, channels back)."""
    if not isinstance(padding, Sequence | np.ndarray) or len(padding) not in ((2, 4, 6) if transposed else (2, 4)):
        raise MeshnnTypeError(
            f"ttnn.fold: padding must be [h, w] or [top, bottom, left, right]"
            f"{' (or 6 values)' if transposed else ''}, got {padding!r}"
        )
    values = [positive("fold", "padding", v, 0) for v in padding]
    if len(values) == 2:
        values = [values[0], values[0], values[1], values[1]]
    return tuple([*values, 0, 0])[:6]


def folded(x: np.ndarray, sh: int, sw: int, pads: tuple[int, ...]) -> np.ndarray:
    """NHWC ``x`` padded and folded: ``(N, H/sh, W/sw, C*sh*sw)``."""
    top, bottom, left, right, front, back = pads
    x = np.pad(x, ((0, 0), (top, bottom), (left, right), (front, back)))
    n, h, w, c = x.shape
    return (
        x.reshape(n, h // sh, sh, w // sw, sw, c).transpose(0, 1, 3, 2, 4, 5).reshape(n, h // sh, w // sw, c * sh * sw)
    )


@register(kind=OpKind.DATA_MOVEMENT, family=OpFamily.COPY, device_operation="Fold", modelled=False)
def fold(
    input: Tensor,
    stride_h: int,
    stride_w: int,
    use_transpose_as_fold: bool = False,
    output_shape: Sequence[int] | None = None,
    padding: Sequence[int] = (0, 0),
    grid_size: CoreRangeSet | None = None,
    override_memory_config: MemoryConfig | None = None,
) -> Tensor:
    """Space to depth (see the module's text)."""
    tensor = device_input("fold", "input", input)
    sh, sw = positive("fold", "stride_h", stride_h), positive("fold", "stride_w", stride_w)
    if not isinstance(use_transpose_as_fold, bool):
        raise MeshnnTypeError(f"ttnn.fold: use_transpose_as_fold must be a bool, got {use_transpose_as_fold!r}")
    if grid_size is not None and not isinstance(grid_size, CoreRangeSet):
        raise MeshnnTypeError(f"ttnn.fold: grid_size must be a ttnn.CoreRangeSet, got {grid_size!r}")
    pads = _padding(padding, use_transpose_as_fold)
    if len(tensor.shape) != 4:
        raise MeshnnValueError(f"ttnn.fold: input must be 4D ([N, H, W, C]), got {list(tensor.shape)}")
    n, h, w, c = (
        (tensor.shape[0], tensor.shape[2], tensor.shape[3], tensor.shape[1])
        if use_transpose_as_fold
        else tuple(tensor.shape)
    )
    ph, pw, pc = h + pads[0] + pads[1], w + pads[2] + pads[3], c + pads[4] + pads[5]
    crop = None
    if output_shape is not None:
        crop = tuple(positive("fold", "output_shape", v) for v in output_shape)
        if len(crop) != 4 or crop[1] * sh > ph or crop[2] * sw > pw or crop[3] != pc * sh * sw:
            raise MeshnnValueError(f"ttnn.fold: output_shape {list(output_shape)} does not fit the folded input")
    if ph % sh or pw % sw:
        raise MeshnnValueError(f"ttnn.fold: the padded input {ph}x{pw} is not divisible by the strides {sh}x{sw}")
    oh, ow = (crop[1], crop[2]) if crop else (ph // sh, pw // sw)
    in_dram = tensor.memory_config().buffer_type is BufferType.DRAM
    flat = not use_transpose_as_fold and not in_dram
    shape = (1, 1, n * oh * ow, pc * sh * sw) if flat else (n, oh, ow, pc * sh * sw)
    memory = override_memory_config or (
        tensor.memory_config() if not tensor.memory_config().is_sharded() else L1_MEMORY_CONFIG
    )
    spec = out_spec_like(tensor, shape=shape, memory_config=memory, op="fold")

    def compute(x: np.ndarray) -> list[np.ndarray]:
        image = x.transpose(0, 2, 3, 1) if use_transpose_as_fold else x
        out = folded(image, sh, sw, pads)[:, :oh, :ow, :]
        return [out.reshape(shape)]

    return run_pool("fold", [tensor], [spec], compute, {"grid_size": grid_size, "memory_config": memory})[0]
