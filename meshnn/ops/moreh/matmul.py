"""moreh's products: ``ttnn.operations.moreh.matmul`` (batch dims broadcast as torch's, either
operand transposed, an optional bias of one row or one value added), ``bmm`` (rank-3 batches) and
``linear`` (``input @ weight^T + bias``).

The product is taken in 32-wide K blocks, each block's float32 product added into the destination
register (:func:`~meshnn.ops.moreh.common.accumulate`: bfloat16 unless the compute-kernel config
sets ``fp32_dest_acc_en``), then rounded into the output's dtype.  Operands: bfloat16 (moreh's
kernels take bfloat8_b too), TILE.

May import: every layer below the ops and the ops' checks, config, launch, outputs, values,
registry and moreh.common modules.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from meshnn.errors import MeshnnValueError
from meshnn.ops.moreh.common import (
    BF16_BFP8,
    TILE,
    accumulate,
    flag,
    fp32_dest,
    into_tensor,
    moreh_tensor,
    optional_tensor,
    output_spec,
    run,
)
from meshnn.ops.registry import OpKind, register, torch_golden
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor


def product(a: np.ndarray, b: np.ndarray, fp32: bool) -> np.ndarray:
    """``a @ b`` over stacked batches (float32), K added 32 at a time as the kernel adds it (one
    float32 product when the register holds float32)."""
    a32, b32 = a.astype(np.float32, copy=False), b.astype(np.float32, copy=False)
    k = a.shape[-1]
    if k <= TILE or fp32:
        return np.matmul(a32, b32)
    blocks = (np.matmul(a32[..., s : s + TILE], b32[..., s : s + TILE, :]) for s in range(0, k, TILE))
    return accumulate(blocks, fp32)


def aligned(x: np.ndarray, rank: int) -> np.ndarray:
    """``(k, *shape)`` values with 1s inserted after the device axis up to ``rank`` dims of shape."""
    missing = rank - (x.ndim - 1)
    return x.reshape((x.shape[0], *([1] * missing), *x.shape[1:])) if missing > 0 else x


def product_shape(op: str, a: Sequence[int], b: Sequence[int], ta: bool, tb: bool) -> tuple[int, ...]:
    """The shape of ``a @ b`` (each transposed as asked), batch dims broadcast."""
    if len(a) < 2 or len(b) < 2:
        raise MeshnnValueError(f"ttnn.operations.moreh.{op}: input and other must have rank 2 or more")
    m, ka = (a[-1], a[-2]) if ta else (a[-2], a[-1])
    kb, n = (b[-1], b[-2]) if tb else (b[-2], b[-1])
    if ka != kb:
        raise MeshnnValueError(
            f"ttnn.operations.moreh.{op}: input's K ({ka}) and other's K ({kb}) must be equal "
            f"(shapes {list(a)} and {list(b)})"
        )
    try:
        batch = np.broadcast_shapes(tuple(a[:-2]), tuple(b[:-2]))
    except ValueError:
        raise MeshnnValueError(
            f"ttnn.operations.moreh.{op}: the batch dims of {list(a)} and {list(b)} cannot be broadcast"
        ) from None
    return (*batch, m, n)


def matmul_values(xs: list[np.ndarray], ta: bool, tb: bool, rank: int, fp32: bool) -> np.ndarray:
    """The kernel's arithmetic: ``xs`` = input, other[, bias] values."""
    a, b = aligned(xs[0], rank), aligned(xs[1], rank)
    if ta:
        a = np.swapaxes(a, -1, -2)
    if tb:
        b = np.swapaxes(b, -1, -2)
    result = product(a, b, fp32)
    if len(xs) > 2:
        bias = xs[2].reshape(xs[2].shape[0], -1)
        bias = bias[:, :1] if bias.shape[1] == 1 else bias  # one value, or one per column
        result = result + bias.reshape((bias.shape[0], *([1] * (rank - 1)), bias.shape[1]))
    return result


def _bias(op: str, bias: object, n: int) -> Tensor | None:
    tensor = optional_tensor(op, "bias", bias, BF16_BFP8)
    if tensor is not None and tensor.logical_volume() not in (1, n):
        raise MeshnnValueError(
            f"ttnn.operations.moreh.{op}: bias must hold one value or one per output column ({n}), got shape "
            f"{list(tensor.shape)}"
        )
    return tensor


def moreh_matmul(
    op: str,
    input: object,
    other: object,
    transposes: tuple[bool, bool],
    output: object,
    bias: object,
    memory_config: object,
    compute_kernel_config: object,
) -> Tensor:
    """The device op of :func:`matmul`, :func:`bmm` and :func:`linear`."""
    a = moreh_tensor(op, "input", input, BF16_BFP8)
    b = moreh_tensor(op, "other", other, BF16_BFP8)
    ta, tb = flag(op, "transpose_input", transposes[0]), flag(op, "transpose_other", transposes[1])
    fp32 = fp32_dest(op, compute_kernel_config)
    shape = product_shape(op, tuple(a.shape), tuple(b.shape), ta, tb)
    bias_tensor = _bias(op, bias, shape[-1])
    into = into_tensor(op, "output", output, shape, BF16_BFP8)
    spec = None if into is not None else output_spec(op, a, shape, memory_config)
    inputs = [a, b] if bias_tensor is None else [a, b, bias_tensor]
    attrs = {"transpose_input": ta, "transpose_other": tb, "compute_kernel_config": compute_kernel_config}
    names = ("input", "other", "bias")
    return run(op, inputs, spec, into, lambda xs: matmul_values(xs, ta, tb, len(shape), fp32), attrs, names)


def _golden_matmul(torch, input, other, *, transpose_input=False, transpose_other=False, bias=None, **_):
    a = input.transpose(-1, -2) if transpose_input else input
    b = other.transpose(-1, -2) if transpose_other else other
    out = torch.matmul(a, b)
    return out if bias is None else out + bias.reshape(-1) if bias.numel() > 1 else out + bias.reshape(())


@register(
    name="moreh.matmul",
    kind=OpKind.MATMUL,
    family=OpFamily.MATMUL,
    device_operation="MorehMatmulOperation",
    golden=torch_golden(_golden_matmul),
)
def matmul(
    input: Tensor,
    other: Tensor,
    *,
    transpose_input: bool = False,
    transpose_other: bool = False,
    output: Tensor | None = None,
    bias: Tensor | None = None,
    memory_config: MemoryConfig | None = None,
    compute_kernel_config: object = None,
) -> Tensor:
    """``input @ other`` (each transposed as asked, batch dims broadcast) plus ``bias``; into
    ``output`` when given (written in place)."""
    return moreh_matmul(
        "matmul", input, other, (transpose_input, transpose_other), output, bias, memory_config, compute_kernel_config
    )


def _rank3(op: str, name: str, tensor: object) -> Tensor:
    checked = moreh_tensor(op, name, tensor, BF16_BFP8)
    if len(checked.shape) != 3:
        raise MeshnnValueError(f"ttnn.operations.moreh.{op}: {name} must be a rank-3 tensor, got {list(checked.shape)}")
    return checked


@register(
    name="moreh.bmm",
    kind=OpKind.MATMUL,
    family=OpFamily.MATMUL,
    device_operation="MorehMatmulOperation",
    golden=torch_golden(lambda torch, input, mat2, **_: torch.bmm(input, mat2)),
)
def bmm(
    input: Tensor,
    mat2: Tensor,
    *,
    output: Tensor | None = None,
    memory_config: MemoryConfig | None = None,
    compute_kernel_config: object = None,
) -> Tensor:
    """The batched product of two rank-3 tensors, ``[B, M, K] @ [B, K, N]``."""
    a, b = _rank3("bmm", "input", input), _rank3("bmm", "mat2", mat2)
    return moreh_matmul("bmm", a, b, (False, False), output, None, memory_config, compute_kernel_config)


def _golden_linear(torch, input, weight, *, bias=None, **_):
    out = torch.matmul(input, weight.transpose(-1, -2))
    return out if bias is None else out + (bias.reshape(-1) if bias.numel() > 1 else bias.reshape(()))


@register(
    name="moreh.linear",
    kind=OpKind.MATMUL,
    family=OpFamily.MATMUL,
    device_operation="MorehMatmulOperation",
    golden=torch_golden(_golden_linear),
)
def linear(
    input: Tensor,
    weight: Tensor,
    *,
    bias: Tensor | None = None,
    output: Tensor | None = None,
    memory_config: MemoryConfig | None = None,
    compute_kernel_config: object = None,
) -> Tensor:
    """``input @ weight^T + bias`` (``weight`` ``[out, in]``, ``bias`` one value or one per output)."""
    return moreh_matmul("linear", input, weight, (False, True), output, bias, memory_config, compute_kernel_config)
