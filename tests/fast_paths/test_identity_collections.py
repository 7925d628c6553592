"""meshnn's weak collections tell objects apart by identity: a ttnn.Tensor's ``==`` is an op, and
the standard library's WeakSet / WeakKeyDictionary compare their referents with ``==``."""

from __future__ import annotations

import gc

from meshnn.host.identity import WeakIdentityMap, WeakIdentitySet


class Loud:
    """An object whose ``==`` must never be asked (as a tensor's ttnn.eq)."""

    def __eq__(self, other: object) -> bool:
        raise AssertionError("compared with ==")

    __hash__ = object.__hash__


def test_a_set_holds_each_object_once_weakly_and_never_compares_them():
    a, b = Loud(), Loud()
    members = WeakIdentitySet()
    for obj in (a, b, a, b):
        members.add(obj)
    assert len(members) == 2 and a in members and b in members and Loud() not in members
    del a
    gc.collect()
    assert len(members) == 1
    assert next(iter(members)) is b


def test_a_map_keeps_a_value_per_live_object_and_forgets_the_dead():
    a, b = Loud(), Loud()
    ids = WeakIdentityMap()
    ids[a], ids[b] = 1, 2
    assert ids.get(a) == 1 and ids.get(b) == 2 and ids.get(Loud(), 0) == 0
    del a
    gc.collect()
    assert len(ids) == 1 and len(ids._entries) == 1  # the dead object's entry went with it
    c = Loud()
    assert ids.get(c) is None  # a new object, even at a dead one's id, is a new entry
