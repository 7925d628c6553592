"""The geometry of a sliding-window op (conv, pool) as ttnn takes it: the batch, the input's
height, width and channels, the kernel, stride, padding (ttnn's 2-element ``[h, w]`` or
4-element ``[top, bottom, left, right]``) and dilation, checked, and the output's size.

A 2D sliding-window op in ttnn takes its input flattened, ``[1, 1, N*H*W, C]`` (or ``[N, H, W,
C]``), with ``batch_size``, ``input_height`` and ``input_width`` saying how to read it, and writes
its output as ``[1, 1, N*OH*OW, OC]``.

Also :func:`torch_module`: the compute kernels run on torch (an optional dependency), imported
when an op runs, never at import.

May import: :mod:`meshnn.errors` and the tensor layer.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from meshnn.errors import MeshnnError, MeshnnTypeError, MeshnnValueError

TORCH_NEEDED = "the conv and pool kernels compute with torch: install it with `pip install 'meshnn[torch]'`"


def torch_module() -> Any:
    """torch, imported now; a MeshnnError saying how to install it when it is missing."""
    try:
        import torch
    except ImportError as error:
        raise MeshnnError(TORCH_NEEDED) from error
    return torch


def positive(op: str, name: str, value: object, least: int = 1) -> int:
    """``value`` checked to be an int >= ``least``."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise MeshnnTypeError(f"ttnn.{op}: {name} must be an int, got {value!r}")
    if value < least:
        raise MeshnnValueError(f"ttnn.{op}: {name} must be >= {least}, got {value}")
    return int(value)


def pair(op: str, name: str, value: object, least: int = 1, size: int = 2) -> tuple[int, ...]:
    """``value`` (an int, or ``size`` ints) as ``size`` ints >= ``least``."""
    if isinstance(value, int | np.integer) and not isinstance(value, bool):
        value = (value,) * size
    if not isinstance(value, Sequence | np.ndarray) or isinstance(value, str) or len(value) != size:
        raise MeshnnTypeError(f"ttnn.{op}: {name} must be {size} ints, got {value!r}")
    return tuple(positive(op, name, v, least) for v in value)


def padding4(op: str, value: object) -> tuple[int, int, int, int]:
    """ttnn's padding, ``[h, w]`` or ``[top, bottom, left, right]`` (an int: all four), as
    (top, bottom, left, right)."""
    if isinstance(value, int | np.integer) and not isinstance(value, bool):
        value = (value, value)
    if not isinstance(value, Sequence | np.ndarray) or isinstance(value, str) or len(value) not in (2, 4):
        raise MeshnnTypeError(f"ttnn.{op}: padding must be [pad_h, pad_w] or [top, bottom, left, right], got {value!r}")
    values = [positive(op, "padding", v, 0) for v in value]
    if len(values) == 2:
        return (values[0], values[0], values[1], values[1])
    return tuple(values)  # type: ignore[return-value]


@dataclass(frozen=True)
class Window:
    """A 2D sliding window over ``batch`` images of ``height`` x ``width`` pixels: ``kernel``,
    ``stride``, ``dilation`` as (h, w); ``padding`` as (top, bottom, left, right) pixels."""

    batch: int
    height: int
    width: int
    kernel: tuple[int, int]
    stride: tuple[int, int]
    padding: tuple[int, int, int, int]
    dilation: tuple[int, int] = (1, 1)
    ceil_mode: bool = False

    def _out(self, size: int, pad: int, lead: int, k: int, s: int, d: int) -> int:
        span = size + pad - d * (k - 1) - 1
        if not self.ceil_mode:
            return span // s + 1
        out = math.ceil(span / s) + 1
        if (out - 1) * s >= size + lead:  # the last window must start inside the input or its leading pad
            out -= 1
        return out

    @property
    def out_height(self) -> int:
        top, bottom = self.padding[0], self.padding[1]
        return self._out(self.height, top + bottom, top, self.kernel[0], self.stride[0], self.dilation[0])

    @property
    def out_width(self) -> int:
        left, right = self.padding[2], self.padding[3]
        return self._out(self.width, left + right, left, self.kernel[1], self.stride[1], self.dilation[1])

    def check(self, op: str) -> None:
        """The window fits the padded input (at least one output pixel each way)."""
        if self.out_height < 1 or self.out_width < 1:
            raise MeshnnValueError(
                f"ttnn.{op}: the kernel {list(self.kernel)} (dilation {list(self.dilation)}) does not fit the padded "
                f"input {self.height}x{self.width} with padding {list(self.padding)}"
            )

    def nchw(self, values: np.ndarray, channels: int) -> np.ndarray:
        """Rows of ``[..., N*H*W, C]`` (or ``[N, H, W, C]``) values as ``(N, C, H, W)``: the first
        ``channels`` channels."""
        return values.reshape(self.batch, self.height, self.width, -1)[..., :channels].transpose(0, 3, 1, 2)


def flat_input(
    op: str, shape: Sequence[int], window: Window, channels: int, name: str = "input_tensor", ranks=(4,)
) -> None:
    """``shape`` checked to hold ``batch * height * width`` rows of at least ``channels`` channels
    (``[1, 1, N*H*W, C]`` or ``[N, H, W, C]``; rank 3 too where ``ranks`` allows it)."""
    rows = int(np.prod(shape[:-1], dtype=np.int64)) if len(shape) >= 2 else 0
    want = window.batch * window.height * window.width
    if len(shape) not in ranks or rows != want or shape[-1] < channels:
        raise MeshnnValueError(
            f"ttnn.{op}: {name} {list(shape)} does not hold batch_size*input_height*input_width = "
            f"{window.batch}*{window.height}*{window.width} = {want} rows of {channels} channels "
            "([1, 1, N*H*W, C] or [N, H, W, C])"
        )


def flat_output(values: np.ndarray) -> np.ndarray:
    """``(N, C, OH, OW)`` values as ttnn's flattened ``(1, 1, N*OH*OW, C)``."""
    n, c, h, w = values.shape
    return values.transpose(0, 2, 3, 1).reshape(1, 1, n * h * w, c)
