"""Bad calls of the backward ops (``ttnn.*_bw``) and of the complex ops: for every op, its first
tensor argument deallocated (generated from each op's first overload, so a new op gets its row),
and the refusals of particular ops: a negative ``pow_bw`` exponent, an unknown rounding mode or
gelu approximation, no clamp bound, ``are_required_outputs`` asking for nothing, an argument of
the wrong kind, a preallocated gradient of the wrong shape, operands on two meshes, a ComplexTensor
of parts of two shapes, a ComplexTensor op without its required ``memory_config``."""

from __future__ import annotations

import meshnn as ttnn
from meshnn.ops import registry
from meshnn.ops.backward.binding import Kind
from meshnn.ops.registry import OpKind
from meshnn.ops.signatures import REQUIRED

from ..cases import DEAD, TYPE, VALUE, WRONG_MESH, Case

DRAM = ttnn.DRAM_MEMORY_CONFIG


def _example(kind: Kind, first: bool, e):
    if kind is Kind.TENSOR:
        return e.freed if first else e.a
    if kind is Kind.COMPLEX:
        return ttnn.ComplexTensor((e.freed, e.a)) if first else ttnn.ComplexTensor((e.a, e.a2))
    if kind is Kind.INTS:
        return [1, 1, 1]
    return 1 if kind is Kind.INT else 0.5


def _dead_first(name: str) -> Case:
    """``ttnn.<name>`` with its first argument (a tensor, or a ComplexTensor's real part) freed."""
    function = registry.lookup(name).function
    args = [a for a in function.overloads[0].args if a.default is REQUIRED or (a.positional and a.default is None)]
    first = args[0].name

    def call(e):
        positional = [_example(a.kind, i == 0, e) for i, a in enumerate(args) if a.positional]
        keywords = {a.name: DRAM for a in args if not a.positional}
        return function(*positional, **keywords)

    return Case(name, f"{first} deallocated", call, DEAD, first)


def _generated() -> list[Case]:
    kinds = (OpKind.BACKWARD, OpKind.COMPLEX)
    names = [e.name for e in registry.entries() if e.kind in kinds and hasattr(e.function, "overloads")]
    return [_dead_first(n) for n in names if not registry.lookup(n).namespace]


def rows() -> list[Case]:
    return [
        *_generated(),
        Case("pow_bw", "negative exponent", lambda e: ttnn.pow_bw(e.a, e.a2, -1.0), VALUE, "exponent"),
        Case(
            "rdiv_bw",
            "round_mode unknown",
            lambda e: ttnn.rdiv_bw(e.a, e.a2, 2.0, round_mode="up"),
            VALUE,
            "round_mode",
        ),
        Case(
            "div_bw", "round_mode unknown", lambda e: ttnn.div_bw(e.a, e.a2, e.a, round_mode="up"), VALUE, "round_mode"
        ),
        Case(
            "gelu_bw", "approximate unknown", lambda e: ttnn.gelu_bw(e.a, e.a2, approximate="erf"), VALUE, "approximate"
        ),
        Case("clamp_bw", "neither bound", lambda e: ttnn.clamp_bw(e.a, e.a2), VALUE, "min"),
        Case("mul_bw", "scalar is a str", lambda e: ttnn.mul_bw(e.a, e.a2, "2"), TYPE, "scalar"),
        Case(
            "add_bw",
            "no gradient required",
            lambda e: ttnn.add_bw(e.a, e.a2, e.a, are_required_outputs=[False, False]),
            VALUE,
            "are_required_outputs",
        ),
        Case(
            "add_bw",
            "input_grad of another shape",
            lambda e: ttnn.add_bw(e.a, e.a2, e.a, input_grad=e.b),
            VALUE,
            "preallocated",
        ),
        Case(
            "sub_bw",
            "other_tensor on another mesh",
            lambda e: ttnn.sub_bw(e.a, e.a2, e.other),
            WRONG_MESH,
            "other_tensor",
        ),
        Case(
            "exp_bw",
            "memory_config is a str",
            lambda e: ttnn.exp_bw(e.a, e.a2, memory_config="L1"),
            TYPE,
            "memory_config",
        ),
        Case("exp_bw", "an unknown keyword", lambda e: ttnn.exp_bw(e.a, e.a2, cq=0), TYPE, "cq"),
        Case("concat_bw", "dim out of range", lambda e: ttnn.concat_bw(e.a, e.a2, e.a, 5), VALUE, "dim"),
        Case("repeat_bw", "shape does not repeat", lambda e: ttnn.repeat_bw(e.a, e.a2, [1, 2, 1]), VALUE, "repeated"),
        Case("prod_bw", "dim out of range", lambda e: ttnn.prod_bw(e.a, e.a2, dim=4), VALUE, "dim"),
        Case(
            "embedding_bw", "index tensor in tiles", lambda e: ttnn.embedding_bw(e.a, e.w, e.a), VALUE, "input_tensor"
        ),
        Case("complex_tensor", "parts of two shapes", lambda e: ttnn.complex_tensor(e.a, e.b), VALUE, "imag"),
        Case("ComplexTensor", "a part is not a tensor", lambda e: ttnn.ComplexTensor((e.a, 3)), TYPE, "imag"),
        Case("ComplexTensor", "index 2", lambda e: ttnn.ComplexTensor((e.a, e.a2))[2], VALUE, "index"),
        Case("conj", "no memory_config", lambda e: ttnn.conj(ttnn.ComplexTensor((e.a, e.a2))), TYPE, "memory_config"),
        Case(
            "abs",
            "a ComplexTensor without memory_config",
            lambda e: ttnn.abs(ttnn.ComplexTensor((e.a, e.a2))),
            TYPE,
            "memory_config",
        ),
    ]
