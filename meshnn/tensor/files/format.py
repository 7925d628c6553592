"""The tensor file format, meshnn's own, little-endian:

    offset 0   8 bytes   magic  b"MESHNNT\\0"
    offset 8   u32       format version (2)
    offset 12  u32       header length H, bytes
    offset 16  u32       CRC-32 of the header bytes
    offset 20  H bytes   header: UTF-8 JSON (spec, topology, host buffer shape, shard table)
    then                 the shard payloads, back to back, in shard-table order

The header's shard table gives each stored payload's byte count and checksum, and maps every
populated coordinate to a payload (replicas share one).  The checksum ("rowcol", version 2): the
payload's bytes as little-endian 64-bit words in rows of ``ROW_WORDS`` (the last row zero-padded);
the sum modulo 2^64 of every row and of every column, and the byte count, hashed with BLAKE2b
(16 bytes, hex).  A change that leaves it equal must leave every row sum and every column sum
as it was, so it changes at least two words in each row and column it touches: every corruption
of at most three words (two compensating bit flips, +2^k in one word and -2^k in another,
included) is caught, and larger ones all but surely.  Version 1's "sum64" (one sum of every word)
missed those flips: its files are refused, naming the version (an ``as_tensor`` cache of that
version is rebuilt).  The sums are memory-bound numpy reductions, shared out over the host
threads in blocks of ``BLOCK_ROWS`` rows, each block's column sums taken while it is in the cache
(about twice the cost of one plain sum; a CRC-32 costs five).  The header is padded with spaces
so that the payloads start at a multiple of ``ALIGN`` bytes.  Payloads are the packed bytes
exactly as a device holds them.  Nothing in a file is executed: the header is JSON, read into a
fixed schema.

This module holds the format's constants, the payload checksum and the file-name check the writer
and the reader share.

Layer: tensor.  Imports errors and host (the worker threads).
"""

from __future__ import annotations

import hashlib
import os
import struct
from collections.abc import Callable

import numpy as np

from meshnn.errors import MeshnnTypeError, TensorFileError
from meshnn.host.threads import host_threads, run_parallel

MAGIC = b"MESHNNT\0"
VERSION = 2
PREAMBLE = struct.Struct("<8sIII")
MAX_HEADER = 16 << 20  # bytes: a header larger than this is not a tensor file of ours
MAX_RANK = 64  # dims of a tensor in a file: numpy's own limit (a writer refuses more, naming it)
MAX_MESH_DEVICES = 4096  # devices of a host buffer's (or a distribution's) shape in a file
ALIGN = 64  # bytes: payloads start at a multiple of this in the file
ROW_WORDS = 4096  # 64-bit words per row of the checksum (32 KiB)
ROW_BYTES = ROW_WORDS * 8
BLOCK_ROWS = 64  # rows a thread takes at a time (2 MiB)
DIGEST_HEX = 32  # hex digits of a payload checksum


def payload_digest(data: np.ndarray, fill: Callable[[int, int], None] | None = None) -> str:
    """The payload checksum of ``data``'s bytes.  ``fill(start, stop)``, when given, is called for
    each block of bytes before the block is summed (a reader fills ``data`` from the file)."""
    flat = data.reshape(-1).view(np.uint8)
    size = flat.size
    rows = max(1, -(-size // ROW_BYTES))
    row_sums = np.zeros(rows, np.uint64)
    blocks = -(-rows // BLOCK_ROWS)
    threads = 1 if size < PARALLEL_BYTES else min(blocks, host_threads())
    col_sums = [np.zeros(ROW_WORDS, np.uint64) for _ in range(threads)]
    handed = iter(range(blocks))  # next() on a range iterator is atomic under the interpreter lock

    def work(thread: int) -> None:
        for block in handed:
            first = block * BLOCK_ROWS
            start, stop = first * ROW_BYTES, min(size, (first + BLOCK_ROWS) * ROW_BYTES)
            if fill is not None:
                fill(start, stop)
            _sum_block(flat[start:stop], row_sums[first : first + BLOCK_ROWS], col_sums[thread])

    run_parallel(work, threads)
    columns = np.sum(col_sums, axis=0, dtype=np.uint64)
    summed = size.to_bytes(8, "little") + row_sums.tobytes() + columns.tobytes()
    return hashlib.blake2b(summed, digest_size=DIGEST_HEX // 2).hexdigest()


PARALLEL_BYTES = 4 << 20  # a smaller payload is summed on the calling thread alone


def _sum_block(part: np.ndarray, row_sums: np.ndarray, col_sums: np.ndarray) -> None:
    """Row sums of ``part`` (whole rows, then a zero-padded last one) into ``row_sums``, its
    column sums added to ``col_sums``; all modulo 2^64."""
    whole = part.size // ROW_BYTES
    if whole:
        matrix = part[: whole * ROW_BYTES].view("<u8").reshape(whole, ROW_WORDS)
        np.sum(matrix, axis=1, dtype=np.uint64, out=row_sums[:whole])
        np.add(col_sums, matrix.sum(axis=0, dtype=np.uint64), out=col_sums)
    if whole * ROW_BYTES < part.size:
        last = np.zeros(ROW_BYTES, np.uint8)
        last[: part.size - whole * ROW_BYTES] = part[whole * ROW_BYTES :]
        words = last.view("<u8")
        row_sums[whole] = words.sum(dtype=np.uint64)
        np.add(col_sums, words, out=col_sums)


def check_file_name(op: str, file_name: object) -> None:
    """A str or path ending in ``.tensorbin``, as ttnn requires, checked before the file is touched."""
    if not isinstance(file_name, str | os.PathLike):
        raise MeshnnTypeError(f"{op}: file_name must be a str or a path, got {type(file_name).__name__}")
    name = os.fspath(file_name)
    if ("\0" if isinstance(name, str) else b"\0") in name:
        raise TensorFileError(repr(name), f"{op}: file_name contains a NUL byte")
    if not os.fspath(file_name).endswith(".tensorbin"):
        raise TensorFileError(os.fspath(file_name), f"{op}: the file name must have .tensorbin extension")
