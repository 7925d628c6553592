"""How ttnn prints a tensor: ``str(tensor)`` / ``repr(tensor)`` and ``ttnn.set_printoptions``.

The text is ttnn's (its C++ ``to_string``), character for character: ``ttnn.Tensor(`` then the
values as nested lists with ttnn's indentation (one line a row, a blank line between blocks of
rank 3 and more), then ``, shape=Shape([...]), dtype=DataType::X, layout=Layout::Y)``.  Integers
take 5 columns; floats ``precision`` decimals (4) in ``precision + 3`` columns, or scientific
notation in ``precision + 7`` when the nonzero finite magnitudes span more than 1000x, pass 1e8 or
fall under 1e-4 (``sci_mode`` forces it either way).  Profiles: ``"short"`` (the default) shows
the first and last 2 of a dimension longer than 4 with ``...`` between, ``"full"`` all of it,
``"empty"`` only ``...``.  Block floats print as their float32 values.  A deallocated tensor is
``ttnn.Tensor(<buffer is not allocated>, ...)``; a tensor on a mesh of several devices prints each
device's shard after ``device_id: N, MeshCoordinate([r, c])``; a host tensor of several shards
prints each shard, one after another.

Part of the tensor layer; imports :mod:`meshnn.errors`, numpy and the tensor layer's types.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError

if TYPE_CHECKING:
    from meshnn.tensor.tensor import Tensor

OPEN = "ttnn.Tensor("


class PrintProfile(enum.Enum):
    """How much of each dimension is printed (``None``: all of it)."""

    EMPTY = 0
    SHORT = 4
    FULL = None


@dataclass(frozen=True)
class PrintOptions:
    """``profile``; ``sci_mode``: None (by the values), True or False; ``precision``: decimals."""

    profile: PrintProfile = PrintProfile.SHORT
    sci_mode: bool | None = None
    precision: int = 4


OPTIONS = [PrintOptions()]  # the process's options (one slot: set by set_printoptions)


def set_printoptions(*, profile: str, sci_mode: bool | str | None = None, precision: int | None = None) -> None:
    """``ttnn.set_printoptions``: ``profile`` "empty", "short" or "full" (any case); ``sci_mode`` None
    or "default" (by the values), True / "true" or False / "false"; ``precision`` (default 4)."""
    if not isinstance(profile, str) or profile.upper() not in PrintProfile.__members__:
        raise MeshnnValueError(f"ttnn.set_printoptions: profile must be 'empty', 'short' or 'full', got {profile!r}")
    if isinstance(sci_mode, str):
        words = {"true": True, "false": False, "none": None, "default": None}
        if sci_mode.lower() not in words:
            raise MeshnnValueError("ttnn.set_printoptions: sci_mode must be None, bool, or str (true, false, default)")
        sci_mode = words[sci_mode.lower()]
    elif sci_mode is not None and not isinstance(sci_mode, bool):
        raise MeshnnTypeError("ttnn.set_printoptions: sci_mode must be None, bool, or str (true, false, default)")
    if precision is not None and (isinstance(precision, bool) or not isinstance(precision, int) or precision < 0):
        raise MeshnnTypeError(f"ttnn.set_printoptions: precision must be None or a non-negative int, got {precision!r}")
    OPTIONS[0] = PrintOptions(PrintProfile[profile.upper()], sci_mode, 4 if precision is None else precision)


def _scientific(values: np.ndarray, options: PrintOptions) -> bool:
    if options.sci_mode is not None:
        return options.sci_mode
    if values.dtype.kind != "f":
        return False
    with np.errstate(invalid="ignore"):
        magnitudes = np.abs(values[np.isfinite(values) & (values != 0)].astype(np.float64))
    if magnitudes.size == 0:
        return False
    low, high = float(magnitudes.min()), float(magnitudes.max())
    return high / low > 1000.0 or high > 1.0e8 or low < 1.0e-4


def _datum(value: object, floating: bool, scientific: bool, precision: int) -> str:
    if not floating:
        return f"{int(value):5d}"  # type: ignore[call-overload]
    number = float(value)  # type: ignore[arg-type]
    if np.isnan(number) or np.isinf(number):
        text = "nan" if np.isnan(number) else ("inf" if number > 0 else "-inf")
        return text.rjust(precision + (7 if scientific else 3))
    return f"{number:{precision + 7}.{precision}e}" if scientific else f"{number:{precision + 3}.{precision}f}"


def _rows(out: list[str], values: np.ndarray, outer: int, dim: int, style: tuple[bool, bool, PrintOptions]) -> None:
    """ttnn's recursion: ``values`` is the block at depth ``dim`` (``outer``: its index in its parent)."""
    floating, scientific, options = style
    rank = values.ndim
    spaces = " " * (len(OPEN) + dim)
    before, after = (" ", " ") if rank == 1 else (spaces + " ", "\n" if rank == 2 else "\n\n")
    if dim > 0 and outer > 0:
        out.append(spaces)
    out.append("[")
    size, most = values.shape[0], options.profile.value
    index = 0
    while True:
        if most is not None and size > most and index == most // 2:
            out.append(before + "...," + after)
            index = size - most // 2
        if index >= size:
            break
        if rank > 1:
            _rows(out, values[index], index, dim + 1, style)
        else:
            out.append(_datum(values[index], floating, scientific, options.precision))
        if index < size - 1:
            out.append("," + (after if rank > 2 else "\n" if rank == 2 else " "))
        index += 1
    out.append("]")


def _tail(tensor: Tensor) -> str:
    shape = list(tensor.shape)
    return f", shape=Shape({shape}), dtype=DataType::{tensor.dtype.name}, layout=Layout::{tensor.layout.name})"


def _one(values: np.ndarray, tensor: Tensor) -> str:
    options = OPTIONS[0]
    tail = _tail(tensor)
    if options.profile is PrintProfile.EMPTY:
        return OPEN + "..." + tail
    floating = tensor.dtype.is_float
    if floating:
        values = values.astype(np.float32)  # (bfloat16 and block floats print as their float values)
    scientific = _scientific(values, options)
    if values.ndim == 0:
        return OPEN + _datum(values[()], floating, scientific, options.precision) + tail
    out: list[str] = [OPEN]
    _rows(out, values, 0, 0, (floating, scientific, options))
    return "".join(out) + tail


def to_string(tensor: Tensor) -> str:
    """ttnn's text of ``tensor`` (see the module's text)."""
    from meshnn.tensor.shards import get_device_tensors
    from meshnn.tensor.storage import DeviceStorage

    if not tensor.is_allocated():
        return OPEN + "<buffer is not allocated>" + _tail(tensor)
    shards = get_device_tensors(tensor)
    if not isinstance(tensor.storage, DeviceStorage) or len(tensor.storage.mesh_buffer.device().get_device_ids()) == 1:
        return "\n".join(_one(shard.to_numpy(), tensor) for shard in shards)
    mesh = tensor.storage.mesh_buffer.device()
    texts = []
    for coord, shard in zip(sorted(tensor.storage.coords), shards, strict=True):
        texts.append(f"device_id: {mesh.get_device_id(coord)}, {coord!r}\n" + _one(shard.to_numpy(), tensor))
    return "\n".join(texts)
