"""``ttnn.dump_tensor``: a tensor (every shard, with its topology) saved in the format of
:mod:`meshnn.tensor.files.format`, equal payloads (replicas) stored once.  Writes are atomic (a
temporary file beside the target, then a rename).

Layer: tensor.  Imports errors and the tensor modules memory_config, topology, tensor, readback and
files.format.
"""

from __future__ import annotations

import contextlib
import json
import os
import pathlib
import tempfile
import zlib
from typing import Any

import numpy as np

from meshnn.errors import MeshnnTypeError, TensorFileError
from meshnn.tensor.files.format import MAGIC, PREAMBLE, VERSION, check_file_name, sum64
from meshnn.tensor.memory_config import MemoryConfig
from meshnn.tensor.readback import from_device
from meshnn.tensor.tensor import Tensor
from meshnn.tensor.topology import PlacementShard


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
    check_file_name("dump_tensor", file_name)
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
