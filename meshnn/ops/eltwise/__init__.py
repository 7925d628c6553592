"""Element-wise ops, by what they hold:

- :mod:`~meshnn.ops.eltwise.functions`: the numeric functions (``UNARY``, ``BINARY``);
- :mod:`~meshnn.ops.eltwise.kernel`: how an element-wise op runs (storage order, broadcasting);
- :mod:`~meshnn.ops.eltwise.native`: bfloat16 kernels torch computes natively, checked bit for bit;
- :mod:`~meshnn.ops.eltwise.unary`: ``ttnn.relu`` ... ``ttnn.softplus``;
- :mod:`~meshnn.ops.eltwise.activations`: the fused activations of the binary ops;
- :mod:`~meshnn.ops.eltwise.binary`: ``ttnn.add`` ... ``ttnn.le``, their plans.

May import (each module): every layer below the ops and the ops' launch, checks, outputs, memo,
values and config modules.
"""
