"""The enums of moreh's softmax family, as ``ttnn.operations.moreh`` exports them: the op a
kernel computes and the parallelization strategy (which program runs: small / large along W or H,
large along an outer dim C).  The strategies only choose a program on hardware; meshnn checks a
strategy given against the dim, as ttnn does, and records it.

ttnn's Python module binds ``SoftmaxOp`` to the *strategy* enum by mistake; meshnn binds it to the
op enum ``MorehSoftmaxOp`` that the name means (``SOFTMAX`` / ``SOFTMIN`` / ``LOGSOFTMAX``).

May import: nothing of meshnn (``meshnn.ops.loading`` imports it at ``import meshnn``).
"""

from __future__ import annotations

import enum


class MorehSoftmaxOp(enum.Enum):
    """Which of the three a softmax-family kernel computes."""

    SOFTMAX = 0
    SOFTMIN = 1
    LOGSOFTMAX = 2


class MorehSoftmaxOpParallelizationStrategy(enum.Enum):
    """The forward program: NONE lets the op choose (small when the dim's tiles fit L1)."""

    NONE = 0
    SMALL_W = 1
    SMALL_H = 2
    LARGE_W = 3
    LARGE_H = 4
    LARGE_C = 5


class MorehSoftmaxBackwardOp(enum.Enum):
    """Which gradient a softmax-family backward kernel computes."""

    SOFTMAX = 0
    SOFTMIN = 1
    LOGSOFTMAX = 2


class MorehSoftmaxBackwardOpParallelizationStrategy(enum.Enum):
    """The backward program: NONE lets the op choose."""

    NONE = 0
    SMALL_W = 1
    SMALL_H = 2
    LARGE_W = 3
    LARGE_H = 4
    LARGE_C = 5


NAMESPACE_NAMES: dict[str, type[enum.Enum]] = {
    "MorehSoftmaxOp": MorehSoftmaxOp,
    "MorehSoftmaxOpParallelizationStrategy": MorehSoftmaxOpParallelizationStrategy,
    "MorehSoftmaxBackwardOp": MorehSoftmaxBackwardOp,
    "MorehSoftmaxBackwardOpParallelizationStrategy": MorehSoftmaxBackwardOpParallelizationStrategy,
    "SoftmaxOp": MorehSoftmaxOp,
    "SoftmaxOpParallelizationStrategy": MorehSoftmaxOpParallelizationStrategy,
    "SoftmaxBackwardOp": MorehSoftmaxBackwardOp,
    "SoftmaxBackwardOpParallelizationStrategy": MorehSoftmaxBackwardOpParallelizationStrategy,
}
"""The enums by the names ``ttnn.operations.moreh`` (and ``ttnn._ttnn.operations.moreh``) has."""
