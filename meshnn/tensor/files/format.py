"""The tensor file format, meshnn's own, little-endian:

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

This module holds the format's constants, the payload checksum and the file-name check the writer
and the reader share.

Layer: tensor.  Imports errors only.
"""

from __future__ import annotations

import os
import struct

import numpy as np

from meshnn.errors import MeshnnTypeError, TensorFileError

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


def check_file_name(op: str, file_name: object) -> None:
    """A str or path ending in ``.tensorbin``, as ttnn requires, checked before the file is touched."""
    if not isinstance(file_name, str | os.PathLike):
        raise MeshnnTypeError(f"{op}: file_name must be a str or a path, got {type(file_name).__name__}")
    if not os.fspath(file_name).endswith(".tensorbin"):
        raise TensorFileError(os.fspath(file_name), f"{op}: the file name must have .tensorbin extension")
