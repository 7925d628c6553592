"""Element-wise ops, by what they hold:

- :mod:`~meshnn.ops.eltwise.functions`, :mod:`~meshnn.ops.eltwise.special`: numeric functions numpy lacks;
- :mod:`~meshnn.ops.eltwise.kernel`: how an element-wise op runs (storage order, broadcasting);
  :mod:`~meshnn.ops.eltwise.logical`: ops over logical values (shape-changing, position-dependent);
- :mod:`~meshnn.ops.eltwise.native`: bfloat16 kernels torch computes natively, checked bit for bit;
- unary: the tables (``unary_defs``, ``unary_math``, ``unary_activations``, ``unary_tables``) and
  :mod:`~meshnn.ops.eltwise.unary` (``ttnn.relu`` ... ``ttnn.softplus``); ``unary_composite``
  (``clamp``, ``tril``, ``glu``, ``var_hw``...), ``unary_chain`` (``unary_chain``, ``logical_not_``, ``polyval``);
- :mod:`~meshnn.ops.eltwise.activations`: the fused activations of the binary ops;
- binary: the tables (``binary_defs``, ``binary_tables``, ``binary_math``, ``binary_int``),
  :mod:`~meshnn.ops.eltwise.binary` (plans) and ``binary_ops`` (public functions, in-place forms);
  ``binary_special`` (``pow``, ``prelu``, ``outer``, ``prim.binary``);
- ternary: ``ternary`` (``where``), ``ternary_ops`` (``addcmul``, ``addcdiv``, ``lerp``, ``mac``);
- ``quantization``, ``losses``, ``comparison`` (``pearson_correlation_coefficient``).

May import (each module): every layer below the ops and the ops' launch, checks, outputs, memo,
values and config modules.
"""
