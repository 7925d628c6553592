"""The checks the transformer ops share: a device tensor in TILE layout of the dtypes an op takes,
a tensor of the rank an op needs, and the options meshnn does not implement (rejected by name).

May import: :mod:`meshnn.errors`, :mod:`meshnn.tensor` and :mod:`meshnn.ops.checks`.
"""

from __future__ import annotations

from meshnn.errors import MeshnnTypeError, MeshnnValueError, NotImplementedByMeshnn
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.ops.checks import device_input
from meshnn.tensor.tensor import Tensor


def tile_input(op: str, name: str, tensor: object, dtypes: tuple[DataType, ...] | None = None) -> Tensor:
    """A device tensor in TILE layout (of one of ``dtypes``, when given)."""
    t = device_input(op, name, tensor)
    if t.layout is not Layout.TILE:
        raise MeshnnValueError(f"ttnn.{op}: {name} {list(t.shape)} must be in TILE layout, it is {t.layout}")
    if dtypes is not None and t.dtype not in dtypes:
        allowed = ", ".join(str(d) for d in dtypes)
        raise MeshnnTypeError(f"ttnn.{op}: {name} must be one of {allowed}, got {t.dtype}")
    if dtypes is None and not t.dtype.is_float:
        raise MeshnnTypeError(f"ttnn.{op}: {name} must hold floating-point values, got {t.dtype}")
    return t


def of_rank(op: str, name: str, tensor: Tensor, rank: int, dims: str) -> tuple[int, ...]:
    """``tensor``'s shape, checked to be of ``rank`` (``dims`` names its axes for the message)."""
    shape = tuple(tensor.shape)
    if len(shape) != rank:
        raise MeshnnValueError(f"ttnn.{op}: {name} must be {dims}, got {list(shape)}")
    return shape


def unsupported(op: str, **options: object) -> None:
    """Reject each of ``options`` that is given: meshnn does not implement it."""
    for name, value in options.items():
        if value is not None:
            raise NotImplementedByMeshnn(f"{op}({name}=...)")
