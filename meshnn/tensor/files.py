"""Tensor files: ``dump_tensor``, ``load_tensor`` and the weight cache ``as_tensor``.

File format (meshnn's own, little-endian):

    offset 0   8 bytes   magic  b"MESHNNT\\0"
    offset 8   u32       format version (1)
    offset 12  u32       header length H, bytes
    offset 16  u32       CRC-32 of the header bytes
    offset 20  H bytes   header: UTF-8 JSON (spec, topology, host buffer shape, shard table)
    then                 the shard payloads, back to back, in shard-table order

The header's shard table gives each stored payload's byte count and checksum ("sum64": the sum of
its little-endian uint64 words, the tail zero-padded, modulo 2**64), and maps every populated
coordinate to a payload (replicas share one).  Payloads are the packed bytes exactly as a device
holds them.  Nothing in a file is executed: the header is JSON, read into a fixed schema.

Writes are atomic (a temporary file beside the target, then a rename).  Loads check everything
before anything is allocated on a device: magic, version, sizes against the file size, the
header checksum and schema, each payload's size against the spec and its checksum; any problem
raises :class:`~meshnn.errors.TensorFileError` naming the file.  Host loads map the file
(``numpy.memmap``) instead of copying it.
"""

from __future__ import annotations

import contextlib
import json
import os
import pathlib
import struct
import tempfile
import zlib
from collections.abc import Callable
from typing import Any

import numpy as np

from meshnn.device.buffer import BufferType, ShardOrientation, ShardSpec, TensorMemoryLayout
from meshnn.device.core import CoreCoord, CoreRange, CoreRangeSet
from meshnn.errors import MeshnnError, MeshnnTypeError, TensorFileError
from meshnn.mesh.coord import MeshCoordinate, MeshShape
from meshnn.mesh.mesh_device import MeshDevice
from meshnn.tensor.dtypes import DataType
from meshnn.tensor.layout import Layout, Tile
from meshnn.tensor.mappers import TensorToMesh
from meshnn.tensor.memory_config import MemoryConfig
from meshnn.tensor.spec import TensorSpec
from meshnn.tensor.storage import DistributedHostBuffer, HostBuffer, HostStorage
from meshnn.tensor.tensor import Tensor
from meshnn.tensor.topology import PlacementReplicate, PlacementShard, TensorTopology

MAGIC = b"MESHNNT\0"
VERSION = 1
PREAMBLE = struct.Struct("<8sIII")
MAX_HEADER = 16 << 20  # bytes: a header larger than this is not a tensor file of ours
MAX_RANK = 16


def sum64(data: np.ndarray) -> int:
    """The payload checksum: sum of little-endian uint64 words (tail zero-padded), mod 2**64."""
    flat = data.reshape(-1).view(np.uint8)
    whole = flat.size // 8 * 8
    total = int(flat[:whole].view("<u8").sum(dtype=np.uint64)) if whole else 0
    if whole < flat.size:
        tail = np.zeros(8, np.uint8)
        tail[: flat.size - whole] = flat[whole:]
        total += int(tail.view("<u8")[0])
    return (total + flat.size) % (1 << 64)


# ------------------------------------------------------------------------------------- header


def _memory_config_json(config: MemoryConfig) -> dict[str, Any]:
    spec = config.shard_spec
    shard = None
    if spec is not None:
        shard = {
            "grid": [[r.start.x, r.start.y, r.end.x, r.end.y] for r in spec.grid.ranges()],
            "shape": list(spec.shape),
            "orientation": spec.orientation.name,
        }
    return {"memory_layout": config.memory_layout.name, "buffer_type": config.buffer_type.name, "shard_spec": shard}


def _header(tensor: Tensor, payloads: list[tuple[int, int]], coords: list[tuple[list[int], int]]) -> dict[str, Any]:
    spec, topology = tensor.spec, tensor.tensor_topology()
    return {
        "spec": {
            "shape": list(spec.shape),
            "dtype": spec.dtype.name,
            "layout": spec.layout.name,
            "tile": list(spec.tile.tile_shape),
            "transpose_tile": spec.tile.transpose_tile,
            "memory_config": _memory_config_json(spec.memory_config),
        },
        "topology": {
            "distribution_shape": list(topology.distribution_shape),
            "placements": [
                {"shard": p.dim} if isinstance(p, PlacementShard) else {"replicate": True} for p in topology.placements
            ],
            "mesh_coords": [list(c) for c in topology.mesh_coords],
        },
        "host_buffer_shape": list(tensor.host_buffer().shape()),
        "payloads": [{"nbytes": n, "sum64": s} for n, s in payloads],
        "shards": [{"coord": c, "payload": p} for c, p in coords],
    }


def dump_tensor(file_name: str | os.PathLike, tensor: Tensor, *, extra: dict[str, Any] | None = None) -> None:
    """Save ``tensor`` (every shard, with its topology) to ``file_name``, atomically."""
    from meshnn.tensor.readback import from_device

    _check_file_name("dump_tensor", file_name)
    if not isinstance(tensor, Tensor):
        raise MeshnnTypeError(f"dump_tensor: tensor must be a ttnn.Tensor, got {type(tensor).__name__}")
    tensor.check_usable("dump_tensor: tensor")
    target = pathlib.Path(file_name)
    if not target.parent.is_dir():
        raise TensorFileError(str(file_name), f"cannot be written: the directory {str(target.parent)!r} does not exist")
    host = from_device(tensor)
    buffer = host.host_buffer()
    shards = buffer.local_shards()
    payloads: list[np.ndarray] = []
    checksums: list[int] = []
    by_checksum: dict[int, list[int]] = {}  # equal payloads (replicas) are stored once
    table: list[tuple[list[int], int]] = []
    for coord in buffer.shard_coords():
        if coord not in shards:
            continue
        data = shards[coord].data
        checksum = sum64(data)
        same = [i for i in by_checksum.get(checksum, []) if np.array_equal(payloads[i], data)]
        if same:
            index = same[0]
        else:
            index = len(payloads)
            payloads.append(data)
            checksums.append(checksum)
            by_checksum.setdefault(checksum, []).append(index)
        table.append((list(coord), index))
    header = _header(host, [(p.size, c) for p, c in zip(payloads, checksums, strict=True)], table)
    if extra:
        header["extra"] = extra
    encoded = json.dumps(header, separators=(",", ":")).encode()
    fd, temporary = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent or ".")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(PREAMBLE.pack(MAGIC, VERSION, len(encoded), zlib.crc32(encoded)))
            out.write(encoded)
            for payload in payloads:
                out.write(memoryview(np.ascontiguousarray(payload)))
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


# -------------------------------------------------------------------------------------- reading


class _Reader:
    """One tensor file, checked field by field; every problem is a TensorFileError."""

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = str(path)
        try:
            self.size = os.path.getsize(self.path)
            with open(self.path, "rb") as f:
                preamble = f.read(PREAMBLE.size)
                if len(preamble) < PREAMBLE.size:
                    self.fail(f"truncated: {len(preamble)} bytes, shorter than the {PREAMBLE.size}-byte preamble")
                magic, version, length, crc = PREAMBLE.unpack(preamble)
                if magic != MAGIC:
                    self.fail(f"not a meshnn tensor file (magic {magic!r})")
                if version != VERSION:
                    self.fail(f"unknown format version {version} (this meshnn reads version {VERSION})")
                if length > MAX_HEADER or PREAMBLE.size + length > self.size:
                    self.fail(f"header of {length} bytes does not fit in a {self.size}-byte file")
                raw = f.read(length)
        except OSError as error:
            raise TensorFileError(self.path, f"cannot be read: {error.strerror or error}") from None
        if zlib.crc32(raw) != crc:
            self.fail("header checksum mismatch (the file is corrupted)")
        try:
            self.header = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            self.fail(f"header is not valid JSON: {error}")
        self.data_offset = PREAMBLE.size + length

    def fail(self, problem: str) -> None:
        raise TensorFileError(self.path, problem)

    def field(self, mapping: Any, key: str, kind: type | tuple[type, ...]) -> Any:
        if not isinstance(mapping, dict) or key not in mapping:
            self.fail(f"header lacks {key!r}")
        value = mapping[key]
        if isinstance(value, bool) and kind is not bool:
            self.fail(f"header field {key!r} has the wrong type")
        if not isinstance(value, kind):
            self.fail(f"header field {key!r} has the wrong type")
        return value

    def ints(self, mapping: Any, key: str, *, low: int = 0, length: tuple[int, int] = (0, MAX_RANK)) -> list[int]:
        values = self.field(mapping, key, list)
        if not length[0] <= len(values) <= length[1] or not all(
            isinstance(v, int) and not isinstance(v, bool) and low <= v < (1 << 40) for v in values
        ):
            self.fail(f"header field {key!r} is not a list of {length[0]}..{length[1]} sane integers")
        return values

    def enum(self, kind: type, mapping: Any, key: str) -> Any:
        name = self.field(mapping, key, str)
        try:
            return kind[name]
        except KeyError:
            self.fail(f"header field {key!r} names no {kind.__name__}: {name!r}")

    # ------------------------------------------------------------------------- the pieces

    def spec(self) -> TensorSpec:
        spec = self.field(self.header, "spec", dict)
        shape = self.ints(spec, "shape")
        dtype = self.enum(DataType, spec, "dtype")
        layout = self.enum(Layout, spec, "layout")
        tile_shape = self.ints(spec, "tile", low=1, length=(2, 2))
        transpose = self.field(spec, "transpose_tile", bool)
        config = self.memory_config(self.field(spec, "memory_config", dict))
        try:
            return TensorSpec(shape, dtype, layout, tile=Tile(tile_shape, transpose), memory_config=config)
        except MeshnnError as error:
            self.fail(f"header spec is not a valid tensor spec: {error}")
        raise AssertionError("unreachable")

    def memory_config(self, config: dict) -> MemoryConfig:
        layout = self.enum(TensorMemoryLayout, config, "memory_layout")
        buffer_type = self.enum(BufferType, config, "buffer_type")
        shard = config.get("shard_spec")
        spec = None
        if shard is not None:
            grid_rows = self.field(shard, "grid", list)
            if not grid_rows or len(grid_rows) > 256:
                self.fail("shard grid has no ranges or too many")
            ranges = []
            for row in grid_rows:
                values = self.ints({"r": row}, "r", length=(4, 4))
                ranges.append(CoreRange(CoreCoord(values[0], values[1]), CoreCoord(values[2], values[3])))
            try:
                spec = ShardSpec(
                    CoreRangeSet(ranges),
                    tuple(self.ints(shard, "shape", low=1, length=(2, 2))),
                    self.enum(ShardOrientation, shard, "orientation"),
                )
            except MeshnnError as error:
                self.fail(f"header shard spec is invalid: {error}")
        try:
            return MemoryConfig(layout, buffer_type, spec)
        except MeshnnError as error:
            self.fail(f"header memory config is invalid: {error}")
        raise AssertionError("unreachable")

    def topology(self) -> tuple[TensorTopology, MeshShape]:
        topo = self.field(self.header, "topology", dict)
        dist = self.ints(topo, "distribution_shape", low=1, length=(1, 4))
        placements = []
        for item in self.field(topo, "placements", list):
            if (
                isinstance(item, dict)
                and "shard" in item
                and isinstance(item["shard"], int)
                and not isinstance(item["shard"], bool)
            ):
                placements.append(PlacementShard(item["shard"]))
            elif item == {"replicate": True}:
                placements.append(PlacementReplicate())
            else:
                self.fail(f"header placement {item!r} is not a shard or a replicate")
        coords = self.field(topo, "mesh_coords", list)
        if len(coords) > 4096:
            self.fail("header lists too many mesh coordinates")
        mesh_coords = tuple(MeshCoordinate(self.ints({"c": c}, "c", length=(1, 4))) for c in coords)
        shape = MeshShape(self.ints(self.header, "host_buffer_shape", low=1, length=(1, 4)))
        if not placements or len(placements) != len(dist):
            self.fail("header placements do not match the distribution shape")
        return TensorTopology(MeshShape(dist), tuple(placements), mesh_coords), shape

    def payloads(self, spec: TensorSpec) -> tuple[list[tuple[int, int, int]], list[tuple[MeshCoordinate, int]]]:
        """(offset, nbytes, sum64) per payload and (coord, payload) per shard, checked against sizes."""
        expected = spec.compute_packed_buffer_size_bytes()
        table, offset = [], self.data_offset
        for entry in self.field(self.header, "payloads", list):
            nbytes = self.field(entry, "nbytes", int)
            checksum = self.field(entry, "sum64", int)
            if nbytes != expected:
                self.fail(f"a payload holds {nbytes} bytes but the spec needs {expected}")
            table.append((offset, nbytes, checksum))
            offset += nbytes
        if offset != self.size:
            problem = "truncated" if offset > self.size else "has trailing bytes"
            self.fail(f"{problem}: the header describes {offset} bytes, the file has {self.size}")
        shards = []
        for entry in self.field(self.header, "shards", list):
            coord = MeshCoordinate(self.ints(entry, "coord", length=(1, 4)))
            index = self.field(entry, "payload", int)
            if not 0 <= index < len(table):
                self.fail(f"shard {coord} points at payload {index} of {len(table)}")
            shards.append((coord, index))
        if not shards:
            self.fail("the file holds no shards")
        return table, shards


def _load_host(path: str | os.PathLike) -> Tensor:
    """The tensor in ``path`` as a host tensor over a memory map; raises before returning anything."""
    reader = _Reader(path)
    spec = reader.spec()
    topology, shape = reader.topology()
    table, shards = reader.payloads(spec)
    try:
        mapped = np.memmap(reader.path, dtype=np.uint8, mode="r") if reader.size else np.zeros(0, np.uint8)
    except (OSError, ValueError) as error:
        reader.fail(f"cannot be mapped: {error}")
    buffers = []
    for offset, nbytes, checksum in table:
        view = np.asarray(mapped[offset : offset + nbytes])
        if sum64(view) != checksum:
            reader.fail(f"payload checksum mismatch at byte {offset} (the file is corrupted)")
        buffers.append(HostBuffer(view))
    try:
        host = DistributedHostBuffer(shape)
        for coord, index in shards:
            host.emplace_shard(coord, lambda b=buffers[index]: b)
    except MeshnnError as error:
        reader.fail(f"shard coordinates do not fit the {shape!r} host buffer: {error}")
    return Tensor.make(spec, HostStorage(host), topology)


def _check_file_name(op: str, file_name: object) -> None:
    if not isinstance(file_name, str | os.PathLike):
        raise MeshnnTypeError(f"{op}: file_name must be a str or a path, got {type(file_name).__name__}")


def load_tensor(file_name: str | os.PathLike, *, device: MeshDevice | None = None) -> Tensor:
    """Load a tensor saved by :func:`dump_tensor`; onto ``device`` (a mesh of the saved shape)."""
    from meshnn.tensor.placement import to_device

    _check_file_name("load_tensor", file_name)
    if device is not None:
        if not isinstance(device, MeshDevice):
            raise MeshnnTypeError(f"load_tensor: device must be a MeshDevice, got {type(device).__name__}")
        device.check_open()
    tensor = _load_host(file_name)
    if device is None:
        return tensor
    try:
        return to_device(tensor, device)
    except MeshnnError as error:
        if isinstance(error, MemoryError):
            raise
        raise TensorFileError(str(file_name), f"cannot be placed on {device!r}: {error}") from error


# ------------------------------------------------------------------------------------ as_tensor


def _cache_path(cache_file_name: str, dtype: DataType, layout: Layout) -> pathlib.Path:
    return pathlib.Path(f"{cache_file_name}_dtype_{dtype.name}_layout_{layout.name}.tensorbin")


def _recipe(
    source: Any, dtype: DataType, layout: Layout, mapper: TensorToMesh | None, tile: Tile | None
) -> dict[str, Any]:
    """What the cached conversion depends on, besides the data itself."""
    shape = list(getattr(source, "shape", ()))
    mapping = None if mapper is None else {"mesh": list(mapper.mesh_shape), "config": repr(mapper.config)}
    return {
        "source_shape": shape,
        "source_dtype": str(getattr(source, "dtype", "")),
        "dtype": dtype.name,
        "layout": layout.name,
        "tile": None if tile is None else list(tile.tile_shape),
        "mapper": mapping,
    }


def as_tensor(
    tensor: Any,
    dtype: DataType | None = None,
    *,
    layout: Layout = Layout.ROW_MAJOR,
    device: MeshDevice | None = None,
    memory_config: MemoryConfig | None = None,
    mesh_mapper: TensorToMesh | None = None,
    cache_file_name: str | None = None,
    preprocess: Callable[[Any], Any] | None = None,
    tile: Tile | None = None,
    use_device_tilizer: bool = False,
) -> Tensor:
    """``ttnn.as_tensor``: convert once, and with ``cache_file_name`` reload the converted bytes on
    later calls (``preprocess`` is not called again) unless the recorded recipe differs."""
    from meshnn.tensor.interop import from_torch
    from meshnn.tensor.placement import to_device

    if dtype is not None and not isinstance(dtype, DataType):
        raise MeshnnTypeError(f"as_tensor: dtype must be a ttnn DataType, got {dtype!r}")
    if not isinstance(layout, Layout):
        raise MeshnnTypeError(f"as_tensor: layout must be a ttnn Layout, got {layout!r}")
    if device is not None and not isinstance(device, MeshDevice):
        raise MeshnnTypeError(f"as_tensor: device must be a MeshDevice, got {type(device).__name__}")
    if dtype is None:
        if cache_file_name is not None:
            raise MeshnnTypeError("as_tensor: dtype must be given with cache_file_name (it names the cache file)")
        host = from_torch(tensor, layout=layout, tile=tile, mesh_mapper=mesh_mapper, memory_config=memory_config)
        return host if device is None else to_device(host, device, memory_config)
    recipe = _recipe(tensor, dtype, layout, mesh_mapper, tile)
    path = None if cache_file_name is None else _cache_path(cache_file_name, dtype, layout)
    if path is not None and path.exists():
        try:
            reader = _Reader(path)
            if reader.header.get("extra", {}).get("recipe") == recipe:
                loaded = _load_host(path)
                if memory_config is not None:
                    loaded = Tensor.make(
                        loaded.spec.with_memory_config(memory_config), loaded.storage, loaded.tensor_topology()
                    )
                return loaded if device is None else to_device(loaded, device, memory_config)
        except TensorFileError:
            pass  # a stale or damaged cache is rebuilt below
    source = preprocess(tensor) if preprocess is not None else tensor
    host = from_torch(source, dtype, layout=layout, tile=tile, mesh_mapper=mesh_mapper, memory_config=memory_config)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        dump_tensor(path, host, extra={"recipe": recipe})
    return host if device is None else to_device(host, device, memory_config)
