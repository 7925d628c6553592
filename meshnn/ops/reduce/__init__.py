"""Reductions, by what they hold:

- :mod:`~meshnn.ops.reduce.dims`: the reduced dims and output shapes ttnn derives (shared checks);
- :mod:`~meshnn.ops.reduce.generic`: ``ttnn.sum``, ``mean``, ``max``, ``min``, ``std``, ``var``;
- :mod:`~meshnn.ops.reduce.prod`: ``ttnn.prod`` (one dim, all dims, or the NC form into an output);
- :mod:`~meshnn.ops.reduce.argmax`: ``ttnn.argmax`` (and its preallocated-output form);
- :mod:`~meshnn.ops.reduce.accumulate`: ``ttnn.cumsum``, ``cumprod``, ``ema``;
- :mod:`~meshnn.ops.reduce.topk`: ``ttnn.topk`` and ``ttnn.moe`` (the expert weight of a top-k).

May import (each module): every layer below the ops and the ops' launch, checks, outputs, values
and config modules.
"""
