"""``ttnn.RuntimeArgs``: a kernel's per-core runtime arguments, a list of ``(CoreCoord, args)``
pairs that Python indexes as ``args[x][y]`` (core ``(x, y)``), as ttnn's binding does: setting
``args[x][y] = [...]`` replaces that core's list or appends a new pair; reading ``args[x][y]``
gives the core's own list (``append`` / ``extend`` change it in place); a core with no list is an
error.  Every argument is a uint32.

Layer: ops.  Imports errors and device.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from meshnn.device.core import CoreCoord
from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.ops.generic import fields as f

_u32 = f.uint(32)


class CoreArgs(list):
    """One core's runtime arguments: a list whose every item is checked to be a uint32."""

    def __init__(self, values: Iterable[Any] = (), where: str = "runtime args") -> None:
        super().__init__(f.u32_list(where, values))

    def append(self, value: Any) -> None:
        super().append(_u32("runtime arg", value))

    def extend(self, values: Iterable[Any]) -> None:
        super().extend(f.u32_list("runtime args", values))

    def insert(self, index: Any, value: Any) -> None:
        super().insert(index, _u32("runtime arg", value))

    def __iadd__(self, values: Iterable[Any]) -> CoreArgs:  # type: ignore[override]
        self.extend(values)
        return self

    def __setitem__(self, index: Any, value: Any) -> None:
        if isinstance(index, slice):
            super().__setitem__(index, f.u32_list("runtime args", value))
        else:
            super().__setitem__(index, _u32("runtime arg", value))


Entries = list[tuple[CoreCoord, CoreArgs]]
"""A kernel's runtime arguments: ``(core, args)`` pairs in the order they were set."""


def _index(where: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise MeshnnTypeError(f"{where} must be an int core coordinate, got {value!r}")
    if value < 0:
        raise MeshnnValueError(f"{where} must be a core coordinate (>= 0), got {value}")
    return int(value)


class RuntimeArgsColProxy:
    """``args[x]``: the column of cores at ``x``, indexed by ``y``."""

    def __init__(self, entries: Entries, x: int) -> None:
        self._entries, self._x = entries, x

    def _find(self, y: Any) -> int | None:
        target = CoreCoord(self._x, _index("y", y))
        for i, (core, _) in enumerate(self._entries):
            if core == target:
                return i
        return None

    def __setitem__(self, y: Any, values: Iterable[Any]) -> None:
        args = CoreArgs(values, f"runtime args of core ({self._x}, {y})")
        i = self._find(y)
        if i is None:
            self._entries.append((CoreCoord(self._x, int(y)), args))
        else:
            self._entries[i] = (self._entries[i][0], args)

    def __getitem__(self, y: Any) -> CoreArgs:
        i = self._find(y)
        if i is None:
            raise MeshnnValueError(f"No runtime args found for CoreCoord({self._x}, {y})")
        return self._entries[i][1]

    def extend(self, y: Any, values: Iterable[Any]) -> None:
        self[y].extend(values)

    def append(self, y: Any, value: Any) -> None:
        self[y].append(value)


class RuntimeArgs:
    """``ttnn.RuntimeArgs()``: an empty set of per-core runtime arguments (``args[x][y] = [...]``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        f.no_arguments("ttnn.RuntimeArgs", args, kwargs)
        self._entries: Entries = []

    def __getitem__(self, x: Any) -> RuntimeArgsColProxy:
        return RuntimeArgsColProxy(self._entries, _index("x", x))

    def append(self, coord: CoreCoord, values: Iterable[Any]) -> None:
        """Add ``(coord, values)`` (another pair, even for a core already there, as in ttnn)."""
        core = f.instance(CoreCoord)("ttnn.RuntimeArgs.append: coord", coord)
        self._entries.append((core, CoreArgs(values, "ttnn.RuntimeArgs.append: values")))

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, idx: int) -> tuple[CoreCoord, CoreArgs]:
        if isinstance(idx, bool) or not isinstance(idx, int):
            raise MeshnnTypeError(f"ttnn.RuntimeArgs.get: idx must be an int, got {idx!r}")
        if not 0 <= idx < len(self._entries):
            raise MeshnnValueError(f"ttnn.RuntimeArgs.get: idx {idx} is out of range (0..{len(self._entries) - 1})")
        return self._entries[idx]

    def to_list(self) -> list[tuple[CoreCoord, CoreArgs]]:
        return list(self._entries)

    def clear(self) -> None:
        self._entries.clear()

    def __iter__(self) -> Iterator[tuple[CoreCoord, CoreArgs]]:
        return iter(list(self._entries))

    def __repr__(self) -> str:
        return f"RuntimeArgs({self._entries})"


class RuntimeArgsView:
    """A kernel descriptor's ``runtime_args``: its own pairs, indexed ``[x][y]`` (changes go to the kernel)."""

    def __init__(self, entries: Entries) -> None:
        self._entries = entries

    def __getitem__(self, x: Any) -> RuntimeArgsColProxy:
        return RuntimeArgsColProxy(self._entries, _index("x", x))

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[tuple[CoreCoord, CoreArgs]]:
        return iter(list(self._entries))


def entries_of(where: str, value: Any) -> Entries:
    """A new list of pairs from a :class:`RuntimeArgs`, a :class:`RuntimeArgsView` or a list of
    ``(CoreCoord, args)`` pairs (the args copied and checked)."""
    if isinstance(value, RuntimeArgs | RuntimeArgsView):
        pairs = value._entries
    elif isinstance(value, str | bytes) or not hasattr(value, "__iter__"):
        raise MeshnnTypeError(f"{where} must be a ttnn.RuntimeArgs or a list of (CoreCoord, args), got {value!r}")
    else:
        pairs = [f.pair(f.instance(CoreCoord), f.u32_list)(f"{where}[{i}]", p) for i, p in enumerate(value)]
    return [(core, CoreArgs(args, f"{where} of core {core}")) for core, args in pairs]
