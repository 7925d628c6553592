"""``ttnn.transformer.attention_softmax`` and its in-place form ``attention_softmax_``: softmax over
the last dim of attention scores scaled by ``1 / sqrt(head_size)`` with an additive
``attention_mask`` (and ``causal_mask``), composed as ttnn composes it: without a mask
``multiply`` then ``softmax``; with one ``scale_mask_softmax`` (``scale_mask_softmax_in_place``
for the in-place form, which needs the mask), numerically stable (the row's max subtracted first:
ttnn's composite passes ``numeric_stable=true``, whatever the in-place op's own default).

May import: :mod:`meshnn.errors`, :mod:`meshnn.tensor` and the ops' registry and checks.
"""

from __future__ import annotations

import math

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.ops.checks import device_input
from meshnn.ops.registry import OpKind, lookup, register, torch_golden
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor


def _golden(torch, input_tensor, *_, head_size=None, attention_mask=None, **__):
    scaled = input_tensor * (1 / head_size**0.5 if head_size is not None else 1.0)
    if attention_mask is not None:
        scaled = scaled + attention_mask
    return torch.softmax(scaled, -1)


def _scale(op: str, head_size: object) -> float:
    if head_size is None:
        return 1.0
    if isinstance(head_size, bool) or not isinstance(head_size, int) or head_size <= 0:
        raise MeshnnTypeError(f"ttnn.{op}: head_size must be a positive int or None, got {head_size!r}")
    return 1.0 / math.sqrt(head_size)


def _common(op: str, tensor: object, attention_mask: object, causal_mask: object) -> Tensor:
    checked = device_input(op, "tensor", tensor)
    if attention_mask is not None:
        device_input(op, "attention_mask", attention_mask)
    if not isinstance(causal_mask, bool):
        raise MeshnnTypeError(f"ttnn.{op}: causal_mask must be a bool, got {causal_mask!r}")
    return checked


@register(
    "transformer.attention_softmax",
    kind=OpKind.TRANSFORMER,
    family=OpFamily.SOFTMAX,
    golden=torch_golden(_golden),
)
def attention_softmax(
    tensor: Tensor,
    *,
    head_size: int | None = None,
    attention_mask: Tensor | None = None,
    program_config: object = None,
    causal_mask: bool = False,
    memory_config: MemoryConfig | None = None,
) -> Tensor:
    """softmax(tensor / sqrt(head_size) + attention_mask) over the last dim."""
    op = "transformer.attention_softmax"
    checked = _common(op, tensor, attention_mask, causal_mask)
    scale = _scale(op, head_size)
    config = memory_config if memory_config is not None else checked.memory_config()
    if attention_mask is None:
        scaled = lookup("multiply").function(checked, scale)
        result = lookup("softmax").function(scaled, -1, memory_config=config)
        scaled.deallocate()
        return result
    softmax = lookup("scale_mask_softmax").function
    return softmax(
        checked, scale, attention_mask, memory_config=config, is_causal_mask=causal_mask, numeric_stable=True
    )


@register(
    "transformer.attention_softmax_",
    kind=OpKind.TRANSFORMER,
    family=OpFamily.SOFTMAX,
    golden=torch_golden(_golden),
)
def attention_softmax_(
    tensor: Tensor,
    *,
    head_size: int | None = None,
    attention_mask: Tensor | None = None,
    program_config: object = None,
    causal_mask: bool = False,
    memory_config: MemoryConfig | None = None,
) -> Tensor:
    """:func:`attention_softmax` written into ``tensor`` (ttnn needs ``attention_mask`` for it)."""
    op = "transformer.attention_softmax_"
    checked = _common(op, tensor, attention_mask, causal_mask)
    if attention_mask is None:
        raise MeshnnValueError(
            f"ttnn.{op}: Cannot apply divide by sqrt(head_size) using in-place version when attention_mask is not set."
        )
    softmax = lookup("scale_mask_softmax_in_place").function
    return softmax(checked, _scale(op, head_size), attention_mask, is_causal_mask=causal_mask, numeric_stable=True)
