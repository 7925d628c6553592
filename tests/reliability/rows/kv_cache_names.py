"""Bad calls of ``ttnn.kv_cache.fill_cache_for_user_`` and ``update_cache_for_token_``: a
deallocated cache, an index of the wrong kind."""

from __future__ import annotations

import meshnn as ttnn

from ..cases import DEAD, TYPE, Case


def rows() -> list[Case]:
    fill, update = ttnn.kv_cache.fill_cache_for_user_, ttnn.kv_cache.update_cache_for_token_
    n1, n2 = "kv_cache.fill_cache_for_user_", "kv_cache.update_cache_for_token_"
    return [
        Case(n1, "cache deallocated", lambda e: fill(e.freed, e.heads, 0), DEAD, "cache"),
        Case(n1, "batch_index a string", lambda e: fill(e.heads, e.heads, "0"), TYPE, "batch_index"),
        Case(n2, "cache deallocated", lambda e: update(e.freed, e.heads, 0), DEAD, "cache"),
        Case(n2, "update_index a float", lambda e: update(e.heads, e.heads, 1.5), TYPE, "update_index"),
    ]
