"""ttnn's JSON form of its matmul program configs: ``config.to_json()`` and
``Config.from_json(text)``, as ttnn's bindings give every matmul program config.

The form is ttnn's reflection of the C++ struct, dumped compactly with its keys sorted (nlohmann's
default): an object of the struct's members; an unsigned or a bool as itself; an absent optional as
``null``; a ``CoreCoord`` as ``{"x": x, "y": y}``; a ``CoreRange`` as ``{"start": ..., "end": ...}``;
a ``CoreRangeSet`` as the list of its ranges; a fused activation (``UnaryWithParam``) as
``{"op_type": n, "params": [...]}``, ``n`` the member's position in ttnn's ``UnaryOpType`` (the C++
enum's value).  ``from_json`` reads that form back into the same config (``from_json(c.to_json()) ==
c``); a text that is not that form is an error naming the config.

May import: :mod:`meshnn.errors`, :mod:`meshnn.device` and :mod:`meshnn.ops.config`.
"""

from __future__ import annotations

import dataclasses
import json

from meshnn.device.core import CoreCoord, CoreRange, CoreRangeSet
from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.ops.config import UnaryWithParam
from meshnn.ops.eltwise.unary_tables import TTNN_MEMBERS, UnaryOpType

_COORDS = ("compute_with_storage_grid_size",)
_CORE_SETS = ("hop_cores", "allowed_worker_cores")


def _value(value: object) -> object:
    """One member's JSON value (see the module's text)."""
    if isinstance(value, CoreCoord):
        return {"x": value.x, "y": value.y}
    if isinstance(value, CoreRange):
        return {"start": _value(value.start), "end": _value(value.end)}
    if isinstance(value, CoreRangeSet):
        return [_value(r) for r in value.ranges()]
    if isinstance(value, UnaryWithParam):
        params = value.param if isinstance(value.param, tuple) else () if value.param is None else (value.param,)
        return {"op_type": TTNN_MEMBERS.index(value.op_type.name), "params": [float(p) for p in params]}
    return value


def to_json(config: object) -> str:
    """``config`` (a matmul program config) in ttnn's JSON form."""
    members = {f.name: _value(getattr(config, f.name)) for f in dataclasses.fields(config) if f.init}
    return json.dumps(members, sort_keys=True, separators=(",", ":"))


def _coord(owner: str, value: object) -> CoreCoord:
    if not isinstance(value, dict) or set(value) != {"x", "y"}:
        raise MeshnnValueError(f"{owner}.from_json: a CoreCoord is {{'x': x, 'y': y}}, got {value!r}")
    return CoreCoord(value["x"], value["y"])


def _member(owner: str, name: str, value: object) -> object:
    """A member read back from its JSON value."""
    if value is None:
        return None
    if name in _COORDS:
        return _coord(owner, value)
    if name in _CORE_SETS:
        if not isinstance(value, list) or not all(isinstance(r, dict) and set(r) == {"start", "end"} for r in value):
            raise MeshnnValueError(f"{owner}.from_json: {name} is a list of {{'start', 'end'}} ranges, got {value!r}")
        return CoreRangeSet([CoreRange(_coord(owner, r["start"]), _coord(owner, r["end"])) for r in value])
    if name == "fused_activation":
        if not isinstance(value, dict) or set(value) != {"op_type", "params"}:
            raise MeshnnValueError(f"{owner}.from_json: fused_activation is {{'op_type', 'params'}}, got {value!r}")
        op = UnaryOpType[TTNN_MEMBERS[value["op_type"]]]
        return UnaryWithParam(op, tuple(value["params"]) or None)
    return value


def from_json(cls: type, text: str) -> object:
    """The ``cls`` config ``text`` (ttnn's JSON form) describes."""
    owner = cls.__name__
    if not isinstance(text, str):
        raise MeshnnTypeError(f"{owner}.from_json takes a JSON string, got {type(text).__name__}")
    try:
        members = json.loads(text)
    except json.JSONDecodeError as error:
        raise MeshnnValueError(f"{owner}.from_json: not JSON ({error})") from None
    names = {f.name for f in dataclasses.fields(cls) if f.init}
    if not isinstance(members, dict) or not set(members) <= names:
        raise MeshnnValueError(f"{owner}.from_json: an object of the members {sorted(names)} is needed, got {text!r}")
    return cls(**{name: _member(owner, name, value) for name, value in members.items()})


class JsonConfig:
    """Gives a config dataclass ttnn's ``to_json()`` and ``from_json(text)``."""

    __slots__ = ()

    def to_json(self) -> str:
        return to_json(self)

    @classmethod
    def from_json(cls, text: str) -> object:
        return from_json(cls, text)
