"""Checked fields of the program descriptors.  ttnn's descriptors are read-write structs (a model
sets ``cb.format_descriptors = [...]`` or ``kernel.runtime_args[x][y].append(n)`` after building
them), so they are mutable classes, not frozen specs; every assignment goes through a
:class:`Field`, whose check refuses a value of the wrong type or range (nanobind's ``TypeError``
in ttnn) with a meshnn error naming the class and field, before anything changes.

Layer: ops.  Imports errors and device.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Any

from meshnn.device.core import CoreRangeSet
from meshnn.errors import MeshnnTypeError, MeshnnValueError

Check = Callable[[str, Any], Any]
"""``check(where, value)``: the value to store (normalised), or a meshnn error naming ``where``."""


class Field:
    """A checked attribute: the value set passes ``check`` (``where`` is ``Class.field``)."""

    def __init__(self, check: Check) -> None:
        self.check = check
        self.name = ""
        self.where = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name
        self.where = f"ttnn.{owner.__name__}.{name}"

    def __get__(self, instance: object, owner: type | None = None) -> Any:
        if instance is None:
            return self
        return instance.__dict__[self.name]

    def __set__(self, instance: object, value: Any) -> None:
        instance.__dict__[self.name] = self.check(self.where, value)


def uint(bits: int) -> Check:
    """An unsigned integer of ``bits`` bits (a bool is 0 or 1, as ttnn's binding converts a Python bool)."""

    def check(where: str, value: Any) -> int:
        if not isinstance(value, int):
            raise MeshnnTypeError(f"{where} must be an int, got {value!r}")
        if not 0 <= value < 1 << bits:
            raise MeshnnValueError(f"{where} must be an unsigned {bits}-bit int, got {value}")
        return int(value)

    return check


def boolean(where: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise MeshnnTypeError(f"{where} must be a bool, got {value!r}")
    return value


def member(kind: type[enum.Enum]) -> Check:
    """A member of ``kind`` (an int enum takes its number too, as ttnn's enums convert)."""

    def check(where: str, value: Any) -> enum.Enum:
        if isinstance(value, kind):
            return value
        if issubclass(kind, int) and isinstance(value, int) and not isinstance(value, bool | enum.Enum):
            try:
                return kind(value)
            except ValueError:
                raise MeshnnValueError(f"{where}: {value} is no ttnn.{kind.__name__}") from None
        raise MeshnnTypeError(f"{where} must be a ttnn.{kind.__name__}, got {value!r}")

    return check


def optional(inner: Check) -> Check:
    def check(where: str, value: Any) -> Any:
        return None if value is None else inner(where, value)

    return check


def instance(kind: type) -> Check:
    def check(where: str, value: Any) -> Any:
        if not isinstance(value, kind):
            raise MeshnnTypeError(f"{where} must be a ttnn.{kind.__name__}, got {type(value).__name__}")
        return value

    return check


def list_of(inner: Check) -> Check:
    """A list (any iterable but a string) of items each passing ``inner``; stored as a new list."""

    def check(where: str, value: Any) -> list:
        if isinstance(value, str | bytes) or not hasattr(value, "__iter__"):
            raise MeshnnTypeError(f"{where} must be a list, got {value!r}")
        return [inner(f"{where}[{i}]", item) for i, item in enumerate(value)]

    return check


def text(where: str, value: Any) -> str:
    if not isinstance(value, str):
        raise MeshnnTypeError(f"{where} must be a str, got {value!r}")
    return value


def pair(first: Check, second: Check) -> Check:
    """A two-item tuple or list: ``(first, second)``."""

    def check(where: str, value: Any) -> tuple:
        if not isinstance(value, tuple | list) or len(value) != 2:
            raise MeshnnTypeError(f"{where} must be a pair, got {value!r}")
        return (first(f"{where}[0]", value[0]), second(f"{where}[1]", value[1]))

    return check


core_ranges = instance(CoreRangeSet)
"""A ``ttnn.CoreRangeSet``."""
u32_list = list_of(uint(32))

REQUIRED = object()
"""A constructor parameter without a default."""


def bind(where: str, params: dict[str, Any], args: tuple, kwargs: dict[str, Any]) -> dict[str, Any]:
    """The arguments of a call of ``where`` by parameter name (``params``: names -> defaults, in
    order; :data:`REQUIRED` for none), or a meshnn error naming the argument that is wrong."""
    names = list(params)
    if len(args) > len(names):
        raise MeshnnTypeError(f"{where} takes at most {len(names)} arguments, got {len(args)}")
    bound = dict(zip(names, args, strict=False))
    for key, value in kwargs.items():
        if key not in params:
            raise MeshnnTypeError(f"{where} got an unexpected keyword argument {key!r}")
        if key in bound:
            raise MeshnnTypeError(f"{where} got two values for argument {key!r}")
        bound[key] = value
    for key, default in params.items():
        if key not in bound:
            if default is REQUIRED:
                raise MeshnnTypeError(f"{where} is missing the argument {key!r}")
            bound[key] = default() if callable(default) else default
    return bound


def no_arguments(where: str, args: tuple, kwargs: dict[str, Any]) -> None:
    """A constructor that takes nothing, given something: a meshnn error naming it."""
    if args or kwargs:
        given = ", ".join([*(repr(a) for a in args), *kwargs])
        raise MeshnnTypeError(f"{where} takes no arguments, got {given}")
