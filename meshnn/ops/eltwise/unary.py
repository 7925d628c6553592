"""The unary element-wise ops (``ttnn.relu``, ``ttnn.exp``, ``ttnn.leaky_relu`` ...): each declared
once by a :class:`~meshnn.ops.eltwise.unary_defs.UnaryDef` of the unary tables, from which this
module makes the public function (ttnn's signature: the input, the op's parameters, then
``memory_config``, ``output_tensor``, ``queue_id``), its registry entry and its golden function.

An op computes in float32 (an integer op's integer input in int64; other integer inputs as
float32), rounded once into the output dtype exactly as the host conversion does.  Each call finds
its plan (output spec and kernel) by the input's spec and the op's parameters, made the first time.

May import: :mod:`meshnn.tensor` and the ops' registry, signatures, checks, outputs and
element-wise modules.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.bfloat16 import round_to_bfloat16
from meshnn.formats.dtypes import DataType
from meshnn.mesh.op_keywords import SUB_CORE_GRIDS, ttnn_keywords
from meshnn.ops.checks import device_input
from meshnn.ops.eltwise.functions import wide
from meshnn.ops.eltwise.kernel import elementwise, elementwise_kernel, memory_config_of
from meshnn.ops.eltwise.logical import on_values
from meshnn.ops.eltwise.unary_defs import UnaryDef, one_rounding_mode
from meshnn.ops.eltwise.unary_tables import DEFS, UNARY, UNARY_DEFS
from meshnn.ops.launch import Kernel
from meshnn.ops.outputs import out_spec_like
from meshnn.ops.registry import OpKind, add, torch_golden
from meshnn.ops.signatures import Param, kw, make_function
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig, TensorSpec
from meshnn.tensor.tensor import Tensor

PLANS_KEPT = 1024
_PLANS: dict[tuple, tuple[TensorSpec, Kernel]] = {}
"""``(op, input spec, memory config, parameters)`` -> ``(output spec, kernel)``: everything in a
plan follows from its key (specs are immutable), so it is never stale; the tensor itself
(allocated, on an open mesh), ``queue_id`` and ``output_tensor`` are checked on every call."""


def unary(
    name: str,
    input_tensor: Tensor,
    *,
    memory_config: MemoryConfig | None = None,
    queue_id: int = 0,
    output_tensor: object = None,
    **params: Any,
) -> Tensor:
    """``ttnn.<name>(input_tensor, **params)`` on command queue ``queue_id``, into ``output_tensor``
    when given (its spec must be the output's).  ``params`` are checked by the caller."""
    tensor = device_input(name, "input_tensor", input_tensor)
    memory_config = memory_config_of(memory_config, output_tensor)  # type: ignore[assignment]
    spec = tensor.spec
    key = None
    if memory_config is None or type(memory_config) is MemoryConfig:
        try:
            key = (name, spec, memory_config, tuple(params.items()))
            plan = _PLANS.get(key)
        except TypeError:  # a parameter that is not hashable (a tensor): no plan kept
            key, plan = None, None
        if plan is not None:
            return elementwise(
                name, [tensor], plan[0], None, kernel=plan[1], queue_id=queue_id, output_tensor=output_tensor
            )  # type: ignore[arg-type]
    out = out_spec_like(tensor, memory_config=memory_config, op=name)
    compute = _compute(name, spec.dtype.is_integer, params)
    kernel = elementwise_kernel([spec], out, compute)
    if key is not None:
        if len(_PLANS) >= PLANS_KEPT:
            _PLANS.clear()
        _PLANS[key] = (out, kernel)
    return elementwise(name, [tensor], out, compute, kernel=kernel, queue_id=queue_id, output_tensor=output_tensor)


def _compute(name: str, integer_input: bool, params: Mapping[str, Any]) -> Callable[[np.ndarray], np.ndarray]:
    """The op over decoded values: :data:`UNARY` ``[name]`` (looked up at each run), integers
    widened to int64 for an integer op, else to float32."""
    as_integer = DEFS[name].integer

    def compute(x: np.ndarray) -> np.ndarray:
        if x.dtype.kind in "iu":
            x = wide(x) if as_integer else x.astype(np.float32)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return UNARY[name](x, **params)

    return compute


_TAIL = (kw("memory_config"), kw("output_tensor"), kw("queue_id", 0))


def declare(defn: UnaryDef) -> Callable[..., Any]:
    """The public function of ``defn`` (ttnn's signature and keywords), declared in the registry."""
    checks = [(p.name, p.check) for p in defn.params if p.check is not None]
    names = [p.name for p in defn.params]
    name = defn.name

    def call(input_tensor: Tensor, memory_config=None, output_tensor=None, queue_id=0, **params: Any) -> Tensor:
        for key, check in checks:
            check(name, key, params[key])
        if "rounding_mode" in params:  # newer ttnn's name beside 0.81's round_mode: one mode
            one_rounding_mode(name, params["round_mode"], params["rounding_mode"])
        if defn.dtypes is not None or defn.even_width:
            _check_input(defn, input_tensor)
        if defn.round_params and isinstance(input_tensor, Tensor) and input_tensor.dtype is DataType.BFLOAT16:
            params = {k: _to_bfloat16(v) for k, v in params.items()}
        if defn.vector_mode and params.get("vector_mode") == 2:
            return _columns_only(defn, input_tensor, params, memory_config, output_tensor, queue_id)
        return unary(
            name,
            input_tensor,
            memory_config=memory_config,
            queue_id=queue_id,
            output_tensor=output_tensor,
            **{k: _plain(params[k]) for k in names},
        )

    params = (Param("input_tensor"), *defn.params, *_TAIL)
    doc = f"``ttnn.{name}``: element-wise {name} of a device tensor."
    function = ttnn_keywords(name, sub_core_grids=SUB_CORE_GRIDS, **defn.hardware)(
        make_function(name, params, call, doc)
    )
    golden = torch_golden(defn.golden) if defn.golden is not None else None
    add(
        name,
        function,
        kind=OpKind.UNARY,
        family=OpFamily.UNARY,
        device_operation=defn.device_operation,
        golden=golden,
        operator=defn.operator,
    )
    return function


def _columns_only(defn: UnaryDef, input_tensor: Tensor, params, memory_config, output_tensor, queue_id) -> Tensor:
    """The op in the SFPU's vector mode C: the left 16 columns of each 32-wide tile column (faces 0
    and 2) computed, the others left as the input (the destination register holds the input)."""
    tensor = device_input(defn.name, "input_tensor", input_tensor)
    width = tensor.shape[-1] if tensor.shape else 1
    computed = (np.arange(width) % 32) < 16
    compute = _compute(defn.name, tensor.dtype.is_integer, {k: _plain(v) for k, v in params.items()})

    def columns(x: np.ndarray) -> np.ndarray:
        return np.where(computed, compute(x), x)

    return on_values(defn.name, {"input_tensor": tensor}, columns, memory_config=memory_config,
                     output_tensor=output_tensor, queue_id=queue_id)  # fmt: skip


def _to_bfloat16(value: Any) -> Any:
    """A number parameter at bfloat16 precision (round to nearest even); others as they are."""
    if isinstance(value, bool) or not isinstance(value, float | int | np.floating):
        return value
    return float(round_to_bfloat16(np.asarray([value], np.float32))[0])


def _check_input(defn: UnaryDef, input_tensor: object) -> None:
    """The input's dtype and shape against the op's rules (``dtypes``, ``even_width``)."""
    tensor = device_input(defn.name, "input_tensor", input_tensor)
    if defn.dtypes is not None and tensor.dtype not in defn.dtypes:
        allowed = ", ".join(sorted(str(d) for d in defn.dtypes))
        raise MeshnnTypeError(f"ttnn.{defn.name}: input_tensor has dtype {tensor.dtype}; it takes {allowed} tensors")
    if defn.even_width and (not tensor.shape or tensor.shape[-1] % 2):
        raise MeshnnValueError(
            f"ttnn.{defn.name}: input_tensor {list(tensor.shape)} must have an even last dimension (pairs of values)"
        )


def _plain(value: Any) -> Any:
    """A parameter as the numeric functions take it: numpy scalars as Python numbers."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, Tensor):
        raise MeshnnTypeError("a unary op's parameter must be a number, got a ttnn.Tensor")
    return value


OPS: dict[str, Callable[..., Any]] = {d.name: declare(d) for d in UNARY_DEFS if d.public}
"""The public unary ops by name."""
