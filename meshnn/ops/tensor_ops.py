"""The tensor layer's operations declared as ops: ``ttnn.reshape``, ``ttnn.to_layout``,
``ttnn.typecast`` and ``ttnn.to_dtype`` live in :mod:`meshnn.tensor` (they take host tensors too:
views or host conversions), and run as ops on a device tensor (through
:mod:`meshnn.tensor.device_hooks`); their registry entries are made here, the layer that holds the
registry.

May import: :mod:`meshnn.tensor` and the ops' registry and goldens.
"""

from __future__ import annotations

from meshnn.ops import goldens
from meshnn.ops.registry import OpKind, add
from meshnn.perf.desc import OpFamily
from meshnn.tensor.conversions import to_dtype, to_layout, typecast
from meshnn.tensor.reshape import reshape

add(
    "reshape",
    reshape,
    kind=OpKind.DATA_MOVEMENT,
    family=OpFamily.COPY,
    device_operation="ReshapeViewDeviceOperation",
    golden=goldens.reshape,
)
add("to_dtype", to_dtype, kind=OpKind.DATA_MOVEMENT, family=OpFamily.TYPECAST, golden=goldens.identity)
add("to_layout", to_layout, kind=OpKind.DATA_MOVEMENT, family=OpFamily.COPY, golden=goldens.identity)
add("typecast", typecast, kind=OpKind.DATA_MOVEMENT, family=OpFamily.TYPECAST, golden=goldens.identity)
