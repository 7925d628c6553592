"""How an operation runs on a mesh: validate, allocate outputs as MeshBuffers, run a MeshWorkload.

Every op follows the same steps:

1. validate every input first (tensors on one open mesh, allocated, shapes and dtypes the op
   takes) and compute the output specs; nothing is allocated before all checks pass;
2. allocate each output as a Replicated MeshBuffer through the mesh allocator (lock-step, shown
   in memory views); if one allocation fails, the ones made before it are freed;
3. enqueue ONE MeshWorkload on command queue 0: a uniform program over the populated devices,
   so its kernel sees the slab rows of all of them at once and computes with one numpy call.

Kernels decode inputs to float32 (integers stay integers), compute, and encode the results into
the output dtype with the host conversion rules, so results round exactly as ``ttnn.from_torch``
would round them.  Element-wise kernels work in *storage order* (tiles and faces as stored,
padding included) and never untilize; others decode to the logical shape.

Memos (:mod:`meshnn.ops.memo`): while a kernel runs over whole slabs, :func:`logical_values`
of an input takes the values its buffer's memo holds instead of decoding the bytes (and leaves
a memo when it did decode), and :func:`write_values` leaves the rounded output values as the
output buffer's memo.  The bytes are written as before: a memo only saves decoding them.
"""

from __future__ import annotations

import math
import sys
import threading
from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np

from meshnn.errors import MeshnnError, MeshnnTypeError, MeshnnValueError, WrongMeshError
from meshnn.mesh.coord import MeshCoordinate, MeshCoordinateRange, MeshCoordinateRangeSet
from meshnn.mesh.mesh_buffer import EQUAL_ROWS, MeshBuffer
from meshnn.mesh.mesh_device import MeshDevice
from meshnn.mesh.workload import MeshWorkload, Program, ProgramContext
from meshnn.ops.memo import VALUES_MEMO, Known
from meshnn.tensor.bfloat import (
    BlockFloatFormat,
    bfloat16_bits_to_float32,
    float32_to_bfloat16_bits,
    pack_bfp,
    round_to_bfloat16,
    unpack_bfp,
)
from meshnn.tensor.dtypes import DataType
from meshnn.tensor.encoding import decode, encode
from meshnn.tensor.layout import Layout, padded_matrices, tile_view, tilize
from meshnn.tensor.lifetime import allocate_mesh_buffer, device_tensor
from meshnn.tensor.memory_config import DRAM_MEMORY_CONFIG, MemoryConfig
from meshnn.tensor.spec import TensorSpec
from meshnn.tensor.storage import DeviceStorage
from meshnn.tensor.tensor import Tensor
from meshnn.tensor.topology import PlacementReplicate, TensorTopology


def device_input(op: str, name: str, tensor: object) -> Tensor:
    """``tensor`` checked to be a usable device tensor."""
    if not isinstance(tensor, Tensor):
        raise MeshnnTypeError(f"ttnn.{op}: {name} must be a ttnn.Tensor, got {type(tensor).__name__}")
    storage = tensor.storage
    if isinstance(storage, DeviceStorage) and storage.mesh_buffer.is_allocated():
        return tensor
    tensor.check_usable(f"ttnn.{op}: {name}")  # raises for a deallocated tensor or a closed mesh
    raise MeshnnValueError(
        f"ttnn.{op}: {name} (shape {list(tensor.shape)}) is on the host; move it with ttnn.to_device first"
    )


def same_mesh(op: str, named: dict[str, Tensor]) -> MeshDevice:
    """The one mesh every named input lives on, with the same populated coordinates."""
    first_name, first = next(iter(named.items()))
    storage = first.storage
    mesh = storage.mesh_buffer.device()  # type: ignore[union-attr]
    for name, tensor in named.items():
        other = tensor.storage
        if other is storage:
            continue
        if other.mesh_buffer.mesh_id != mesh.mesh_id:  # type: ignore[union-attr]
            raise WrongMeshError(f"ttnn.{op}: {name} is on another mesh device than {first_name}")
        mine, theirs = other.coords, storage.coords  # type: ignore[union-attr]
        if mine is not theirs and mine != theirs and set(mine) != set(theirs):
            only = sorted(set(mine) - set(theirs))[:4] or sorted(set(theirs) - set(mine))[:4]
            raise MeshnnValueError(
                f"ttnn.{op}: {name} populates {len(mine)} devices and {first_name} {len(theirs)} (they differ at "
                f"{[str(c) for c in only]}); both must populate the same devices"
            )
    return mesh


# ----------------------------------------------------------------------------- decode / encode


def _rank_for_tiles(shape: tuple[int, ...]) -> tuple[int, ...]:
    """The per-device shape with a leading device axis, as tiles see it (rank-1 is [1, N])."""
    if len(shape) >= 2:
        return shape
    return (1, *shape) if shape else (1, 1)


_PLAIN = (DataType.FLOAT32, DataType.INT32, DataType.UINT32, DataType.UINT16, DataType.UINT8, DataType.INT8)


class _Bound(NamedTuple):
    """The buffer whose slab rows a running kernel was given as ``rows``.  ``first``: ``rows`` is
    the first device's row only; ``keep``: a decoded input may leave its values as a memo;
    ``defer``: an output that may leave its bytes to a deferred write."""

    rows: np.ndarray
    buffer: MeshBuffer
    first: bool
    keep: bool
    defer: bool = False


_BOUND: dict[int, _Bound] = {}
"""id(rows) -> the buffer behind them, while a kernel given those rows runs (see :func:`launch`)."""


def _bound(rows: np.ndarray) -> _Bound | None:
    bound = _BOUND.get(id(rows))
    return bound if bound is not None and bound.rows is rows else None


def known_values(rows: np.ndarray, spec: TensorSpec) -> np.ndarray | None:
    """The ``(k, *spec.shape)`` float32 values of ``rows`` that its buffer's memo holds, or None."""
    bound = _bound(rows) if _BOUND else None
    if bound is None:
        return None
    known = VALUES_MEMO.get(bound.buffer, spec)
    if known is None:
        return None
    values, k = known.values, rows.shape[0]
    if values.shape[0] == k:
        return values
    if known.equal_rows:
        return np.broadcast_to(values, (k, *values.shape[1:]))
    return values[:1] if bound.first else None


def logical_values(rows: np.ndarray, spec: TensorSpec, *, as_float: bool = True) -> np.ndarray:
    """``(k, *spec.shape)`` values of ``k`` devices' bytes ``rows`` (float32, or the integer type).

    Row-major float32 and integer shards are returned as a read-only view of ``rows`` (no copy);
    values from a memo are read-only too.

    A spec with an explicit padded shape holds the padded array; its logical window is the origin
    corner."""
    if _BOUND:
        bound = _bound(rows)
        if bound is not None and not spec.dtype.is_float:
            settled(rows)
            bound = None
        if bound is not None:
            known = known_values(rows, spec)
            if known is not None:
                return known
            if bound.buffer.has_deferred_write():
                bound.buffer.settle()  # (a view of the bytes under another spec)
            values = _decoded(rows, spec, as_float=True)
            if bound.keep and not bound.first and not np.may_share_memory(values, rows):
                VALUES_MEMO.put(bound.buffer, spec, values)
            return values
    return _decoded(rows, spec, as_float=as_float)


def _decoded(rows: np.ndarray, spec: TensorSpec, *, as_float: bool) -> np.ndarray:
    k = rows.shape[0]
    size = spec.compute_packed_buffer_size_bytes()
    stored = tuple(spec.encoded_shape)
    if spec.layout is Layout.ROW_MAJOR and spec.explicit_padded_shape is None and spec.dtype in _PLAIN:
        view = rows[:, :size].view(spec.dtype.storage_dtype).reshape((k, *stored))
        view.flags.writeable = False  # the device's own bytes: a kernel only reads its inputs
        return view
    flat = np.ascontiguousarray(rows[:, :size]).reshape(-1)
    stacked = (k, *_rank_for_tiles(stored)) if spec.layout is Layout.TILE else (k, *stored)
    values = decode(flat, spec.dtype, spec.layout, stacked, tile=spec.tile).reshape((k, *stored))
    if spec.explicit_padded_shape is not None:
        values = values[(slice(None), *(slice(0, d) for d in spec.shape))]
    if as_float and spec.dtype.is_float:
        return values.astype(np.float32, copy=False)
    return values


def same_values_on_every_device(values: np.ndarray) -> bool:
    """Whether the stacked ``(k, ...)`` float32 ``values`` of a kernel's input are bit for bit the
    same on every device: at once when they come from a memo of one device's values (broadcast),
    else compared.  A criterion of the values alone, so a kernel that chooses its path by it
    gives the same bytes with memos on and off."""
    if values.shape[0] < 2 or values.strides[0] == 0:
        return True
    bits = values.view(np.uint32) if values.dtype == np.float32 else values
    return _same_on_every_device(bits.reshape(bits.shape[0], -1))  # a row a device (a copy only if strided)


def relaid_memo(rows: np.ndarray, spec: TensorSpec, values: np.ndarray) -> bool:
    """Give the buffer behind a running kernel's input ``rows`` the memo ``values``: the values
    its memo holds already, in other strides (a layout its consumer reads faster, e.g. a weight's
    column shards side by side for one product).  False when the buffer keeps no such memo."""
    bound = _bound(rows) if _BOUND else None
    if bound is None or not bound.keep or bound.first:
        return False
    known = VALUES_MEMO.get(bound.buffer, spec)
    if known is None or known.values.shape != values.shape:
        return False
    return VALUES_MEMO.put(bound.buffer, spec, values)


def write_values(
    out: np.ndarray, values: np.ndarray, spec: TensorSpec, *, exact: bool = False, owned: bool = False
) -> None:
    """Write ``(k, *spec.shape)`` values into the output rows ``out`` in ``spec``'s format, and,
    when ``out`` is a running kernel's whole output slab, leave the rounded values (what the bytes
    decode to) as its buffer's memo.  ``exact``: the values are already of ``spec.dtype``'s value
    set (moved, not computed: decoded from a tensor of that dtype), so rounding would not change
    them and is skipped.  ``owned``: ``values`` is a view (e.g. transposed) of an array the kernel
    made for this output alone; it is rounded and kept as it is, not copied into C order first."""
    size = spec.compute_packed_buffer_size_bytes()
    bound = _bound(out) if _BOUND else None
    dtype = spec.dtype
    if (
        bound is None
        or dtype not in (DataType.BFLOAT16, DataType.FLOAT32)
        or spec.explicit_padded_shape is not None
        or (dtype is DataType.FLOAT32 and spec.layout is Layout.ROW_MAJOR)  # its bytes are its values
        or values.size * 4 < MEMO_MIN_BYTES
    ):
        out[:, :size] = encode_values(values, spec)
        return
    k = values.shape[0]
    base = values.base if owned else None
    if (
        base is not None
        and base.dtype == np.float32
        and base.flags.c_contiguous
        and base.flags.writeable
        and base.size == values.size
    ):
        if dtype is DataType.BFLOAT16 and not exact:
            round_to_bfloat16(base, in_place=True)  # the same elements, in the base's order
        rounded = values.reshape((k, *tuple(spec.shape)))  # (a view still: only leading axes are split)
    else:
        values = np.ascontiguousarray(values, dtype=np.float32).reshape((k, *tuple(spec.shape)))
        own = values.base is None and values.flags.writeable  # the kernel's own result: kept (rounded in place)
        if dtype is DataType.BFLOAT16 and not exact:
            rounded = round_to_bfloat16(values, in_place=own)
        else:  # (a view may be of another buffer's bytes or memo: copied, so this memo stays its own)
            rounded = values if own else values.copy()
    bits = rounded
    if dtype is DataType.BFLOAT16:
        bits = rounded.view(np.uint16).reshape((*rounded.shape, 2))[..., _HIGH_HALF]  # the bfloat16 bits
    kept = VALUES_MEMO.put(bound.buffer, spec, rounded)  # (first: one row, which launch copies to every device)
    if kept and bound.defer:
        bound.buffer.defer(lambda slab: _write_elements(slab[:, :size], bits, spec))
        return
    _write_elements(out[:, :size], bits, spec)


def _write_elements(out: np.ndarray, bits: np.ndarray, spec: TensorSpec) -> None:
    """Write ``(k or 1, *spec.shape)`` elements ``bits`` (the storage dtype's bits, any strides) into
    ``(k, packed size)`` rows ``out``, tilized when ``spec`` is TILE (one row goes to every row)."""
    dtype = spec.dtype
    k = out.shape[0]
    elements = out.view(dtype.storage_dtype)
    if spec.layout is Layout.ROW_MAJOR:
        target = elements.reshape((k, *bits.shape[1:]))
        np.copyto(target, bits.view(dtype.storage_dtype))
        return
    stacked = bits.reshape((bits.shape[0], *_rank_for_tiles(tuple(spec.shape)))).view(dtype.storage_dtype)
    grid = tile_view(padded_matrices(stacked, spec.tile, 0), spec.tile)
    target = elements.reshape((k, -1))
    if bits.shape[0] == k:
        np.copyto(target.reshape(grid.shape), grid)
        return
    np.copyto(target[:1].reshape(grid.shape), grid)  # one device's tiles, then copied to the others
    target[1:] = target[0]


_HIGH_HALF = 1 if sys.byteorder == "little" else 0  # which uint16 of a float32 holds its bfloat16 bits

MEMO_MIN_BYTES = 64 << 10
"""Outputs of fewer float32 bytes leave no memo (see :data:`meshnn.ops.memo.MIN_BYTES`)."""

MEMO_MIN_DEVICE_BYTES = 16 << 10
"""An op whose largest buffer holds fewer bytes per device runs without memos: for a tiny op the
bookkeeping costs more than the decoding it saves."""


def encode_values(values: np.ndarray, spec: TensorSpec) -> np.ndarray:
    """``(k, packed size)`` bytes of ``(k, *spec.shape)`` values in ``spec``'s format."""
    k = values.shape[0]
    shape = tuple(spec.shape)
    if spec.layout is Layout.TILE:
        values = values.reshape((k, *_rank_for_tiles(shape)))
    if spec.dtype.is_float and values.dtype != np.float32 and values.dtype.kind == "f":
        values = values.astype(np.float32)
    raw = encode(np.ascontiguousarray(values), spec.dtype, spec.layout, tile=spec.tile)
    return raw.reshape(k, -1)


def stored_elements(rows: np.ndarray, spec: TensorSpec) -> np.ndarray:
    """``(k, stored elements)`` of ``k`` devices in storage order (tiles and padding as stored):
    float32 for float dtypes, the integer type otherwise."""
    dtype = spec.dtype
    if rows.flags.c_contiguous:  # the common case: whole slab rows, viewed without copying
        if dtype is DataType.FLOAT32:
            return rows.view(np.float32)
        if dtype is DataType.BFLOAT16:
            return bfloat16_bits_to_float32(rows.view(np.uint16))
        if dtype.is_integer:
            return rows.view(dtype.storage_dtype)
    k = rows.shape[0]
    size = spec.compute_packed_buffer_size_bytes()
    flat = np.ascontiguousarray(rows[:, :size]).reshape(-1)
    if spec.dtype.is_block_float:
        tile_values = spec.tile.values_per_tile
        values = unpack_bfp(
            flat.reshape(-1, spec.tile.get_tile_size(spec.dtype)), BlockFloatFormat.of(spec.dtype), tile_values
        )
        return values.reshape(k, -1)
    count = flat.size // spec.dtype.row_major_element_size
    values = decode(flat, spec.dtype, Layout.ROW_MAJOR, (count,))
    if spec.dtype.is_float:
        values = values.astype(np.float32, copy=False)
    return values.reshape(k, -1)


def logical_mask(spec: TensorSpec) -> np.ndarray | None:
    """Per stored element of one shard, True where it holds logical data (False: tile padding);
    None when nothing is padding."""

    def compute() -> np.ndarray | None:
        if spec.layout is not Layout.TILE or tuple(spec.padded_shape) == tuple(spec.encoded_shape):
            return None
        ones = np.ones(_rank_for_tiles(tuple(spec.encoded_shape)), np.uint8)
        return tilize(ones, spec.tile, pad_value=0).reshape(-1).astype(bool)

    return spec._once("logical_mask", compute)


def store_elements(elements: np.ndarray, spec: TensorSpec, out_rows: np.ndarray) -> None:
    """Write ``(k, stored elements)`` into the output slab rows ``out_rows`` in ``spec``'s format.

    Block floats share one exponent per 16-value face row, so the tile padding of a result (which
    an element-wise op computed too, e.g. log(0) = -inf) is reset to 0 before packing: it must not
    flush the data beside it."""
    dtype = spec.dtype
    if dtype.is_block_float:
        mask = logical_mask(spec)
        if mask is not None:
            elements = np.where(mask, elements, np.float32(0))
    if out_rows.flags.c_contiguous and elements.shape == (
        out_rows.shape[0],
        out_rows.shape[1] // dtype.row_major_element_size,
    ):
        if dtype is DataType.FLOAT32:
            np.copyto(out_rows.view(np.float32), elements, casting="unsafe")
            return
        if dtype is DataType.BFLOAT16 and elements.dtype == np.float32:
            float32_to_bfloat16_bits(elements, out=out_rows.view(np.uint16))
            return
    out_rows[...] = encode_elements(elements, spec)


def encode_elements(elements: np.ndarray, spec: TensorSpec) -> np.ndarray:
    """``(k, packed size)`` bytes of ``(k, stored elements)`` in storage order."""
    k = elements.shape[0]
    if spec.dtype.is_block_float:
        tiles = elements.astype(np.float32, copy=False).reshape(-1, spec.tile.values_per_tile)
        return pack_bfp(tiles, BlockFloatFormat.of(spec.dtype)).reshape(k, -1)
    flat = elements.reshape(-1)
    if spec.dtype.is_float and flat.dtype != np.float32:
        flat = flat.astype(np.float32)
    return encode(np.ascontiguousarray(flat), spec.dtype, Layout.ROW_MAJOR).reshape(k, -1)


# ---------------------------------------------------------------------------------- launch


class Output(NamedTuple):
    """An output the op will write: its spec, and (by default) the first input's coordinates and
    topology.  (Immutable; a named tuple because every op call makes one.)"""

    spec: TensorSpec
    coords: tuple[MeshCoordinate, ...] | None = None
    topology: TensorTopology | None = None


Kernel = Callable[[Sequence[np.ndarray], Sequence[np.ndarray], tuple[MeshCoordinate, ...]], None]
"""``kernel(input rows, output rows, coords)``: each a ``(k, device_local_size)`` uint8 view of the
slab rows of the ``k`` devices at ``coords``, in the order of the op's inputs and outputs."""


def allocate_outputs(mesh: MeshDevice, specs: Sequence[TensorSpec]) -> list[MeshBuffer]:
    """One MeshBuffer per spec, or none at all (a failure frees the ones already made)."""
    made: list[MeshBuffer] = []
    try:
        for spec in specs:
            made.append(allocate_mesh_buffer(spec, mesh))
    except MeshnnError:
        for buffer in made:
            buffer.deallocate()
        raise
    return made


def launch(
    op: str,
    mesh: MeshDevice,
    inputs: Sequence[Tensor],
    outputs: Sequence[Output],
    kernel: Kernel,
    *,
    coords: Sequence[MeshCoordinate] | None = None,
    queue_id: int = 0,
    into: Sequence[Tensor] | None = None,
    rowwise: bool = False,
    reads_memos: bool = False,
) -> list[Tensor]:
    """Allocate ``outputs`` (or write ``into`` preallocated output tensors, checked by
    :func:`output_into`) and run ``kernel(input rows, output rows, coords)`` over the populated
    devices as one MeshWorkload on command queue ``queue_id``; returns the output tensors.

    ``rowwise``: the kernel computes each device's outputs from that device's inputs alone, the
    same way on every device (true of every op but the collectives).  Then, when every input is
    replicated and its bytes are the same on every device (checked, not assumed), the kernel runs
    on one device's rows and its outputs are copied to the others: the bytes every device would
    have computed, for one device's work.

    ``reads_memos``: the kernel reads its inputs only through :func:`logical_values` /
    :func:`known_values`, or calls :func:`settled` on input rows before it reads their bytes; its
    inputs' deferred writes are then left undone (see :mod:`meshnn.ops.memo`).  Otherwise they are
    done before the kernel runs.  A new output whose kernel runs inside this call (the queue was
    idle) may defer its own bytes (:func:`write_values`)."""
    first = inputs[0] if inputs else None
    where = tuple(coords) if coords is not None else first.storage.coords  # type: ignore[union-attr]
    queue = mesh.mesh_command_queue(queue_id)
    if into is not None:
        buffers = [t.storage.mesh_buffer for t in into]  # type: ignore[union-attr]
    elif len(outputs) == 1:  # nothing to free if it fails
        buffers = [allocate_mesh_buffer(outputs[0].spec, mesh)]
    else:
        buffers = allocate_outputs(mesh, [o.spec for o in outputs])
    n_in = len(inputs)
    touched = [t.storage.mesh_buffer for t in inputs]  # type: ignore[union-attr]
    touched += buffers

    replicated = rowwise and len(where) > 1 and n_in > 0
    if replicated:
        seen = None
        for t in inputs:
            topology = t.tensor_topology()
            if topology is seen:  # e.g. add(x, x): asked once
                continue
            if not _replicated(topology):
                replicated = False
                break
            seen = topology
    n_local = len(mesh.local)
    memos = False
    if VALUES_MEMO.limit > 0:
        for b in touched:
            if b.device_local_size() >= MEMO_MIN_DEVICE_BYTES:
                memos = True
                break
    lazy = memos and reads_memos
    caller = [threading.get_ident() if into is None else None]  # new outputs, written on this thread: deferrable

    def run(ctx: ProgramContext) -> None:
        rows = ctx.buffers
        defer = caller[0] == threading.get_ident()
        if (
            replicated
            and len(ctx.coords) > 1
            and max(r.shape[1] for r in rows) >= SHARED_ROWS_MIN_BYTES
            and all(_equal_rows(r, t.storage.mesh_buffer, t.spec) for r, t in zip(rows, inputs, strict=False))
        ):
            firsts = tuple(r[:1] for r in rows)
            if memos:
                _bind_rows(firsts, touched, n_in, first=True, defer=defer)
            elif lazy:
                _settle(touched[:n_in])
            try:
                kernel(firsts[:n_in], firsts[n_in:], ctx.coords[:1])
            finally:
                if memos:
                    _unbind_rows(firsts)
            for out, buffer in zip(rows[n_in:], buffers, strict=True):
                if not buffer.has_deferred_write():  # (a deferred write fills every device itself)
                    out[1:] = out[0]
            return
        whole = memos and len(ctx.coords) == n_local
        if lazy and not whole:
            _settle(touched[:n_in])
        if whole:
            _bind_rows(rows, touched, n_in, first=False, defer=defer)
        try:
            kernel(rows[:n_in], rows[n_in:], ctx.coords)
        finally:
            if whole:
                _unbind_rows(rows)

    workload = MeshWorkload()
    writes = range(n_in, len(touched))
    boxes = (mesh.full_range,) if len(where) == mesh.get_num_devices() else _boxes(mesh, where)
    for box in boxes:
        workload.add_program(box, Program(run, touched, name=f"ttnn.{op}", writes=writes, lazy_reads=lazy))
    queue.enqueue_mesh_workload(workload, blocking=False)
    caller[0] = None  # from now on a run is not this call's own: it writes its bytes at once
    if into is not None:
        return list(into)
    topology = first.tensor_topology() if first is not None else TensorTopology.replicated(mesh.shape)
    if len(outputs) == 1:
        o = outputs[0]
        return [device_tensor(o.spec, buffers[0], o.coords or where, o.topology or topology)]
    return [
        device_tensor(o.spec, b, o.coords or where, o.topology or topology)
        for o, b in zip(outputs, buffers, strict=True)
    ]


SHARED_ROWS_MIN_BYTES = 16 << 10
"""Per-device bytes of an op's largest input or output from which a replicated op computes one
device's rows and copies them (below, comparing the devices' bytes costs more than computing them
all)."""


def _bind_rows(
    rows: Sequence[np.ndarray], buffers: Sequence[MeshBuffer], n_in: int, *, first: bool, defer: bool
) -> None:
    """Tell :func:`logical_values` and :func:`write_values` which buffer each of ``rows`` is (the
    inputs first, then the outputs).  An input whose bytes an output shares (``output_tensor=``
    the input) leaves no memo when decoded: the kernel is about to change them."""
    outputs = buffers[n_in:]
    for i, (r, buffer) in enumerate(zip(rows, buffers, strict=True)):
        keep = not any(buffer.shares_bytes(o) for o in outputs)
        _BOUND[id(r)] = _Bound(r, buffer, first, keep, defer and i >= n_in)


def _settle(buffers: Sequence[MeshBuffer]) -> None:
    for buffer in buffers:
        if buffer.has_deferred_write():
            buffer.settle()


def settled(rows: np.ndarray) -> np.ndarray:
    """``rows`` of a running kernel's input, with its buffer's deferred write done: for a kernel
    launched with ``reads_memos`` before it reads the bytes themselves."""
    bound = _bound(rows) if _BOUND else None
    if bound is not None and bound.buffer.has_deferred_write():
        bound.buffer.settle()
    return rows


def _unbind_rows(rows: Sequence[np.ndarray]) -> None:
    for r in rows:
        _BOUND.pop(id(r), None)


def _equal_rows(rows: np.ndarray, buffer: MeshBuffer, spec: TensorSpec) -> bool:
    """Whether every device holds the same bytes in ``rows``: known from a memo made when they
    were copied from one device, or compared."""
    known = buffer.memo
    if known is EQUAL_ROWS:  # written from one host array to every device
        return True
    if type(known) is Known:
        if known.equal_rows:
            return True
        exact = spec.dtype in (DataType.BFLOAT16, DataType.FLOAT32)
        if exact and (known.spec is spec or known.spec == spec) and known.values.shape[0] == rows.shape[0]:
            # the values are the logical bytes widened (bfloat16 << 16): equal values, equal bytes
            if not _same_on_every_device(known.values.reshape(rows.shape[0], -1).view(np.uint32)):
                return False
            if spec.explicit_padded_shape is None and tuple(spec.padded_shape) == tuple(spec.shape):
                return True  # no tile padding: the values are all the bytes
    if buffer.has_deferred_write():
        buffer.settle()
    return _same_on_every_device(rows)


def _replicated(topology: TensorTopology) -> bool:
    return all(type(p) is PlacementReplicate for p in topology.placements)


def _same_on_every_device(rows: np.ndarray) -> bool:
    """Whether the ``(k, bytes)`` rows are all equal (8 bytes at a time when they can be)."""
    if rows.shape[0] < 2:
        return True
    if rows.flags.c_contiguous and rows.shape[1] % 8 == 0:
        rows = rows.view(np.uint64)
    if not (rows[1:, :8] == rows[:1, :8]).all():
        return False  # most tensors that differ do so at once
    return bool((rows[1:] == rows[:1]).all())


def int_list(op: str, name: str, values: object) -> list[int]:
    """``values`` checked to be a sequence of ints (numpy integers count; bools do not)."""
    if not isinstance(values, Sequence | np.ndarray) or isinstance(values, str):
        raise MeshnnTypeError(f"ttnn.{op}: {name} must be a sequence of ints, got {values!r}")
    items = list(values)
    if not all(isinstance(v, int | np.integer) and not isinstance(v, bool) for v in items):
        raise MeshnnTypeError(f"ttnn.{op}: {name} must hold ints, got {items}")
    return [int(v) for v in items]


def int_arg(op: str, name: str, value: object) -> int:
    """``value`` checked to be an int (a numpy integer counts; a bool does not)."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise MeshnnTypeError(f"ttnn.{op}: {name} must be an int, got {value!r}")
    return int(value)


def check_queue_id(op: str, mesh: MeshDevice, queue_id: object) -> int:
    """``queue_id`` checked to name one of ``mesh``'s command queues."""
    if isinstance(queue_id, bool) or not isinstance(queue_id, int | np.integer):
        raise MeshnnTypeError(f"ttnn.{op}: queue_id must be an int, got {queue_id!r}")
    if not 0 <= queue_id < mesh.num_command_queues:
        raise MeshnnValueError(
            f"ttnn.{op}: queue_id {queue_id} is not a command queue of this mesh (it has {mesh.num_command_queues})"
        )
    return int(queue_id)


def output_into(op: str, mesh: MeshDevice, output_tensor: object, spec: TensorSpec, where) -> Tensor:
    """``output_tensor`` checked to be a live device tensor on ``mesh`` that an output of ``spec``
    over the devices ``where`` can be written into (same shape, dtype, layout, tile, memory config)."""
    if not isinstance(output_tensor, Tensor):
        raise MeshnnTypeError(f"ttnn.{op}: output_tensor must be a ttnn.Tensor, got {type(output_tensor).__name__}")
    tensor = device_input(op, "output_tensor", output_tensor)
    if tensor.storage.mesh_buffer.mesh_id != mesh.mesh_id:  # type: ignore[union-attr]
        raise WrongMeshError(f"ttnn.{op}: output_tensor is on another mesh device than the inputs")
    if tensor.spec != spec or set(tensor.storage.coords) != set(where):  # type: ignore[union-attr]
        raise MeshnnValueError(
            f"ttnn.{op}: output_tensor is {list(tensor.shape)} {tensor.dtype} {tensor.layout} "
            f"{tensor.memory_config().buffer_type}; the output is {list(spec.shape)} {spec.dtype} {spec.layout} "
            f"{spec.memory_config.buffer_type}"
        )
    return tensor


def _boxes(mesh: MeshDevice, coords: Sequence[MeshCoordinate]) -> list[MeshCoordinateRange]:
    """Disjoint boxes covering ``coords`` (one box for a whole mesh)."""
    if len(coords) == mesh.get_num_devices():
        return [mesh.full_range]
    ranges = MeshCoordinateRangeSet()
    for coord in coords:
        ranges.merge(MeshCoordinateRange(coord))
    return ranges.ranges()


def elementwise(
    op: str,
    inputs: Sequence[Tensor],
    out_spec: TensorSpec,
    compute: Callable[..., np.ndarray],
    *,
    scalars: Sequence[float] = (),
    queue_id: int = 0,
    output_tensor: object = None,
    native: Callable[..., None] | None = None,
    mesh: MeshDevice | None = None,
    kernel: Kernel | None = None,
) -> Tensor:
    """An element-wise op: ``compute(*arrays, *scalars)`` on float32 (or integer) arrays.

    Inputs of the output's shape, layout and tile are read in storage order (no untilizing);
    other inputs (broadcast operands) are decoded to their logical shape and broadcast.
    ``native(*input rows, output rows)``, when given, computes the same bytes straight from the
    inputs' bytes (:mod:`meshnn.ops.native`); it is used when every operand is stored like the
    output and its rows are contiguous.

    ``mesh``: the inputs' mesh, for a caller that has already checked them with :func:`same_mesh`
    (they are not checked again).  ``kernel``: :func:`elementwise_kernel` of these same specs,
    ``compute``, ``scalars`` and ``native``, made once by a caller that runs them again and again.
    """
    if mesh is None:
        names = _OPERAND_NAMES.get(len(inputs)) or tuple(f"input {i}" for i in range(len(inputs)))
        mesh = same_mesh(op, dict(zip(names, inputs, strict=True)))
    if type(queue_id) is not int or queue_id != 0:  # an int 0 names queue 0, always there: nothing to check
        queue_id = check_queue_id(op, mesh, queue_id)
    into = None
    if output_tensor is not None:
        into = [output_into(op, mesh, output_tensor, out_spec, inputs[0].storage.coords)]  # type: ignore[union-attr]
    if kernel is None:
        kernel = elementwise_kernel([t.spec for t in inputs], out_spec, compute, scalars=scalars, native=native)
    return launch(
        op, mesh, inputs, [Output(out_spec)], kernel, queue_id=queue_id, into=into, rowwise=True, reads_memos=True
    )[0]


def elementwise_kernel(
    in_specs: Sequence[TensorSpec],
    out_spec: TensorSpec,
    compute: Callable[..., np.ndarray],
    *,
    scalars: Sequence[float] = (),
    native: Callable[..., None] | None = None,
) -> Kernel:
    """The kernel :func:`elementwise` runs for inputs of ``in_specs``: it depends on nothing else
    than its arguments (no tensor, buffer or mesh), so a caller may make it once and pass it to
    every :func:`elementwise` call with the same arguments."""
    in_specs = tuple(in_specs)
    scalars = tuple(scalars)
    direct = all(s is out_spec or _storage_compatible(s, out_spec) for s in in_specs)
    size = out_spec.compute_packed_buffer_size_bytes()

    def kernel(
        in_rows: Sequence[np.ndarray], out_rows: Sequence[np.ndarray], coords: tuple[MeshCoordinate, ...]
    ) -> None:
        out = out_rows[0] if out_rows[0].shape[1] == size else out_rows[0][:, :size]
        known = [known_values(r, s) for r, s in zip(in_rows, in_specs, strict=True)] if _BOUND else ()
        if direct and not (known and all(v is not None for v in known)):  # no untilizing, unless memos say
            if _BOUND:
                for r in in_rows:
                    settled(r)  # the bytes are read below
            if native is not None and out.flags.c_contiguous and _contiguous_like(in_rows, out.shape):
                native(*in_rows, out)
                return
            arrays = [stored_elements(rows, spec) for rows, spec in zip(in_rows, in_specs, strict=True)]
            store_elements(_cast(compute(*arrays, *scalars), out_spec), out_spec, out)
            return
        arrays = [
            _broadcast_to(logical_values(r, s), out_spec, r.shape[0]) for r, s in zip(in_rows, in_specs, strict=True)
        ]
        result = compute(*arrays, *scalars)
        write_values(out_rows[0], _cast(result, out_spec), out_spec)

    return kernel


def _contiguous_like(rows: Sequence[np.ndarray], shape: tuple[int, ...]) -> bool:
    """Whether every array of ``rows`` is C-contiguous and of ``shape``."""
    return not [r for r in rows if not r.flags.c_contiguous or r.shape != shape]  # a list: cheaper than all(genexpr)


_OPERAND_NAMES = {1: ("input_tensor",), 2: ("input_tensor_a", "input_tensor_b")}


def _storage_compatible(spec: TensorSpec, out: TensorSpec) -> bool:
    if tuple(spec.shape) != tuple(out.shape) or spec.layout is not out.layout:
        return False
    return spec.layout is not Layout.TILE or spec.tile == out.tile


def _broadcast_to(values: np.ndarray, out: TensorSpec, k: int) -> np.ndarray:
    target = (k, *tuple(out.shape))
    shape = values.shape[1:]
    padded = (values.shape[0], *((1,) * (len(target) - 1 - len(shape))), *shape)
    return np.broadcast_to(values.reshape(padded), target)


def _cast(result: np.ndarray, out: TensorSpec) -> np.ndarray:
    result = np.asarray(result)
    if out.dtype.is_float:
        return result.astype(np.float32, copy=False)
    if result.dtype.kind == "f":
        return result.astype(np.float32, copy=False)  # float -> integer: the host conversion rules
    return result.astype(out.dtype.numpy_dtype, copy=False)


def broadcast_shape(op: str, a: Sequence[int], b: Sequence[int]) -> tuple[int, ...]:
    if a == b:
        return tuple(a)
    try:
        return tuple(np.broadcast_shapes(tuple(a), tuple(b)))
    except ValueError:
        raise MeshnnValueError(f"ttnn.{op}: shapes {list(a)} and {list(b)} cannot be broadcast together") from None


def out_spec_like(
    tensor: Tensor,
    *,
    shape: Sequence[int] | None = None,
    dtype: DataType | None = None,
    layout: Layout | None = None,
    memory_config: object = None,
    op: str = "op",
) -> TensorSpec:
    """The output spec: ``tensor``'s, with the given changes (memory config checked to be one)."""
    if memory_config is not None and not isinstance(memory_config, MemoryConfig):
        raise MeshnnTypeError(f"ttnn.{op}: memory_config must be a ttnn.MemoryConfig, got {memory_config!r}")
    if dtype is not None and not isinstance(dtype, DataType):
        raise MeshnnTypeError(f"ttnn.{op}: dtype must be a ttnn DataType, got {dtype!r}")
    key = (tensor.spec, None if shape is None else tuple(shape), dtype, layout, memory_config)
    cached = _OUT_SPECS.get(key)
    if cached is not None:
        return cached
    if len(_OUT_SPECS) > 4096:
        _OUT_SPECS.clear()
    _OUT_SPECS[key] = made = _make_out_spec(tensor.spec, shape, dtype, layout, memory_config, op)
    return made


_OUT_SPECS: dict[tuple, TensorSpec] = {}  # equal requests get the same spec, whose sizes are computed once


def _make_out_spec(spec: TensorSpec, shape, dtype, layout, memory_config, op: str) -> TensorSpec:
    target_layout = layout or spec.layout
    target_dtype = dtype or spec.dtype
    if target_dtype.is_block_float and target_layout is not Layout.TILE:
        raise MeshnnValueError(
            f"ttnn.{op}: a {target_dtype} output needs TILE layout; the input of shape {list(spec.shape)} is "
            f"{spec.layout}"
        )
    config = memory_config if memory_config is not None else spec.memory_config
    unchanged = (shape is None or tuple(shape) == tuple(spec.shape)) and config == spec.memory_config
    if unchanged and target_layout is spec.layout and target_dtype is spec.dtype:
        return spec  # specs are immutable: the output shares the input's (and its derived figures)
    if config.is_sharded() and tuple(shape or spec.shape) != tuple(spec.shape) and memory_config is None:
        config = DRAM_MEMORY_CONFIG  # a sharded input's spec does not fit a new shape
    return TensorSpec(
        shape if shape is not None else spec.shape, target_dtype, target_layout, tile=spec.tile, memory_config=config
    )


def volume(shape: Sequence[int]) -> int:
    return math.prod(shape)
