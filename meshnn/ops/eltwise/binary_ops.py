"""The public binary ops, made from the binary table: each :class:`BinaryDef` gives ``ttnn.<name>``
with ttnn's signature (see :mod:`~meshnn.ops.eltwise.binary_defs`), its aliases, its in-place form
``ttnn.<name>_`` (written into ``input_tensor_a``, which it returns), and their registry entries.

May import: :mod:`meshnn.errors`, :mod:`meshnn.tensor`, the ops' registry and signatures and the
binary modules.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from meshnn.errors import MeshnnValueError
from meshnn.mesh.op_keywords import SUB_CORE_GRIDS, Keyword, count, flag, ttnn_keywords
from meshnn.ops.checks import device_input
from meshnn.ops.eltwise.binary import binary, plain_binary
from meshnn.ops.eltwise.binary_defs import BinaryDef, Keywords
from meshnn.ops.eltwise.binary_tables import BINARY_DEFS
from meshnn.ops.registry import OpKind, add, alias, torch_golden
from meshnn.ops.signatures import Param, kw, make_function
from meshnn.perf.desc import OpFamily
from meshnn.tensor.tensor import Tensor

_OPERANDS = (Param("input_tensor_a"), Param("input_tensor_b"))
_ACTIVATIONS = (kw("activations"), kw("input_tensor_a_activations"), kw("input_tensor_b_activations"))
_TAILS = {
    Keywords.NG: (kw("dtype"), kw("memory_config"), kw("output_tensor"), *_ACTIVATIONS, kw("queue_id", 0)),
    Keywords.PLAIN: (kw("memory_config"),),
    Keywords.OUTPUT: (kw("memory_config"), kw("output_tensor")),
    Keywords.BITWISE: (kw("memory_config"), kw("output_tensor"), *_ACTIVATIONS, kw("queue_id", 0)),
    Keywords.SHIFT: (kw("dtype"), kw("memory_config"), kw("output_tensor"), kw("queue_id", 0)),
}
_LEGACY = {"use_legacy": Keyword(None, flag), "sub_core_grids": SUB_CORE_GRIDS, "sub_device_id": Keyword(None, count)}
"""``sub_device_id``: newer ttnn's (tt-metal 2026-06), a ``ttnn.SubDeviceId`` (an index), recorded."""
_HARDWARE = {Keywords.NG: _LEGACY, Keywords.BITWISE: _LEGACY, Keywords.SHIFT: _LEGACY}


def _call(defn: BinaryDef, inplace: bool) -> Callable[..., Tensor]:
    """What the public function of ``defn`` (or of its in-place form) does with its arguments."""
    name = f"{defn.name}_" if inplace else defn.name
    checks = [(p.name, p.check) for p in defn.params if p.check is not None]
    names = [p.name for p in defn.params]

    def call(input_tensor_a: Any, input_tensor_b: Any, **kwargs: Any) -> Tensor:
        for key, check in checks:
            check(name, key, kwargs[key])
        params = tuple([(k, kwargs.pop(k)) for k in names]) if names else ()
        if inplace:
            target = device_input(name, "input_tensor_a", input_tensor_a)
            _check_inplace(name, target, input_tensor_b)
            kwargs["output_tensor"] = target
        return binary(defn.name, input_tensor_a, input_tensor_b, params=params, **kwargs)

    return call


def _check_inplace(name: str, a: Tensor, b: object) -> None:
    """An in-place op keeps input_tensor_a's shape: b must broadcast into it."""
    if isinstance(b, Tensor) and b.is_allocated():
        shape = tuple(a.shape)
        try:
            grown = np.broadcast_shapes(shape, tuple(b.shape))
        except ValueError:
            grown = None
        if grown != shape:
            raise MeshnnValueError(
                f"ttnn.{name}: input_tensor_b {list(b.shape)} does not broadcast into input_tensor_a "
                f"{list(shape)}; an in-place op writes input_tensor_a"
            )


def _inplace_golden(golden: Callable[..., Any]) -> Callable[..., Any]:
    """The golden of an in-place form, as ttnn's: a comparison's (``gt_``, ``logical_and_``) is
    torch's in-place op, writing 1 / 0 into ``input_tensor_a`` in its dtype; an arithmetic one's
    (``add_``) is the op's own."""

    def inplace(t, a, b, *args, **kwargs):
        result = golden(t, a, b, *args, **kwargs)
        if t.is_tensor(a) and t.is_tensor(result) and result.dtype == t.bool and result.shape == a.shape:
            return a.copy_(result)
        return result

    return inplace


def declare(defn: BinaryDef) -> dict[str, Callable[..., Any]]:
    """The public functions of ``defn`` (its name, aliases and in-place form), declared in the
    registry; returns them by name."""
    made: dict[str, Callable[..., Any]] = {}
    for inplace in (False, True) if defn.inplace else (False,):
        golden = None
        if defn.golden is not None:
            golden = torch_golden(_inplace_golden(defn.golden) if inplace else defn.golden)
        family = dict(kind=OpKind.BINARY, family=OpFamily.BINARY, device_operation=defn.device_operation, golden=golden)
        name = f"{defn.name}_" if inplace else defn.name
        call = _call(defn, inplace)
        tail = _TAILS[defn.keywords]
        if inplace:  # ttnn's in-place forms take the activations (binary_ng) and no output options
            tail = (*_ACTIVATIONS, kw("queue_id", 0)) if defn.keywords is Keywords.NG else (kw("queue_id", 0),)
        params = (*_OPERANDS, *defn.params, *tail)
        doc = f"``ttnn.{name}``: element-wise {defn.name} of two tensors (or a tensor and a number)"
        if inplace:
            doc += ", written into input_tensor_a"
        hardware = {**_HARDWARE.get(defn.keywords, {}), **defn.hardware}
        plain = None if inplace or defn.params else plain_binary(defn.name)
        function = ttnn_keywords(name, **hardware)(make_function(name, params, call, doc, plain=plain))
        add(name, function, operator=None if inplace else defn.operator, **family)  # type: ignore[arg-type]
        made[name] = function
    for other in defn.aliases:  # "sub" names subtract, "sub_" its in-place form
        of = f"{defn.name}_" if other.endswith("_") else defn.name
        alias(other, of)
        made[other] = made[of]
    return made


OPS: dict[str, Callable[..., Any]] = {}
for _defn in BINARY_DEFS:
    if _defn.public:
        OPS.update(declare(_defn))
