"""The arithmetic moreh's layer and group norms share, on ``(k, R, M)`` float64 arrays: ``R`` rows
of ``M`` values each normalized together (a layer norm's trailing dims, a group's channels and
pixels), ``k`` devices.

May import: numpy only.
"""

from __future__ import annotations

import numpy as np


def row_stats(x: np.ndarray, eps: float) -> tuple[np.ndarray, np.ndarray]:
    """Each row's mean and ``1 / sqrt(var + eps)`` (the biased variance), as ``(k, R, 1)``."""
    mean = x.mean(axis=-1, keepdims=True)
    var = np.square(x - mean).mean(axis=-1, keepdims=True)
    return mean, 1.0 / np.sqrt(var + eps)


def row_input_grad(x: np.ndarray, dy_gamma: np.ndarray, mean: np.ndarray, rstd: np.ndarray) -> np.ndarray:
    """The input's gradient of a row normalization from the output's gradient times gamma
    (``dy_gamma``) and the forward's mean and rstd: ``rstd * (g - mean(g) - xhat * mean(g * xhat))``."""
    xhat = (x - mean) * rstd
    g = dy_gamma
    return rstd * (g - g.mean(axis=-1, keepdims=True) - xhat * (g * xhat).mean(axis=-1, keepdims=True))


def normalized(x: np.ndarray, mean: np.ndarray, rstd: np.ndarray) -> np.ndarray:
    """``(x - mean) * rstd``."""
    return (x - mean) * rstd
