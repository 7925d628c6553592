"""ttnn's element-wise losses: ``l1_loss`` (``|reference - prediction|``) and ``mse_loss``
(``(reference - prediction)^2``), each reduced as ``ttnn.LossReductionMode`` says: NONE (the
element-wise loss), SUM or MEAN (over every element, a rank-0 result), as ttnn composes them: a
subtraction with the absolute value or square fused (one rounding), then ``ttnn.sum`` /
``ttnn.mean``.

May import: :mod:`meshnn.errors`, :mod:`meshnn.tensor`, the ops' registry and the element-wise and
reduction ops.
"""

from __future__ import annotations

import enum

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.mesh.op_keywords import ttnn_keywords
from meshnn.ops.checks import broadcast_shape, device_input
from meshnn.ops.config import UnaryOpType, UnaryWithParam
from meshnn.ops.eltwise.binary import binary
from meshnn.ops.reduce.generic import mean, sum
from meshnn.ops.registry import OpKind, register, torch_golden
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor


class LossReductionMode(enum.Enum):
    """``ttnn.LossReductionMode``: how a loss is reduced (ttnn's members and numbers)."""

    NONE = 0
    MEAN = 1
    SUM = 2


LossReductionMode.__module__ = "meshnn"


def _loss(op: str, fused: UnaryOpType, reference, prediction, reduction, memory_config, output_tensor) -> Tensor:
    a = device_input(op, "input_reference", reference)
    b = device_input(op, "input_prediction", prediction)
    if not isinstance(reduction, LossReductionMode):
        raise MeshnnTypeError(f"ttnn.{op}: reduction must be a ttnn.LossReductionMode, got {reduction!r}")
    try:
        broadcast_shape(op, tuple(a.shape), tuple(b.shape))
    except MeshnnValueError:
        raise MeshnnValueError(
            f"ttnn.{op}: input_reference {list(a.shape)} and input_prediction {list(b.shape)} do not broadcast"
        ) from None
    if reduction is not LossReductionMode.NONE and output_tensor is not None:
        raise MeshnnTypeError(f"ttnn.{op}: output_tensor holds the element-wise loss; a reduced one is returned anew")
    loss = binary(
        "subtract", a, b, memory_config=memory_config, output_tensor=output_tensor, activations=[UnaryWithParam(fused)]
    )
    if reduction is LossReductionMode.NONE:
        return loss
    reduce = sum if reduction is LossReductionMode.SUM else mean
    result = reduce(loss, memory_config=memory_config)
    loss.deallocate()
    return result


def _golden(name: str):
    def golden(t, reference, prediction, *args, reduction="none", **kwargs):
        if isinstance(reduction, LossReductionMode):
            reduction = reduction.name.lower()
        loss = t.nn.L1Loss if name == "l1" else t.nn.MSELoss
        return loss(reduction=reduction)(reference, prediction)

    return torch_golden(golden)


_LOSS = {"kind": OpKind.LOSS, "family": OpFamily.BINARY, "device_operation": "BinaryNgDeviceOperation"}


@register(**_LOSS, golden=_golden("l1"))
@ttnn_keywords()
def l1_loss(
    input_reference: Tensor,
    input_prediction: Tensor,
    *,
    reduction: LossReductionMode = LossReductionMode.NONE,
    memory_config: MemoryConfig | None = None,
    output_tensor: Tensor | None = None,
) -> Tensor:
    """``ttnn.l1_loss``: ``|input_reference - input_prediction|``, reduced by ``reduction``."""
    return _loss("l1_loss", UnaryOpType.ABS, input_reference, input_prediction, reduction, memory_config,
                 output_tensor)  # fmt: skip


@register(**_LOSS, golden=_golden("mse"))
@ttnn_keywords()
def mse_loss(
    input_reference: Tensor,
    input_prediction: Tensor,
    *,
    reduction: LossReductionMode = LossReductionMode.NONE,
    memory_config: MemoryConfig | None = None,
    output_tensor: Tensor | None = None,
) -> Tensor:
    """``ttnn.mse_loss``: ``(input_reference - input_prediction)^2``, reduced by ``reduction``."""
    return _loss("mse_loss", UnaryOpType.SQUARE, input_reference, input_prediction, reduction, memory_config,
                 output_tensor)  # fmt: skip
