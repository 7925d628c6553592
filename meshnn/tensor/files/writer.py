"""``ttnn.dump_tensor``: a tensor (every shard, with its topology) saved in the format of
:mod:`meshnn.tensor.files.format`, equal payloads (replicas) stored once.  Writes are atomic (a
temporary file beside the target, then a rename), and the file gets the permissions ``open``
would give it (the user's umask).  Under MPI the shards of a tensor spread over ranks are
gathered to rank 0, which writes them all in one file.

Layer: tensor.  Imports errors, distributed (the ranks) and the tensor modules memory_config,
topology, tensor, readback and files.format.
"""

from __future__ import annotations

import contextlib
import enum
import json
import os
import pathlib
import tempfile
import zlib
from typing import Any

import numpy as np

from meshnn.distributed.context import get_context
from meshnn.errors import MeshnnError, MeshnnTypeError, TensorFileError, TensorFileWriteError
from meshnn.tensor.files.format import ALIGN, MAGIC, MAX_RANK, PREAMBLE, VERSION, check_file_name, payload_digest
from meshnn.tensor.identity import operation_on
from meshnn.tensor.memory_config import MemoryConfig
from meshnn.tensor.readback import from_device
from meshnn.tensor.tensor import Tensor
from meshnn.tensor.topology import PlacementShard


def _memory_config_json(config: MemoryConfig) -> dict[str, Any]:
    """The config's fields; one made with an N-D shard spec also names it (``nd_shard_spec``), so
    that it is made again the same way."""
    spec = config.shard_spec
    shard = None
    if spec is not None:
        shard = {"grid": _grid_json(spec.grid), "shape": list(spec.shape), "orientation": spec.orientation.name}
    made = {"memory_layout": config.memory_layout.name, "buffer_type": config.buffer_type.name, "shard_spec": shard}
    nd = config.given_nd_shard_spec
    if nd is not None and config.created_with_nd_shard_spec:
        made["nd_shard_spec"] = {
            "shard_shape": list(nd.shard_shape),
            "grid": _grid_json(nd.grid),
            "orientation": nd.orientation.name,
            "distribution": nd.shard_distribution_strategy.name,
        }
    return made


def _grid_json(grid: Any) -> list[list[int]]:
    return [[r.start.x, r.start.y, r.end.x, r.end.y] for r in grid.ranges()]


def _header(tensor: Tensor, payloads: list[tuple[int, str]], coords: list[tuple[list[int], int]]) -> dict[str, Any]:
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
        "payloads": [{"nbytes": n, "rowcol": c} for n, c in payloads],
        "shards": [{"coord": c, "payload": p} for c, p in coords],
    }


class DumpTensorMode(enum.Enum):
    """``ttnn.DumpTensorMode``: how :func:`dump_tensor` writes a tensor whose shards are spread over
    MPI ranks.  DISTRIBUTED_GATHER (the default): every rank calls it, the shards are gathered to rank
    0, which writes one file holding them all.  LOCAL: no collective; each rank writes the shards it
    holds (each rank names its own file)."""

    DISTRIBUTED_GATHER = 0
    LOCAL = 1


def dump_tensor(
    file_name: str | os.PathLike,
    tensor: Tensor,
    *,
    mode: DumpTensorMode = DumpTensorMode.DISTRIBUTED_GATHER,
    extra: dict[str, Any] | None = None,
) -> None:
    """Save ``tensor`` (every shard, with its topology) to ``file_name``, atomically.  Under MPI, a
    tensor of which this rank holds only some shards is saved as ``mode`` says (see
    :class:`DumpTensorMode`)."""
    check_file_name("dump_tensor", file_name)
    if not isinstance(mode, DumpTensorMode):
        raise MeshnnTypeError(f"dump_tensor: mode must be a ttnn.DumpTensorMode, got {mode!r}")
    save_tensor(file_name, tensor, extra=extra, local=mode is DumpTensorMode.LOCAL)


def save_tensor(
    file_name: str | os.PathLike, tensor: Tensor, *, extra: dict[str, Any] | None = None, local: bool = False
) -> None:
    """:func:`dump_tensor` without ttnn's ``.tensorbin`` rule on the name (a ttnn report's
    ``tensors/<id>.bin`` files are written so); ``local``: this rank's shards only, no collective."""
    if not isinstance(tensor, Tensor):
        raise MeshnnTypeError(f"dump_tensor: tensor must be a ttnn.Tensor, got {type(tensor).__name__}")
    tensor.check_usable("dump_tensor: tensor")
    target = pathlib.Path(file_name)
    if len(tensor.shape) > MAX_RANK:
        raise TensorFileError(
            str(file_name),
            f"cannot hold a rank-{len(tensor.shape)} tensor: a tensor file holds at most {MAX_RANK} dims",
        )
    if not target.parent.is_dir():
        raise TensorFileError(str(file_name), f"cannot be written: the directory {str(target.parent)!r} does not exist")
    host = from_device(tensor)
    buffer = host.host_buffer()
    coords = buffer.shard_coords()
    shards = {c: b.data for c, b in buffer.local_shards().items()}
    context = get_context()
    if local or context.world_size == 1 or not buffer.spans_processes():
        _write(target, host, coords, shards, extra, local=local)
        return
    what = operation_on("ttnn.dump_tensor", tensor)  # (the file is rank 0's to name)
    gathered = context.gather_object(shards, op=what, data=True)  # every rank's shards on rank 0
    failure = None
    if context.rank == 0:
        everything = {c: a for part in gathered for c, a in part.items()}
        try:
            _write(target, host, coords, everything, extra)
        except MeshnnError as error:
            failure = str(error)
    failure = context.allgather_object(failure, op=f"{what} (written)", data=True)[0]
    if failure is not None:
        raise TensorFileError(str(file_name), f"rank 0 could not write it: {failure}")


def _write(
    target: pathlib.Path,
    host: Tensor,
    coords: list,
    shards: dict,
    extra: dict[str, Any] | None,
    *,
    local: bool = False,
) -> None:
    """The file of ``host``'s topology and spec holding ``shards`` (coordinate -> bytes); ``local``:
    a rank's own shards (DumpTensorMode.LOCAL), marked ``"local": true`` when some are missing."""
    payloads: list[np.ndarray] = []
    checksums: list[str] = []
    by_checksum: dict[str, list[int]] = {}  # equal payloads (replicas) are stored once
    table: list[tuple[list[int], int]] = []
    for coord in coords:
        if coord not in shards:
            continue
        data = shards[coord]
        checksum = payload_digest(data)
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
    if local and len(table) < len(coords):
        header["local"] = True
    if extra:
        header["extra"] = extra
    encoded = json.dumps(header, separators=(",", ":")).encode()
    encoded += b" " * (-(PREAMBLE.size + len(encoded)) % ALIGN)  # the payloads start aligned
    try:
        fd, temporary = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent or ".")
    except OSError as error:
        raise TensorFileWriteError(str(target), error) from error
    try:
        os.fchmod(fd, 0o666 & ~_umask())  # as open() would make it, not mkstemp's 0600
        with os.fdopen(fd, "wb") as out:
            out.write(PREAMBLE.pack(MAGIC, VERSION, len(encoded), zlib.crc32(encoded)))
            out.write(encoded)
            for payload in payloads:
                out.write(memoryview(np.ascontiguousarray(payload)))
        os.replace(temporary, target)
    except BaseException as error:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        if isinstance(error, OSError):  # named by the file asked for, not the temporary one
            raise TensorFileWriteError(str(target), error) from error
        raise


def _umask() -> int:
    """The process's umask, read without changing it where /proc says it (Linux)."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except OSError:
        pass
    current = os.umask(0o022)  # elsewhere: read by setting it, and set it back at once
    os.umask(current)
    return current
