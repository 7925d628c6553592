"""The op catalog, loaded at the first use of an op rather than with ``import meshnn``.

Importing every op module (:mod:`meshnn.ops.catalog`) costs more than the rest of the package;
most scripts touch an op only after opening a device.  The registry's queries, the namespaces
``ttnn.transformer`` / ``ttnn.experimental`` / ``ttnn.prim`` / ``ttnn.operations.moreh``, the
Tensor operators and the package root's ``__getattr__`` call :func:`load_catalog` when a name they
are asked for is not declared yet; it imports the catalog once (a thread that asks while another
loads waits for it, and so does a fork: a child never starts with a load half done by a thread it
does not have).

May import: :mod:`meshnn.ops.registry`, :mod:`meshnn.ops.config`, the moreh softmax enums
(:mod:`meshnn.ops.moreh_train.strategies`), the MoE collectives' enums and host helpers
(:mod:`meshnn.ops.ccl.moe_enums`, :mod:`meshnn.ops.ccl.moe_compute_utils`) and
:mod:`meshnn.tensor.device_hooks` (the catalog itself only when loading).
"""

from __future__ import annotations

import importlib
import os
import threading

from meshnn.ops import registry, tensor_prefetcher_matmul
from meshnn.ops.ccl import moe_compute_utils
from meshnn.ops.ccl.moe_enums import CCL_ENUMS
from meshnn.ops.config import SDPAProgramConfig
from meshnn.ops.moreh_train.strategies import NAMESPACE_NAMES as MOREH_ENUMS
from meshnn.tensor import device_hooks

_LOCK = threading.RLock()
_STATE = {"loaded": False, "loading": False}


def load_catalog() -> None:
    """Import every op module once (no-op after the first call, and inside the load itself: an
    op module's own lookups of ops it imported never start a second load)."""
    if _STATE["loaded"]:
        return
    with _LOCK:
        if _STATE["loaded"] or _STATE["loading"]:
            return
        _STATE["loading"] = True
        try:
            importlib.import_module("meshnn.ops.catalog")
            _STATE["loaded"] = True
        finally:
            _STATE["loading"] = False


def catalog_loaded() -> bool:
    """Whether every op module has been imported."""
    return _STATE["loaded"]


os.register_at_fork(before=_LOCK.acquire, after_in_parent=_LOCK.release, after_in_child=_LOCK.release)
registry.set_loader(load_catalog)
device_hooks.set_loader(load_catalog)

transformer = registry.OpNamespace(
    "transformer", "ttnn.transformer: fused attention ops.", SDPAProgramConfig=SDPAProgramConfig
)
experimental = registry.OpNamespace(
    "experimental",
    "ttnn.experimental: the experimental ops meshnn has.",
    moe_compute_utils=moe_compute_utils,  # a module of ttnn's: `from ttnn.experimental.moe_compute_utils import`
    tensor_prefetcher_matmul=tensor_prefetcher_matmul,  # 2026's Python helper module (prefetch_and_linear)
    **CCL_ENUMS,
)
experimental.__path__ = []  # a package, as ttnn's: its submodules import
experimental.deepseek_prefill = registry.OpNamespace(
    "experimental.deepseek_prefill",
    "ttnn.experimental.deepseek_prefill: the DeepSeek-V3 prefill ops meshnn has (its MoE dispatch and "
    "combine, routed experts, padded KV caches).",
)
experimental.deepseek = registry.OpNamespace(
    "experimental.deepseek", "ttnn.experimental.deepseek: DeepSeek-V3's fused decode ops, by block (moe, mla)."
)
experimental.deepseek.moe = registry.OpNamespace(
    "experimental.deepseek.moe", "ttnn.experimental.deepseek.moe: DeepSeek-V3's MoE gate ops meshnn has."
)
experimental.deepseek.mla = registry.OpNamespace(
    "experimental.deepseek.mla", "ttnn.experimental.deepseek.mla: DeepSeek-V3's MLA ops meshnn has."
)
prim = registry.OpNamespace("prim", "ttnn.prim: the primitive device operations meshnn has.")
kv_cache = registry.OpNamespace("kv_cache", "ttnn.kv_cache: the KV-cache writes under ttnn's older names.")
moreh = registry.OpNamespace(
    "moreh",
    "ttnn.operations.moreh: moreh's ops (their own, not ttnn's top-level ops of the same name).",
    path="operations.moreh",
    **MOREH_ENUMS,
)
