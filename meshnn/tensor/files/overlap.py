"""``ttnn._ttnn.tensor.dump_overlapped_tensors(file_name, views)`` /
``load_overlapped_tensors(file_name, device=None)`` (tt-metal 2026-06): a dict of
:class:`~meshnn.tensor.overlapped.OverlappedTensor` views of ONE fused tensor in one
``.overlappedtensorbin`` file.

The file is a meshnn tensor file (:mod:`.format`) of the fused tensor, read back to the host (every
rank's shards, as ``dump_tensor``), whose header's ``extra.overlapped_tensors`` lists the views by
name, in the dict's order: 2-D tensor and shard shapes, cores (``[start x, start y, end x, end y]``
per range), dtype, tile shape, byte offset and total size.  (tt-metal writes FlatBuffer tables of the
same fields; the tensor-file format is meshnn's, as its ``dump_tensor``'s is.)  Loading checks each
view's fields, then (before anything is loaded) the tensor as ``load_tensor`` does, and gives
``{name: OverlappedTensor}`` whose views all share the one fused tensor: on the host, or on
``device`` with its saved memory config.

Layers: the tensor files package and :mod:`meshnn.tensor.overlapped`.
"""

from __future__ import annotations

from typing import Any

from meshnn.device.core import CoreCoord, CoreRange, CoreRangeSet
from meshnn.errors import MeshnnError, MeshnnTypeError
from meshnn.formats.dtypes import DataType
from meshnn.mesh.mesh_device import MeshDevice
from meshnn.tensor.files.reader import TensorFileReader, load_onto
from meshnn.tensor.files.writer import save_tensor
from meshnn.tensor.overlapped import OverlappedTensor

EXTENSION = ".overlappedtensorbin"
KEY = "overlapped_tensors"


def _name(op: str, file_name: object) -> str:
    if not isinstance(file_name, str):
        raise MeshnnTypeError(f"{op}: file_name must be a str, got {type(file_name).__name__}")
    if not file_name.endswith(EXTENSION):
        raise MeshnnError(f"File {file_name} must have {EXTENSION} extension")
    return file_name


def _view_record(name: str, view: OverlappedTensor) -> dict[str, Any]:
    ranges = [[r.start.x, r.start.y, r.end.x, r.end.y] for r in view.core_range_set.ranges()]
    return {
        "name": name,
        "tensor_shape": list(view.tensor_shape),
        "shard_shape": list(view.shard_shape),
        "core_range_set": ranges,
        "dtype": view.dtype.name,
        "tile_shape": list(view.tile_shape),
        "byte_offset": view.byte_offset,
        "total_size": view.total_size,
    }


def dump_overlapped_tensors(file_name: str, views: dict[str, OverlappedTensor]) -> None:
    """Write ``views`` (name -> view; all of one fused tensor) to ``file_name``."""
    op = "dump_overlapped_tensors"
    name = _name(op, file_name)
    if not isinstance(views, dict) or not all(isinstance(v, OverlappedTensor) for v in views.values()):
        raise MeshnnTypeError(f"{op}: views must be a dict of ttnn.OverlappedTensor, got {type(views).__name__}")
    if not all(isinstance(k, str) for k in views):
        raise MeshnnTypeError(f"{op}: the views' names (the dict's keys) must be str")
    if not views:
        raise MeshnnError(f"{op}: Need at least one view to serialize")
    fused = next(iter(views.values())).fused_tensor
    for index, view in enumerate(views.values()):
        if view.fused_tensor is not fused:
            raise MeshnnError(
                f"{op}: All OverlappedTensorViews must reference the same fused tensor (view {index} differs)"
            )
    save_tensor(name, fused, extra={KEY: [_view_record(k, v) for k, v in views.items()]})


def _view_fields(reader: TensorFileReader, record: Any) -> tuple[str, tuple[Any, ...]]:
    """One view record of the file, each field checked (a bad one is the file's TensorFileError):
    its name and the view's fields after the fused tensor."""
    name = reader.field(record, "name", str)
    ranges = reader.field(record, "core_range_set", list)
    if not ranges or not all(isinstance(r, list) and len(r) == 4 and all(type(v) is int for v in r) for r in ranges):
        reader.fail(f"view {name!r}: core_range_set is not a list of [x0, y0, x1, y1] ranges")
    dtype = reader.field(record, "dtype", str)
    if dtype not in DataType.__members__:
        reader.fail(f"view {name!r}: unknown dtype {dtype!r}")
    pairs = [tuple(reader.ints(record, key, length=(2, 2))) for key in ("tensor_shape", "shard_shape", "tile_shape")]
    sizes = [reader.field(record, key, int) for key in ("byte_offset", "total_size")]
    if any(v >= 2**32 for pair in pairs for v in pair) or any(not 0 <= v < 2**64 for v in sizes):
        reader.fail(f"view {name!r}: a shape is not u32 or an offset / size not u64")
    try:
        grid = CoreRangeSet([CoreRange(CoreCoord(r[0], r[1]), CoreCoord(r[2], r[3])) for r in ranges])
    except MeshnnError as error:
        reader.fail(f"view {name!r}: core_range_set: {error}")
    return name, (pairs[0], pairs[1], grid, DataType[dtype], pairs[2], *sizes)


def load_overlapped_tensors(file_name: str, device: MeshDevice | None = None) -> dict[str, OverlappedTensor]:
    """The views saved in ``file_name``, sharing one fused tensor (on ``device`` when given)."""
    op = "load_overlapped_tensors"
    name = _name(op, file_name)
    if device is not None and not isinstance(device, MeshDevice):
        raise MeshnnTypeError(f"{op}: device must be a MeshDevice, got {type(device).__name__}")
    reader = TensorFileReader(name)
    records = reader.field(reader.field(reader.header, "extra", dict), KEY, list)
    if not records:
        reader.fail("holds no overlapped tensor views")
    parsed = dict(_view_fields(reader, record) for record in records)  # all checked before the load
    if len(parsed) != len(records):
        reader.fail("two views share a name")
    fused = load_onto(op, name, device)
    return {key: OverlappedTensor(fused, *fields) for key, fields in parsed.items()}
