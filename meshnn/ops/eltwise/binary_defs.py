"""What declares a binary element-wise op: :class:`BinaryDef`, one line of a table per op, from which
:mod:`meshnn.ops.eltwise.binary` makes the public function with ttnn's signature (and its in-place
form ``<name>_`` where ttnn has one), its registry entry and golden function.

Two signatures, as ttnn binds them:

- ``NG`` (the binary_ng ops: ``add``, ``eq``, ``logical_and``...): ``(input_tensor_a,
  input_tensor_b, *, dtype, memory_config, output_tensor, activations,
  input_tensor_a_activations, input_tensor_b_activations)`` plus meshnn's ``queue_id``;
- ``PLAIN`` (the composite ops: ``atan2``, ``hypot``...): ``(input_tensor_a, input_tensor_b,
  [params], *, memory_config)``; ``OUTPUT`` adds ``output_tensor``;
- ``BITWISE`` (``bitwise_and``, the shifts): NG's keywords without ``dtype``;
- ``SHIFT`` (``logical_right_shift``): ``dtype``, ``memory_config``, ``output_tensor`` only.

May import: numpy and the op signatures.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from meshnn.formats.dtypes import DataType
from meshnn.mesh.op_keywords import Keyword
from meshnn.ops.signatures import Param

Compute = Callable[..., np.ndarray]
"""``compute(a, b, **params)``: the op over float32 arrays (int64 for an integer op's integer
operands; ``b`` may be a float32 scalar), broadcasting as numpy does."""


class Keywords(enum.Enum):
    """Which keyword arguments an op's binding has after its operands and parameters."""

    NG = "binary_ng"  # dtype, memory_config, output_tensor, the three activation lists
    PLAIN = "composite"  # memory_config only
    OUTPUT = "composite with output"  # memory_config and output_tensor
    BITWISE = "bitwise"  # memory_config, output_tensor, the three activation lists (no dtype)
    SHIFT = "logical shift"  # dtype, memory_config, output_tensor


DtypeParams = Callable[[DataType, dict[str, Any]], tuple[tuple[str, Any], ...]]
"""``dtype_params(input_tensor_a's dtype, params)``: more parameters for ``compute`` that follow
from the operands' dtype (a hardware rule that differs between float32 and bfloat16)."""
ResultDtype = Callable[[DataType, dict[str, Any]], DataType | None]
"""``result_dtype(input_tensor_a's dtype, params)``: the output's dtype when the caller gives none
(None: input_tensor_a's)."""


@dataclass(frozen=True)
class BinaryDef:
    """One binary op.  ``params``: ttnn's parameters after the two operands, passed to ``compute``
    by name.  ``integer``: integer operands are computed as integers (else as float32).
    ``scalar``: either operand may be a Python number.  ``inplace``: ttnn also has
    ``<name>_``, writing into ``input_tensor_a``.  ``operator``: the Tensor operator it serves
    (``add`` for ``a + b``).  ``aliases``: other ttnn names of the op (``sub``).
    ``device_operation``: tt-metal's device operation when it is not the binary_ng one.
    ``dtypes``: the operand dtypes ttnn accepts (None: all), others refused by name.
    ``result_dtype``: the output dtype rule (None: input_tensor_a's).  ``hardware``: keywords
    ttnn's binding has that only matter on a device (checked and recorded).  ``public``: False
    where the public function is written by hand (``pow``: ttnn's own parameter names).
    ``dtype_params``: parameters ``compute`` gets from the operands' dtype."""

    name: str
    compute: Compute
    golden: Callable[..., Any] | None = None
    params: tuple[Param, ...] = ()
    keywords: Keywords = Keywords.NG
    integer: bool = True
    scalar: bool = True
    inplace: bool = False
    operator: str | None = None
    aliases: tuple[str, ...] = ()
    device_operation: str = ""
    dtypes: frozenset[DataType] | None = None
    result_dtype: ResultDtype | None = None
    hardware: dict[str, Keyword] = field(default_factory=dict)
    public: bool = True
    dtype_params: DtypeParams | None = None


INTEGERS = frozenset({DataType.INT32, DataType.UINT32, DataType.UINT16, DataType.UINT8})
"""The integer dtypes (the bitwise ops and shifts take only these)."""
