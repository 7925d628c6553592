"""``ttnn.dot_access``: a dict whose keys are also attributes (``DotAccessDict``), and
``make_dot_access_dict``, which converts a nested dict to one, level by level (tt-metal's BERT and
ViT models hold their parameters so).  A missing key read as an attribute raises an error that is
both a ``KeyError`` (ttnn's: its ``__getattr__`` is ``dict.__getitem__``) and an
``AttributeError`` (so ``hasattr``, ``getattr(d, name, default)`` and copying work).
"""

from __future__ import annotations

from typing import Any


class MissingKeyError(KeyError, AttributeError):
    """A key a DotAccessDict does not hold, read as an attribute."""


class DotAccessDict(dict):
    """``ttnn.dot_access.DotAccessDict``: ``d.key`` reads ``d["key"]``; ``del d.key`` deletes it."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise MissingKeyError(name) from None

    __delattr__ = dict.__delitem__


def make_dot_access_dict(dictionary: dict, *, ignore_types: type | tuple[type, ...] | None = None) -> Any:
    """``dictionary`` as a DotAccessDict, its dict values converted too; one already a DotAccessDict,
    or an instance of ``ignore_types``, is returned as it is."""
    if isinstance(dictionary, DotAccessDict):
        return dictionary
    if ignore_types is not None and isinstance(dictionary, ignore_types):
        return dictionary
    return DotAccessDict(
        {
            key: make_dot_access_dict(value, ignore_types=ignore_types) if isinstance(value, dict) else value
            for key, value in dictionary.items()
        }
    )
