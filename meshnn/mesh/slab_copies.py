"""A checked plan of transfers (``transfers.write_plan`` / ``read_plan``) carried out on a
MeshBuffer's slab.

Whole-row transfers whose host bytes lie back to back become one copy; a write's encoders make
their bytes in device memory (those that share a ``together`` in one call of it; an encoder given
for several places is made in the first and copied from there), every write landing in the
plan's order; a read's decoders are called likewise, on read-only views of device memory.  Large
copies are split over the host worker threads (``meshnn.host.threads.parallel_copyto``).

Part of the ``mesh`` layer; imports ``meshnn.host`` and ``meshnn.mesh`` (mesh_buffer, transfers).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from meshnn.host.shared_pages import RowSharing
from meshnn.host.threads import parallel_copyto
from meshnn.mesh.buffer_config import BufferRegion
from meshnn.mesh.mesh_buffer import MeshBuffer
from meshnn.mesh.slab import EQUAL_ROWS
from meshnn.mesh.transfers import (
    HostDecoder,
    HostEncoder,
    Plan,
    ShardDataTransfer,
    is_strided,
    region_as,
    run_host_code,
)


def same_in_every_row(plan: Plan, transfers: Sequence[ShardDataTransfer], slab: np.ndarray) -> bool:
    """Whether a write's ``plan`` puts one host array (``transfers``' only host data) in every
    local device's row, whole: the rows then hold the same bytes afterwards."""
    return (
        len(plan) == slab.shape[0] > 1
        and len({row for row, _, _ in plan}) == len(plan)
        and all(t.host_data is transfers[0].host_data for t in transfers)
        and all(region.offset == 0 and region.size == slab.shape[1] for _, region, _ in plan)
    )


def write_rows(mesh_buffer: MeshBuffer, slab: np.ndarray, items: Plan, same: bool) -> None:
    """Carry out a write's plan ``items`` on ``slab`` (the buffer's bytes, taken at the enqueue).
    ``same``: one host array to every local device, whole rows (they hold the same bytes after)."""
    mesh_buffer.touch()  # also when it runs: a memo made since the enqueue is stale now
    items = _share_equal_rows(slab, items)
    if not items:  # every row written by sharing
        if same:
            mesh_buffer.memo = EQUAL_ROWS
        return
    first = items[0][2] if items else None
    if same and isinstance(first, HostEncoder):  # made on the first device, copied to the others
        run_host_code(first.encode, slab[0])
        parallel_copyto(slab[1:], np.broadcast_to(slab[0], slab[1:].shape))
        mesh_buffer.memo = EQUAL_ROWS
        return
    if same and not is_strided(first):  # one copy, the host bytes broadcast over the rows
        parallel_copyto(slab, np.broadcast_to(first, slab.shape))
        mesh_buffer.memo = EQUAL_ROWS
        return
    batch = _EncoderBatch()
    for rows, region, data in _coalesced(items, slab.shape[1]):
        target = slab[rows, region.offset : region.offset + region.size]
        if isinstance(data, HostEncoder):
            batch.add(data, rows, region, target)
            continue
        batch.flush()  # the encoders before this copy land before it
        for row in range(slab.shape[0])[rows] if isinstance(rows, slice) else [rows]:
            batch.wrote(row, region)
        parallel_copyto(region_as(target, data) if is_strided(data) else target, data)
    batch.flush()
    if same:
        mesh_buffer.memo = EQUAL_ROWS


def _share_equal_rows(slab: np.ndarray, items: Plan) -> Plan:
    """Where a write gives whole rows, each row once, and several rows the same host data (one
    array or one encoder), write each such data once and let its rows share those pages
    copy-on-write (:class:`meshnn.host.shared_pages.RowSharing`); the items still to write the
    usual way are returned (all of them when nothing could be shared)."""
    size = slab.shape[1]
    if len(items) < 2 or any(region.offset or region.size != size for _, region, _ in items):
        return items
    if len({row for row, _, _ in items}) != len(items):
        return items
    groups: dict[object, list[tuple[int, BufferRegion, Any]]] = {}
    for item in items:
        groups.setdefault(_same_data_key(item[2]), []).append(item)
    shared = [group for group in groups.values() if len(group) > 1]
    sharing = RowSharing.start(slab, [[row for row, _, _ in group] for group in shared]) if shared else None
    if sharing is None:
        return items
    try:
        encoders = []
        for group, stage in zip(shared, sharing.staging, strict=True):
            data = group[0][2]
            if isinstance(data, HostEncoder):
                encoders.append((data, stage))
            else:
                parallel_copyto(region_as(stage, data) if is_strided(data) else stage, data)
        _call_grouped(encoders, lambda encoder: encoder.encode)
        del encoders, stage
        sharing.commit()
    finally:
        sharing.close()
    return [group[0] for group in groups.values() if len(group) == 1]


def _same_data_key(data: Any) -> object:
    """Equal for host data that is surely the same bytes: one encoder, or views of the same
    memory with the same dtype, shape and strides."""
    if isinstance(data, np.ndarray):
        return (data.__array_interface__["data"][0], data.dtype.str, data.shape, data.strides)
    return id(data)


def read_rows(slab: np.ndarray, plan: Plan) -> None:
    """Carry out a read's ``plan`` from ``slab``: copies into host arrays, decoders called on
    read-only views of device memory (a run of decoders that share a ``together`` as one call)."""
    waiting: list[tuple[HostDecoder, np.ndarray]] = []  # decoders of the current run
    for rows, region, out in _coalesced(plan, slab.shape[1]):
        source = slab[rows, region.offset : region.offset + region.size]
        if isinstance(out, HostDecoder):
            waiting.append((out, _read_only(source)))
            continue
        _decode_all(waiting)
        parallel_copyto(out, region_as(source, out) if is_strided(out) else source)
    _decode_all(waiting)


def owned_copies(plan: list[tuple[int, BufferRegion, Any]]) -> list[tuple[int, BufferRegion, np.ndarray]]:
    """``plan`` with its own copy of every host array, each encoder's bytes made (once) in host memory."""
    made: dict[object, np.ndarray] = {}  # one copy of the same host data given for several places
    owned = []
    for row, region, data in plan:
        key = _same_data_key(data)
        if key not in made:
            made[key] = data.materialize() if isinstance(data, HostEncoder) else data.copy()
        owned.append((row, region, made[key]))
    return owned


class _EncoderBatch:
    """The places of one write's encoders, in plan order, as they are made: an encoder's first
    place waits to be made (those that share a ``together`` by one call of it, the others one
    by one); a later place of the same encoder is a copy of its first, once that is made.  Every
    write lands in the plan's order: whatever waits is made before a plain copy (:meth:`flush`)
    or before a place that overlaps one waiting; an encoder whose first place a later write
    overlaps before its next place is made once more, in host memory, for that place."""

    def __init__(self) -> None:
        self._waiting: list[tuple[HostEncoder, int, BufferRegion, np.ndarray]] = []
        self._first: dict[int, tuple[int, BufferRegion, np.ndarray]] = {}  # by id of the encoder
        self._overwritten: set[int] = set()  # encoders whose first place a later write overlapped

    def add(self, encoder: HostEncoder, row: int, region: BufferRegion, target: np.ndarray) -> None:
        first = self._first.get(id(encoder))
        if first is not None:
            self.flush()
            source = first[2] if id(encoder) not in self._overwritten else encoder.materialize()
            self.wrote(row, region)
            parallel_copyto(target, source)
            return
        if any(r == row and _overlap(g, region) for _, r, g, _ in self._waiting):
            self.flush()
        self.wrote(row, region)
        self._first[id(encoder)] = (row, region, target)
        self._waiting.append((encoder, row, region, target))

    def wrote(self, row: int, region: BufferRegion) -> None:
        """A write to ``region`` of ``row`` is about to land: the first places it overlaps are spent."""
        for key, (r, g, _) in self._first.items():
            if r == row and _overlap(g, region):
                self._overwritten.add(key)

    def flush(self) -> None:
        waiting, self._waiting = self._waiting, []
        _call_grouped([(encoder, target) for encoder, _, _, target in waiting], lambda encoder: encoder.encode)


def _decode_all(waiting: list[tuple[HostDecoder, np.ndarray]]) -> None:
    """Call the ``waiting`` decoders (emptying it): those that share a ``together`` by one call."""
    pairs, waiting[:] = list(waiting), []
    _call_grouped(pairs, lambda decoder: decoder.decode)


def _call_grouped(pairs: list[tuple[Any, np.ndarray]], own: Callable[[Any], Callable[[np.ndarray], None]]) -> None:
    """Call each ``(codec, array)`` of ``pairs`` (HostEncoders or HostDecoders): one without a
    ``together`` by its own function (``own(codec)``), those that share a ``together`` by one
    call of it, given all their pairs (a lone one by its own function)."""
    groups: dict[Callable, list[tuple[Any, np.ndarray]]] = {}
    for codec, array in pairs:
        if codec.together is None:
            run_host_code(own(codec), array)
        else:
            groups.setdefault(codec.together, []).append((codec, array))
    for together, grouped in groups.items():
        if len(grouped) == 1:
            run_host_code(own(grouped[0][0]), grouped[0][1])
        else:
            run_host_code(together, grouped)


def _overlap(a: BufferRegion, b: BufferRegion) -> bool:
    return a.offset < b.offset + b.size and b.offset < a.offset + a.size


def _read_only(source: np.ndarray) -> np.ndarray:
    view = source.view()
    view.flags.writeable = False
    return view


def _root(array: np.ndarray) -> np.ndarray:
    while isinstance(array.base, np.ndarray):
        array = array.base
    return array


def _coalesced(plan: list[tuple[int, BufferRegion, np.ndarray]], row_size: int):
    """Yield ``(rows, region, data)`` copies: whole-row transfers to consecutive slab rows whose
    host bytes lie back to back in one array become ONE copy (one large memcpy runs markedly
    faster than eight per-device ones), everything else stays a copy per transfer."""
    i = 0
    while i < len(plan):
        row, region, data = plan[i]
        j = i + 1
        whole = region.offset == 0 and region.size == row_size and isinstance(data, np.ndarray)
        if whole and not is_strided(data) and data.size == row_size:
            root, start = _root(data), data.__array_interface__["data"][0]
            while j < len(plan):
                nrow, nregion, ndata = plan[j]
                if (
                    nrow != row + (j - i)
                    or nregion != region
                    or not isinstance(ndata, np.ndarray)
                    or is_strided(ndata)
                    or _root(ndata) is not root
                    or ndata.__array_interface__["data"][0] != start + (j - i) * row_size
                ):
                    break
                j += 1
            if j - i > 1 and root.flags.c_contiguous:
                flat = root.reshape(-1).view(np.uint8)
                offset = start - flat.__array_interface__["data"][0]
                block = flat[offset : offset + (j - i) * row_size].reshape(j - i, row_size)
                yield slice(row, row + j - i), region, block
                i = j
                continue
        yield row, region, data
        i += 1
