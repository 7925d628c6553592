"""Every op module, imported once so each declares its ops in the registry, and the Tensor
operators (``a + b`` -> ``ttnn.add``) registered from it.  Every module of the ops package is
imported (:data:`MODULES`), so a new op module needs no list of its own: declaring its ops is
enough.  :mod:`meshnn.ops.loading` imports this module at the first use of an op.

May import: every op module and :mod:`meshnn.tensor.device_hooks`.
"""

from __future__ import annotations

import importlib
import pkgutil

import meshnn.ops as ops_package
from meshnn.ops import registry
from meshnn.tensor import device_hooks

MODULES = tuple(
    sorted(
        m.name for m in pkgutil.walk_packages(ops_package.__path__, "meshnn.ops.") if m.name != __name__ and not m.ispkg
    )
)
"""Every module of the ops package (an op module declares its ops when imported; a new family
module is found here without being listed)."""

for _module in MODULES:
    importlib.import_module(_module)

for _operator, _function in registry.operators().items():
    device_hooks.register(_operator, _function)
