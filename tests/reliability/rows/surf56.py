"""Bad calls found by stop 56's sample of tt-metal's tests: the generic reductions that still refuse
INT32 (every one but max / min, which tt-metal 2026 runs on its SFPU path); decode attention's
share_cache (caches of more than one batch, a string); the host ``Tensor.unpad`` (a window past the end,
a device tensor)."""

from __future__ import annotations

import torch

import meshnn as ttnn

from ..cases import TYPE, VALUE, Case

DECODE = ttnn.transformer.scaled_dot_product_attention_decode


def rows() -> list[Case]:
    return [
        Case("sum", "an int32 input", lambda e: ttnn.sum(e.i32, dim=-1), TYPE, "INT32 is supported for MAX/MIN"),
        Case("mean", "an int32 input", lambda e: ttnn.mean(e.i32), TYPE, "input_tensor"),
        Case("var", "an int32 input", lambda e: ttnn.var(e.i32, dim=0), TYPE, "input_tensor"),
        Case(
            "transformer.scaled_dot_product_attention_decode",
            "share_cache with caches of batch 2",
            lambda e: _decode(e, share_cache=True),
            VALUE,
            "share_cache",
        ),
        Case(
            "transformer.scaled_dot_product_attention_decode",
            "share_cache is a string",
            lambda e: _decode(e, share_cache="yes"),
            TYPE,
            "share_cache",
        ),
        Case("Tensor.unpad", "end past the tensor", lambda e: _host().unpad((0, 0), (2, 9)), VALUE, "must fit"),
        Case("Tensor.unpad", "a device tensor", lambda e: e.rm.unpad((0, 0, 0), (1, 1, 1)), VALUE, "host"),
    ]


def _host():
    return ttnn.from_torch(torch.ones(2, 8))


def _decode(e, **options):
    """A decode attention of 2 users (``e.heads``: 32 heads of 32) over caches of batch 2 (a view of it)."""
    caches = ttnn.reshape(e.heads, (2, 1, 32, 32))
    return DECODE(e.heads, caches, caches, cur_pos=[3, 5], **options)
