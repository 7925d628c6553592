"""Element-wise unary and binary operations (``ttnn.relu`` ... ``ttnn.add`` ...).

Compute is float32 (integer tensors stay integers, in int64); results round into the output
dtype exactly as the host conversion does.  Binary ops broadcast like numpy over logical shapes
and take a Python scalar for either operand.

Binary ops take ttnn's fused activations: ``input_tensor_a_activations`` and
``input_tensor_b_activations`` apply to the operands before the op, ``activations`` to its result,
all in the same float32 computation, so the output is rounded once (as on device, where they run
on the values in the compute registers).  Each is a list of :class:`UnaryOpType`,
:class:`UnaryWithParam` or unary op names.
"""

from __future__ import annotations

import enum
import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.ops.execution import Kernel, device_input, elementwise, elementwise_kernel, out_spec_like, same_mesh
from meshnn.ops.native import bfloat16_binary
from meshnn.tensor import device_hooks
from meshnn.tensor.dtypes import DataType
from meshnn.tensor.memory_config import MemoryConfig
from meshnn.tensor.spec import TensorSpec
from meshnn.tensor.tensor import Tensor

_SQRT_HALF = 1 / np.sqrt(2)
# Numerical Recipes' Chebyshev fit of erfc: RELATIVE error < 1.2e-7 for every argument, so gelu
# stays accurate in its tails too (an erf fit with 1.5e-7 absolute error is not: gelu(-5) is
# -1.4e-6, which such a fit misses by a quarter).  Evaluated in float64, rounded once to float32.
_ERFC_C = (
    -1.26551223,
    1.00002368,
    0.37409196,
    0.09678418,
    -0.18628806,
    0.27886807,
    -1.13520398,
    1.48851587,
    -0.82215223,
    0.17087277,
)


def erfc(x: np.ndarray) -> np.ndarray:
    """The complementary error function in float64 (numpy has none)."""
    z = np.asarray(x, np.float64)
    a = np.abs(z)
    t = 1.0 / (1.0 + 0.5 * a)
    poly = np.zeros_like(t)
    for c in reversed(_ERFC_C[1:]):
        poly = t * (c + poly)
    tail = t * np.exp(-a * a + _ERFC_C[0] + poly)
    return np.where(z >= 0, tail, 2.0 - tail)


def _gelu(x: np.ndarray, approximate: bool = False) -> np.ndarray:
    if approximate:
        inner = np.float32(np.sqrt(2 / np.pi)) * (x + np.float32(0.044715) * x * x * x)
        return np.float32(0.5) * x * (np.float32(1) + np.tanh(inner))
    wide = np.asarray(x, np.float64)
    return (0.5 * wide * erfc(-wide * _SQRT_HALF)).astype(np.float32)


def _softplus(x: np.ndarray, beta: float = 1.0, threshold: float = 20.0) -> np.ndarray:
    scaled = x * np.float32(beta)
    with np.errstate(over="ignore"):
        soft = np.log1p(np.exp(np.minimum(scaled, np.float32(threshold)))) / np.float32(beta)
    return np.where(scaled > threshold, x, soft)


def _one_plus_exp_minus(x: np.ndarray) -> np.ndarray:
    """1 + exp(-x), in a new array (the scratch that sigmoid and silu finish in)."""
    with np.errstate(over="ignore"):
        t = np.negative(x)
        np.exp(t, out=t)
    t += np.float32(1)
    return t


def _sigmoid(x: np.ndarray) -> np.ndarray:
    t = _one_plus_exp_minus(x)
    return np.reciprocal(t, out=t)


def _silu(x: np.ndarray) -> np.ndarray:
    """x / (1 + exp(-x))."""
    t = _one_plus_exp_minus(x)
    return np.divide(x, t, out=t)


UNARY: dict[str, Callable[..., np.ndarray]] = {
    "relu": lambda x: np.maximum(x, 0),
    "gelu": _gelu,
    "silu": _silu,
    "sigmoid": _sigmoid,
    "tanh": np.tanh,
    "exp": np.exp,
    "log": np.log,
    "sqrt": np.sqrt,
    "rsqrt": lambda x: np.float32(1) / np.sqrt(x),
    "reciprocal": lambda x: np.float32(1) / x,
    "neg": np.negative,
    "abs": np.abs,
    "square": np.square,
    "softplus": _softplus,
}

BINARY: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "add": np.add,
    "subtract": np.subtract,
    "multiply": np.multiply,
    "divide": np.divide,
    "maximum": np.maximum,
    "minimum": np.minimum,
    "pow": np.power,
    "eq": np.equal,
    "ne": np.not_equal,
    "gt": np.greater,
    "lt": np.less,
    "ge": np.greater_equal,
    "le": np.less_equal,
}


class UnaryOpType(enum.Enum):
    """``ttnn.UnaryOpType``: the unary ops a binary op can fuse as an activation (each named by
    its ttnn op)."""

    RELU = "relu"
    GELU = "gelu"
    SILU = "silu"
    SIGMOID = "sigmoid"
    TANH = "tanh"
    EXP = "exp"
    LOG = "log"
    SQRT = "sqrt"
    RSQRT = "rsqrt"
    RECIP = "reciprocal"
    NEG = "neg"
    ABS = "abs"
    SQUARE = "square"
    SOFTPLUS = "softplus"


@dataclass(frozen=True)
class UnaryWithParam:
    """``ttnn.UnaryWithParam``: a fused activation and its parameters (GELU: 1.0 for the fast
    tanh approximation; SOFTPLUS: beta and threshold; the others take none)."""

    op_type: UnaryOpType
    param: float | tuple[float, ...] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.op_type, UnaryOpType):
            raise MeshnnTypeError(f"UnaryWithParam: op_type must be a ttnn.UnaryOpType, got {self.op_type!r}")
        param = self.param
        if param is not None:
            values = tuple(param) if isinstance(param, Sequence) else (param,)
            if not all(isinstance(v, int | float | np.number) and not isinstance(v, bool) for v in values):
                raise MeshnnTypeError(f"UnaryWithParam: param must be a number or numbers, got {param!r}")
            object.__setattr__(self, "param", tuple(float(v) for v in values))

    @property
    def params(self) -> tuple[float, ...]:
        return self.param if isinstance(self.param, tuple) else ()


_ACTIVATION_PARAMS = {"gelu": ("approximate",), "softplus": ("beta", "threshold")}

Activation = tuple[str, tuple[tuple[str, object], ...]]
"""A fused activation, normalised: its UNARY name and keyword parameters (hashable, for plans)."""


def activation_steps(op: str, argument: str, value: object) -> tuple[Activation, ...]:
    """``value`` (None, or one or a list of UnaryOpType, UnaryWithParam or unary op names) as the
    activations :func:`_activated` applies, in order; a clear error for anything else."""
    if value is None:
        return ()
    items = value if isinstance(value, list | tuple) else [value]
    steps = []
    for item in items:
        if isinstance(item, str) and item.lower() in UNARY:
            item = UnaryWithParam(UnaryOpType(item.lower()))
        elif isinstance(item, UnaryOpType):
            item = UnaryWithParam(item)
        if not isinstance(item, UnaryWithParam):
            raise MeshnnTypeError(
                f"ttnn.{op}: {argument} must hold ttnn.UnaryOpType, ttnn.UnaryWithParam or unary op names "
                f"({sorted(UNARY)}), got {item!r}"
            )
        name = item.op_type.value
        names = _ACTIVATION_PARAMS.get(name, ())
        if len(item.params) > len(names):
            raise MeshnnValueError(
                f"ttnn.{op}: {argument}: {item.op_type} takes {len(names)} parameter(s) {list(names)}, "
                f"got {list(item.params)}"
            )
        params = tuple(zip(names, item.params, strict=False))
        if name == "gelu":
            params = tuple((k, bool(v)) for k, v in params)
        steps.append((name, params))
    return tuple(steps)


def _apply(steps: tuple[Activation, ...], x: np.ndarray | np.float32) -> np.ndarray:
    if steps and (not isinstance(x, np.ndarray) or x.ndim == 0):
        x = np.full(1, x, np.float32)  # a scalar operand: one value that broadcasts (the steps need arrays)
    for name, params in steps:
        x = UNARY[name](x, **dict(params))
    return x


@functools.cache
def _activated(
    function: Callable[[np.ndarray, np.ndarray], np.ndarray],
    pre_a: tuple[Activation, ...],
    pre_b: tuple[Activation, ...],
    post: tuple[Activation, ...],
) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """``post(function(pre_a(a), pre_b(b)))`` (one per combination: :func:`_numeric` caches on it)."""

    def fused(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        result = function(_apply(pre_a, x), _apply(pre_b, y))
        if post and result.dtype == bool:  # a comparison's 0 / 1, as float32 before its activations
            result = result.astype(np.float32)
        return _apply(post, result)

    return fused


def _wide(x: np.ndarray) -> np.ndarray:
    return x.astype(np.int64) if x.dtype.kind in "iu" else x


def unary(
    name: str,
    input_tensor: Tensor,
    *,
    memory_config: MemoryConfig | None = None,
    queue_id: int = 0,
    output_tensor: object = None,
    **params: object,
) -> Tensor:
    """``ttnn.<name>(input_tensor)`` on command queue ``queue_id``, into ``output_tensor`` when given
    (its spec must be the output's)."""
    tensor = device_input(name, "input_tensor", input_tensor)
    function = UNARY[name]
    spec = out_spec_like(tensor, memory_config=_config_of(memory_config, output_tensor), op=name)

    def compute(x: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return function(_wide(x).astype(np.float32) if x.dtype.kind in "iu" else x, **params)

    return elementwise(name, [tensor], spec, compute, queue_id=queue_id, output_tensor=output_tensor)


def _config_of(memory_config: object, output_tensor: object) -> object:
    """The memory config an op's output takes: the given one, else ``output_tensor``'s."""
    if memory_config is None and isinstance(output_tensor, Tensor) and output_tensor.is_allocated():
        return output_tensor.memory_config()
    return memory_config


def binary(
    name: str,
    input_tensor_a: Tensor | float,
    input_tensor_b: Tensor | float,
    *,
    dtype: DataType | None = None,
    memory_config: MemoryConfig | None = None,
    queue_id: int = 0,
    output_tensor: object = None,
    activations: object = None,
    input_tensor_a_activations: object = None,
    input_tensor_b_activations: object = None,
) -> Tensor:
    """``a <op> b`` for tensors of broadcastable shapes, or a tensor and a Python scalar, on command
    queue ``queue_id``, into ``output_tensor`` when given (its spec must be the output's), with
    the fused activations (see the module's docstring)."""
    fused = (
        activation_steps(name, "input_tensor_a_activations", input_tensor_a_activations),
        activation_steps(name, "input_tensor_b_activations", input_tensor_b_activations),
        activation_steps(name, "activations", activations),
    )
    if output_tensor is not None:
        memory_config = _config_of(memory_config, output_tensor)  # type: ignore[assignment]
        if dtype is None and isinstance(output_tensor, Tensor) and output_tensor.is_allocated():
            dtype = output_tensor.dtype
    activated = fused != ((), (), ())
    run = {"queue_id": queue_id, "output_tensor": output_tensor}
    function = BINARY[name]
    if activated:
        function = _activated(function, *fused)
        for operand in (input_tensor_a, input_tensor_b):
            if isinstance(operand, Tensor) and not operand.dtype.is_float:
                raise MeshnnTypeError(
                    f"ttnn.{name}: fused activations need floating-point operands, got {operand.dtype} "
                    f"{list(operand.shape)}"
                )
    a_is_tensor, b_is_tensor = isinstance(input_tensor_a, Tensor), isinstance(input_tensor_b, Tensor)
    if not (a_is_tensor or b_is_tensor):
        raise MeshnnTypeError(f"ttnn.{name}: at least one operand must be a ttnn.Tensor")
    if not (a_is_tensor and b_is_tensor):
        for label, value in (("input_tensor_a", input_tensor_a), ("input_tensor_b", input_tensor_b)):
            if not isinstance(value, Tensor) and (
                isinstance(value, bool) or not isinstance(value, int | float | np.number)
            ):
                raise MeshnnTypeError(
                    f"ttnn.{name}: {label} must be a ttnn.Tensor or a number, got {type(value).__name__}"
                )
    if a_is_tensor and b_is_tensor:
        a = device_input(name, "input_tensor_a", input_tensor_a)
        b = device_input(name, "input_tensor_b", input_tensor_b)
        mesh = same_mesh(name, {"input_tensor_a": a, "input_tensor_b": b})
        a_spec, b_spec = a.spec, b.spec
        bfloat16 = DataType.BFLOAT16
        native = None
        if (
            a_spec.dtype is bfloat16
            and b_spec.dtype is bfloat16
            and (dtype is None or dtype is bfloat16)
            and not activated
        ):
            native = bfloat16_binary(name)  # asked on every call: it may change (torch imported later)
        key = None
        if (dtype is None or type(dtype) is DataType) and (
            memory_config is None or type(memory_config) is MemoryConfig
        ):
            key = (name, a_spec, b_spec, dtype, memory_config, native, fused)
            plan = _PLANS.get(key)
            if plan is not None:
                spec, compute, kernel = plan
                return elementwise(name, [a, b], spec, compute, native=native, mesh=mesh, kernel=kernel, **run)
        try:
            shape = (
                a_spec.shape if a_spec.shape == b_spec.shape else np.broadcast_shapes(tuple(a.shape), tuple(b.shape))
            )
        except ValueError:
            raise MeshnnValueError(
                f"ttnn.{name}: input_tensor_a {list(a.shape)} and input_tensor_b {list(b.shape)} cannot be "
                "broadcast together"
            ) from None
        spec = out_spec_like(a, shape=shape, dtype=dtype, memory_config=memory_config, op=name)
        compute = _numeric(function, a.dtype)
        kernel = elementwise_kernel([a_spec, b_spec], spec, compute, native=native)
        if key is not None:
            if len(_PLANS) >= PLANS_KEPT:
                _PLANS.clear()
            _PLANS[key] = (spec, compute, kernel)
        return elementwise(name, [a, b], spec, compute, native=native, mesh=mesh, kernel=kernel, **run)
    label, value = ("input_tensor_a", input_tensor_a) if a_is_tensor else ("input_tensor_b", input_tensor_b)
    tensor = device_input(name, label, value)
    scalar = float(input_tensor_b if a_is_tensor else input_tensor_a)  # type: ignore[arg-type]
    spec = out_spec_like(tensor, dtype=dtype, memory_config=memory_config, op=name)
    pair = function if a_is_tensor else _swapped(function)  # scalar first: keep the order
    numeric = _numeric(pair, tensor.dtype)
    return elementwise(name, [tensor], spec, lambda x: numeric(x, np.float32(scalar)), **run)


PLANS_KEPT = 1024
"""Binary-op plans kept (the cache is emptied when full)."""

_PLANS: dict[tuple, tuple[TensorSpec, Callable[..., np.ndarray], Kernel]] = {}
"""Two-tensor binary ops' plans: ``(op, a's spec, b's spec, dtype, memory_config, native kernel)``
-> ``(output spec, compute, kernel)``.  Everything in a plan follows from its key alone (specs
are immutable; the kernel reads only the rows it is given), so a plan is never stale: the
tensors themselves (allocated, on one open mesh, populating the same devices), ``queue_id`` and
``output_tensor`` are checked on every call, before anything is allocated.  Only successful
plans are kept, so a bad call raises every time."""


@functools.cache
def _swapped(
    function: Callable[[np.ndarray, np.ndarray], np.ndarray],
) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """``function`` with its operands swapped (one per function: :func:`_numeric` caches on it)."""
    return lambda x, y: function(y, x)


@functools.cache
def _numeric(function: Callable[[np.ndarray, np.ndarray], np.ndarray], dtype: DataType) -> Callable[..., np.ndarray]:
    """``function`` over decoded operands of ``dtype`` (made once per pair: ops call it every time)."""

    def compute(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            if dtype.is_integer:
                result = function(_wide(x), _wide(y) if isinstance(y, np.ndarray) else y)
            else:
                result = function(x, y)
        return result.astype(np.float32) if result.dtype == bool and dtype.is_float else result

    return compute


def _make_unary(name: str):
    def op(
        input_tensor: Tensor,
        *,
        memory_config: MemoryConfig | None = None,
        output_tensor: object = None,
        queue_id: int = 0,
        **params: object,
    ) -> Tensor:
        return unary(
            name,
            input_tensor,
            memory_config=memory_config,
            queue_id=queue_id,
            output_tensor=output_tensor,
            **_unary_params(name, params),
        )

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"``ttnn.{name}``: element-wise {name} of a device tensor."
    return op


def _unary_params(name: str, params: dict[str, object]) -> dict[str, object]:
    if name == "gelu":
        return {"approximate": bool(params.get("fast_and_approximate_mode", False))}
    if name == "softplus":
        return {"beta": float(params.get("beta", 1.0)), "threshold": float(params.get("threshold", 20.0))}
    return {}


def _make_binary(name: str):
    def op(
        input_tensor_a: Tensor | float,
        input_tensor_b: Tensor | float,
        *,
        dtype: DataType | None = None,
        memory_config: MemoryConfig | None = None,
        output_tensor: object = None,
        activations: object = None,
        input_tensor_a_activations: object = None,
        input_tensor_b_activations: object = None,
        queue_id: int = 0,
        **_: object,
    ) -> Tensor:
        return binary(
            name,
            input_tensor_a,
            input_tensor_b,
            dtype=dtype,
            memory_config=memory_config,
            queue_id=queue_id,
            output_tensor=output_tensor,
            activations=activations,
            input_tensor_a_activations=input_tensor_a_activations,
            input_tensor_b_activations=input_tensor_b_activations,
        )

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"``ttnn.{name}``: element-wise {name} with broadcasting and scalars."
    return op


relu, gelu, silu, sigmoid, tanh, exp, log, sqrt, rsqrt, reciprocal, neg, abs, square, softplus = (
    _make_unary(n) for n in UNARY
)
add, subtract, multiply, divide, maximum, minimum, pow, eq, ne, gt, lt, ge, le = (_make_binary(n) for n in BINARY)
sub, mul, div = subtract, multiply, divide

for _name, _op in {
    "add": add,
    "subtract": subtract,
    "multiply": multiply,
    "divide": divide,
    "neg": neg,
    "pow": pow,
}.items():
    device_hooks.register(_name, _op)  # the Tensor operators: a + b, a - b, a * b, a / b, -a, a ** b
