"""The op registry: every public ttnn op meshnn has, declared once, as ttnn declares its ops.

An :class:`OpEntry` holds what is known of one op by its ttnn name (``add``,
``transformer.scaled_dot_product_attention``, ``experimental.all_gather_async``,
``prim.binary``): its public function (with ttnn's signature and keywords), the kind of op it is,
the performance model's family and tt-metal's device-operation name, and its *golden function*,
the torch reference ttnn attaches (``ttnn.get_golden_function(ttnn.add)``).  An op module declares
its ops where it defines them (:func:`register` as a decorator, or :func:`add` for functions made
from a table), and everything that lists ops derives from the entries:

- the public surface (``meshnn/__init__.py`` exports :func:`public_ops`) and the namespaces
  ``ttnn.transformer``, ``ttnn.experimental`` and ``ttnn.prim`` (:func:`namespace_ops`);
- the perf model's family and the device-operation name of an op run (:func:`family_of`), which
  graph captures, reports and the ops-perf CSV all use;
- the Tensor operators (``a + b``: an entry's ``operator``);
- the README's coverage table and the bad-input table's families (tests read :func:`entries`).

A test checks that every public function that launches an op has an entry.

Golden functions take torch tensors and the op's other arguments by ttnn's names, and ignore
keywords that only matter on a device (``memory_config``, ``device``...).  They import torch when
called, never at import.

May import: :mod:`meshnn.errors`, :mod:`meshnn.mesh.op_hooks` and :mod:`meshnn.perf.desc` (the op families).
"""

from __future__ import annotations

import contextlib
import enum
import functools
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from meshnn.errors import MeshnnValueError
from meshnn.mesh import op_hooks
from meshnn.perf.desc import OpFamily

F = TypeVar("F", bound=Callable[..., Any])


class OpKind(enum.Enum):
    """What an op does, as the README's coverage table and the bad-input table group ops."""

    UNARY = "unary element-wise"
    BINARY = "binary element-wise"
    TERNARY = "ternary element-wise"
    BACKWARD = "backward (gradients)"
    COMPLEX = "complex element-wise"
    REDUCTION = "reduction"
    NORMALIZATION = "normalization"
    MATMUL = "matmul"
    DATA_MOVEMENT = "data movement"
    CREATION = "creation"
    TRANSFORMER = "transformer"
    KV_CACHE = "KV cache"
    SAMPLING = "sampling"
    COLLECTIVE = "collective"
    CONV = "convolution"
    POOL = "pooling"
    RANDOM = "random"
    LOSS = "loss"
    PYTHON = "Python operation"


class DeviceWork(enum.Enum):
    """What a run of an op puts on the devices in tt-metal, which the perf capture records as it happens:
    a device program (a profiler row, device time, an op-to-op gap), a host write (a host tensor written
    into device memory: a host transfer, no program), an allocation alone, or host work only."""

    PROGRAM = "program"
    HOST_WRITE = "host write"
    ALLOCATION = "allocation"
    HOST = "host"


@dataclass(frozen=True)
class OpEntry:
    """One public op.  ``name``: ttnn's name relative to ``ttnn`` (a namespace prefix for
    ``transformer.``, ``experimental.``, ``prim.``); ``function``: the public callable;
    ``device_operation``: tt-metal's device-operation class name when it is not the family's own;
    ``golden``: the torch reference (None: ttnn attaches none); ``operator``: the Tensor operator
    the op serves (``add`` for ``a + b``), or None; ``modelled``: False where the performance model
    has no family for the op and times it as a copy of its tensors (marked so in its reports);
    ``runs``: what a run puts on the devices in tt-metal (:class:`DeviceWork`; anything but a program
    names no device operation)."""

    name: str
    function: Callable[..., Any]
    kind: OpKind
    family: OpFamily
    device_operation: str = ""
    golden: Callable[..., Any] | None = None
    operator: str | None = None
    modelled: bool = True
    runs: DeviceWork = DeviceWork.PROGRAM

    @property
    def short_name(self) -> str:
        """The name without its namespace: ``scaled_dot_product_attention``."""
        return self.name.rsplit(".", 1)[-1]

    @property
    def namespace(self) -> str:
        """``""`` for a top-level op, else ``transformer`` / ``experimental`` / ``prim``..."""
        return self.name.rpartition(".")[0]

    @property
    def device_operation_name(self) -> str:
        """The device operation tt-metal's profiler names for a run of this op ('' for an op that runs
        no device program of its own)."""
        if self.runs is not DeviceWork.PROGRAM:
            return ""
        return self.device_operation or self.family.value


class _Registry:
    """The entries by name, and by public function (an alias shares its function)."""

    def __init__(self) -> None:
        self.by_name: dict[str, OpEntry] = {}
        self.by_function: dict[Callable[..., Any], OpEntry] = {}
        self.by_short: dict[str, OpEntry] = {}

    def add(self, entry: OpEntry) -> None:
        if entry.name in self.by_name:
            raise MeshnnValueError(f"op registry: ttnn.{entry.name} is declared twice")
        self.by_name[entry.name] = entry
        self.by_function.setdefault(entry.function, entry)
        self.by_short.setdefault(entry.short_name, entry)


_OPS = _Registry()
_LOADER: list[Callable[[], None]] = []


def set_loader(loader: Callable[[], None]) -> None:
    """Make ``loader`` the function that declares every op (:func:`meshnn.ops.loading.load_catalog`):
    the queries below call it before listing entries, and on a name they do not know yet."""
    _LOADER[:] = [loader]


def _load_all() -> None:
    for loader in _LOADER:
        loader()


def add(
    name: str,
    function: Callable[..., Any],
    *,
    kind: OpKind,
    family: OpFamily,
    device_operation: str = "",
    golden: Callable[..., Any] | None = None,
    operator: str | None = None,
    modelled: bool = True,
    runs: DeviceWork = DeviceWork.PROGRAM,
) -> OpEntry:
    """Declare ``function`` as the op ``ttnn.<name>``; returns its entry.  The function gets
    ttnn's ``golden_function`` attribute (tt-metal's tests read it)."""
    if not isinstance(runs, DeviceWork):
        raise MeshnnValueError(f"op registry: ttnn.{name}'s runs must be a DeviceWork, got {runs!r}")
    entry = OpEntry(name, op_hooks.public(function), kind, family, device_operation, golden, operator, modelled, runs)
    _OPS.add(entry)
    _OPS.by_function.setdefault(function, entry)  # (the op's own module calls it unwrapped)
    function = entry.function
    if getattr(function, "golden_function", None) is None:
        with contextlib.suppress(AttributeError):  # a builtin: get_golden_function still finds the entry
            function.golden_function = golden  # type: ignore[attr-defined]
    return entry


def register(
    name: str | None = None,
    *,
    kind: OpKind,
    family: OpFamily,
    device_operation: str = "",
    golden: Callable[..., Any] | None = None,
    operator: str | None = None,
    aliases: tuple[str, ...] = (),
    modelled: bool = True,
    runs: DeviceWork = DeviceWork.PROGRAM,
) -> Callable[[F], F]:
    """Decorator form of :func:`add` (``name`` defaults to the function's name); ``aliases`` are
    other ttnn names of the same op (``sub`` for ``subtract``)."""

    def decorate(function: F) -> F:
        entry = add(
            name or function.__name__,
            function,
            kind=kind,
            family=family,
            device_operation=device_operation,
            golden=golden,
            operator=operator,
            modelled=modelled,
            runs=runs,
        )
        for alias in aliases:
            _OPS.add(replace(entry, name=alias, operator=None))
        return function

    return decorate


def alias(name: str, of: str) -> OpEntry:
    """Declare ``ttnn.<name>`` as another name of the op ``ttnn.<of>`` (the same function)."""
    entry = replace(lookup(of), name=name, operator=None)
    _OPS.add(entry)
    return entry


def overload(name: str, accepts: Callable[..., bool], implementation: Callable[..., Any]) -> Callable[..., Any]:
    """Give the op ``ttnn.<name>`` another overload, as ttnn's bindings have several (``ttnn.abs`` of
    a ComplexTensor): a call whose arguments ``accepts(*args, **kwargs)`` runs ``implementation``,
    any other the op's own function.  The op's entries (its aliases too) then hold the combined
    function, which keeps the op's name, signature and golden function; returns it."""
    original = lookup(name).function
    raw = getattr(original, "__meshnn_unhooked__", original)

    @functools.wraps(original)
    def combined(*args: Any, **kwargs: Any) -> Any:
        return implementation(*args, **kwargs) if accepts(*args, **kwargs) else raw(*args, **kwargs)

    combined.__dict__.pop("__meshnn_unhooked__", None)  # (copied from the original's wrapper)
    combined = op_hooks.public(combined)
    for entry in tuple(_OPS.by_name.values()):
        if entry.function is original:
            new = replace(entry, function=combined)
            _OPS.by_name[entry.name] = new
            if _OPS.by_short.get(entry.short_name) is entry:
                _OPS.by_short[entry.short_name] = new
            _OPS.by_function.setdefault(combined, new)
    return combined


# ------------------------------------------------------------------------------ lookups


def entries() -> Iterator[OpEntry]:
    """Every entry, in the order they were declared."""
    _load_all()
    return iter(tuple(_OPS.by_name.values()))


def lookup(name: str) -> OpEntry:
    """The entry of ``ttnn.<name>``; a MeshnnValueError naming it when there is none."""
    entry = _OPS.by_name.get(name)
    if entry is None:
        _load_all()
        entry = _OPS.by_name.get(name)
    if entry is None:
        raise MeshnnValueError(f"op registry: meshnn has no op ttnn.{name}")
    return entry


def entry_of(function: object) -> OpEntry | None:
    """The entry whose public function is ``function`` (None for any other object); an unknown
    callable loads the catalog first (it may be an op whose module is not imported yet)."""
    try:
        entry = _OPS.by_function.get(function)  # type: ignore[arg-type]
    except TypeError:  # unhashable
        return None
    if entry is None and callable(function):
        _load_all()
        entry = _OPS.by_function.get(function)  # type: ignore[arg-type]
    return entry


def family_of(op: str) -> OpEntry | None:
    """The entry of an op launched under ``op`` (``transformer.x``, or its last name), or None."""
    found = _OPS.by_name.get(op) or _OPS.by_short.get(op.rsplit(".", 1)[-1])
    if found is None:
        _load_all()
        found = _OPS.by_name.get(op) or _OPS.by_short.get(op.rsplit(".", 1)[-1])
    return found


def public_ops() -> dict[str, Callable[..., Any]]:
    """The top-level ops by ttnn name (what ``meshnn/__init__.py`` exports)."""
    _load_all()
    return {e.name: e.function for e in _OPS.by_name.values() if not e.namespace}


def namespace_ops(namespace: str) -> dict[str, Callable[..., Any]]:
    """The ops of ``ttnn.<namespace>`` by their short names."""
    _load_all()
    return {e.short_name: e.function for e in _OPS.by_name.values() if e.namespace == namespace}


def operators() -> dict[str, Callable[..., Any]]:
    """The Tensor operators' ops: ``{"add": ttnn.add, ...}``."""
    _load_all()
    return {e.operator: e.function for e in _OPS.by_name.values() if e.operator}


# ------------------------------------------------------------------------ golden functions


def torch_golden(body: Callable[..., Any]) -> Callable[..., Any]:
    """A golden function from ``body(torch, *args, **kwargs)``: torch is imported at the call."""

    def golden(*args: Any, **kwargs: Any) -> Any:
        import torch

        return body(torch, *args, **kwargs)

    golden.__name__ = golden.__qualname__ = "golden_function"
    return golden


class OpNamespace(types.ModuleType):
    """``ttnn.transformer`` / ``ttnn.experimental`` / ``ttnn.prim``: the registry's ops under that
    name (looked up when asked, so ops declared later are found) and the namespace's other names
    (config classes); any other name raises ``NotImplementedByMeshnn`` naming it."""

    def __init__(self, name: str, doc: str, *, path: str = "", **extras: object) -> None:
        super().__init__(f"meshnn.{name}", doc)
        self._namespace = name
        self._path = path or name  # ttnn's path to it, for errors: ``operations.moreh``
        for key, value in extras.items():
            setattr(self, key, value)

    def __getattr__(self, name: str) -> object:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        entry = _OPS.by_name.get(f"{self._namespace}.{name}")
        if entry is None:
            _load_all()
            entry = _OPS.by_name.get(f"{self._namespace}.{name}")
        if entry is not None:
            return entry.function
        from meshnn.errors import NotImplementedByMeshnn

        raise NotImplementedByMeshnn(f"{self._path}.{name}")

    def __dir__(self) -> list[str]:
        return sorted({*super().__dir__(), *namespace_ops(self._namespace)})


def coverage_markdown() -> str:
    """The README's table of ops by kind, made from the entries (a test keeps the README's copy
    equal to it): one row per :class:`OpKind`, its op count and names (namespaced ones with their
    namespace, aliases and in-place forms included)."""
    _load_all()
    by_kind: dict[OpKind, list[str]] = {kind: [] for kind in OpKind}
    for entry in _OPS.by_name.values():
        by_kind[entry.kind].append(entry.name)
    lines = ["| kind | ops | names |", "|---|---:|---|"]
    for kind, names in by_kind.items():
        if names:
            shown = ", ".join(f"`{n}`" for n in sorted(names))
            lines.append(f"| {kind.value} | {len(names)} | {shown} |")
    total = sum(len(n) for n in by_kind.values())
    lines.append(f"| **all** | **{total}** | |")
    return "\n".join(lines) + "\n"
