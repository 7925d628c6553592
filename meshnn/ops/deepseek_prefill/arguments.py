"""The argument checks the DeepSeek prefill ops share: ``uint32_t`` arguments as ttnn's bindings
take them (an int >= 0; anything else a TypeError, as nanobind refuses it), a tensor's dtype and
layout, and the devices an op's tensors populate.

May import: :mod:`meshnn.errors`, :mod:`meshnn.formats`, :mod:`meshnn.tensor`.
"""

from __future__ import annotations

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.tensor.tensor import Tensor

UINT32_MAX = 2**32 - 1


def uint_arg(op: str, name: str, value: object) -> int:
    """``value`` as a ``uint32_t`` argument: an int in ``[0, 2**32)`` (numpy integers count, bools do not)."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or not 0 <= value <= UINT32_MAX:
        raise MeshnnTypeError(f"ttnn.{op}: {name} must be an unsigned 32-bit int, got {value!r}")
    return int(value)


def bool_arg(op: str, name: str, value: object) -> bool:
    """``value`` as a ``bool`` argument (nanobind takes a bool only)."""
    if not isinstance(value, bool | np.bool_):
        raise MeshnnTypeError(f"ttnn.{op}: {name} must be a bool, got {value!r}")
    return bool(value)


def require(op: str, name: str, tensor: Tensor, dtypes: tuple[DataType, ...], layout: Layout | None) -> None:
    """``tensor`` of one of ``dtypes`` and (unless None) of ``layout``."""
    if tensor.dtype not in dtypes:
        wanted = " or ".join(d.name for d in dtypes)
        raise MeshnnValueError(f"ttnn.{op}: {name} must be {wanted}, got {tensor.dtype}")
    if layout is not None and tensor.layout is not layout:
        raise MeshnnValueError(f"ttnn.{op}: {name} must be in {layout.name} layout, got {tensor.layout}")


def same_devices(op: str, first: str, named: dict[str, Tensor]) -> None:
    """Every tensor of ``named`` populates the devices ``named[first]`` does."""
    coords = set(named[first].storage.coords)  # type: ignore[union-attr]
    for name, tensor in named.items():
        if set(tensor.storage.coords) != coords:  # type: ignore[union-attr]
            raise MeshnnValueError(f"ttnn.{op}: {name} populates other devices than {first}")
