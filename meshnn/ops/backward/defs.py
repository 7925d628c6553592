"""What declares a backward op: :class:`GradDef`, one entry of a table per op, with one
:class:`Form` per ttnn overload.  A form lists ttnn's arguments in order (:mod:`binding`'s
:class:`~meshnn.ops.backward.binding.Arg`) and one derivative function per gradient it returns;
:func:`declare` makes the public function, its registry entry and its golden function.

A derivative is ``d(grad, *operands, **params)`` over float32 arrays: ``operands`` are the form's
tensor arguments after the incoming gradient, in order; ``params`` its other arguments by ttnn's
names (not ``memory_config``, ``queue_id``, the preallocated outputs or ``are_required_outputs``).

The helpers build ttnn's usual forms: :func:`unary` (``grad_tensor, input_tensor, [params]``),
:func:`binary` (``grad_tensor, input_tensor_a, input_tensor_b, [params]``), with ttnn's optional
outputs where ttnn has them.

May import: numpy, the ops' registry and the backward package's binding and run modules.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from meshnn.ops.backward.binding import MEMORY_CONFIG, QUEUE_ID, Arg, Kind, Overload, a, k, overloaded
from meshnn.ops.backward.run import Result, results
from meshnn.ops.registry import OpKind, add
from meshnn.perf.desc import OpFamily

Derivative = Callable[..., Any]
"""``d(grad, *operands, **params)``: one gradient over float32 arrays."""

Check = Callable[[str, dict[str, Any]], None]
"""``check(op, arguments)``: raises a MeshnnError for argument values ttnn refuses."""

_CONTROL = {"memory_config", "queue_id", "are_required_outputs"}


@dataclass(frozen=True)
class Form:
    """One overload: its arguments (ttnn's order), its derivatives with the name of the operand
    each gradient's shape follows, and the names of its preallocated-output arguments (in the
    order of the gradients; ``""`` where a gradient has none).  ``run``: an overload that is not
    element-wise gradients (a ComplexTensor one) runs this instead, with every argument by name.
    ``check(op, arguments)``: raises for argument values ttnn refuses (before anything runs)."""

    args: tuple[Arg, ...]
    derivatives: tuple[tuple[Derivative, str], ...] = ()
    outputs: tuple[str, ...] = ()
    run: Callable[..., Any] | None = None
    check: Check | None = None

    def overload(self, op: str) -> Overload:
        """The form as an :class:`Overload` of ``ttnn.<op>``."""
        if self.run is not None:
            return Overload(self.args, self.run)
        outputs = set(self.outputs)
        tensors = [x.name for x in self.args if x.kind is Kind.TENSOR and x.name not in outputs]
        params = [x.name for x in self.args if x.kind is not Kind.TENSOR and x.name not in _CONTROL]
        derivatives, names, check = self.derivatives, self.outputs, self.check

        def run(**given: Any) -> list:
            values = {p: given[p] for p in params}
            if check is not None:
                check(op, given)
            grads = [Result(_bound(d, values), like) for d, like in derivatives]
            into = [given[n] if n else None for n in names]
            return results(
                op,
                {t: given[t] for t in tensors},
                grads,
                memory_config=given.get("memory_config"),
                queue_id=given.get("queue_id", 0),
                required=given.get("are_required_outputs"),
                into=into,
            )

        return Overload(self.args, run)


def _bound(derivative: Derivative, params: dict[str, Any]) -> Callable[..., Any]:
    if not params:
        return derivative
    return lambda *arrays: derivative(*arrays, **params)


@dataclass(frozen=True)
class GradDef:
    """One backward op: ttnn's name, its forms (overloads, tried in order), its golden function
    (``golden(torch, grad, *inputs, **params)``; None: ttnn attaches none), and its performance
    family: ``family`` with ``device_operation`` when it is one device operation, else
    ``modelled`` False (a composite of several)."""

    name: str
    forms: tuple[Form, ...]
    golden: Callable[..., Any] | None = None
    family: OpFamily = OpFamily.BINARY
    device_operation: str = ""
    modelled: bool = False
    kind: OpKind = OpKind.BACKWARD
    doc: str = field(default="")


def declare(defn: GradDef) -> Callable[..., Any]:
    """The public function of ``defn``, declared in the registry under its name (``experimental.``
    prefixed names land in ``ttnn.experimental``)."""
    short = defn.name.rsplit(".", 1)[-1]
    doc = defn.doc or f"``ttnn.{defn.name}``: the gradients of {short.removesuffix('_bw')} (a list)."
    function = overloaded(short, [f.overload(short) for f in defn.forms], doc)
    add(
        defn.name,
        function,
        kind=defn.kind,
        family=defn.family,
        device_operation=defn.device_operation,
        golden=defn.golden,
        modelled=defn.modelled,
    )
    return function


# ------------------------------------------------------------------------------ usual forms

GRAD = a("grad_tensor", Kind.TENSOR)
INPUT = a("input_tensor", Kind.TENSOR)
INPUT_GRAD = k("input_grad", Kind.TENSOR)


def unary(
    derivative: Derivative,
    *params: Arg,
    out: bool = False,
    tail: Sequence[Arg] = (),
    check: Check | None = None,
) -> Form:
    """``(grad_tensor, input_tensor, *params, memory_config=None[, input_grad=None])``: one gradient,
    of the input's shape.  Keyword-only ``params`` come before ``memory_config``, as ttnn binds them;
    ``tail`` after it."""
    positional = tuple(p for p in params if p.positional)
    keywords = tuple(p for p in params if not p.positional)
    outputs = ("input_grad",) if out else ()
    args = (GRAD, INPUT, *positional, *keywords, MEMORY_CONFIG, *tail, *((INPUT_GRAD,) if out else ()), QUEUE_ID)
    return Form(args, ((derivative, "input_tensor"),), outputs, check=check)


REQUIRED_OUTPUTS = k("are_required_outputs", Kind.BOOLS, [True, True], optional=False)


def binary(
    da: Derivative,
    db: Derivative,
    *params: Arg,
    names: tuple[str, str] = ("input_tensor_a", "input_tensor_b"),
    outputs: tuple[str, str] | None = None,
    check: Check | None = None,
) -> Form:
    """``(grad_tensor, <names>, *params, ...)``: two gradients, of each operand's shape.  With
    ``outputs`` (the preallocated outputs' names), ttnn's ``are_required_outputs`` form:
    ``*, are_required_outputs=[True, True], memory_config=None, <outputs>=None``; else only
    ``*, memory_config=None``.  Keyword-only ``params`` come before them."""
    positional = tuple(p for p in params if p.positional)
    keywords = tuple(p for p in params if not p.positional)
    operands = (a(names[0], Kind.TENSOR), a(names[1], Kind.TENSOR))
    if outputs is None:
        args = (GRAD, *operands, *positional, *keywords, MEMORY_CONFIG, QUEUE_ID)
        return Form(args, ((da, names[0]), (db, names[1])), check=check)
    extra = (REQUIRED_OUTPUTS, MEMORY_CONFIG, k(outputs[0], Kind.TENSOR), k(outputs[1], Kind.TENSOR), QUEUE_ID)
    grads = ((da, names[0]), (db, names[1]))
    return Form((GRAD, *operands, *positional, *keywords, *extra), grads, outputs, check=check)


def with_scalar(
    derivative: Derivative,
    *params: Arg,
    name: str = "input_tensor_a",
    out: bool = False,
    check: Check | None = None,
) -> Form:
    """``(grad_tensor, <name>, scalar, *params, memory_config=None[, input_grad=None])``: a binary
    op's tensor-and-number overload, one gradient."""
    positional = tuple(p for p in params if p.positional)
    keywords = tuple(p for p in params if not p.positional)
    args = (GRAD, a(name, Kind.TENSOR), a("scalar", Kind.NUMBER), *positional, *keywords, MEMORY_CONFIG)
    args = (*args, *((INPUT_GRAD,) if out else ()), QUEUE_ID)
    return Form(args, ((derivative, name),), ("input_grad",) if out else (), check=check)


def number(name: str, default: Any = None) -> Arg:
    """A keyword-only float parameter with ttnn's default."""
    return k(name, Kind.NUMBER, default)


def table(defs: Sequence[GradDef]) -> dict[str, Callable[..., Any]]:
    """Declare every def; the public functions by name."""
    return {d.name: declare(d) for d in defs}
