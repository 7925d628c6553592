"""ttnn's unary ops that run other unary ops: ``unary_chain`` (a list of ``ttnn.UnaryWithParam``
applied in turn, in one float32 computation rounded once, as the device fuses them) and the
in-place ``logical_not_``; and ``polyval`` (Horner's rule with a list of coefficients, highest
power first).

May import: :mod:`meshnn.errors`, :mod:`meshnn.tensor`, the ops' registry, checks and the
element-wise modules.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.mesh.op_keywords import number, ttnn_keywords
from meshnn.ops.checks import device_input
from meshnn.ops.config import UnaryWithParam
from meshnn.ops.eltwise.activations import activation_steps, apply_steps
from meshnn.ops.eltwise.kernel import elementwise, memory_config_of
from meshnn.ops.eltwise.unary import OPS
from meshnn.ops.eltwise.unary_tables import UnaryOpType
from meshnn.ops.outputs import out_spec_like
from meshnn.ops.registry import OpKind, register, torch_golden
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor

_UNARY = {"kind": OpKind.UNARY, "family": OpFamily.UNARY, "device_operation": "UnaryDeviceOperation"}


@register(**_UNARY)
@ttnn_keywords()
def unary_chain(
    input_tensor: Tensor,
    ops_chain: Sequence[object],
    *,
    memory_config: MemoryConfig | None = None,
    output_tensor: Tensor | None = None,
) -> Tensor:
    """``ttnn.unary_chain``: the unary ops of ``ops_chain`` (``ttnn.UnaryWithParam`` or
    ``ttnn.UnaryOpType``), applied in turn."""
    tensor = device_input("unary_chain", "input_tensor", input_tensor)
    if isinstance(ops_chain, str) or not isinstance(ops_chain, Sequence) or not ops_chain:
        raise MeshnnTypeError(
            f"ttnn.unary_chain: ops_chain must be a non-empty list of ttnn.UnaryWithParam, got {ops_chain!r}"
        )
    chain, dtype = _final_typecast(list(ops_chain))
    steps = activation_steps("unary_chain", "ops_chain", chain)
    memory_config = memory_config_of(memory_config, output_tensor)  # type: ignore[assignment]
    out = out_spec_like(tensor, dtype=dtype, memory_config=memory_config, op="unary_chain")

    def compute(x: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return apply_steps(steps, x.astype(np.float32, copy=False))

    return elementwise("unary_chain", [tensor], out, compute, output_tensor=output_tensor)


def _final_typecast(chain: list[object]) -> tuple[list[object], DataType | None]:
    """A chain ending in ``UnaryWithParam(TYPECAST, input dtype, output dtype)`` (by their
    ``DataType`` values): the steps before it and the output's dtype, its values rounded into it as
    a typecast rounds (ttnn's output dtype is the last TYPECAST's); else the chain and None."""
    last = chain[-1] if chain else None
    if not (isinstance(last, UnaryWithParam) and last.op_type is UnaryOpType.TYPECAST):
        return chain, None
    codes = {d.value: d for d in DataType}
    if len(last.params) != 2 or any(p not in codes for p in last.params):
        raise MeshnnValueError(
            f"ttnn.unary_chain: TYPECAST takes two ttnn.DataType values (input, output), got {list(last.params)}"
        )
    if len(chain) == 1:
        raise MeshnnValueError("ttnn.unary_chain: a TYPECAST alone is ttnn.typecast; give it another step first")
    return chain[:-1], codes[int(last.params[1])]


@register(**_UNARY, golden=torch_golden(lambda t, x, *a, **k: x.logical_not_()))
@ttnn_keywords()
def logical_not_(input_tensor: Tensor, *, memory_config: MemoryConfig | None = None) -> Tensor:
    """``ttnn.logical_not_``: ``ttnn.logical_not`` written into ``input_tensor``, which it returns."""
    tensor = device_input("logical_not_", "input_tensor", input_tensor)
    return OPS["logical_not"](tensor, memory_config=memory_config, output_tensor=tensor)


def _golden_polyval(t, x, coeffs, *a, **k):
    result = 0.0
    for c in coeffs:
        result = result * x + c
    return result


@register(kind=OpKind.BINARY, family=OpFamily.BINARY, device_operation="BinaryNgDeviceOperation",
          golden=torch_golden(_golden_polyval))  # fmt: skip
@ttnn_keywords()
def polyval(input_tensor_a: Tensor, coeffs: Sequence[float], *, memory_config: MemoryConfig | None = None) -> Tensor:
    """``ttnn.polyval``: the polynomial with coefficients ``coeffs`` (highest power first) at each
    element, by Horner's rule in float32."""
    tensor = device_input("polyval", "input_tensor_a", input_tensor_a)
    if isinstance(coeffs, str) or not isinstance(coeffs, Sequence):
        raise MeshnnTypeError(f"ttnn.polyval: coeffs must be a list of numbers, got {coeffs!r}")
    if not coeffs:
        raise MeshnnValueError("ttnn.polyval: coeffs must hold at least one coefficient")
    for c in coeffs:
        number("polyval", "coeffs", c)
    values = [np.float32(c) for c in coeffs]
    out = out_spec_like(tensor, memory_config=memory_config, op="polyval")

    def compute(x: np.ndarray) -> np.ndarray:
        x = x.astype(np.float32, copy=False)
        result = np.full_like(x, values[0])
        for c in values[1:]:
            result = result * x + c
        return result

    return elementwise("polyval", [tensor], out, compute)
