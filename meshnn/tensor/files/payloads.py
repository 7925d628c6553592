"""A tensor file's payloads, read and checked against their checksums (:mod:`.format`).

``read_payloads`` reads each payload into memory of its own, a block (2 MiB) at a time, each block
summed while it is still in the cache, the blocks shared out over the host threads: the result
does not depend on the file afterwards (a file truncated later cannot fault a read of the
tensor).  ``mapped_payloads`` maps the file instead and checks the mapped bytes (for a load that
copies them into device memory at once and drops the map).  Either raises a TensorFileError
naming the payload whose checksum does not match, or a file that shrank meanwhile.

Layer: tensor.  Imports errors and files.format.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, BinaryIO

import numpy as np

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


def mapped_payloads(reader: Any, f: BinaryIO, table: Table) -> list[np.ndarray]:
    """Each payload's bytes as a view of a map of the file, checked."""
    if reader.size == 0 or not table:
        return [np.zeros(0, np.uint8) for _ in table]
    try:
        mapped = np.memmap(f, dtype=np.uint8, mode="r")
    except (OSError, ValueError) as error:
        reader.fail(f"cannot be mapped: {error}")
    views = [np.asarray(mapped[offset : offset + nbytes]) for offset, nbytes, _ in table]
    for index, view in enumerate(views):
        _check(reader, index, table, payload_digest(view))
    return views
