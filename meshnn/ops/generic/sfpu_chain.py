"""A compute kernel's ``SFPU_OP_CHAIN_0`` define read as meshnn's unary ops.

ttnn's unary program passes the ops it fuses as preprocessor defines: ``SFPU_OP_CHAIN_0`` expands
(through further defines, e.g. ``SFPU_OP_CHAIN_0_INIT_0`` / ``SFPU_OP_CHAIN_0_FUNC_0``) into C++
statements such as ``exp_tile_init(); exp_tile(0);`` or ``relu_max_tile(0, 0x40000000u);``.  The
defines are expanded here (macro names replaced by their values, at most :data:`MAX_DEPTH` deep),
the ``*_init`` calls dropped, and each ``<name>_tile[<...>](0, args...)`` call looked up in
:data:`SFPU_OPS`: the meshnn unary op (``meshnn.ops.eltwise.unary_tables.UNARY``) and its
parameters, a float parameter given as its float32 bits (``0x...u``) as ttnn's program writes it.
Every call must act on destination register 0 (the one ``eltwise_sfpu.cpp`` packs).  A statement
that is no such call, or a function not in the table, is refused by name
(``NotImplementedByMeshnn``).

Layer: ops.  Imports errors.
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass, field

from meshnn.errors import NotImplementedByMeshnn

MAX_DEPTH = 8
"""Nesting of defines expanded (a define that names itself is refused past this)."""

_CALL = re.compile(r"^([A-Za-z_]\w*)\s*(?:<([^<>]*)>)?\s*\((.*)\)$", re.S)
_IDENT = re.compile(r"[A-Za-z_]\w*")


@dataclass(frozen=True)
class Step:
    """One unary op of a chain: meshnn's op name and its parameters by name."""

    op: str
    params: dict[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class SfpuOp:
    """How a ``<name>_tile`` call maps to a meshnn op: ``params`` name the call's arguments after
    the register (None: an argument meshnn does not need, e.g. a reciprocal ttnn passes beside its
    value), each float32 bits; ``approx``: the first template argument is the op's
    ``fast_and_approximate_mode``."""

    op: str
    params: tuple[str | None, ...] = ()
    approx: bool = False


_PLAIN = (
    *("exp", "relu", "log", "log1p", "tanh", "sin", "cos", "tan", "sqrt", "rsqrt", "abs", "sigmoid", "silu"),
    *("square", "erf", "erfc", "sign", "floor", "ceil", "exp2", "expm1", "signbit", "erfinv", "acos", "asin"),
    *("atan", "sinh", "cosh", "i0", "isfinite", "isinf", "isnan", "hardsigmoid", "hardswish", "softsign"),
    *("eqz", "nez", "gtz", "ltz", "gez", "lez", "bitwise_not", "mish", "hardmish", "frac", "trunc", "lgamma"),
    *("digamma", "atanh", "asinh", "acosh", "identity", "relu6"),
)
SFPU_OPS: dict[str, SfpuOp] = {f"{name}_tile": SfpuOp(name) for name in _PLAIN}
"""``<name>_tile`` (and its ``_int32`` form) -> the meshnn unary op it computes."""
SFPU_OPS |= {
    "gelu_tile": SfpuOp("gelu", approx=True),
    "recip_tile": SfpuOp("reciprocal"),
    "negative_tile": SfpuOp("neg"),
    "logical_not_unary_tile": SfpuOp("logical_not"),
    "logical_not_tile": SfpuOp("logical_not"),
    "relu_max_tile": SfpuOp("relu_max", ("upper_limit",)),
    "relu_min_tile": SfpuOp("relu_min", ("lower_limit",)),
    "leaky_relu_tile": SfpuOp("leaky_relu", ("negative_slope",)),
    "elu_tile": SfpuOp("elu", ("alpha",)),
    "celu_tile": SfpuOp("celu", ("alpha", None)),
    "heaviside_tile": SfpuOp("heaviside", ("value",)),
    "hardtanh_tile": SfpuOp("hardtanh", ("min_val", "max_val")),
    "selu_tile": SfpuOp("selu", ("scale", "alpha")),
    "threshold_tile": SfpuOp("threshold", ("threshold", "value")),
    "rpow_tile": SfpuOp("rpow", ("exponent",)),
}


def _expand(text: str, defines: dict[str, str], source: str, depth: int = 0) -> str:
    if depth > MAX_DEPTH:
        raise NotImplementedByMeshnn(f"{source}: SFPU_OP_CHAIN_0's defines nest deeper than {MAX_DEPTH}")

    def one(match: re.Match[str]) -> str:
        name = match.group(0)
        return _expand(defines[name], defines, source, depth + 1) if name in defines else name

    return _IDENT.sub(one, text)


def _float_bits(text: str, source: str, call: str) -> float:
    literal = text.strip().rstrip("uU")
    try:
        bits = int(literal, 0)
    except ValueError:
        raise NotImplementedByMeshnn(f"{source}: argument {text.strip()!r} of {call} is no number") from None
    return struct.unpack("<f", struct.pack("<I", bits & 0xFFFFFFFF))[0]


def _template_flag(template: str | None) -> bool | None:
    if not template:
        return None
    first = template.split(",")[0].strip().rstrip("uU")
    return {"0": False, "1": True, "false": False, "true": True}.get(first)


def _step(statement: str, source: str) -> Step | None:
    match = _CALL.match(statement)
    if match is None:
        raise NotImplementedByMeshnn(f"{source}: SFPU_OP_CHAIN_0 statement {statement!r} is no call meshnn reads")
    name, template, arguments = match.group(1), match.group(2), match.group(3)
    if name.endswith("_init"):
        return None
    base = name.removesuffix("_int32")
    known = SFPU_OPS.get(base)
    if known is None:
        raise NotImplementedByMeshnn(
            f"{source}: the SFPU function {name} (in SFPU_OP_CHAIN_0) is not in meshnn's table"
        )
    args = [a.strip() for a in arguments.split(",")] if arguments.strip() else []
    if not args or args[0].rstrip("uU") != "0":
        raise NotImplementedByMeshnn(f"{source}: {name}({arguments}) acts on a register other than 0")
    if len(args) - 1 != len(known.params):
        raise NotImplementedByMeshnn(f"{source}: {name} takes {len(known.params)} arguments after the register")
    params: dict[str, object] = {}
    for key, text in zip(known.params, args[1:], strict=True):
        if key is not None:
            params[key] = _float_bits(text, source, name)
    flag = _template_flag(template)
    if known.approx and flag is not None:
        params["fast_and_approximate_mode"] = flag
    return Step(known.op, params)


def sfpu_chain(defines: dict[str, str], source: str) -> list[Step]:
    """The unary ops ``SFPU_OP_CHAIN_0`` names, in order (none: the define is absent, a copy)."""
    text = defines.get("SFPU_OP_CHAIN_0")
    if text is None:
        return []
    expanded = _expand(text, defines, source)
    steps = [_step(s.strip(), source) for s in expanded.split(";") if s.strip()]
    return [s for s in steps if s is not None]
