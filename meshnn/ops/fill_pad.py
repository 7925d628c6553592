"""``ttnn.fill_implicit_tile_padding``: a copy of a TILE tensor whose tile padding (the values past
its logical shape in the last two dims) holds ``fill_value``, as ttnn's reductions use it to make
padding the identity of a reduction.  A tensor with no padding in its last two dims comes back as
it is (the same tensor, as ttnn returns it); a BFLOAT8_B tensor is filled through bfloat16 and
packed again (the fill value shares its face rows' exponents, as on the device).

(Added by the reductions helper of issue 35, whose tests call it; it is a data-movement op: where
the data-movement family declares its own, keep that one.)

May import: every layer below the ops and the ops' launch, checks, outputs and values.
"""

from __future__ import annotations

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.layout import Layout
from meshnn.mesh.coord import MeshCoordinate
from meshnn.mesh.op_keywords import ttnn_keywords
from meshnn.ops.checks import device_input, same_mesh
from meshnn.ops.launch import launch
from meshnn.ops.outputs import Output, out_spec_like
from meshnn.ops.registry import OpKind, register, torch_golden
from meshnn.ops.values import encode_elements, logical_mask, store_elements, stored_elements
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor


def _golden(torch, input_tensor, fill_value, **_):
    return input_tensor.clone()  # the logical values are unchanged


@register(kind=OpKind.DATA_MOVEMENT, family=OpFamily.COPY, device_operation="FillPad", golden=torch_golden(_golden),
          modelled=False)  # fmt: skip
@ttnn_keywords()
def fill_implicit_tile_padding(
    input_tensor: Tensor, fill_value: float, *, memory_config: MemoryConfig | None = None
) -> Tensor:
    """A copy of ``input_tensor`` with ``fill_value`` in its tile padding (see the module docstring)."""
    op = "fill_implicit_tile_padding"
    x = device_input(op, "input_tensor", input_tensor)
    if isinstance(fill_value, bool) or not isinstance(fill_value, int | float | np.number):
        raise MeshnnTypeError(f"ttnn.{op}: fill_value must be a number, got {fill_value!r}")
    if x.layout is not Layout.TILE:
        raise MeshnnValueError(f"ttnn.{op}: FillPad should only be used for tile layout (input_tensor is {x.layout})")
    shape = tuple(x.shape) if len(x.shape) >= 2 else (1, *tuple(x.shape))
    height, width = (shape[-2], shape[-1]) if shape else (1, 1)
    if height % 32 == 0 and width % 32 == 0:
        return x
    mesh = same_mesh(op, {"input_tensor": x})
    spec = out_spec_like(x, memory_config=memory_config, op=op)
    mask = logical_mask(spec)
    fill = np.float32(fill_value) if x.dtype.is_float else np.asarray(fill_value).astype(x.dtype.storage_dtype)

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]) -> None:
        elements = stored_elements(in_rows[0], x.spec)
        filled = elements if mask is None else np.where(mask, elements, fill)
        filled = np.ascontiguousarray(filled, dtype=elements.dtype)
        if spec.dtype.is_block_float:  # (store_elements would zero the padding: here it is the point)
            out_rows[0][...] = encode_elements(filled, spec)
        else:
            store_elements(filled, spec, out_rows[0])

    attrs = {"fill_value": float(fill_value), "memory_config": spec.memory_config}
    return launch(op, mesh, [x], [Output(spec)], kernel, rowwise=True, attrs=attrs)[0]
