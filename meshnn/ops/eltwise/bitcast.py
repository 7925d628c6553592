"""``ttnn.bitcast`` (newer ttnn, tt-metal 2026-06): each element's bits read as another dtype of the
same width, nothing converted (a UnaryDeviceOperation running the ``BITCAST`` member).

Widths: 16 bits (bfloat16, uint16) and 32 bits (float32, int32, uint32); a bitcast between widths,
or of a block-float or 8-bit dtype, is refused by name.

May import: :mod:`meshnn.errors`, :mod:`meshnn.formats`, :mod:`meshnn.tensor`, the ops' registry,
checks and outputs and the element-wise kernel.
"""

from __future__ import annotations

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.mesh.op_keywords import SUB_CORE_GRIDS, ttnn_keywords
from meshnn.ops.checks import device_input
from meshnn.ops.eltwise.kernel import elementwise, memory_config_of
from meshnn.ops.outputs import out_spec_like
from meshnn.ops.registry import OpKind, register, torch_golden
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor

_BITS = {
    DataType.BFLOAT16: (16, np.float32),
    DataType.UINT16: (16, np.uint16),
    DataType.FLOAT32: (32, np.float32),
    DataType.INT32: (32, np.int32),
    DataType.UINT32: (32, np.uint32),
}
"""dtype -> (its width in bits, the numpy type its values are read in)."""


def _to_bits(x: np.ndarray, dtype: DataType) -> np.ndarray:
    """The stored bits of values ``x`` of ``dtype``, as unsigned integers of its width."""
    width, kind = _BITS[dtype]
    values = np.asarray(x).astype(kind, copy=False)
    if dtype is DataType.BFLOAT16:
        return (values.view(np.uint32) >> 16).astype(np.uint16)  # exact bfloat16 values: the upper half
    return values.view(np.uint16 if width == 16 else np.uint32)


def _from_bits(bits: np.ndarray, dtype: DataType) -> np.ndarray:
    """Values of ``dtype`` whose stored bits are ``bits`` (float32 for the floats, int64 for the ints)."""
    if dtype is DataType.BFLOAT16:
        return (bits.astype(np.uint32) << 16).view(np.float32)
    values = bits.view(_BITS[dtype][1])
    return values if dtype is DataType.FLOAT32 else values.astype(np.int64)


def _golden(t, x, dtype, **_):
    names = {DataType.BFLOAT16: "bfloat16", DataType.UINT16: "uint16", DataType.FLOAT32: "float32"}
    names |= {DataType.INT32: "int32", DataType.UINT32: "uint32"}
    return x.view(getattr(t, names[dtype]))


@register(kind=OpKind.UNARY, family=OpFamily.UNARY, device_operation="UnaryDeviceOperation",
          golden=torch_golden(_golden))  # fmt: skip
@ttnn_keywords(sub_core_grids=SUB_CORE_GRIDS)
def bitcast(
    input_tensor: Tensor,
    dtype: DataType,
    *,
    memory_config: MemoryConfig | None = None,
    output_tensor: Tensor | None = None,
) -> Tensor:
    """``ttnn.bitcast``: ``input_tensor``'s bits as ``dtype`` (of the same width), in its layout."""
    tensor = device_input("bitcast", "input_tensor", input_tensor)
    if not isinstance(dtype, DataType):
        raise MeshnnTypeError(f"ttnn.bitcast: dtype must be a ttnn.DataType, got {dtype!r}")
    source = tensor.dtype
    for label, kind in (("input_tensor's dtype", source), ("dtype", dtype)):
        if kind not in _BITS:
            raise MeshnnValueError(f"ttnn.bitcast: {label} {kind} has no bitcast (16 or 32-bit dtypes only)")
    if _BITS[source][0] != _BITS[dtype][0]:
        raise MeshnnValueError(f"ttnn.bitcast: {source} and {dtype} differ in width; a bitcast keeps the bits")
    if isinstance(output_tensor, Tensor) and output_tensor.is_allocated() and output_tensor.dtype != dtype:
        raise MeshnnValueError("ttnn.bitcast: if both output dtype and output tensor provided dtype should match")
    memory_config = memory_config_of(memory_config, output_tensor)  # type: ignore[assignment]
    out = out_spec_like(tensor, dtype=dtype, memory_config=memory_config, op="bitcast")
    return elementwise("bitcast", [tensor], out, lambda x: _from_bits(_to_bits(x, source), dtype),
                       output_tensor=output_tensor)  # fmt: skip
