"""The tensor layer's operations declared as ops: ``ttnn.reshape``, ``ttnn.to_layout``,
``ttnn.typecast`` and ``ttnn.to_dtype`` live in :mod:`meshnn.tensor` (they take host tensors too:
views or host conversions), and run as ops on a device tensor (through
:mod:`meshnn.tensor.device_hooks`); their registry entries are made here, the layer that holds the
registry.

May import: :mod:`meshnn.tensor` and the ops' registry and goldens.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.ops import goldens
from meshnn.ops.checks import int_list
from meshnn.ops.registry import OpKind, add
from meshnn.perf.desc import OpFamily
from meshnn.tensor.conversions import to_dtype, to_layout, typecast
from meshnn.tensor.narrow import narrow
from meshnn.tensor.reshape import is_view_reshape, reshape
from meshnn.tensor.tensor import Tensor

add(
    "reshape",
    reshape,
    kind=OpKind.DATA_MOVEMENT,
    family=OpFamily.COPY,
    device_operation="ReshapeViewDeviceOperation",
    golden=goldens.reshape,
)
add("narrow", narrow, kind=OpKind.DATA_MOVEMENT, family=OpFamily.COPY, golden=goldens.narrow)
add("to_dtype", to_dtype, kind=OpKind.DATA_MOVEMENT, family=OpFamily.TYPECAST, golden=goldens.identity)
add("to_layout", to_layout, kind=OpKind.DATA_MOVEMENT, family=OpFamily.COPY, golden=goldens.identity)
add("typecast", typecast, kind=OpKind.DATA_MOVEMENT, family=OpFamily.TYPECAST, golden=goldens.identity)


def view(input_tensor: Tensor, new_shape: Sequence[int]) -> Tensor:
    """``ttnn.view``: ``input_tensor`` under a new logical shape, always a view of the same bytes
    (no data moves); a shape the bytes cannot be viewed as (a TILE tensor whose last two dims
    change across tiles) is refused, where ``ttnn.reshape`` would move data."""
    if not isinstance(input_tensor, Tensor):
        raise MeshnnTypeError(f"ttnn.view: input_tensor must be a ttnn.Tensor, got {type(input_tensor).__name__}")
    input_tensor.check_usable("ttnn.view: input_tensor")
    shape = tuple(int_list("view", "new_shape", new_shape))
    volume = input_tensor.spec.logical_volume()
    known = math.prod(d for d in shape if d != -1)
    if shape.count(-1) > 1 or (-1 in shape and (known == 0 or volume % known)) or (-1 not in shape and known != volume):
        raise MeshnnValueError(
            f"ttnn.view: new_shape {list(shape)} does not hold the {volume} elements of input_tensor "
            f"{list(input_tensor.shape)}"
        )
    resolved = tuple(volume // known if d == -1 else d for d in shape)
    if not is_view_reshape(input_tensor.spec, resolved):
        raise MeshnnValueError(
            f"ttnn.view: input_tensor {list(input_tensor.shape)} in {input_tensor.layout} cannot be viewed as "
            f"{list(resolved)} without moving data (the tiles' last two dims change); use ttnn.reshape"
        )
    return reshape(input_tensor, resolved)


add("view", view, kind=OpKind.DATA_MOVEMENT, family=OpFamily.COPY, golden=goldens.view)


def experimental_view(input_tensor: Tensor, *shape: int | Sequence[int]) -> Tensor:
    """``ttnn.experimental.view(input_tensor, shape)`` or ``(input_tensor, N, C, H, W)``: ttnn's older
    view, whose overloads take a shape or four dims (-1 inferred).  ttnn's does not check that the
    bytes can be viewed so (its doc warns of corrupted data); meshnn's checks as :func:`view` does."""
    if len(shape) == 1 and not isinstance(shape[0], int):
        return view(input_tensor, shape[0])  # type: ignore[arg-type]
    if len(shape) != 4:
        raise MeshnnTypeError(
            f"ttnn.experimental.view takes (input_tensor, shape) or (input_tensor, N, C, H, W), got {len(shape)} dims"
        )
    return view(input_tensor, shape)  # type: ignore[arg-type]


add("experimental.view", experimental_view, kind=OpKind.DATA_MOVEMENT, family=OpFamily.COPY, golden=goldens.view)
