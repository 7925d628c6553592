"""``ttnn.load_tensor``: a tensor file read back and checked.  Loads check everything before
anything is allocated on a device: magic, version, sizes against the file size, the header
checksum and schema, the topology against the shard table (:mod:`.consistency`), each payload's
size against the spec and its checksum; any problem, an OS error included, raises
:class:`~meshnn.errors.TensorFileError` naming the file.  Anything but a regular file is refused
without blocking.  Host loads read the bytes into memory of their own (a loaded tensor does not
depend on the file); loads onto a device read each payload straight into device memory and check
it there, freeing the buffer when it does not match.

Layer: tensor.  Imports errors, device, mesh, the byte formats (dtypes, layout) and the tensor
modules spec, memory_config, storage, topology, tensor, placement and files.format.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import stat
import zlib
from collections.abc import Iterator
from typing import Any, BinaryIO

from meshnn.device.buffer import BufferType, ShardOrientation, ShardSpec, TensorMemoryLayout
from meshnn.device.core import CoreCoord, CoreRange, CoreRangeSet
from meshnn.device.nd_shard import NdShardSpec, ShardDistributionStrategy
from meshnn.errors import MeshnnError, MeshnnTypeError, TensorFileError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout, Tile
from meshnn.mesh.coord import MeshCoordinate, MeshShape
from meshnn.mesh.mesh_device import MeshDevice
from meshnn.mesh.transfers import HostEncoder, ShardDataTransfer
from meshnn.tensor.files.consistency import check_consistency, check_replicas
from meshnn.tensor.files.format import (
    DIGEST_HEX,
    MAGIC,
    MAX_HEADER,
    MAX_MESH_DEVICES,
    MAX_RANK,
    PREAMBLE,
    VERSION,
    check_file_name,
)
from meshnn.tensor.files.payloads import payload_encoder, read_payloads
from meshnn.tensor.lifetime import allocate_mesh_buffer, device_tensor
from meshnn.tensor.memory_config import MemoryConfig
from meshnn.tensor.spec import TensorSpec
from meshnn.tensor.storage import DistributedHostBuffer, HostBuffer, HostStorage
from meshnn.tensor.tensor import Tensor
from meshnn.tensor.topology import PlacementReplicate, PlacementShard, TensorTopology

OLD_VERSION = (
    "format version 1, whose payload checksum misses some corruptions: this meshnn reads version 2 only; "
    "write the tensor again with dump_tensor (an as_tensor cache rebuilds itself)"
)


@contextlib.contextmanager
def open_regular(reader: TensorFileReader) -> Iterator[tuple[BinaryIO, int]]:
    """The reader's file, open for reading, and its size; anything but a regular file (a FIFO, a
    device, a directory) is refused without blocking, and every OS error is a TensorFileError."""
    try:
        fd = os.open(reader.path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except (OSError, ValueError) as error:
        raise TensorFileError(reader.path, f"cannot be read: {getattr(error, 'strerror', None) or error}") from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        reader.fail("is not a regular file (a FIFO, a device or a directory): a tensor file is a regular file")
    os.set_blocking(fd, True)
    with os.fdopen(fd, "rb", buffering=0) as f:
        try:
            yield f, info.st_size
        except OSError as error:
            raise TensorFileError(reader.path, f"cannot be read: {error.strerror or error}") from None


class TensorFileReader:
    """One tensor file, checked field by field; every problem is a TensorFileError."""

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = os.fsdecode(path)
        with open_regular(self) as (f, size):
            self.size = size
            preamble = f.read(PREAMBLE.size)
            if len(preamble) < PREAMBLE.size:
                self.fail(f"truncated: {len(preamble)} bytes, shorter than the {PREAMBLE.size}-byte preamble")
            magic, version, length, crc = PREAMBLE.unpack(preamble)
            if magic != MAGIC:
                self.fail(f"not a meshnn tensor file (magic {magic!r})")
            if version == 1:
                self.fail(OLD_VERSION)
            if version != VERSION:
                self.fail(f"unknown format version {version} (this meshnn reads version {VERSION})")
            if length > MAX_HEADER or PREAMBLE.size + length > self.size:
                self.fail(f"header of {length} bytes does not fit in a {self.size}-byte file")
            raw = f.read(length)
        if zlib.crc32(raw) != crc:
            self.fail("header checksum mismatch (the file is corrupted)")
        try:
            self.header = json.loads(raw.decode("utf-8"))
        except (ValueError, RecursionError) as error:  # bad UTF-8 or JSON, a 5,000-digit integer, deep nesting
            self.fail(f"header is not valid JSON of a tensor file: {type(error).__name__}: {str(error)[:200]}")
        if not isinstance(self.header, dict):
            self.fail("header is not a JSON object")
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
        shard, nd = config.get("shard_spec"), config.get("nd_shard_spec")
        if nd is not None:  # a config made with an N-D shard spec: made again the same way
            fields = self.field(config, "nd_shard_spec", dict)
            nd_args = (
                self.ints(fields, "shard_shape", low=1, length=(1, MAX_RANK)),
                self.grid(fields),
                self.enum(ShardOrientation, fields, "orientation"),
                self.enum(ShardDistributionStrategy, fields, "distribution"),
            )
        elif shard is not None:
            shard_args = (
                self.grid(shard),
                tuple(self.ints(shard, "shape", low=1, length=(2, 2))),
                self.enum(ShardOrientation, shard, "orientation"),
            )
        try:  # the fields are well-formed; what their values make may still be refused
            if nd is not None:
                return MemoryConfig(buffer_type, NdShardSpec(*nd_args))
            return MemoryConfig(layout, buffer_type, None if shard is None else ShardSpec(*shard_args))
        except MeshnnError as error:
            self.fail(f"header memory config is invalid: {error}")
        raise AssertionError("unreachable")

    def grid(self, shard: dict) -> CoreRangeSet:
        """A shard spec's ``grid``: ``[x0, y0, x1, y1]`` ranges, 1 to 256 of them."""
        grid_rows = self.field(shard, "grid", list)
        if not grid_rows or len(grid_rows) > 256:
            self.fail("shard grid has no ranges or too many")
        ranges = []
        for row in grid_rows:
            values = self.ints({"r": row}, "r", length=(4, 4))
            ranges.append(CoreRange(CoreCoord(values[0], values[1]), CoreCoord(values[2], values[3])))
        return CoreRangeSet(ranges)

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
        if len(coords) > MAX_MESH_DEVICES:
            self.fail("header lists too many mesh coordinates")
        mesh_coords = tuple(MeshCoordinate(self.ints({"c": c}, "c", length=(1, 4))) for c in coords)
        host_shape = self.ints(self.header, "host_buffer_shape", low=1, length=(1, 4))
        for name, dims in (("host_buffer_shape", host_shape), ("distribution_shape", dist)):
            if math.prod(dims) > MAX_MESH_DEVICES:
                self.fail(
                    f"header {name} {dims} has {math.prod(dims)} positions, more than a mesh has devices "
                    f"({MAX_MESH_DEVICES})"
                )
        shape = MeshShape(host_shape)
        if not placements or len(placements) != len(dist):
            self.fail("header placements do not match the distribution shape")
        return TensorTopology(MeshShape(dist), tuple(placements), mesh_coords), shape

    def payloads(self, spec: TensorSpec) -> tuple[list[tuple[int, int, str]], list[tuple[MeshCoordinate, int]]]:
        """(offset, nbytes, checksum) per payload and (coord, payload) per shard, checked
        against sizes."""
        expected = spec.compute_packed_buffer_size_bytes()
        table, offset = [], self.data_offset
        for entry in self.field(self.header, "payloads", list):
            nbytes = self.field(entry, "nbytes", int)
            if nbytes != expected:
                self.fail(f"a payload holds {nbytes} bytes but the spec needs {expected}")
            digest = self.field(entry, "rowcol", str)
            if len(digest) != DIGEST_HEX or digest.strip("0123456789abcdef"):
                self.fail(f"a payload's checksum is not {DIGEST_HEX} hex digits")
            table.append((offset, nbytes, digest))
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


def _checked(path: str | os.PathLike) -> tuple[TensorFileReader, TensorSpec, TensorTopology, MeshShape, list, list]:
    """The file's reader, spec, topology, host buffer shape, payload table and shard table, every
    field checked on its own and against the others (no payload read yet)."""
    reader = TensorFileReader(path)
    spec = reader.spec()
    topology, shape = reader.topology()
    table, shards = reader.payloads(spec)
    local = reader.header.get("local", False)
    if not isinstance(local, bool):
        reader.fail(f"header field 'local' must be a bool, got {local!r}")
    check_consistency(reader, spec, topology, shape, shards, partial=local)
    check_replicas(reader, topology, shards)
    return reader, spec, topology, shape, table, shards


def load_host(path: str | os.PathLike) -> Tensor:
    """The tensor in ``path`` as a host tensor whose bytes are its own (read and checked), so that
    it does not depend on the file staying as it was; raises before returning anything."""
    reader, spec, topology, shape, table, shards = _checked(path)
    if reader.header.get("local"):
        reader.fail(
            "holds only the shards of the MPI rank that wrote it (DumpTensorMode.LOCAL): load it onto that rank's mesh"
        )
    with open_regular(reader) as (f, size):
        if size != reader.size:
            reader.fail(f"changed while it was read: {reader.size} bytes, then {size}")
        buffers = [HostBuffer(array) for array in read_payloads(reader, f, table)]
    try:
        host = DistributedHostBuffer(shape)
        for coord, index in shards:
            host.emplace_shard(coord, lambda b=buffers[index]: b)
    except MeshnnError as error:
        reader.fail(f"shard coordinates do not fit the {shape!r} host buffer: {error}")
    return Tensor.make(spec, HostStorage(host), topology)


def load_device(path: str | os.PathLike, device: MeshDevice, memory_config: MemoryConfig | None = None) -> Tensor:
    """The tensor in ``path`` on ``device``: each payload read from the file straight into the
    device memory of the first local device holding it, checked there block by block (no host
    copy), and copied to the others; on any problem nothing stays allocated (TensorFileError, or
    OutOfMemoryError when the mesh has no room)."""
    reader, spec, topology, shape, table, shards = _checked(path)
    spec = spec if memory_config is None else spec.with_memory_config(memory_config)
    payload_of = dict(shards)
    if shape == MeshShape(1, 1) and topology.mesh_coords == (MeshCoordinate(0, 0),):
        coords, placed = list(device.shape.coords()), TensorTopology.replicated(device.shape)
        payload_at = dict.fromkeys(coords, payload_of[MeshCoordinate(0, 0)])
    elif shape != device.shape:
        reader.fail(f"cannot be placed on {device!r}: its shards are laid out for a {shape!r} mesh")
    else:
        coords, placed = list(topology.mesh_coords), topology
        mine = [c for c in coords if device.is_local(c) and c not in payload_of]  # a LOCAL file: this rank's
        if mine:
            reader.fail(f"holds no shard at {mine[0]}, which this process holds: written by another MPI rank")
        payload_at = {c: payload_of[c] for c in coords if c in payload_of}
    try:
        buffer = allocate_mesh_buffer(spec, device)
    except MeshnnError as error:
        if isinstance(error, MemoryError):
            raise
        reader.fail(f"cannot be placed on {device!r}: {error}")
    try:
        with open_regular(reader) as (f, size):
            if size != reader.size:
                reader.fail(f"changed while it was read: {reader.size} bytes, then {size}")
            encoders: dict[int, HostEncoder] = {}  # one per payload: made once, copied to its replicas
            transfers = []
            for coord, index in payload_at.items():
                if device.is_local(coord):
                    if index not in encoders:
                        encoders[index] = payload_encoder(reader, f, table, index)
                    transfers.append(ShardDataTransfer(coord, encoders[index]))
            device.mesh_command_queue(0).enqueue_write_shards(buffer, transfers, True)
    except BaseException:
        buffer.deallocate()
        raise
    return device_tensor(spec, buffer, coords, placed)


def load_tensor(file_name: str | os.PathLike, *, device: MeshDevice | None = None) -> Tensor:
    """Load a tensor saved by :func:`dump_tensor`; onto ``device`` (a mesh of the saved shape)."""
    check_file_name("load_tensor", file_name)
    return load_onto("load_tensor", file_name, device)


def load_onto(op: str, file_name: str | os.PathLike, device: MeshDevice | None) -> Tensor:
    """The tensor in ``file_name``: on the host, or onto ``device`` (checked, naming ``op``)."""
    if device is None:
        return load_host(file_name)
    if not isinstance(device, MeshDevice):
        raise MeshnnTypeError(f"{op}: device must be a MeshDevice, got {type(device).__name__}")
    device.check_open()
    return load_device(file_name, device)
