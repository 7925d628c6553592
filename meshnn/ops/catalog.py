"""Every op module, imported once so each declares its ops in the registry, and what derives from
the registry then: the Tensor operators (``a + b`` -> ``ttnn.add``), the ops of ttnn's namespaces
(``ttnn.transformer``, ``ttnn.experimental``, ``ttnn.prim``) and the public ops the package root
exports.  Every module of the ops package is imported (:data:`MODULES`), so a new op module needs
no list of its own: declaring its ops is enough.

May import: every op module and :mod:`meshnn.tensor.device_hooks`.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from typing import Any

import meshnn.ops as ops_package
from meshnn.ops import registry
from meshnn.ops.config import SDPAProgramConfig
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

transformer = registry.OpNamespace(
    "transformer", "ttnn.transformer: fused attention ops.", SDPAProgramConfig=SDPAProgramConfig
)
experimental = registry.OpNamespace("experimental", "ttnn.experimental: the experimental ops meshnn has.")
prim = registry.OpNamespace("prim", "ttnn.prim: the primitive device operations meshnn has.")


def public_ops() -> dict[str, Callable[..., Any]]:
    """The top-level ops by ttnn name, for the package root to export."""
    return registry.public_ops()
