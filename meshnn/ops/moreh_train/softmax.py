"""moreh's softmax family: ``ttnn.operations.moreh.softmax`` / ``softmin`` / ``logsoftmax`` and
their ``_backward`` forms.

Forward ``(input_tensor, dim, *, output_tensor, op, strategy, memory_config,
compute_kernel_config)``: along ``dim`` (a uint32 below the rank),

- softmax ``exp(x - max) / sum(exp(x - max))``; softmin the softmax of ``-x``;
- logsoftmax ``x - max - log(sum(exp(x - max)))``.

Backward ``(output_tensor, output_grad_tensor, dim, *, input_grad_tensor, op, strategy, ...)``
from the forward's output ``y`` and its gradient ``dy``:

- softmax ``y * (dy - sum(y * dy))``; softmin its negation;
- logsoftmax ``dy - exp(y) * sum(dy)``.

ttnn's rules: TILE inputs, forward BFLOAT16 / BFLOAT8_B / FLOAT32, backward BFLOAT16 / BFLOAT8_B;
the output is the input's shape, dtype and layout in ``memory_config`` (default the input's), or
``output_tensor`` / ``input_grad_tensor`` written in place.  A ``strategy`` other than NONE must
suit the dim (SMALL_W / LARGE_W for the last, SMALL_H / LARGE_H for the second last, LARGE_C for
an outer one) and a SMALL one must fit the dim's tiles in a core's L1 as ttnn computes it; the
strategy only chooses a program on hardware, so it is checked and recorded.  ``op`` is accepted as
the binding has it (its default is the function's own kind) and decides what is computed.

Computed in float64 and rounded once into the output's dtype.

May import: every layer below the ops, the ops' checks, config, outputs, registry and this
package's arguments and strategies.
"""

from __future__ import annotations

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.mesh.op_keywords import ttnn_keywords
from meshnn.ops.moreh_train.arguments import (
    kernel_config,
    label,
    moreh_tensor,
    one_mesh,
    outputs_for,
    run_elementwise,
    uint,
)
from meshnn.ops.moreh_train.strategies import (
    MorehSoftmaxBackwardOp,
    MorehSoftmaxBackwardOpParallelizationStrategy,
    MorehSoftmaxOp,
    MorehSoftmaxOpParallelizationStrategy,
)
from meshnn.ops.outputs import out_spec_like
from meshnn.ops.registry import OpKind, register, torch_golden
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor

FORWARD_DTYPES = (DataType.BFLOAT16, DataType.BFLOAT8_B, DataType.FLOAT32)
BACKWARD_DTYPES = (DataType.BFLOAT16, DataType.BFLOAT8_B)
L1_BYTES = 512 * 1024  # the L1 a SMALL program's circular buffers must fit under (ttnn's L1_512KB)
_KIND = {MorehSoftmaxOp.SOFTMAX: "softmax", MorehSoftmaxOp.SOFTMIN: "softmin", MorehSoftmaxOp.LOGSOFTMAX: "logsoftmax"}
_BACK = {MorehSoftmaxBackwardOp[k.name]: v for k, v in _KIND.items()}


def forward_values(x: np.ndarray, axis: int, kind: str) -> np.ndarray:
    """softmax / softmin / logsoftmax of ``x`` along ``axis``, in float64."""
    wide = x.astype(np.float64)
    if kind == "softmin":
        wide = -wide
    top = wide.max(axis=axis, keepdims=True)
    shifted = wide - np.where(np.isfinite(top), top, 0.0)
    e = np.exp(shifted)
    total = e.sum(axis=axis, keepdims=True)
    if kind == "logsoftmax":
        return shifted - np.log(total)
    return e / total


def backward_values(y: np.ndarray, dy: np.ndarray, axis: int, kind: str) -> np.ndarray:
    """The input's gradient from the forward's output ``y`` and its gradient ``dy``, in float64."""
    y, dy = y.astype(np.float64), dy.astype(np.float64)
    if kind == "logsoftmax":
        return dy - np.exp(y) * dy.sum(axis=axis, keepdims=True)
    grad = y * (dy - (y * dy).sum(axis=axis, keepdims=True))
    return -grad if kind == "softmin" else grad


def _small_fits(x: Tensor, dim: int, config: object) -> bool:
    """Whether a SMALL program's circular buffers for ``dim`` fit in L1, as ttnn reckons them: the
    input, output and three intermediates of the dim's whole row of tiles, and five single tiles."""
    tiles = -(-x.shape[dim] // 32)
    tile = x.spec.dtype.tile_size(x.spec.tile)
    wide = 4096 if (config is not None and getattr(config, "fp32_dest_acc_en", False)) else tile
    usage = 2 * tiles * tile + 2 * tile + 2 * tiles * wide + 3 * wide
    return x.device().system.arch_spec.l1_unreserved_base + usage <= L1_BYTES


def _check_strategy(op: str, x: Tensor, dim: int, strategy: object, kind: type, config: object) -> None:
    """A strategy given checked against the dim, as ttnn's program selection checks it."""
    if not isinstance(strategy, kind):
        raise MeshnnTypeError(f"ttnn.{label(op)}: strategy must be a {kind.__name__}, got {strategy!r}")
    name, rank = strategy.name, len(x.shape)  # type: ignore[attr-defined]
    if name == "NONE":
        return
    if dim == rank - 2 and name not in ("SMALL_H", "LARGE_H"):
        raise MeshnnValueError(f"ttnn.{label(op)}: Invalid parallelization strategy. {name} is not for dim H")
    if dim == rank - 1 and name not in ("SMALL_W", "LARGE_W"):
        raise MeshnnValueError(f"ttnn.{label(op)}: Invalid parallelization strategy. {name} is not for dim W")
    if dim < rank - 2 and name != "LARGE_C":
        raise MeshnnValueError(
            f"ttnn.{label(op)}: Invalid parallelization strategy. large c is for dim 0 to (rank - 3), got {name}"
        )
    if name.startswith("SMALL") and not _small_fits(x, dim, config):
        raise MeshnnValueError(f"ttnn.{label(op)}: not enough circular buffer memory for {name} (strategy)")


def _dim(op: str, x: Tensor, dim: object) -> int:
    axis = uint(op, "dim", dim)
    if axis >= len(x.shape):
        raise MeshnnValueError(f"ttnn.{label(op)}: dim {axis} should be less than output tensor rank {len(x.shape)}")
    return axis


def _forward(op, input_tensor, dim, output_tensor, kind_op, strategy, memory_config, compute_kernel_config):
    x = moreh_tensor(op, "input_tensor", input_tensor, FORWARD_DTYPES)
    axis = _dim(op, x, dim)
    if not isinstance(kind_op, MorehSoftmaxOp):
        raise MeshnnTypeError(f"ttnn.{label(op)}: op must be a MorehSoftmaxOp, got {kind_op!r}")
    config = kernel_config(op, compute_kernel_config)
    _check_strategy(op, x, axis, strategy, MorehSoftmaxOpParallelizationStrategy, config)
    out = None if output_tensor is None else moreh_tensor(op, "output_tensor", output_tensor, FORWARD_DTYPES)
    _same_shape(op, "output_tensor", out, x)
    mesh = one_mesh(op, {"input_tensor": x, "output_tensor": out})
    spec = out_spec_like(x, memory_config=memory_config, op=label(op))
    (target,) = outputs_for(mesh, x, [spec], [out])
    kind = _KIND[kind_op]
    attrs = {"dim": axis, "op": kind_op, "strategy": strategy, "memory_config": spec.memory_config}
    run_elementwise(op, mesh, [x], [target], lambda v: [forward_values(v[0], axis + 1, kind)], attrs)
    return target


def _same_shape(op: str, name: str, out: Tensor | None, x: Tensor) -> None:
    if out is not None and tuple(out.shape) != tuple(x.shape):
        raise MeshnnValueError(f"ttnn.{label(op)}: {name} is {list(out.shape)}; the output is {list(x.shape)}")


def _backward(op, output_tensor, output_grad_tensor, dim, input_grad_tensor, kind_op, strategy, memory_config,
              compute_kernel_config):  # fmt: skip
    y = moreh_tensor(op, "output_tensor", output_tensor, BACKWARD_DTYPES)
    dy = moreh_tensor(op, "output_grad_tensor", output_grad_tensor, BACKWARD_DTYPES)
    if tuple(dy.shape) != tuple(y.shape):
        raise MeshnnValueError(
            f"ttnn.{label(op)}: output_grad_tensor {list(dy.shape)} must have output_tensor's shape {list(y.shape)}"
        )
    axis = _dim(op, y, dim)
    if not isinstance(kind_op, MorehSoftmaxBackwardOp):
        raise MeshnnTypeError(f"ttnn.{label(op)}: op must be a MorehSoftmaxBackwardOp, got {kind_op!r}")
    config = kernel_config(op, compute_kernel_config)
    _check_strategy(op, y, axis, strategy, MorehSoftmaxBackwardOpParallelizationStrategy, config)
    given = None if input_grad_tensor is None else moreh_tensor(op, "input_grad_tensor", input_grad_tensor, ())
    _same_shape(op, "input_grad_tensor", given, y)
    mesh = one_mesh(op, {"output_tensor": y, "output_grad_tensor": dy, "input_grad_tensor": given})
    spec = out_spec_like(y, memory_config=memory_config, op=label(op))
    (target,) = outputs_for(mesh, y, [spec], [given])
    kind = _BACK[kind_op]
    attrs = {"dim": axis, "op": kind_op, "strategy": strategy, "memory_config": spec.memory_config}
    run_elementwise(op, mesh, [y, dy], [target], lambda v: [backward_values(v[0], v[1], axis + 1, kind)], attrs)
    return target


def _golden(kind: str):
    def body(torch, input_tensor, dim, **_):
        x = input_tensor.double()
        if kind == "softmin":
            return torch.nn.functional.softmin(x, dim)
        return torch.log_softmax(x, dim) if kind == "logsoftmax" else torch.softmax(x, dim)

    return torch_golden(body)


def _golden_backward(kind: str):
    def body(torch, output_tensor, output_grad_tensor, dim, **_):
        y, dy = output_tensor.double(), output_grad_tensor.double()
        if kind == "logsoftmax":
            return dy - torch.exp(y) * dy.sum(dim, keepdim=True)
        grad = y * (dy - (y * dy).sum(dim, keepdim=True))
        return -grad if kind == "softmin" else grad

    return torch_golden(body)


_S = MorehSoftmaxOpParallelizationStrategy.NONE
_B = MorehSoftmaxBackwardOpParallelizationStrategy.NONE
_REC = ("compute_kernel_config",)
_FWD = {"kind": OpKind.NORMALIZATION, "family": OpFamily.SOFTMAX, "device_operation": "MorehSoftmaxOperation"}
_BWD = {"kind": OpKind.BACKWARD, "family": OpFamily.SOFTMAX, "device_operation": "MorehSoftmaxBackwardOperation"}


@register("moreh.softmax", golden=_golden("softmax"), **_FWD)
@ttnn_keywords("operations.moreh.softmax", records=_REC)
def moreh_softmax(
    input_tensor: Tensor,
    dim: int,
    *,
    output_tensor: Tensor | None = None,
    op: MorehSoftmaxOp = MorehSoftmaxOp.SOFTMAX,
    strategy: MorehSoftmaxOpParallelizationStrategy = _S,
    memory_config: MemoryConfig | None = None,
    compute_kernel_config: object = None,
) -> Tensor:
    """Softmax along ``dim`` (see the module's text)."""
    return _forward("moreh.softmax", input_tensor, dim, output_tensor, op, strategy, memory_config,
                    compute_kernel_config)  # fmt: skip


@register("moreh.softmin", golden=_golden("softmin"), **_FWD)
@ttnn_keywords("operations.moreh.softmin", records=_REC)
def moreh_softmin(
    input_tensor: Tensor,
    dim: int,
    *,
    output_tensor: Tensor | None = None,
    op: MorehSoftmaxOp = MorehSoftmaxOp.SOFTMIN,
    strategy: MorehSoftmaxOpParallelizationStrategy = _S,
    memory_config: MemoryConfig | None = None,
    compute_kernel_config: object = None,
) -> Tensor:
    """Softmin (the softmax of ``-x``) along ``dim``."""
    return _forward("moreh.softmin", input_tensor, dim, output_tensor, op, strategy, memory_config,
                    compute_kernel_config)  # fmt: skip


@register("moreh.logsoftmax", golden=_golden("logsoftmax"), **_FWD)
@ttnn_keywords("operations.moreh.logsoftmax", records=_REC)
def moreh_logsoftmax(
    input_tensor: Tensor,
    dim: int,
    *,
    output_tensor: Tensor | None = None,
    op: MorehSoftmaxOp = MorehSoftmaxOp.LOGSOFTMAX,
    strategy: MorehSoftmaxOpParallelizationStrategy = _S,
    memory_config: MemoryConfig | None = None,
    compute_kernel_config: object = None,
) -> Tensor:
    """The log of the softmax along ``dim``."""
    return _forward("moreh.logsoftmax", input_tensor, dim, output_tensor, op, strategy, memory_config,
                    compute_kernel_config)  # fmt: skip


@register("moreh.softmax_backward", golden=_golden_backward("softmax"), **_BWD)
@ttnn_keywords("operations.moreh.softmax_backward", records=_REC)
def moreh_softmax_backward(
    output_tensor: Tensor,
    output_grad_tensor: Tensor,
    dim: int,
    *,
    input_grad_tensor: Tensor | None = None,
    op: MorehSoftmaxBackwardOp = MorehSoftmaxBackwardOp.SOFTMAX,
    strategy: MorehSoftmaxBackwardOpParallelizationStrategy = _B,
    memory_config: MemoryConfig | None = None,
    compute_kernel_config: object = None,
) -> Tensor:
    """The softmax's input gradient from its output and the output's gradient."""
    return _backward("moreh.softmax_backward", output_tensor, output_grad_tensor, dim, input_grad_tensor, op,
                     strategy, memory_config, compute_kernel_config)  # fmt: skip


@register("moreh.softmin_backward", golden=_golden_backward("softmin"), **_BWD)
@ttnn_keywords("operations.moreh.softmin_backward", records=_REC)
def moreh_softmin_backward(
    output_tensor: Tensor,
    output_grad_tensor: Tensor,
    dim: int,
    *,
    input_grad_tensor: Tensor | None = None,
    op: MorehSoftmaxBackwardOp = MorehSoftmaxBackwardOp.SOFTMIN,
    strategy: MorehSoftmaxBackwardOpParallelizationStrategy = _B,
    memory_config: MemoryConfig | None = None,
    compute_kernel_config: object = None,
) -> Tensor:
    """The softmin's input gradient from its output and the output's gradient."""
    return _backward("moreh.softmin_backward", output_tensor, output_grad_tensor, dim, input_grad_tensor, op,
                     strategy, memory_config, compute_kernel_config)  # fmt: skip


@register("moreh.logsoftmax_backward", golden=_golden_backward("logsoftmax"), **_BWD)
@ttnn_keywords("operations.moreh.logsoftmax_backward", records=_REC)
def moreh_logsoftmax_backward(
    output_tensor: Tensor,
    output_grad_tensor: Tensor,
    dim: int,
    *,
    input_grad_tensor: Tensor | None = None,
    op: MorehSoftmaxBackwardOp = MorehSoftmaxBackwardOp.LOGSOFTMAX,
    strategy: MorehSoftmaxBackwardOpParallelizationStrategy = _B,
    memory_config: MemoryConfig | None = None,
    compute_kernel_config: object = None,
) -> Tensor:
    """The logsoftmax's input gradient from its output (the log-probabilities) and its gradient."""
    return _backward("moreh.logsoftmax_backward", output_tensor, output_grad_tensor, dim, input_grad_tensor, op,
                     strategy, memory_config, compute_kernel_config)  # fmt: skip
