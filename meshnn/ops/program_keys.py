"""The program-cache key of an op launch (:func:`remember`): what ttnn hashes a program by (the op,
its tensors' specs and its attributes, by their text; never buffer addresses), recorded in the
mesh's program cache.  The attributes' sorted text is made once per (op, specs, attributes) whose
values are immutable and print alike whenever they compare equal; others are printed at each call.

May import: :mod:`meshnn.mesh`, :mod:`meshnn.tensor` and the ops' :mod:`~meshnn.ops.outputs`.
"""

from __future__ import annotations

import enum
import functools
from collections.abc import Mapping, Sequence

from meshnn.mesh.global_semaphore import GlobalSemaphore
from meshnn.mesh.mesh_device import MeshDevice
from meshnn.ops.outputs import Output
from meshnn.tensor.spec import TensorSpec
from meshnn.tensor.tensor import Tensor

RUNTIME_ARGS = frozenset({"seed", "batch_idx", "update_idx", "update_idxs"})
"""Attributes ttnn passes to a cached program as runtime arguments: not part of its key (the KV
cache ops' user and position indices: UpdateCache and PagedUpdateCacheDeviceOperation hash only
their op type and tensors)."""


def remember(mesh: MeshDevice, op: str, inputs: Sequence[Tensor], outputs: Sequence[Output], attrs) -> tuple | None:
    """Note the program in ``mesh``'s program cache (when enabled) by what ttnn hashes it by: the
    op, its tensors' specs and its attributes (their text: configs hash as they print), never
    buffer addresses.  A second run on tensors of the same specs adds no entry.  Returns the key
    (None while the cache is off)."""
    if not mesh.program_cache_enabled:
        return None
    specs = (op, tuple([t.spec for t in inputs]), tuple([o.spec for o in outputs]))
    plain = _plain_key(attrs) if attrs else ()
    if plain is not None:
        known = _PROGRAM_KEYS.get((specs, plain))
        if known is not None:
            mesh.record_program(known[0])
            return known[0]
    key = (*specs, _described(attrs))
    if plain is not None and _values_hash(attrs):
        if len(_PROGRAM_KEYS) >= PROGRAM_KEYS_KEPT:
            _PROGRAM_KEYS.clear()
        _PROGRAM_KEYS[(specs, plain)] = (key, tuple(attrs.values()) if attrs else ())
    mesh.record_program(key)
    return key


def program_key(op: str, in_specs: Sequence[TensorSpec], out_specs: Sequence[TensorSpec], attrs) -> tuple | None:
    """The key :func:`remember` records for a launch of ``op`` on tensors of ``in_specs`` making
    ``out_specs`` with ``attrs``, for a caller that makes it once and passes it to every such launch
    (``launch(program_key=...)``); None when the attributes may change or print apart from how they
    compare (what :func:`remember` makes afresh at every call)."""
    plain = _plain_key(attrs) if attrs else ()
    if plain is None or not _values_hash(attrs):
        return None
    return (op, tuple(in_specs), tuple(out_specs), _described(attrs))


def _values_hash(attrs) -> bool:
    """Whether the attributes of a program's key (runtime arguments left out) all hash."""
    return _hashes(tuple([v for k, v in attrs.items() if k not in RUNTIME_ARGS]) if attrs else ())


def _described(attrs) -> tuple:
    """The attributes of a program's key: ``(name, text)`` sorted, runtime arguments left out."""
    if not attrs:
        return ()
    return tuple(sorted((k, repr(_hashed(v))) for k, v in attrs.items() if k not in RUNTIME_ARGS))


PROGRAM_KEYS_KEPT = 4096
"""Program-cache keys remembered (the memo is emptied when full)."""

_PROGRAM_KEYS: dict[tuple, tuple[tuple, tuple]] = {}
"""``((op, input specs, output specs), the attributes' plain key)`` -> (the program-cache key
:func:`remember` records, the attribute values it was made of).  The sorted, printed attributes
are made once: they cost more than the rest of an op's bookkeeping.  A key never stands for
another text (:func:`_plain_key`); the values are held so that the ids in a key stay theirs."""

_PLAIN_TYPES = frozenset({type(None), bool, int, str})


def _plain_key(attrs: Mapping[str, object]) -> tuple | None:
    """``attrs`` as ``(name, type, value)`` items when every value is immutable: None, a bool, an
    int, a string, a float (by its text: -0.0 and 0.0 compare equal and print apart), an enum
    member, or a frozen dataclass (by its id: equal configs may print apart; one that does not
    hash, as one holding a list, is never kept).  Equal
    keys print alike.  None when any value is of another kind (a tensor, a list, a mutable
    config): such attributes are printed afresh at every call."""
    items = []
    for name, value in attrs.items():
        if name in RUNTIME_ARGS:
            continue  # (not part of the key: a new position must not make a new memo entry)
        kind = type(value)
        if kind is float:
            items.append((name, kind, repr(value)))
        elif kind in _PLAIN_TYPES or isinstance(value, enum.Enum):
            items.append((name, kind, value))
        elif _frozen(kind):  # (kept only if it hashes: see remember)
            items.append((name, kind, id(value)))
        else:
            return None
    return tuple(items)


@functools.cache
def _frozen(kind: type) -> bool:
    """Whether ``kind`` is a frozen dataclass (an instance's fields never change)."""
    params = getattr(kind, "__dataclass_params__", None)
    return params is not None and bool(params.frozen)


def _hashes(value: object) -> bool:
    """Whether ``value`` hashes (a frozen dataclass holding a list does not: its list may change).
    A value of a key kept is one object, held by the entry: it hashed when the entry was made."""
    try:
        hash(value)
    except TypeError:
        return False
    return True


def _hashed(value: object) -> object:
    """What ttnn hashes an attribute by: a tensor by its spec; a global semaphore by its cores and
    buffer type (its address is a runtime argument, overridden on a cache hit); a sequence item by
    item."""
    if isinstance(value, Tensor):
        return value.spec
    if isinstance(value, GlobalSemaphore):
        return ("GlobalSemaphore", value.cores, value.buffer_type)
    if isinstance(value, list | tuple):
        return tuple(_hashed(item) for item in value)
    return value
