"""The binary element-wise ops (``ttnn.add``, ``ttnn.eq``, ``ttnn.atan2`` ...), each declared once by
a :class:`~meshnn.ops.eltwise.binary_defs.BinaryDef` of :mod:`~meshnn.ops.eltwise.binary_tables`:
numpy broadcasting over logical shapes, a Python scalar for either operand, fused activations
(:mod:`meshnn.ops.eltwise.activations`), in-place forms (``ttnn.add_``: into input_tensor_a), and
a plan per operand specs and parameters (output spec, compute, kernel) made once and reused.
Compute is float32 (an integer op's integer tensors in int64); results round into the output dtype
exactly as the host conversion does.

May import: :mod:`meshnn.errors`, :mod:`meshnn.tensor`, the ops' registry, signatures, launch,
planned, checks, outputs and program-key modules and the other element-wise modules.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.ops.checks import device_input, same_mesh
from meshnn.ops.eltwise.activations import Activation, activated, activation_steps
from meshnn.ops.eltwise.binary_tables import BINARY, DEFS
from meshnn.ops.eltwise.functions import wide
from meshnn.ops.eltwise.kernel import (
    elementwise,
    elementwise_attrs,
    elementwise_kernel,
    memory_config_of,
    stored_alike,
)
from meshnn.ops.eltwise.native import bfloat16_binary
from meshnn.ops.eltwise.unary_tables import DEFS as UNARY_DEFS
from meshnn.ops.launch import Kernel
from meshnn.ops.outputs import out_spec_like
from meshnn.ops.planned import Plan, run_planned
from meshnn.ops.program_keys import program_key
from meshnn.tensor.spec import MemoryConfig, TensorSpec
from meshnn.tensor.tensor import Tensor

NO_ACTIVATIONS: tuple[tuple[Activation, ...], ...] = ((), (), ())


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
    params: tuple[tuple[str, Any], ...] = (),
) -> Tensor:
    """``a <op> b`` for tensors of broadcastable shapes, or a tensor and a Python scalar, on command
    queue ``queue_id``, into ``output_tensor`` when given (its spec must be the output's), with
    the fused activations (see :mod:`meshnn.ops.eltwise.activations`) and the op's ``params``
    (name, value pairs, already checked)."""
    fused = NO_ACTIVATIONS
    if activations is not None or input_tensor_a_activations is not None or input_tensor_b_activations is not None:
        fused = (
            activation_steps(name, "input_tensor_a_activations", input_tensor_a_activations),
            activation_steps(name, "input_tensor_b_activations", input_tensor_b_activations),
            activation_steps(name, "activations", activations),
        )
    if output_tensor is not None:
        memory_config = memory_config_of(memory_config, output_tensor)  # type: ignore[assignment]
        if dtype is None and isinstance(output_tensor, Tensor) and output_tensor.is_allocated():
            dtype = output_tensor.dtype
    defn = DEFS[name]
    if defn.dtypes is not None or defn.result_dtype is not None or defn.dtype_params is not None:
        dtype, params = _dtype_rule(name, input_tensor_a, input_tensor_b, dtype, params)
    run = {"queue_id": queue_id, "output_tensor": output_tensor}
    function = (
        _function(name, params)
        if fused == NO_ACTIVATIONS
        else _fused(name, fused, params, input_tensor_a, input_tensor_b)
    )
    a_is_tensor = isinstance(input_tensor_a, Tensor)
    if a_is_tensor and isinstance(input_tensor_b, Tensor):
        a = device_input(name, "input_tensor_a", input_tensor_a)
        b = device_input(name, "input_tensor_b", input_tensor_b)
        if isinstance(output_tensor, Tensor) and output_tensor.is_allocated():
            _output_shape_first(name, a, b, output_tensor, memory_config)
        return _of_tensors(name, a, b, function, (fused, params), dtype, memory_config, run)
    _check_operands(name, input_tensor_a, input_tensor_b)
    label, value = ("input_tensor_a", input_tensor_a) if a_is_tensor else ("input_tensor_b", input_tensor_b)
    tensor = device_input(name, label, value)
    scalar = _scalar(input_tensor_b if a_is_tensor else input_tensor_a, tensor.dtype.is_integer and defn.integer)
    spec = out_spec_like(tensor, dtype=dtype, memory_config=memory_config, op=name)
    pair = function if a_is_tensor else _swapped(function)  # scalar first: keep the order
    numeric = _numeric(pair, tensor.dtype, defn.integer)
    return elementwise(name, [tensor], spec, lambda x: numeric(x, scalar), **run)


def _output_shape_first(name: str, a: Tensor, b: Tensor, out: Tensor, memory_config: object) -> None:
    """tt-metal 2026's binary_ng checks a given output's shape before the broadcast rule when nothing
    is sharded, against its ``compute_broadcasted_output`` (a's size where neither size is 1, so the
    shape of a bad pair too; leading 1s of the longer shape ignored): that error comes first."""
    sharded = isinstance(memory_config, MemoryConfig) and memory_config.is_sharded()
    if sharded or a.memory_config().is_sharded() or b.memory_config().is_sharded():
        return
    sa, sb, so = tuple(a.shape), tuple(b.shape), tuple(out.shape)
    rank = max(len(sa), len(sb))
    sa, sb = (1,) * (rank - len(sa)) + sa, (1,) * (rank - len(sb)) + sb
    want = tuple(x if x != 1 and y != 1 else x + y - 1 for x, y in zip(sa, sb, strict=True))
    common = min(len(so), rank)
    longer = so if len(so) > rank else want
    if so[len(so) - common :] != want[rank - common :] or any(d != 1 for d in longer[: len(longer) - common]):
        raise MeshnnValueError(
            f"ttnn.{name}: output_tensor: Shape of Output tensor {list(so)} provided does not match the broadcasted "
            f"output shape {list(want)}"
        )


_DEFAULT_RUN = {"queue_id": 0, "output_tensor": None}
_NO_EXTRA = (NO_ACTIVATIONS, ())


def plain_binary(name: str) -> Callable[[object, object], Tensor] | None:
    """``binary(name, a, b)`` with every keyword at its default, for the public function given
    none (:func:`~meshnn.ops.signatures.make_function`'s ``plain``): two tensors go to
    :func:`_of_tensors` as :func:`binary` sends them, anything else through :func:`binary`;
    None for an op with a dtype rule (:func:`binary` applies it)."""
    defn = DEFS[name]
    if defn.dtypes is not None or defn.result_dtype is not None or defn.dtype_params is not None:
        return None
    function = _function(name, ())

    def plain(input_tensor_a: object, input_tensor_b: object) -> Tensor:
        if isinstance(input_tensor_a, Tensor) and isinstance(input_tensor_b, Tensor):
            a_spec, b_spec = input_tensor_a.spec, input_tensor_b.spec
            torch = sys.modules.get("torch") is not None
            fast = _FAST.get((name, id(a_spec), id(b_spec), torch))
            if fast is not None and fast.in_specs[0] is a_spec and fast.in_specs[1] is b_spec:
                out = run_planned(fast, input_tensor_a, input_tensor_b)
                if out is not None:
                    return out
            a = device_input(name, "input_tensor_a", input_tensor_a)
            b = device_input(name, "input_tensor_b", input_tensor_b)
            out = _of_tensors(name, a, b, function, _NO_EXTRA, None, None, _DEFAULT_RUN)
            if fast is None:
                _plan_fast(name, a_spec, b_spec, torch)
            return out
        return binary(name, input_tensor_a, input_tensor_b)  # type: ignore[arg-type]

    return plain


def _scalar(value: object, integer: bool) -> np.float32 | np.int64:
    """A scalar operand as the op computes with it: an integral value of an integer op in int64
    (exact), any other as float32."""
    if integer and float(value).is_integer():  # type: ignore[arg-type]
        return np.int64(value)  # type: ignore[call-overload]
    return np.float32(value)  # type: ignore[arg-type]


def _dtype_rule(
    name: str, a: object, b: object, dtype: DataType | None, params: tuple
) -> tuple[DataType | None, tuple]:
    """The operands' dtypes checked against the op's (a clear error naming the operand); the
    output dtype (``dtype`` when given, else the op's rule on the first tensor's dtype) and the
    params with those the op takes from that dtype."""
    defn = DEFS[name]
    first = None
    for label, operand in (("input_tensor_a", a), ("input_tensor_b", b)):
        if isinstance(operand, Tensor) and operand.is_allocated():
            first = first or operand
            if defn.dtypes is not None and operand.dtype not in defn.dtypes:
                allowed = ", ".join(sorted(str(d) for d in defn.dtypes))
                raise MeshnnTypeError(
                    f"ttnn.{name}: {label} has dtype {operand.dtype}; ttnn.{name} takes {allowed} tensors"
                )
    if first is None:
        return dtype, params
    if defn.dtype_params is not None:
        params = (*params, *defn.dtype_params(first.dtype, dict(params)))
    if dtype is None and defn.result_dtype is not None:
        dtype = defn.result_dtype(first.dtype, dict(params))
    return dtype, params


@functools.cache
def _function(name: str, params: tuple[tuple[str, Any], ...]) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """The op's numeric function with its parameters bound (:data:`BINARY` looked up at each run)."""
    if not params:
        return lambda x, y: BINARY[name](x, y)
    bound = dict(params)
    return lambda x, y: BINARY[name](x, y, **bound)


def _fused(
    name: str, fused: tuple[tuple[Activation, ...], ...], params: tuple, a: object, b: object
) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """The op's function with its fused activations; integer operands only where every activation
    computes on integers (``EQZ``, ``RELU``, ``ABS``...: ttnn's int32 kernels have those)."""
    function = activated(_function(name, params), *fused)
    if all(UNARY_DEFS[step].integer for steps in fused for step, _ in steps):
        return function
    for operand in (a, b):
        if isinstance(operand, Tensor) and not operand.dtype.is_float:
            raise MeshnnTypeError(
                f"ttnn.{name}: these fused activations need floating-point operands, got {operand.dtype} "
                f"{list(operand.shape)}"
            )
    return function


def _check_operands(name: str, a: object, b: object) -> None:
    """Of operands not both tensors: one is a tensor, the other a number (if the op takes one)."""
    if not (isinstance(a, Tensor) or isinstance(b, Tensor)):
        raise MeshnnTypeError(f"ttnn.{name}: at least one operand must be a ttnn.Tensor")
    takes_scalar = DEFS[name].scalar
    for label, value in (("input_tensor_a", a), ("input_tensor_b", b)):
        is_number = isinstance(value, int | float | np.number) and not isinstance(value, bool)
        if not (isinstance(value, Tensor) or (is_number and takes_scalar)):
            what = "a ttnn.Tensor or a number" if takes_scalar else "a ttnn.Tensor"
            raise MeshnnTypeError(f"ttnn.{name}: {label} must be {what}, got {type(value).__name__}")


def _of_tensors(
    name: str,
    a: Tensor,
    b: Tensor,
    function: Callable[[np.ndarray, np.ndarray], np.ndarray],
    extra: tuple,
    dtype: DataType | None,
    memory_config: MemoryConfig | None,
    run: dict[str, object],
) -> Tensor:
    """``a <op> b`` of two device tensors, by the plan of their specs (made the first time)."""
    mesh = same_mesh(name, {"input_tensor_a": a, "input_tensor_b": b})
    a_spec, b_spec = a.spec, b.spec
    bfloat16 = DataType.BFLOAT16
    native = None
    if (
        a_spec.dtype is bfloat16
        and b_spec.dtype is bfloat16
        and (dtype is None or dtype is bfloat16)
        and extra == (NO_ACTIVATIONS, ())
    ):
        native = bfloat16_binary(name)  # asked on every call: it may change (torch imported later)
    key = None
    if (dtype is None or type(dtype) is DataType) and (memory_config is None or type(memory_config) is MemoryConfig):
        key = (name, a_spec, b_spec, dtype, memory_config, native, extra)
        plan = _PLANS.get(key)
        if plan is not None:
            spec, compute, kernel, program = plan
            return elementwise(
                name, [a, b], spec, compute, native=native, mesh=mesh, kernel=kernel, program_key=program, **run
            )
    spec, compute, kernel = _plan(name, a, b, function, dtype, memory_config, native)
    if key is not None:
        if len(_PLANS) >= PLANS_KEPT:
            _PLANS.clear()
            _FAST.clear()
        program = program_key(name, (a_spec, b_spec), (spec,), elementwise_attrs(spec))
        _PLANS[key] = (spec, compute, kernel, program)
    return elementwise(name, [a, b], spec, compute, native=native, mesh=mesh, kernel=kernel, **run)


def _plan(
    name: str,
    a: Tensor,
    b: Tensor,
    function: Callable[[np.ndarray, np.ndarray], np.ndarray],
    dtype: DataType | None,
    memory_config: MemoryConfig | None,
    native: Callable[..., None] | None,
) -> tuple[TensorSpec, Callable[..., np.ndarray], Kernel]:
    """The output spec, compute and kernel of ``a <op> b`` (see :data:`_PLANS`)."""
    a_spec, b_spec = a.spec, b.spec
    try:
        shape = a_spec.shape if a_spec.shape == b_spec.shape else np.broadcast_shapes(tuple(a.shape), tuple(b.shape))
    except ValueError:
        raise MeshnnValueError(
            f"ttnn.{name}: input_tensor_a {list(a.shape)} and input_tensor_b {list(b.shape)} cannot be "
            "broadcast together"
        ) from None
    spec = out_spec_like(a, shape=shape, dtype=dtype, memory_config=memory_config, op=name)
    compute = _numeric(function, a.dtype, DEFS[name].integer)
    kernel = elementwise_kernel([a_spec, b_spec], spec, compute, native=native)
    return spec, compute, kernel


PLANS_KEPT = 1024
"""Binary-op plans kept (the cache is emptied when full)."""

_PLANS: dict[tuple, tuple[TensorSpec, Callable[..., np.ndarray], Kernel, tuple | None]] = {}
"""Two-tensor binary ops' plans: ``(op, a's spec, b's spec, dtype, memory_config, native kernel,
(activations, params))`` -> ``(output spec, compute, kernel, program-cache key)``.  Everything in a plan follows from
its key alone (specs are immutable; the kernel reads only the rows it is given), so a plan is never
stale: the tensors themselves (allocated, on one open mesh, populating the same devices),
``queue_id`` and ``output_tensor`` are checked on every call, before anything is allocated.  Only
successful plans are kept, so a bad call raises every time."""


_FAST: dict[tuple[str, int, int, bool], Plan] = {}
"""The plans :func:`plain_binary`'s calls run by (:mod:`meshnn.ops.planned`): ``(op, id of a's spec,
id of b's spec, torch imported)`` -> the plan, which holds those very specs (so their ids are not
reused while it is kept; a hit is checked by identity).  Made from :data:`_PLANS`' entry after an
ordinary call succeeded; emptied with it."""


def _plan_fast(name: str, a_spec: TensorSpec, b_spec: TensorSpec, torch: bool) -> None:
    """Keep the :class:`~meshnn.ops.planned.Plan` of ``name`` over these specs, from the
    :data:`_PLANS` entry the ordinary call just used (none when it kept none)."""
    bfloat16 = a_spec.dtype is DataType.BFLOAT16 and b_spec.dtype is DataType.BFLOAT16
    native = bfloat16_binary(name) if bfloat16 else None
    entry = _PLANS.get((name, a_spec, b_spec, None, None, native, _NO_EXTRA))
    if entry is None or entry[3] is None or torch != (sys.modules.get("torch") is not None):
        return
    spec, _, kernel, program = entry
    if len(_FAST) >= PLANS_KEPT:
        _FAST.clear()
    elements = None if native is None else spec.compute_packed_buffer_size_bytes() // 2
    direct = native if stored_alike((a_spec, b_spec), spec) else None
    plan = Plan(name, (a_spec, b_spec), spec, kernel, program, elements, spec.buffer_layout().size, direct)
    _FAST[(name, id(a_spec), id(b_spec), torch)] = plan


@functools.cache
def _swapped(
    function: Callable[[np.ndarray, np.ndarray], np.ndarray],
) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """``function`` with its operands swapped (one per function: :func:`_numeric` caches on it)."""
    return lambda x, y: function(y, x)


@functools.cache
def _numeric(
    function: Callable[[np.ndarray, np.ndarray], np.ndarray], dtype: DataType, integer: bool = True
) -> Callable[..., np.ndarray]:
    """``function`` over decoded operands of ``dtype`` (made once per pair: ops call it every
    time): integers widened to int64 for an integer op, else computed as float32."""

    def compute(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            if dtype.is_integer:
                if integer:
                    result = function(wide(x), wide(y) if isinstance(y, np.ndarray) else y)
                else:
                    result = function(x.astype(np.float32), y.astype(np.float32) if isinstance(y, np.ndarray) else y)
            else:
                result = function(x, y)
        return result.astype(np.float32) if result.dtype == bool and dtype.is_float else result

    return compute
