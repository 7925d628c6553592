"""The unary activation, sign and predicate ops of ttnn, one
:class:`~meshnn.ops.eltwise.unary_defs.UnaryDef` each (ReLU and its variants, the GELU / SiLU /
sigmoid families, shrinks and thresholds, sign and comparison-with-zero predicates), and the
``ttnn.UnaryOpType`` members that are no public op of their own.  Predicates give 1 or 0 in the
input's dtype, as ttnn's do.

May import: numpy, the element-wise numeric functions and the unary definitions.
"""

from __future__ import annotations

import enum

import numpy as np

from meshnn.formats.dtypes import DataType
from meshnn.mesh.op_keywords import Keyword, count, number
from meshnn.ops.eltwise.functions import _gelu, _mish, _sigmoid, _silu, _softplus, golden_xielu, xielu
from meshnn.ops.eltwise.unary_defs import APPROX, UnaryDef, f, kwb, kwf
from meshnn.ops.signatures import REQUIRED, Param, kw

U = UnaryDef
_ZERO = np.float32(0)


def _hardsigmoid(x: np.ndarray) -> np.ndarray:
    return np.clip(x / np.float32(6) + np.float32(0.5), 0, 1)


def _selu(x: np.ndarray, scale: float = 1.0507009873554805, alpha: float = 1.6732632423543772) -> np.ndarray:
    return np.float32(scale) * np.where(x > 0, x, np.float32(alpha) * np.expm1(x))


def _shrink(x: np.ndarray, lambd: float, soft: bool) -> np.ndarray:
    keep = np.abs(x) > lambd
    return np.where(keep, x - np.sign(x) * np.float32(lambd) if soft else x, _ZERO)


def _logit(x: np.ndarray, eps: float | None = 0.0) -> np.ndarray:
    if eps:
        x = np.clip(x, np.float32(eps), np.float32(1 - eps))
    return np.log(x / (np.float32(1) - x))


def _rotate90(x: np.ndarray) -> np.ndarray:
    """Each (real, imaginary) pair of the last dimension times i: (-imaginary, real)."""
    pairs = x.reshape(*x.shape[:-1], -1, 2)
    return np.stack([-pairs[..., 1], pairs[..., 0]], axis=-1).reshape(x.shape)


def _golden_rotate90(t, x, **_):
    pairs = x.reshape(*x.shape[:-1], -1, 2)
    return t.stack([-pairs[..., 1], pairs[..., 0]], dim=-1).flatten(-2)


def _predicate(test):
    """A predicate as ttnn gives it: 1 where ``test`` holds, else 0 (booleans, cast to the dtype)."""
    return lambda x: test(x)


def _vector_mode(op: str, name: str, value: object) -> None:
    count(op, name, value)
    if value not in (2, 4):
        from meshnn.errors import MeshnnValueError

        raise MeshnnValueError(f"ttnn.{op}: {name} must be 2 (VecMode C) or 4 (VecMode RC), got {value}")


def _whole_exponent(op: str, name: str, value: object) -> None:
    """POWER_ITERATIVE's exponent: a whole number, 0 or more (tt-metal's kernel multiplies)."""
    number(op, name, value)
    if value is None or value < 0 or float(value) != int(value):  # type: ignore[operator, arg-type]
        from meshnn.errors import MeshnnValueError

        raise MeshnnValueError(f"ttnn.{op}: POWER_ITERATIVE needs a whole exponent of 0 or more, got {value!r}")


class SigmoidMode(enum.Enum):
    """``ttnn.SigmoidMode`` (newer ttnn's ``sigmoid(mode=)``, tt-metal 2026-06; its members and
    numbers): which kernel a device runs.  meshnn computes the exact sigmoid under each."""

    FastApproximate = 0
    AccurateWithFastExp = 1
    Accurate = 2


SigmoidMode.__module__ = "meshnn"


def _sigmoid_mode(op: str, name: str, value: object) -> None:
    if not isinstance(value, SigmoidMode):
        from meshnn.errors import MeshnnTypeError

        raise MeshnnTypeError(f"ttnn.{op}: {name} must be a ttnn.SigmoidMode, got {value!r}")


SIGMOID_KEYWORDS = (kw("vector_mode", 4, check=_vector_mode), kwb("fast_and_approximate_mode", False))
"""sigmoid's parameters, a fused SIGMOID's params in this order (ttnn's ``{vector_mode, approx}``)."""
SIGMOID_MODE = {"mode": Keyword(SigmoidMode.Accurate, _sigmoid_mode)}
"""newer ttnn's ``mode``: the kernel a device runs (checked and recorded; meshnn's sigmoid is exact
under each)."""

ACTIVATIONS = (
    U("relu", lambda x: np.maximum(x, 0), lambda t, x, **k: t.relu(x), member="RELU", integer=True),
    U("relu6", lambda x: np.clip(x, 0, 6), lambda t, x, **k: t.nn.functional.relu6(x), member="RELU6"),
    U(
        "relu_max",
        lambda x, upper_limit: np.maximum(np.minimum(x, np.float32(upper_limit)), 0),
        lambda t, x, upper_limit, **k: t.relu(t.min(x, t.tensor(upper_limit))),
        params=(f("upper_limit"),),
        member="RELU_MAX",
    ),
    U(
        "relu_min",
        lambda x, lower_limit: np.maximum(x, np.float32(lower_limit)),
        lambda t, x, lower_limit, **k: t.max(x, t.tensor(lower_limit)),
        params=(f("lower_limit"),),
        member="RELU_MIN",
    ),
    U(
        "leaky_relu",
        lambda x, negative_slope: np.where(x >= 0, x, x * np.float32(negative_slope)),
        lambda t, x, negative_slope=0.01, **k: t.nn.functional.leaky_relu(x, negative_slope=negative_slope),
        params=(f("negative_slope"),),
        member="LEAKY_RELU",
    ),
    U(
        "elu",
        lambda x, alpha=1.0: np.where(x > 0, x, np.float32(alpha) * np.expm1(x)),
        lambda t, x, alpha=1.0, **k: t.nn.functional.elu(x, alpha=alpha),
        params=(f("alpha", 1.0),),
        member="ELU",
    ),
    U(
        "celu",
        lambda x, alpha=1.0: np.where(x > 0, x, np.float32(alpha) * np.expm1(x / np.float32(alpha))),
        lambda t, x, alpha=1.0, **k: t.nn.functional.celu(x, alpha=alpha),
        params=(kwf("alpha", 1.0),),
        member="CELU",
    ),
    U(
        "selu",
        _selu,
        lambda t, x, **k: t.nn.functional.selu(x),
        params=(kwf("scale", 1.0507009873554805), kwf("alpha", 1.6732632423543772)),
        member="SELU",
    ),
    U(
        "gelu",
        lambda x, fast_and_approximate_mode=False: _gelu(x, bool(fast_and_approximate_mode)),
        lambda t, x, **k: t.nn.functional.gelu(x),
        params=(kwb("fast_and_approximate_mode", False),),
        member="GELU",
    ),
    U(
        "xielu",
        xielu,
        golden_xielu,
        params=(kwf("alpha_p", 0.8), kwf("alpha_n", 0.8)),
        member="XIELU",
        dtypes=frozenset({DataType.BFLOAT16, DataType.FLOAT32}),
    ),
    U("silu", _silu, lambda t, x, **k: t.nn.functional.silu(x), member="SILU"),
    U("swish", _silu, lambda t, x, **k: t.nn.functional.silu(x)),
    U(
        "sigmoid",
        lambda x, vector_mode=4, fast_and_approximate_mode=False: _sigmoid(x),
        lambda t, x, **k: t.sigmoid(x),
        params=SIGMOID_KEYWORDS,
        hardware=SIGMOID_MODE,
        member="SIGMOID",
        vector_mode=True,
    ),
    U("sigmoid_accurate", _sigmoid, lambda t, x, **k: t.sigmoid(x), hardware=APPROX),
    U(
        "log_sigmoid",
        lambda x: -_softplus(-x),
        lambda t, x, **k: t.nn.functional.logsigmoid(x),
        member="LOGSIGMOID",
    ),
    U("hardsigmoid", _hardsigmoid, lambda t, x, **k: t.nn.functional.hardsigmoid(x), member="HARDSIGMOID"),
    U("hardswish", lambda x: x * _hardsigmoid(x), lambda t, x, **k: t.nn.functional.hardswish(x), member="HARDSWISH"),
    U(
        "hardmish",
        lambda x: x * np.clip(x + np.float32(2.8), 0, 5) / np.float32(5),
        lambda t, x, **k: x * t.clamp(x + 2.8, min=0.0, max=5.0) / 5,
        member="HARDMISH",
    ),
    U(
        "hardtanh",
        lambda x, min_val=-1.0, max_val=1.0: np.clip(x, np.float32(min_val), np.float32(max_val)),
        lambda t, x, min_val=-1.0, max_val=1.0, **k: t.nn.functional.hardtanh(x, min_val, max_val),
        params=(kwf("min_val", -1.0), kwf("max_val", 1.0)),
        member="HARDTANH",
    ),
    U(
        "hardshrink",
        lambda x, lambd=0.5: _shrink(x, lambd, soft=False),
        lambda t, x, lambd=0.5, **k: t.nn.functional.hardshrink(x, lambd),
        params=(kwf("lambd", 0.5),),
        member="HARDSHRINK",
        round_params=True,
    ),
    U(
        "softshrink",
        lambda x, lambd=0.5: _shrink(x, lambd, soft=True),
        lambda t, x, lambd=0.5, **k: t.nn.functional.softshrink(x, lambd),
        params=(kwf("lambd", 0.5),),
        member="SOFTSHRINK",
    ),
    U(
        "softsign",
        lambda x: x / (np.float32(1) + np.abs(x)),
        lambda t, x, **k: t.nn.functional.softsign(x),
        member="SOFTSIGN",
    ),
    U(
        "softplus",
        _softplus,
        lambda t, x, beta=1.0, threshold=20.0, **k: t.nn.functional.softplus(x, beta=beta, threshold=threshold),
        params=(kwf("beta", 1.0), kwf("threshold", 20.0)),
        member="SOFTPLUS",
    ),
    U("mish", _mish, lambda t, x, **k: t.nn.functional.mish(x.float()), member="MISH"),
    U("tanh", np.tanh, lambda t, x, **k: t.tanh(x), member="TANH", hardware=APPROX),
    U(
        "tanhshrink",
        lambda x: x - np.tanh(x),
        lambda t, x, **k: t.nn.functional.tanhshrink(x),
        member="TANHSHRINK",
        hardware=APPROX,
    ),
    U(
        "logit",
        _logit,
        lambda t, x, eps=0.0, **k: t.logit(x, eps=eps),
        params=(kwf("eps", 0.0),),
        member="LOGIT",
    ),
    U(
        "threshold",
        lambda x, threshold, value: np.where(x > np.float32(threshold), x, np.float32(value)),
        lambda t, x, threshold, value, **k: t.threshold(x, threshold, value),
        params=(f("threshold"), f("value")),
        member="THRESHOLD",
    ),
    U(
        "heaviside",
        lambda x, value: np.where(x > 0, 1, np.where(x < 0, 0, np.float32(value))).astype(np.float32),
        lambda t, x, value, **k: t.heaviside(x, t.tensor(value, dtype=x.dtype)),
        params=(f("value"),),
        member="HEAVISIDE",
    ),
    U("identity", lambda x: x, lambda t, x, **k: t.clone(x), member="IDENTITY", integer=True),
    U(
        "fill",
        lambda x, fill_value: np.full_like(x, fill_value),
        lambda t, x, fill_value, **k: t.full_like(x, fill_value),
        params=(f("fill_value"),),
        member="FILL",
        integer=True,
    ),
    # sign and magnitude
    U("abs", np.abs, lambda t, x, **k: t.abs(x), member="ABS", integer=True),
    U("neg", np.negative, lambda t, x, **k: t.neg(x), member="NEG", integer=True, operator="neg"),
    U("sign", np.sign, lambda t, x, **k: t.sign(x), member="SIGN", integer=True),
    U("signbit", np.signbit, lambda t, x, **k: t.signbit(x), member="SIGNBIT", integer=True),
    # predicates
    U("eqz", _predicate(lambda x: x == 0), lambda t, x, **k: t.eq(x, 0), member="EQZ", integer=True),
    U("nez", _predicate(lambda x: x != 0), lambda t, x, **k: t.ne(x, 0), member="NEZ", integer=True),
    U("gtz", _predicate(lambda x: x > 0), lambda t, x, **k: t.gt(x, 0), member="GTZ", integer=True),
    U("ltz", _predicate(lambda x: x < 0), lambda t, x, **k: t.lt(x, 0), member="LTZ", integer=True),
    U("gez", _predicate(lambda x: x >= 0), lambda t, x, **k: t.ge(x, 0), member="GEZ", integer=True),
    U("lez", _predicate(lambda x: x <= 0), lambda t, x, **k: t.le(x, 0), member="LEZ", integer=True),
    U("isfinite", np.isfinite, lambda t, x, **k: t.isfinite(x), member="ISFINITE"),
    U("isinf", np.isinf, lambda t, x, **k: t.isinf(x), member="ISINF"),
    U("isnan", np.isnan, lambda t, x, **k: t.isnan(x), member="ISNAN"),
    U("isposinf", np.isposinf, lambda t, x, **k: t.isposinf(x), member="ISPOSINF"),
    U("isneginf", np.isneginf, lambda t, x, **k: t.isneginf(x), member="ISNEGINF"),
    U(
        "logical_not",
        _predicate(lambda x: x == 0),
        lambda t, x, **k: t.logical_not(x),
        member="LOGICAL_NOT_UNARY",
        integer=True,
    ),
    U(
        "bitwise_not",
        np.invert,
        lambda t, x, **k: t.bitwise_not(x),
        member="BITWISE_NOT",
        integer=True,
        dtypes=frozenset({DataType.INT32}),
    ),
    U(
        "alt_complex_rotate90",
        _rotate90,
        _golden_rotate90,
        member="ALT_COMPLEX_ROTATE90",
        even_width=True,
    ),
)
"""The activation, sign and predicate ops (public, each a ttnn op)."""

MEMBERS_ONLY = (
    U(
        "add_unary_sfpu",
        lambda x, value: x + np.float32(value),
        params=(f("value"),),
        member="ADD_UNARY_SFPU",
        public=False,
    ),
    U(
        "sub_unary_sfpu",
        lambda x, value: x - np.float32(value),
        params=(f("value"),),
        member="SUB_UNARY_SFPU",
        public=False,
    ),
    U(
        "mul_unary_sfpu",
        lambda x, value: x * np.float32(value),
        params=(f("value"),),
        member="MUL_UNARY_SFPU",
        public=False,
    ),
    U(
        "div_unary_sfpu",
        lambda x, value: x / np.float32(value),
        params=(f("value"),),
        member="DIV_UNARY_SFPU",
        public=False,
    ),
    U("rsub_unary", lambda x, value: np.float32(value) - x, params=(f("value"),), member="RSUB", public=False),
    U(
        "power_unary",
        lambda x, exponent: np.power(x, np.float32(exponent)),
        params=(f("exponent"),),
        member="POWER",
        public=False,
    ),
    U(
        "power_iterative",
        lambda x, exponent: np.power(x, np.float32(exponent)),
        params=(Param("exponent", REQUIRED, check=_whole_exponent),),
        member="POWER_ITERATIVE",
        public=False,
    ),
    U("unary_eq", lambda x, value: x == np.float32(value), params=(f("value"),), member="UNARY_EQ", public=False),
    U("unary_ne", lambda x, value: x != np.float32(value), params=(f("value"),), member="UNARY_NE", public=False),
    U("unary_gt", lambda x, value: x > np.float32(value), params=(f("value"),), member="UNARY_GT", public=False),
    U("unary_lt", lambda x, value: x < np.float32(value), params=(f("value"),), member="UNARY_LT", public=False),
    U("unary_ge", lambda x, value: x >= np.float32(value), params=(f("value"),), member="UNARY_GE", public=False),
    U("unary_le", lambda x, value: x <= np.float32(value), params=(f("value"),), member="UNARY_LE", public=False),
    U(
        "unary_maximum",
        lambda x, value: np.maximum(x, np.float32(value)),
        params=(f("value"),),
        member="MAXIMUM",
        public=False,
    ),
    U(
        "unary_minimum",
        lambda x, value: np.minimum(x, np.float32(value)),
        params=(f("value"),),
        member="MINIMUM",
        public=False,
    ),
)
"""``ttnn.UnaryOpType`` members that are no public op of their own (a binary op with a scalar, a
comparison with a scalar), usable as fused activations."""
