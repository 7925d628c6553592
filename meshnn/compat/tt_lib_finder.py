"""Find ``tt_lib`` (and the sweep tests' link to its comparison functions) in meshnn when nothing else does.

tt-metal installs ``tt_lib`` from its ``ttnn/tt_lib`` folder, and links
``tests/tt_eager/python_api_testing/sweep_tests/comparison_funcs.py`` to
``ttnn/tt_lib/_internal/comparison_funcs.py``.  Where tests run from a copy of tt-metal's ``tests/`` and
``models/`` without its ``ttnn/`` folder, the link is dangling and ``tt_lib`` missing; this finder, last on
``sys.meta_path``, answers both with :mod:`meshnn.compat.tt_lib`'s modules, so a real ``tt_lib`` or
a resolvable link still wins."""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import types

PACKAGE = "meshnn.compat.tt_lib"

ALIASES = {
    "tt_lib": PACKAGE,
    "tt_lib.utils": f"{PACKAGE}.utils",
    "tt_lib.fallback_ops": f"{PACKAGE}.fallback_ops",
    "tt_lib.fallback_ops.fallback_ops": f"{PACKAGE}.fallback_ops",
    "tt_lib.fused_ops": f"{PACKAGE}.fused_ops",
    "tt_lib.fused_ops.softmax": f"{PACKAGE}.fused_ops.softmax",
    "tt_lib._internal": f"{PACKAGE}._internal",
    "tt_lib._internal.comparison_funcs": f"{PACKAGE}._internal.comparison_funcs",
    "tests.tt_eager.python_api_testing.sweep_tests.comparison_funcs": f"{PACKAGE}._internal.comparison_funcs",
}
"""Each module name answered, and the meshnn module that answers it."""

PACKAGES = {"tt_lib", "tt_lib.fallback_ops", "tt_lib.fused_ops", "tt_lib._internal"}


class _Package(types.ModuleType):
    """A package of ``tt_lib`` (``tt_lib``, ``tt_lib.fallback_ops``...): its attributes meshnn's module's,
    its ``__path__`` empty so that its submodules are found by this finder alone."""

    def __init__(self, name: str) -> None:
        super().__init__(name, f"{name}, answered by meshnn ({ALIASES[name]})")
        self.__path__ = []

    def __getattr__(self, attribute: str) -> object:
        if attribute.startswith("__") and attribute.endswith("__"):
            raise AttributeError(attribute)
        return getattr(importlib.import_module(ALIASES[self.__name__]), attribute)


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def __init__(self) -> None:
        self._specs: dict[int, object] = {}

    def find_spec(self, fullname: str, path: object, target: object = None) -> importlib.machinery.ModuleSpec | None:
        if fullname not in ALIASES:
            return None
        return importlib.machinery.ModuleSpec(fullname, self, is_package=fullname in PACKAGES)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        if spec.name in PACKAGES:
            return _Package(spec.name)
        module = importlib.import_module(ALIASES[spec.name])
        self._specs[id(module)] = module.__spec__  # the import system sets the alias's; restored below
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        if id(module) in self._specs:
            module.__spec__ = self._specs.pop(id(module))


_FINDER = _Finder()


def install() -> None:
    """Put the finder last on ``sys.meta_path`` (once)."""
    if _FINDER not in sys.meta_path:
        sys.meta_path.append(_FINDER)


def uninstall() -> None:
    """Take the finder off ``sys.meta_path`` and its answers out of ``sys.modules``."""
    if _FINDER in sys.meta_path:
        sys.meta_path.remove(_FINDER)
    for name in ALIASES:
        module = sys.modules.get(name)
        if isinstance(module, _Package) or (module is not None and module.__name__.startswith(PACKAGE)):
            del sys.modules[name]
