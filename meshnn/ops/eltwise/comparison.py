"""``ttnn.pearson_correlation_coefficient``: how well a result follows its reference, as ttnn's
tests measure it (a Python operation of ttnn's, declared as one here).

The coefficient is Pearson's r of the flattened values in float64 (bfloat16 ones widened), with
ttnn's conventions: NaN and infinities are set to 0 in both before it is taken; both all-NaN is
1.0, one all-NaN 0.0; one all-zero and the other not 0.0; equal tensors 1.0; a constant pair
whose r is undefined 1.0.

May import: :mod:`meshnn.errors`, :mod:`meshnn.tensor` and the ops' registry (torch at the call).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from meshnn.errors import MeshnnTypeError
from meshnn.mesh.op_keywords import ttnn_keywords
from meshnn.ops.registry import DeviceWork, OpKind, register
from meshnn.perf.desc import OpFamily
from meshnn.tensor.interop import to_torch
from meshnn.tensor.tensor import Tensor


def _finite(values: np.ndarray) -> np.ndarray:
    return np.where(np.isfinite(values), values, 0.0)


@register(kind=OpKind.PYTHON, family=OpFamily.COPY, modelled=False, runs=DeviceWork.HOST)
@ttnn_keywords()
def pearson_correlation_coefficient(expected: Any, actual: Any) -> float:
    """Pearson's r of ``expected`` (a torch tensor) and ``actual`` (a torch or ttnn tensor)."""
    import torch

    if isinstance(actual, Tensor):
        actual = to_torch(actual)
    if not isinstance(expected, torch.Tensor):
        raise MeshnnTypeError(
            f"ttnn.pearson_correlation_coefficient: expected must be a torch.Tensor, got {expected!r}"
        )
    if not isinstance(actual, torch.Tensor):
        actual = torch.as_tensor(actual)
    want = expected.detach().to(torch.float64).numpy().ravel()
    got = actual.detach().to(expected.dtype).to(torch.float64).numpy().ravel()
    if np.isnan(want).all() and np.isnan(got).all():
        return 1.0
    if np.isnan(want).all() or np.isnan(got).all():
        return 0.0
    if bool(np.any(want != 0)) != bool(np.any(got != 0)):  # NaN counts as non-zero, as bool() does
        return 0.0
    want, got = _finite(want), _finite(got)
    if np.array_equal(want, got):
        return 1.0
    with np.errstate(invalid="ignore", divide="ignore"):
        r = np.corrcoef(want, got)
    value = float(np.min(r))
    return 1.0 if np.isnan(value) else value
