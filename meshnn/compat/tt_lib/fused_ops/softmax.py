"""``tt_lib.fused_ops.softmax``: softmax over the last dim composed of ttnn ops, as tt_lib's was."""

from __future__ import annotations

import torch

import meshnn


def softmax(x: meshnn.Tensor, stable: bool = False) -> meshnn.Tensor:
    """exp(x) (less the row's max first when ``stable``) times the reciprocal of its row sum (dim 3),
    each step a ttnn op with its own rounding into ``x``'s dtype."""
    z = meshnn.subtract(x, meshnn.max(x, 3, keepdim=True)) if stable else x
    numerator = meshnn.exp(z)
    return meshnn.multiply(numerator, meshnn.reciprocal(meshnn.sum(numerator, 3, keepdim=True)))


def ref_stable_softmax(x: torch.Tensor) -> torch.Tensor:
    """The torch reference: softmax over dim 3."""
    return torch.softmax(x, 3)
