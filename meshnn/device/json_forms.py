"""ttnn's JSON forms of core and shard objects (``to_json`` / ``from_json`` of ``ttnn.CoreCoord``,
``CoreRange``, ``CoreRangeSet``, ``ShardSpec``, ``NdShardSpec``), as tt-metal's reflection writes
them: a coordinate ``{"x": .., "y": ..}``, a range ``{"end": .., "start": ..}``, a set a list of
ranges, a shard spec ``{"grid": .., "orientation": <int>, "shape": [h, w]}``, an N-D spec
``{"grid", "orientation", "shard_distribution_strategy", "shard_shape"}``; enums as their integer
values.  The text is compact with keys sorted (nlohmann's ``dump()`` of its ordered objects).

A malformed form (a missing key, a wrong type, an enum value ttnn has not) is refused with
``MeshnnValueError`` naming what is wrong.

Layer: device.  Imports errors and the device modules only.
"""

from __future__ import annotations

import enum
import json
from typing import Any

from meshnn.device.buffer import ShardOrientation, ShardSpec
from meshnn.device.core import CoreCoord, CoreRange, CoreRangeSet
from meshnn.device.nd_shard import NdShardSpec, ShardDistributionStrategy
from meshnn.errors import MeshnnTypeError, MeshnnValueError


def dumps(form: object) -> str:
    """The compact text of a JSON form, keys sorted (nlohmann's ``dump()``)."""
    return json.dumps(form, separators=(",", ":"), sort_keys=True)


def loads(text: object, what: str) -> Any:
    """The JSON form in ``text`` (a str), refused by name when it is not JSON."""
    if not isinstance(text, (str, bytes, bytearray)):
        raise MeshnnTypeError(f"{what}.from_json takes a JSON string, got {type(text).__name__}")
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise MeshnnValueError(f"{what}.from_json: not JSON ({error})") from None


def key(form: object, name: str, what: str) -> Any:
    """``form[name]``, refused by name when ``form`` is no object or lacks it."""
    if not isinstance(form, dict) or name not in form:
        raise MeshnnValueError(f"{what} JSON needs the key {name!r}, got {form!r}")
    return form[name]


def unsigned(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise MeshnnValueError(f"{what} must be a non-negative integer, got {value!r}")
    return value


def enum_of(kind: type[enum.Enum], value: object, what: str) -> Any:
    """The member of ``kind`` whose integer value ``value`` is."""
    try:
        return kind(unsigned(value, what))
    except ValueError:
        raise MeshnnValueError(f"{what}: {value!r} is no {kind.__name__} value") from None


def coord_form(coord: CoreCoord) -> dict:
    return {"x": coord.x, "y": coord.y}


def coord_from(form: object) -> CoreCoord:
    return CoreCoord(unsigned(key(form, "x", "CoreCoord"), "x"), unsigned(key(form, "y", "CoreCoord"), "y"))


def range_form(core_range: CoreRange) -> dict:
    return {"start": coord_form(core_range.start_coord), "end": coord_form(core_range.end_coord)}


def range_from(form: object) -> CoreRange:
    return CoreRange(coord_from(key(form, "start", "CoreRange")), coord_from(key(form, "end", "CoreRange")))


def range_set_form(ranges: CoreRangeSet) -> list:
    return [range_form(r) for r in ranges.ranges()]


def range_set_from(form: object) -> CoreRangeSet:
    if not isinstance(form, list):
        raise MeshnnValueError(f"CoreRangeSet JSON is a list of ranges, got {form!r}")
    return CoreRangeSet([range_from(item) for item in form])


def shard_spec_form(spec: ShardSpec) -> dict:
    return {"grid": range_set_form(spec.grid), "shape": list(spec.shape), "orientation": spec.orientation.value}


def shard_spec_from(form: object) -> ShardSpec:
    shape = key(form, "shape", "ShardSpec")
    if not isinstance(shape, list) or len(shape) != 2:
        raise MeshnnValueError(f"ShardSpec JSON's shape is [height, width], got {shape!r}")
    orientation = enum_of(ShardOrientation, key(form, "orientation", "ShardSpec"), "ShardSpec orientation")
    grid = range_set_from(key(form, "grid", "ShardSpec"))
    return ShardSpec(grid, [unsigned(d, "a shard dim") for d in shape], orientation)


def nd_shard_spec_form(spec: NdShardSpec) -> dict:
    return {
        "shard_shape": list(spec.shard_shape),
        "grid": range_set_form(spec.grid),
        "orientation": spec.orientation.value,
        "shard_distribution_strategy": spec.shard_distribution_strategy.value,
    }


def nd_shard_spec_from(form: object) -> NdShardSpec:
    shape = key(form, "shard_shape", "NdShardSpec")
    if not isinstance(shape, list):
        raise MeshnnValueError(f"NdShardSpec JSON's shard_shape is a list, got {shape!r}")
    return NdShardSpec(
        [unsigned(d, "a shard dim") for d in shape],
        range_set_from(key(form, "grid", "NdShardSpec")),
        enum_of(ShardOrientation, key(form, "orientation", "NdShardSpec"), "NdShardSpec orientation"),
        enum_of(
            ShardDistributionStrategy,
            key(form, "shard_distribution_strategy", "NdShardSpec"),
            "NdShardSpec shard_distribution_strategy",
        ),
    )
