"""``import tt_lib`` answered by meshnn where tt-metal's ``ttnn/tt_lib`` package is not importable.

tt-metal installs ``tt_lib`` beside ``ttnn`` (from ``ttnn/tt_lib``): host helpers older tests and models
still import (``tt_lib.utils``' padding to tiles, ``tt_lib.fallback_ops``' torch fallbacks on ttnn
tensors, ``tt_lib.fused_ops.softmax``) and the comparison functions its sweep tests link to
(``tt_lib._internal.comparison_funcs``).  These modules are meshnn's own versions of them, found through
:mod:`meshnn.compat.tt_lib_finder` only when no real ``tt_lib`` is on the path.
"""

from __future__ import annotations

import importlib
import types

SUBMODULES = ("utils", "fallback_ops", "fused_ops", "_internal")


def __getattr__(name: str) -> types.ModuleType:
    """``tt_lib.fallback_ops`` and kin after a bare ``import tt_lib``: imported at first use."""
    if name in SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'tt_lib' has no attribute {name!r}")
