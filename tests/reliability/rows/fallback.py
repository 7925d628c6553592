"""Bad calls of ttnn.get_fallback_function: an operation that is no ttnn operation (refused when
asked, before anything runs)."""

from __future__ import annotations

import meshnn as ttnn

from ..cases import TYPE, Case


def rows() -> list[Case]:
    return [Case("get_fallback_function", "operation is an int", lambda e: ttnn.get_fallback_function(42), TYPE, "42")]
