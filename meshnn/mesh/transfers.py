"""What a write or a read of a MeshBuffer moves, checked before anything is enqueued.

``ShardDataTransfer`` is host data for (or from) one shard, optionally a region of it: plain host
bytes (any numpy array or bytes-like object; a strided array is copied element by element, with
no staging copy), a ``HostEncoder`` (the code that makes a write's bytes, run in the device's
own memory) or a ``HostDecoder`` (the code that takes a read's bytes, out of device memory).
``write_plan`` / ``read_plan`` check a queue call's transfers into a plan of (slab row, region,
host data); ``shard_devices`` and ``shard_view`` cut a sharded buffer's global bytes into shards.

Part of the ``mesh`` layer; imports ``meshnn.errors``, ``meshnn.device`` and ``meshnn.mesh``
(coord, mesh_buffer).
"""

from __future__ import annotations

import contextlib
import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from meshnn.device.buffer import ShardOrientation
from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.mesh.buffer_config import BufferRegion, ShardedBufferConfig
from meshnn.mesh.coord import MeshCoordinate, as_coord
from meshnn.mesh.mesh_buffer import MeshBuffer

if TYPE_CHECKING:
    from meshnn.mesh.mesh_device import MeshDevice


@dataclass(frozen=True, slots=True)
class ShardDataTransfer:
    """Host bytes for (or from) the shard at ``shard_coord``, optionally a region of it."""

    shard_coord: MeshCoordinate
    host_data: Any
    region: BufferRegion | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "shard_coord", as_coord(self.shard_coord))
        if self.region is not None and not isinstance(self.region, BufferRegion):
            raise MeshnnTypeError(f"region must be a BufferRegion, got {self.region!r}")


@dataclass(frozen=True, slots=True, eq=False)
class HostEncoder:
    """Host data for a write, given as the call that makes it: ``encode(out)`` fills ``out``, a
    C-contiguous uint8 array of ``nbytes``, with the bytes.  The queue hands it the device's own
    memory, so the bytes are made in place with no staging copy (the tensor layer converts a
    shard to its device format this way); an encoder given for several places of one write is
    made in the first and copied from there to the others.  ``encode`` may read only host memory
    that stays as it is until the write runs; a write that cannot run at once (non-blocking,
    queue busy) calls it at enqueue time into a host array that the write then owns, as it
    copies plain bytes.  A transfer's region must be exactly ``nbytes``.  An error raised by
    ``encode`` (or ``together``) surfaces as itself, not as a QueueError: it is the caller's own
    code that failed, not a kernel.

    ``together``, when given, may make the bytes of several encoders at once: the encoders of
    one write that share it are made by one call, ``together([(encoder, out), ...])``, which
    fills every ``out`` as ``encode`` would (so a conversion can spread all of them over the host
    threads in one pass)."""

    nbytes: int
    encode: Callable[[np.ndarray], None]
    together: Callable[[list[tuple[HostEncoder, np.ndarray]]], None] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "nbytes", _byte_count(self.nbytes, "HostEncoder"))
        if not callable(self.encode) or not (self.together is None or callable(self.together)):
            raise MeshnnTypeError("HostEncoder: encode (and together, when given) must be callables")

    def materialize(self) -> np.ndarray:
        """The bytes in a new host array."""
        out = np.empty(self.nbytes, np.uint8)
        run_host_code(self.encode, out)
        return out


@dataclass(frozen=True, slots=True, eq=False)
class HostDecoder:
    """A host destination for a read, given as the call that takes the bytes: ``decode(data)``
    gets the region's bytes as a read-only C-contiguous uint8 array of ``nbytes``, the device's
    own memory, valid during the call only (so a tensor shard is decoded straight out of device
    memory, with no staging copy).  A transfer's region must be exactly ``nbytes``; an error
    ``decode`` (or ``together``) raises surfaces as itself.

    ``together``, when given, may take the bytes of several decoders at once: the decoders of
    one read that share it, consecutive in its transfers (a plain read between them ends a run),
    are called as one, ``together([(decoder, data), ...])``."""

    nbytes: int
    decode: Callable[[np.ndarray], None]
    together: Callable[[list[tuple[HostDecoder, np.ndarray]]], None] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "nbytes", _byte_count(self.nbytes, "HostDecoder"))
        if not callable(self.decode) or not (self.together is None or callable(self.together)):
            raise MeshnnTypeError("HostDecoder: decode (and together, when given) must be callables")


def _byte_count(nbytes: object, what: str) -> int:
    try:
        count = operator.index(nbytes)  # type: ignore[arg-type]
    except TypeError:
        raise MeshnnTypeError(f"{what}: nbytes must be an integer, got {nbytes!r}") from None
    if count < 0:
        raise MeshnnValueError(f"{what}: nbytes must be >= 0, got {count}")
    return count


def run_host_code(function: Callable[[Any], None], argument: Any) -> None:
    """``function(argument)``, the caller's own encoder or decoder code: an error it raises is
    marked so that it surfaces as itself, not as a QueueError (see ``command_queue.MeshCommandQueue._raise_kept``)."""
    try:
        function(argument)
    except BaseException as e:
        with contextlib.suppress(AttributeError, TypeError):
            e._meshnn_host_code = True  # type: ignore[attr-defined]
        raise


def _codec_size(codec: HostEncoder | HostDecoder, region: BufferRegion, what: str) -> None:
    if codec.nbytes != region.size:
        raise MeshnnValueError(f"{what} is a {type(codec).__name__} of {codec.nbytes} B; the region is {region.size} B")


def host_bytes(data: Any, *, writable: bool, what: str) -> np.ndarray:
    """A flat uint8 view of ``data`` (any numpy array or buffer-protocol object), without copying.

    A numpy array that is not C-contiguous (a strided view, e.g. one shard of a larger array) is
    returned as it is: its bytes in C order are the transfer, copied element by element straight
    between the array and the device (no staging copy)."""
    if isinstance(data, np.ndarray):
        array = data
    else:
        try:
            array = np.frombuffer(data, dtype=np.uint8) if not writable else np.asarray(memoryview(data))
        except (TypeError, ValueError) as e:
            raise MeshnnTypeError(
                f"{what} must be a numpy array or a bytes-like object, got {type(data).__name__}"
            ) from e
    if writable and not array.flags.writeable:
        raise MeshnnValueError(f"{what} is read-only; a read needs a writable array")
    if not array.flags.c_contiguous:
        if array.dtype.hasobject:
            raise MeshnnTypeError(f"{what} must hold plain numbers, got {array.dtype}")
        return array
    return array.reshape(-1).view(np.uint8)


def is_strided(data: np.ndarray) -> bool:
    """Whether host data is a numpy array of its own dtype and shape (copied element by element), not flat bytes."""
    return data.ndim != 1 or data.dtype != np.uint8


def region_as(slab_row: np.ndarray, data: np.ndarray) -> np.ndarray:
    """A device row's region bytes viewed with the dtype and shape of a strided host array."""
    return slab_row.view(data.dtype).reshape(data.shape)


def _host_slice(data: np.ndarray, size: int, what: str) -> np.ndarray:
    """The first ``size`` bytes of host data; a strided array must be exactly ``size`` bytes."""
    if not is_strided(data):
        return data[:size]
    if data.nbytes != size:
        raise MeshnnValueError(f"{what} is a strided array of {data.nbytes} B; the region is {size} B")
    return data


Plan = list[tuple[int, BufferRegion, Any]]
"""A checked write or read: (local slab row, region, host data) for each transfer to a local device."""


def transfer_region(mesh_buffer: MeshBuffer, transfer: ShardDataTransfer) -> BufferRegion:
    """The region of ``mesh_buffer`` that ``transfer`` names (the whole device-local buffer when none)."""
    local = mesh_buffer.device_local_size()
    region = transfer.region or BufferRegion(0, local)
    if region.offset + region.size > local:
        raise MeshnnValueError(
            f"region (offset {region.offset}, size {region.size}) runs past the {local} B buffer on "
            f"device {transfer.shard_coord}"
        )
    return region


def write_plan(mesh: MeshDevice, mesh_buffer: MeshBuffer, transfers: Sequence[ShardDataTransfer]) -> Plan:
    """The plan of a write of ``transfers`` to ``mesh_buffer``, every transfer checked (remote
    devices too); the transfers to remote devices are left out."""
    plan = []
    for transfer in transfers:
        if not isinstance(transfer, ShardDataTransfer):
            raise MeshnnTypeError(f"transfers must be ShardDataTransfers, got {type(transfer).__name__}")
        mesh.is_local(transfer.shard_coord)  # raises when outside the mesh
        region = transfer_region(mesh_buffer, transfer)
        what = f"host data for {transfer.shard_coord}"
        if isinstance(transfer.host_data, HostEncoder):
            _codec_size(transfer.host_data, region, what)
            if mesh.is_local(transfer.shard_coord):
                plan.append((mesh.local_row(transfer.shard_coord), region, transfer.host_data))
            continue
        data = host_bytes(transfer.host_data, writable=False, what=what)
        if data.nbytes < region.size:
            raise MeshnnValueError(
                f"host data for device {transfer.shard_coord} has {data.nbytes} B, the region needs {region.size} B"
            )
        if mesh.is_local(transfer.shard_coord):
            plan.append((mesh.local_row(transfer.shard_coord), region, _host_slice(data, region.size, what)))
    return plan


def read_plan(mesh: MeshDevice, mesh_buffer: MeshBuffer, transfers: Sequence[ShardDataTransfer]) -> Plan:
    """The plan of a read of ``mesh_buffer`` into ``transfers``' host arrays or decoders, every
    transfer to a local device checked; the transfers to remote devices are skipped."""
    plan = []
    for transfer in transfers:
        if not isinstance(transfer, ShardDataTransfer):
            raise MeshnnTypeError(f"transfers must be ShardDataTransfers, got {type(transfer).__name__}")
        if not mesh.is_local(transfer.shard_coord):
            continue
        region = transfer_region(mesh_buffer, transfer)
        what = f"host array for {transfer.shard_coord}"
        if isinstance(transfer.host_data, HostDecoder):
            _codec_size(transfer.host_data, region, what)
            plan.append((mesh.local_row(transfer.shard_coord), region, transfer.host_data))
            continue
        out = host_bytes(transfer.host_data, writable=True, what=what)
        if out.nbytes < region.size:
            raise MeshnnValueError(
                f"host array for device {transfer.shard_coord} has {out.nbytes} B, the region needs {region.size} B"
            )
        plan.append((mesh.local_row(transfer.shard_coord), region, _host_slice(out, region.size, what)))
    return plan


def shard_view(config: ShardedBufferConfig, flat: np.ndarray) -> np.ndarray:
    """``flat`` (global row-major bytes) as ``(shards, shard_h, shard_w * datum)``, shard_y outer."""
    (gh, gw), (ph, pw) = config.global_buffer_shape, config.physical_shard_shape()
    datum = config.compute_datum_size_bytes()
    blocks = flat.reshape(gh // ph, ph, gw // pw, pw * datum).transpose(0, 2, 1, 3)
    return blocks.reshape(-1, ph, pw * datum) if blocks.flags.c_contiguous else _BlockView(blocks)  # type: ignore[return-value]


class _BlockView:
    """Shards of a global buffer, indexable as ``[k]`` and assignable as a whole, without copying."""

    def __init__(self, blocks: np.ndarray) -> None:
        self._blocks = blocks
        self.shape = (blocks.shape[0] * blocks.shape[1], blocks.shape[2], blocks.shape[3])

    def __getitem__(self, k: int) -> np.ndarray:
        return np.ascontiguousarray(self._blocks[k // self._blocks.shape[1], k % self._blocks.shape[1]])

    def __setitem__(self, key: object, value: np.ndarray) -> None:
        self._blocks[...] = value.reshape(self._blocks.shape[0], self._blocks.shape[1], *self.shape[1:])


def shard_devices(config: ShardedBufferConfig, rows: int, cols: int) -> list[list[int]]:
    """For each shard (shard_y outer, shard_x inner), the row-major indices of the devices it is
    written to on a ``rows`` x ``cols`` mesh."""
    (gh, gw), (ph, pw) = config.global_buffer_shape, config.physical_shard_shape()
    count = (gh // ph) * (gw // pw)
    height_rep, width_rep = config.replicated_dims()
    row_major = config.shard_orientation is ShardOrientation.ROW_MAJOR
    if height_rep and width_rep:
        return [list(range(rows * cols)) for _ in range(count)]
    if height_rep or width_rep:
        if row_major:  # shard k fills mesh column k
            return [[r * cols + k for r in range(rows)] for k in range(count)]
        return [[k * cols + c for c in range(cols)] for k in range(count)]
    if row_major:
        return [[k] for k in range(count)]
    return [[(k % rows) * cols + k // rows] for k in range(count)]
