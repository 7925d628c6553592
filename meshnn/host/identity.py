"""Weak collections that tell their members apart by identity, never by ``==``.

A ``ttnn.Tensor``'s ``==`` is ``ttnn.eq`` (an op that returns a tensor), and the standard library's
``WeakSet`` / ``WeakKeyDictionary`` compare their weak references with ``==``, which compares the
objects referred to (even an object with itself).  These hold ``id(obj) -> weakref`` instead: an
entry goes when its object dies (the reference's callback), and a new object that takes a dead
one's id is a new entry.  Thread-safe for single operations (each is one dict operation).

Layer: host (the standard library only).
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator
from typing import Any, Generic, TypeVar

T = TypeVar("T")


def _forget(entries: dict[int, Any], key: int) -> Any:
    """The callback that drops ``key``'s entry when its object dies (if the entry is still that object's)."""

    def gone(ref: weakref.ref) -> None:
        entry = entries.get(key)
        if entry is not None and (entry is ref or (type(entry) is tuple and entry[0] is ref)):
            del entries[key]

    return gone


class WeakIdentitySet(Generic[T]):
    """A set of objects held weakly, by identity."""

    __slots__ = ("_refs",)

    def __init__(self) -> None:
        self._refs: dict[int, weakref.ref] = {}

    def add(self, obj: T) -> None:
        key = id(obj)
        ref = self._refs.get(key)
        if ref is None or ref() is not obj:
            self._refs[key] = weakref.ref(obj, _forget(self._refs, key))

    def __contains__(self, obj: object) -> bool:
        ref = self._refs.get(id(obj))
        return ref is not None and ref() is obj

    def __iter__(self) -> Iterator[T]:
        for ref in list(self._refs.values()):
            obj = ref()
            if obj is not None:
                yield obj

    def __len__(self) -> int:
        return sum(1 for _ in self)


class WeakIdentityMap(Generic[T]):
    """``obj -> value`` with the objects held weakly, by identity."""

    __slots__ = ("_entries",)

    def __init__(self) -> None:
        self._entries: dict[int, tuple[weakref.ref, Any]] = {}

    def get(self, obj: T, default: Any = None) -> Any:
        entry = self._entries.get(id(obj))
        return entry[1] if entry is not None and entry[0]() is obj else default

    def __setitem__(self, obj: T, value: Any) -> None:
        key = id(obj)
        self._entries[key] = (weakref.ref(obj, _forget(self._entries, key)), value)

    def __len__(self) -> int:
        return sum(1 for ref, _ in list(self._entries.values()) if ref() is not None)
