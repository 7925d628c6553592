"""Make ``import ttnn`` (and ``import ttnn.<submodule>``) resolve to meshnn.

The alias is a module whose attributes are meshnn's public names.  A ttnn name meshnn does not
provide raises :class:`~meshnn.errors.NotImplementedByMeshnn` (an ``AttributeError``) naming it,
so a failing script or test says exactly what is missing.  Installing is explicit: nothing is
aliased until :func:`install` runs.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import types
from collections.abc import Callable

import meshnn
from meshnn.compat import tt_lib_finder, ttnn_modules
from meshnn.errors import NotImplementedByMeshnn


class AliasModule(types.ModuleType):
    """A module that answers attribute lookups from ``source`` (meshnn or one of its modules)."""

    def __init__(self, name: str, source: Callable[[str], object], doc: str) -> None:
        super().__init__(name, doc)
        self._source = source

    def __getattr__(self, attribute: str) -> object:
        if attribute.startswith("__") and attribute.endswith("__"):
            raise AttributeError(attribute)
        return self._source(attribute)


def _from_meshnn(attribute: str, prefix: str = "") -> object:
    if not prefix and f"ttnn.{attribute}" in OWN_MODULES:
        return _own(f"ttnn.{attribute}")
    if not prefix and attribute in SUBMODULES:  # ttnn.device is ttnn's, not meshnn's chip layer
        return sys.modules.get(f"ttnn.{attribute}") or _submodule(attribute)
    if not prefix and attribute in ttnn_modules.NAMES:
        return sys.modules.get(f"ttnn.{attribute}") or _flat(attribute)
    if hasattr(meshnn, attribute):
        return getattr(meshnn, attribute)
    raise NotImplementedByMeshnn(f"{prefix}{attribute}")


def _distributed(attribute: str) -> object:
    if attribute == "distributed":  # ttnn.distributed.distributed: the module the package re-exports
        return sys.modules.get("ttnn.distributed.distributed") or _submodule("distributed.distributed")
    if attribute == "ttrun":  # tt-run's module: meshnn's own (tests replace its functions)
        return _own("ttnn.distributed.ttrun")
    return _from_meshnn(attribute, "distributed.")


OWN_MODULES = {
    "ttnn.distributed.ttrun": "meshnn.distributed.ttrun",
    "ttnn.graph": "meshnn.capture.graph",  # (a test sets its _python_io_data)
    "ttnn.graph_report": "meshnn.capture.graph_report",
    "ttnn.operation_tracer": "meshnn.capture.operation_tracer",
    "ttnn.graph_tracer_utils": "meshnn.capture.graph_tracer_utils",
    "ttnn.database": "meshnn.capture.database",
    "ttnn.dot_access": "meshnn.compat.dot_access",
}
"""ttnn's Python modules that are meshnn's own modules under both names (a test that replaces one's
functions reaches meshnn's)."""


def _own(fullname: str) -> types.ModuleType:
    module = importlib.import_module(OWN_MODULES[fullname])
    sys.modules[fullname] = module
    return module


def _namespace(module: types.ModuleType, prefix: str) -> Callable[[str], object]:
    def answer(attribute: str) -> object:
        if hasattr(module, attribute):
            return getattr(module, attribute)
        raise NotImplementedByMeshnn(f"{prefix}.{attribute}")

    return answer


def _reports(attribute: str) -> object:
    return _namespace(meshnn.reports, "reports")(attribute)


def _device(attribute: str) -> object:
    from meshnn.compat import ttnn_device

    return _namespace(ttnn_device, "device")(attribute)


def _model_preprocessing(attribute: str) -> object:
    try:
        module = importlib.import_module("meshnn.testing.model_preprocessing")
    except ImportError:
        raise NotImplementedByMeshnn(f"model_preprocessing.{attribute}") from None
    if hasattr(module, attribute):
        return getattr(module, attribute)
    if attribute == "preprocess_model":  # torch-graph conversion: imported by test helpers, not modelled
        return _not_modelled("model_preprocessing", ("preprocess_model",))(attribute)
    raise NotImplementedByMeshnn(f"model_preprocessing.{attribute}")


def _not_modelled(module: str, names: tuple[str, ...]) -> Callable[[str], object]:
    """A ttnn module of tools meshnn does not have (``ttnn.tracer``): its ``names`` import, so a
    test helper that imports them loads, and calling one raises NotImplementedByMeshnn naming it."""

    def answer(attribute: str) -> object:
        if attribute not in names:
            raise NotImplementedByMeshnn(f"{module}.{attribute}")

        def missing(*args: object, **kwargs: object) -> object:
            raise NotImplementedByMeshnn(f"{module}.{attribute}")

        missing.__name__ = missing.__qualname__ = attribute
        return missing

    return answer


def _tracer(attribute: str) -> object:
    """``ttnn.tracer``: meshnn's ``trace`` / ``visualize``; ttnn's torch-graph helpers import and
    raise NotImplementedByMeshnn when called."""
    module = importlib.import_module("meshnn.capture.tracer")
    if hasattr(module, attribute):
        return getattr(module, attribute)
    return _not_modelled("tracer", ("get_graph", "codegen"))(attribute)


# ``ttnn._ttnn``, ``ttnn.types``, ``ttnn.operations`` (and their submodules: ``ttnn.operations.unary``,
# ``ttnn._ttnn.deprecated``...) are the flat namespaces of :mod:`meshnn.compat.ttnn_modules`.
SUBMODULES: dict[str, Callable[[str], object]] = {
    "device": _device,
    "distributed": _distributed,
    "distributed.distributed": lambda attribute: _from_meshnn(attribute, "distributed.distributed."),
    "reports": _reports,
    "model_preprocessing": _model_preprocessing,
    "tracer": _tracer,
}


def _flat(name: str) -> types.ModuleType:
    module = ttnn_modules.make(name)
    sys.modules[f"ttnn.{name}"] = module
    return module


def _submodule(name: str) -> AliasModule:
    module = AliasModule(f"ttnn.{name}", SUBMODULES[name], f"ttnn.{name}, answered by meshnn")
    module.__path__ = []  # a package, so `import ttnn.x.y` reports a clean ModuleNotFoundError
    sys.modules[f"ttnn.{name}"] = module
    return module


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds ``ttnn`` and ``ttnn.<submodule>`` for the import system while the alias is installed."""

    def find_spec(self, fullname: str, path: object, target: object = None) -> importlib.machinery.ModuleSpec | None:
        if fullname in OWN_MODULES:
            return importlib.machinery.ModuleSpec(fullname, self)
        if fullname == "ttnn" or (fullname.startswith("ttnn.") and fullname[5:] in SUBMODULES):
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        if fullname == "ttnn.experimental" or _experimental_module(fullname) is not None:
            return importlib.machinery.ModuleSpec(fullname, self, is_package=fullname == "ttnn.experimental")
        if fullname.startswith("ttnn.") and fullname[5:].split(".")[0] in ttnn_modules.NAMES:
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        if spec.name == "ttnn":
            return alias_module()
        if spec.name in OWN_MODULES:
            return _own(spec.name)
        if spec.name == "ttnn.experimental":
            return meshnn.experimental
        if spec.name.startswith("ttnn.experimental."):
            return _experimental_module(spec.name)
        name = spec.name[5:]
        head, _, rest = name.partition(".")
        if head in ttnn_modules.NAMES:  # import ttnn._ttnn.operations.core: a flat namespace
            module: types.ModuleType = sys.modules.get(f"ttnn.{head}") or _flat(head)
            for part in rest.split(".") if rest else ():
                module = getattr(module, part)
            return module
        return _submodule(name)

    def exec_module(self, module: types.ModuleType) -> None:
        return None


def _experimental_module(fullname: str) -> types.ModuleType | None:
    """``ttnn.experimental.<name>`` when it is a Python module of ttnn's that meshnn has
    (``ttnn.experimental.moe_compute_utils``), else None."""
    head, _, name = fullname.rpartition(".")
    if head != "ttnn.experimental" or name.startswith("_"):
        return None
    value = vars(meshnn.experimental).get(name)
    return value if isinstance(value, types.ModuleType) else None


_FINDER = _Finder()
_ALIAS: AliasModule | None = None


def alias_module() -> AliasModule:
    global _ALIAS
    if _ALIAS is None:
        _ALIAS = AliasModule("ttnn", _from_meshnn, "ttnn, answered by meshnn")
        _ALIAS.__path__ = []
    return _ALIAS


def install() -> types.ModuleType:
    """From now on ``import ttnn`` gives meshnn's ttnn alias (and ``import tt_lib``, where no real one is
    found, meshnn's: :mod:`meshnn.compat.tt_lib_finder`); returns the alias."""
    module = alias_module()
    tt_lib_finder.install()
    sys.modules["ttnn"] = module
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)
    return module


def uninstall() -> None:
    """Undo :func:`install` (the alias and its submodules leave ``sys.modules``)."""
    tt_lib_finder.uninstall()
    if _FINDER in sys.meta_path:
        sys.meta_path.remove(_FINDER)
    for name in [n for n in sys.modules if n == "ttnn" or n.startswith("ttnn.")]:
        if name in OWN_MODULES or isinstance(sys.modules[name], AliasModule | ttnn_modules.FlatNamespace):
            del sys.modules[name]


def is_installed() -> bool:
    return isinstance(sys.modules.get("ttnn"), AliasModule)
