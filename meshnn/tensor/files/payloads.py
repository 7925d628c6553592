"""A tensor file's payloads, read and checked against their checksums (:mod:`.format`).

``read_payloads`` reads each payload into memory of its own, a block (2 MiB) at a time, each block
summed while it is still in the cache, the blocks shared out over the host threads: the result
does not depend on the file afterwards (a file truncated later cannot fault a read of the
tensor).  ``payload_encoder`` does the same into a device's memory, as a write's
:class:`~meshnn.mesh.HostEncoder` (a load onto a mesh makes no host copy).  Either raises a
TensorFileError naming the payload whose checksum does not match, or a file that shrank meanwhile.

Layer: tensor.  Imports errors, mesh (HostEncoder) and files.format.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, BinaryIO

import numpy as np

from meshnn.mesh.transfers import HostEncoder
from meshnn.tensor.files.format import payload_digest

Table = list[tuple[int, int, str]]  # (file offset, bytes, checksum) per payload


def _check(reader: Any, index: int, table: Table, digest: str) -> None:
    offset, nbytes, expected = table[index]
    if digest != expected:
        reader.fail(
            f"payload checksum mismatch in payload {index} (bytes {offset} to {offset + nbytes} of the file): "
            "the file is corrupted"
        )


def read_payloads(reader: Any, f: BinaryIO, table: Table) -> list[np.ndarray]:
    """Each payload's bytes in a new array, checked."""
    fd = f.fileno()
    arrays = []
    for index, (offset, nbytes, _) in enumerate(table):
        array = np.empty(nbytes, np.uint8)
        _check(reader, index, table, payload_digest(array, _filler(reader, fd, memoryview(array), offset)))
        arrays.append(array)
    return arrays


def _filler(reader: Any, fd: int, target: memoryview, base: int) -> Callable[[int, int], None]:
    """``fill(start, stop)``: bytes ``start:stop`` of ``target`` read from the file at ``base``."""

    def fill(start: int, stop: int) -> None:
        done = start
        while done < stop:
            got = os.preadv(fd, [target[done:stop]], base + done)
            if got == 0:
                reader.fail(f"truncated while it was read (at byte {base + done})")
            done += got

    return fill


def payload_encoder(reader: Any, f: BinaryIO, table: Table, index: int) -> HostEncoder:
    """A write's host data for payload ``index``: read from the file straight into the device
    memory the queue hands it, each block checked there while it is in the cache."""
    offset, nbytes, _ = table[index]
    fd = f.fileno()

    def encode(out: np.ndarray) -> None:
        _check(reader, index, table, payload_digest(out, _filler(reader, fd, memoryview(out), offset)))

    return HostEncoder(nbytes, encode)
