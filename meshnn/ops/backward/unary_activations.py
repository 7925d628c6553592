"""The backward ops of ttnn's activations (relu, gelu, silu, the shrink, hard- and soft- families,
clamp, threshold, logit...), one :class:`~meshnn.ops.backward.defs.GradDef` each, with ttnn's
parameter names and defaults.  Each derivative is the one ttnn's composite computes, in float32:
a piecewise one takes ttnn's side at the break points (``relu_bw`` is 0 at 0, ``hardtanh_bw`` 0
at ``min`` and ``max``), and ``selu_bw`` uses ttnn's constants (1.0507, 1.67326).

May import: numpy, the element-wise special functions and the backward package.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from meshnn.errors import MeshnnValueError
from meshnn.ops.backward import goldens
from meshnn.ops.backward.binding import MEMORY_CONFIG, QUEUE_ID, Kind, a, k
from meshnn.ops.backward.defs import GRAD, INPUT, INPUT_GRAD, Form, GradDef, number, table, unary
from meshnn.ops.backward.run import Result, results
from meshnn.ops.eltwise import special
from meshnn.perf.desc import OpFamily

NAN, INF = np.float32(np.nan), np.float32(np.inf)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-x))


def gelu_derivative(g: np.ndarray, x: np.ndarray, approximate: str = "none") -> np.ndarray:
    """grad * gelu'(x), exact ('none') or of gelu's tanh approximation ('tanh')."""
    if approximate == "tanh":
        beta, kappa = np.float32(math.sqrt(2 / math.pi)), np.float32(0.044715)
        inner = np.tanh(beta * (x + kappa * x * x * x))
        right = (1 - inner * inner) * (0.5 * x) * (beta * (1 + 3 * kappa * x * x))
        return g * (0.5 * (1 + inner) + right)
    cdf = 0.5 * (1 + special.erf(np.asarray(x, np.float64) / math.sqrt(2)))
    pdf = np.exp(-0.5 * x * x) * np.float32(1 / math.sqrt(2 * math.pi))
    return g * (cdf.astype(np.float32) + x * pdf)


def check_approximate(op: str, params: dict[str, Any]) -> None:
    """ttnn's gelu approximations: 'none' or 'tanh'."""
    if params["approximate"] not in ("none", "tanh"):
        raise MeshnnValueError(f"ttnn.{op}: approximate must be 'none' or 'tanh', got {params['approximate']!r}")


def _logit(g: np.ndarray, x: np.ndarray) -> np.ndarray:
    out = np.where((x >= 0) & (x <= 1), g / (x * (1 - x)), NAN)
    return np.where((x == 0) | (x == 1), np.sign(g) * INF, out)


def _logiteps(g: np.ndarray, x: np.ndarray, eps: float = 0.0) -> np.ndarray:
    outside = (x < np.float32(eps)) | (x > np.float32(1 - eps))
    inside = np.where((x == 0) | (x == 1), np.sign(g) * INF, g / (x * (1 - x)))
    return np.where(outside, NAN if eps < 0 else np.float32(0), inside)


def _log_sigmoid(g: np.ndarray, x: np.ndarray) -> np.ndarray:
    z = np.exp(-np.abs(x))
    negative = x < 0
    return g * (np.where(negative, 1, 0) - np.where(negative, 1, -1) * (z / (1 + z)))


def _softplus(g: np.ndarray, x: np.ndarray, beta: float = 1.0, threshold: float = 20.0) -> np.ndarray:
    scaled = x * np.float32(beta)
    e = np.exp(scaled)
    return np.where(scaled - np.float32(threshold) > 0, g, g * e / (e + 1))


def _hardswish(g: np.ndarray, x: np.ndarray) -> np.ndarray:
    return np.where(x < -3, np.float32(0), np.where(x <= 3, g * (x * np.float32(0.3333) + 0.5), g))


def _clamp(g: np.ndarray, x: np.ndarray, min: float | None = None, max: float | None = None) -> np.ndarray:
    inside = np.ones(x.shape, bool)
    if min is not None:
        inside &= x >= np.float32(min)
    if max is not None:
        inside &= x <= np.float32(max)
    return g * inside


def check_bounds(op: str, params: dict[str, Any]) -> None:
    """clamp_bw / clip_bw: at most one of min and max may be None."""
    if params["min"] is None and params["max"] is None:
        raise MeshnnValueError(f"ttnn.{op}: only one of 'min' or 'max' can be None; both are")


def _clamp_tensors(op: str):
    """clamp_bw / clip_bw with tensor bounds, as ttnn's composite computes it: with one bound, the
    gradient where the input is on its side; with both, where ``input <= min`` and ``input >= max``
    (ttnn's tensor overload tests the bounds that way round)."""

    def run(grad_tensor, input_tensor, min, max, memory_config=None, queue_id=0) -> list:
        check_bounds(op, {"min": min, "max": max})
        named = {"grad_tensor": grad_tensor, "input_tensor": input_tensor}
        if min is not None and max is not None:
            named |= {"min": min, "max": max}
            compute = lambda g, x, lo, hi: g * ((x <= lo) & (x >= hi))  # noqa: E731
        elif min is not None:
            named["min"] = min
            compute = lambda g, x, lo: g * (x >= lo)  # noqa: E731
        else:
            named["max"] = max
            compute = lambda g, x, hi: g * (x <= hi)  # noqa: E731
        grad = [Result(compute, "input_tensor")]
        return results(op, named, grad, memory_config=memory_config, queue_id=queue_id)

    bounds = (a("min", Kind.TENSOR, None), a("max", Kind.TENSOR, None))
    return Form((GRAD, INPUT, *bounds, MEMORY_CONFIG, QUEUE_ID), run=run)


def _clamp_def(name: str) -> GradDef:
    bounds = (a("min", Kind.NUMBER, None), a("max", Kind.NUMBER, None))
    return GradDef(name, (unary(_clamp, *bounds, check=check_bounds), _clamp_tensors(name)), goldens.clamp())


def _experimental_gelu() -> Form:
    """``ttnn.experimental.gelu_bw``: one device operation returning the gradient itself (not a list)."""

    def run(grad_output_tensor, input_tensor, approximate, memory_config, input_grad, queue_id=0) -> Any:
        check_approximate("experimental.gelu_bw", {"approximate": approximate})
        grad = Result(lambda g, x: gelu_derivative(g, x, approximate), "input_tensor")
        named = {"grad_output_tensor": grad_output_tensor, "input_tensor": input_tensor}
        return results(
            "experimental.gelu_bw", named, [grad], memory_config=memory_config, queue_id=queue_id, into=[input_grad]
        )[0]

    args = (a("grad_output_tensor", Kind.TENSOR), INPUT, k("approximate", Kind.STR, "none"), MEMORY_CONFIG)
    return Form((*args, INPUT_GRAD, QUEUE_ID), run=run)


U = GradDef
_SELU_SCALE, _SELU_ALPHA = np.float32(1.0507), np.float32(1.673260)
APPROXIMATE = k("approximate", Kind.STR, "none")

DEFS = (
    U("relu_bw", (unary(lambda g, x: g * (x > 0)),), goldens.unary("relu")),
    U("relu6_bw", (unary(lambda g, x: np.where((x > 0) & (x < 6), g, np.float32(0))),), goldens.unary("relu6")),
    U("sigmoid_bw", (unary(lambda g, x: g * _sigmoid(x) * (1 - _sigmoid(x))),), goldens.unary("sigmoid")),
    U(
        "silu_bw",
        (unary(lambda g, x: g * _sigmoid(x) * (1 + x * (1 - _sigmoid(x))), out=True),),
        goldens.unary("silu"),
    ),
    U(
        "selu_bw",
        (unary(lambda g, x: np.where(x > 0, g * _SELU_SCALE, g * _SELU_SCALE * _SELU_ALPHA * np.exp(x))),),
        goldens.unary("selu"),
    ),
    U(
        "elu_bw",
        (unary(lambda g, x, alpha: np.where(x > 0, g, g * np.exp(x) * np.float32(alpha)), number("alpha", 1.0)),),
        goldens.functional("elu"),
    ),
    U(
        "celu_bw",
        (unary(lambda g, x, alpha: np.where(x > 0, g, g * np.exp(x * np.float32(1 / alpha))), number("alpha", 1.0)),),
        goldens.functional("celu"),
    ),
    U(
        "leaky_relu_bw",
        (
            unary(
                lambda g, x, negative_slope: np.where(x > 0, g, g * np.float32(negative_slope)),
                number("negative_slope", 0.01),
            ),
        ),
        goldens.functional("leaky_relu"),
    ),
    U(
        "hardshrink_bw",
        (unary(lambda g, x, lambd: np.where(np.abs(x) > lambd, g, np.float32(0)), number("lambd", 0.5)),),
        goldens.functional("hardshrink"),
    ),
    U(
        "softshrink_bw",
        (unary(lambda g, x, lambd: np.where((x < -lambd) | (x > lambd), g, np.float32(0)), number("lambd", 0.5)),),
        goldens.functional("softshrink"),
    ),
    U(
        "hardtanh_bw",
        (
            unary(
                lambda g, x, min, max: np.where((x <= min) | (x >= max), np.float32(0), g),
                number("min", -1.0),
                number("max", 1.0),
            ),
        ),
        goldens.functional("hardtanh", min="min_val", max="max_val"),
    ),
    U(
        "threshold_bw",
        (
            unary(
                lambda g, x, min, max: np.where(x - np.float32(min) > 0, g, np.float32(0)),
                a("min", Kind.NUMBER),
                a("max", Kind.NUMBER),
            ),
        ),
        goldens.functional("threshold"),
    ),
    U(
        "softplus_bw",
        (unary(_softplus, number("beta", 1.0), number("threshold", 20.0)),),
        goldens.functional("softplus"),
    ),
    U(
        "hardsigmoid_bw",
        (unary(lambda g, x: np.where((x <= -3) | (x >= 3), np.float32(0), g * np.float32(1 / 6))),),
        goldens.unary("hardsigmoid"),
    ),
    U("hardswish_bw", (unary(_hardswish),), goldens.unary("hardswish")),
    U("softsign_bw", (unary(lambda g, x: g / ((1 + np.abs(x)) ** 2)),), goldens.unary("softsign")),
    U("tanhshrink_bw", (unary(lambda g, x: g * np.tanh(x) ** 2),), goldens.unary("tanhshrink")),
    U("log_sigmoid_bw", (unary(_log_sigmoid),), goldens.unary("logsigmoid")),
    U("logit_bw", (unary(_logit),), goldens.unary("logit")),
    U("logiteps_bw", (unary(_logiteps, number("eps", 0.0)),), goldens.functional("logit")),
    U("gelu_bw", (unary(gelu_derivative, APPROXIMATE, out=True, check=check_approximate),), goldens.gelu()),
    U(
        "experimental.gelu_bw",
        (_experimental_gelu(),),
        goldens.gelu(),
        family=OpFamily.UNARY,
        device_operation="GeluBackwardDeviceOperation",
        modelled=True,
    ),
    _clamp_def("clamp_bw"),
    _clamp_def("clip_bw"),
)

OPS = table(DEFS)
"""The public activation backward ops by name."""
