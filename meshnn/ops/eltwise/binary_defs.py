"""What declares a binary element-wise op: :class:`BinaryDef`, one line of a table per op, from which
:mod:`meshnn.ops.eltwise.binary` makes the public function with ttnn's signature (and its in-place
form ``<name>_`` where ttnn has one), its registry entry and golden function.

Two signatures, as ttnn binds them:

- ``NG`` (the binary_ng ops: ``add``, ``eq``, ``logical_and``...): ``(input_tensor_a,
  input_tensor_b, *, dtype, memory_config, output_tensor, activations,
  input_tensor_a_activations, input_tensor_b_activations)`` plus meshnn's ``queue_id``;
- ``PLAIN`` (the composite ops: ``atan2``, ``hypot``...): ``(input_tensor_a, input_tensor_b,
  [params], *, memory_config)``.

May import: numpy and the op signatures.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from meshnn.ops.signatures import Param

Compute = Callable[..., np.ndarray]
"""``compute(a, b, **params)``: the op over float32 arrays (int64 for an integer op's integer
operands; ``b`` may be a float32 scalar), broadcasting as numpy does."""


class Keywords(enum.Enum):
    """Which keyword arguments an op's binding has after its operands and parameters."""

    NG = "binary_ng"  # dtype, memory_config, output_tensor, the three activation lists
    PLAIN = "composite"  # memory_config only
    OUTPUT = "composite with output"  # memory_config and output_tensor


@dataclass(frozen=True)
class BinaryDef:
    """One binary op.  ``params``: ttnn's parameters after the two operands, passed to ``compute``
    by name.  ``integer``: integer operands are computed as integers (else as float32).
    ``scalar``: either operand may be a Python number.  ``inplace``: ttnn also has
    ``<name>_``, writing into ``input_tensor_a``.  ``operator``: the Tensor operator it serves
    (``add`` for ``a + b``).  ``aliases``: other ttnn names of the op (``sub``).
    ``device_operation``: tt-metal's device operation when it is not the binary_ng one."""

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
