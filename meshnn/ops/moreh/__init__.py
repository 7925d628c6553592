"""moreh's op family, ``ttnn.operations.moreh.<op>`` (and ``ttnn.moreh_full``): one module per kind
of op (matmul, linear, dot, sum, mean, norm, cumsum, arange, getitem, fold, full), sharing
:mod:`meshnn.ops.moreh.common` (moreh's checks, reduction shapes, and the accumulation model of a
compute kernel's destination register)."""
