"""``ttnn.operations.moreh.fold(input, output, output_size, kernel_size, dilation=[1, 1],
padding=[0, 0], stride=[1, 1], memory_config=None)``: torch's ``nn.Fold`` (col2im).  The input,
ROW_MAJOR, is ``[N, C * kh * kw, L]`` or ``[C * kh * kw, L]`` with ``L`` the number of sliding
blocks; each block's ``kh * kw`` values per channel are added into the ``[N, C, oh, ow]`` (or
``[C, oh, ow]``) output where the kernel lands (padding cut off).  The sums are float32, one
kernel position at a time, then rounded into the input's dtype.

May import: every layer below the ops and the ops' checks, registry and moreh.common modules.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from meshnn.errors import MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.ops.checks import int_list
from meshnn.ops.moreh.common import into_tensor, moreh_tensor, output_spec, run
from meshnn.ops.registry import OpKind, register, torch_golden
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor

OP = "fold"
FOLDABLE = (DataType.BFLOAT16, DataType.FLOAT32)


def _pairs(**named: object) -> dict[str, list[int]]:
    out = {}
    for name, value in named.items():
        items = int_list(f"operations.moreh.{OP}", name, value)
        if len(items) != 2:
            raise MeshnnValueError(f"ttnn.operations.moreh.{OP}: Fold: {name} takes 2 elements, got {items}")
        out[name] = items
    return out


def _blocks(size: list[int], kernel: list[int], dilation: list[int], padding: list[int], stride: list[int]):
    """The number of sliding blocks along each of the two output dims."""
    return [(size[i] + 2 * padding[i] - dilation[i] * (kernel[i] - 1) - 1) // stride[i] + 1 for i in range(2)]


def col2im(x: np.ndarray, size, kernel, dilation, padding, stride) -> np.ndarray:
    """``(k, N, C * kh * kw, L)`` values folded into ``(k, N, C, oh, ow)``, added in float32 one
    kernel position after another (row by row), as the kernel adds them."""
    k, n, ckk, _ = x.shape
    kh, kw = kernel
    c = ckk // (kh * kw)
    bh, bw = _blocks(size, kernel, dilation, padding, stride)
    cols = x.reshape(k, n, c, kh, kw, bh, bw)
    out = np.zeros((k, n, c, size[0] + 2 * padding[0], size[1] + 2 * padding[1]), np.float32)
    for i in range(kh):
        for j in range(kw):
            top, left = i * dilation[0], j * dilation[1]
            rows = slice(top, top + stride[0] * (bh - 1) + 1, stride[0])
            columns = slice(left, left + stride[1] * (bw - 1) + 1, stride[1])
            out[..., rows, columns] += cols[:, :, :, i, j].astype(np.float32)
    return out[..., padding[0] : padding[0] + size[0], padding[1] : padding[1] + size[1]]


def _golden(torch, input, output, output_size, kernel_size, dilation=(1, 1), padding=(0, 0), stride=(1, 1), **_):
    return torch.nn.functional.fold(input, output_size, kernel_size, dilation, padding, stride)


@register(
    name="moreh.fold",
    kind=OpKind.DATA_MOVEMENT,
    family=OpFamily.COPY,
    device_operation="MorehFoldOperation",
    golden=torch_golden(_golden),
    modelled=False,
)
def fold(
    input: Tensor,
    output: Tensor | None = None,
    output_size: Sequence[int] = (),
    kernel_size: Sequence[int] = (),
    dilation: Sequence[int] = (1, 1),
    padding: Sequence[int] = (0, 0),
    stride: Sequence[int] = (1, 1),
    memory_config: MemoryConfig | None = None,
) -> Tensor:
    """Sliding blocks ``input`` summed back into an image of ``output_size`` (torch's ``fold``)."""
    x = moreh_tensor(OP, "input", input, FOLDABLE, tile=False)
    if x.layout is not Layout.ROW_MAJOR:
        raise MeshnnValueError(f"ttnn.operations.moreh.{OP}: Fold: only support input in ROW_MAJOR, got {x.layout}")
    args = _pairs(output_size=output_size, kernel_size=kernel_size, dilation=dilation, padding=padding, stride=stride)
    size, kernel = args["output_size"], args["kernel_size"]
    shape_in = tuple(x.shape)
    if len(shape_in) not in (2, 3):
        raise MeshnnValueError(f"ttnn.operations.moreh.{OP}: Fold: Only support 3D or 2D input tensor")
    blocks = _blocks(size, kernel, args["dilation"], args["padding"], args["stride"])
    kk = kernel[0] * kernel[1]
    if shape_in[-1] != blocks[0] * blocks[1] or shape_in[-2] % kk:
        raise MeshnnValueError(f"ttnn.operations.moreh.{OP}: Fold: Invalid input tensor size {list(shape_in)}")
    shape = (*shape_in[:-2], shape_in[-2] // kk, *size)
    into = into_tensor(OP, "output", output, shape, FOLDABLE) if output is not None else None
    spec = None if into is not None else output_spec(OP, x, shape, memory_config)

    def compute(xs: list[np.ndarray]) -> np.ndarray:
        values = xs[0] if len(shape_in) == 3 else xs[0][:, None]
        return col2im(values, size, kernel, args["dilation"], args["padding"], args["stride"])

    return run(OP, [x], spec, into, compute, {key: tuple(v) for key, v in args.items()})
