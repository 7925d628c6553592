"""The queueable tensor prefetcher of ``ttnn.experimental`` (tt-metal 2026): DRAM cores stream
weight tensors into DRAM-sender global circular buffers (:mod:`meshnn.mesh.dram_sender_gcb`) that
1-D ring matmuls (``global_cb=``) and tt-metal's test consumers read.

State on the mesh device (attribute ``_tensor_prefetcher``, a :class:`PrefetcherState`): started
or not, its senders (every DRAM bank, two a bank with ``dual_senders_per_bank``), the per-queue
fence counts.  A request appends one entry per ``(tensor, block_count)`` to the buffer's pending
pages (a replayed tensor: once per time it is listed); :func:`test_dram_prefetcher_validator` and
:func:`test_dram_prefetcher_consumer` take them, as the receiver kernels would, and refuse what
would hang the hardware (too few pages, a mismatched page).  The matmuls read their weights' bytes
themselves (as with ``ttnn.dram_prefetcher``), so their values are meshnn's matmul's.

A request runs no device program in tt-metal (``TensorPrefetcherManager::queue``,
``tt_metal/impl/buffers/tensor_prefetcher_manager.cpp``): the host serialises it into 128-byte request
pages that its worker thread pushes to each DRAM sender's socket, and the persistent sender kernels
started by ``start_tensor_prefetcher`` stream the weights alongside the consumers.  So it is recorded as
an op with no outputs and no device operation (its registry entry ``runs`` host work): graph capture
shows its function, the perf capture no device row.  Not modelled: a request queued while a trace is
captured is not replayed by ``execute_trace`` (it is pushed once, when queued).

May import: :mod:`meshnn.errors`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor` and the ops' launch and checks.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from meshnn.device.buffer import BufferType, TensorMemoryLayout
from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.layout import Layout
from meshnn.mesh.dram_sender_gcb import (
    DramSenderGlobalCircularBuffer,
    create_global_circular_buffer_with_dram_senders,
    has_programmable_dram_cores,
    pending_pages,
)
from meshnn.mesh.global_circular_buffer import GlobalCircularBuffer, check_global_cb
from meshnn.mesh.mesh_device import MeshDevice
from meshnn.ops.checks import device_input
from meshnn.ops.launch import launch
from meshnn.ops.prefetcher import PREFETCHABLE
from meshnn.ops.registry import DeviceWork, OpKind, register
from meshnn.perf.desc import OpFamily
from meshnn.tensor.tensor import Tensor

HOST_HELPER = {"kind": OpKind.PYTHON, "family": OpFamily.COPY, "modelled": False, "runs": DeviceWork.HOST}
"""A host-side call of the prefetcher's (no device operation of its own)."""

NUM_CQ_SIGNAL_SLOTS = 2
"""Command queues the prefetcher can be fenced against (tt-metal's per-CQ signal slots)."""

register("experimental.create_global_circular_buffer_with_dram_senders", **HOST_HELPER)(
    create_global_circular_buffer_with_dram_senders
)


@dataclass
class PrefetcherState:
    """One mesh device's tensor prefetcher: ``active`` between start and stop; ``senders``: DRAM
    sender cores (banks x 1 or 2); ``cq_signals``: fences issued per command queue; ``requests``:
    requests queued since start."""

    active: bool = False
    senders: int = 0
    dual: bool = False
    cq_signals: list[int] = field(default_factory=lambda: [0] * NUM_CQ_SIGNAL_SLOTS)
    requests: int = 0


def _mesh(op: str, mesh_device: object) -> MeshDevice:
    if not isinstance(mesh_device, MeshDevice):
        raise MeshnnTypeError(f"ttnn.{op}: mesh_device must be a ttnn.MeshDevice, got {type(mesh_device).__name__}")
    mesh_device.check_open()
    return mesh_device


def prefetcher_state(mesh_device: MeshDevice) -> PrefetcherState:
    """The prefetcher state held by ``mesh_device`` (made idle on first use)."""
    state = getattr(mesh_device, "_tensor_prefetcher", None)
    if state is None:
        state = PrefetcherState()
        mesh_device._tensor_prefetcher = state  # type: ignore[attr-defined]
    return state


def _active(op: str, mesh: MeshDevice, what: str) -> PrefetcherState:
    state = prefetcher_state(mesh)
    if not state.active:
        raise MeshnnValueError(f"ttnn.{op}: {what} called before StartTensorPrefetcher")
    return state


@register("experimental.is_tensor_prefetcher_supported", **HOST_HELPER)
def is_tensor_prefetcher_supported(mesh_device: MeshDevice) -> bool:
    """True when ``mesh_device`` has programmable DRAM cores (Blackhole with
    ``TT_METAL_ENABLE_BLACKHOLE_DRAM_PROGRAMMABLE_CORES=1``); start would raise otherwise."""
    return has_programmable_dram_cores(_mesh("experimental.is_tensor_prefetcher_supported", mesh_device))


@register("experimental.start_tensor_prefetcher", **HOST_HELPER)
def start_tensor_prefetcher(mesh_device: MeshDevice, dual_senders_per_bank: bool = False) -> None:
    """Start the prefetcher on every DRAM bank of ``mesh_device`` (two senders a bank with
    ``dual_senders_per_bank``); one may be active per mesh device."""
    op = "experimental.start_tensor_prefetcher"
    mesh = _mesh(op, mesh_device)
    if not isinstance(dual_senders_per_bank, bool):
        raise MeshnnTypeError(f"ttnn.{op}: dual_senders_per_bank must be a bool, got {dual_senders_per_bank!r}")
    state = prefetcher_state(mesh)
    if state.active:
        raise MeshnnValueError(
            f"ttnn.{op}: a Tensor prefetcher is already active on this mesh device; call stop_tensor_prefetcher first"
        )
    if not has_programmable_dram_cores(mesh):
        raise MeshnnValueError(
            f"ttnn.{op}: Tensor prefetcher requires programmable DRAM cores (Blackhole with "
            f"TT_METAL_ENABLE_BLACKHOLE_DRAM_PROGRAMMABLE_CORES=1); this is {mesh.arch().name}"
        )
    banks = mesh.system.arch_spec.num_dram_banks
    mesh._tensor_prefetcher = PrefetcherState(True, banks * (2 if dual_senders_per_bank else 1), dual_senders_per_bank)  # type: ignore[attr-defined]


@register("experimental.stop_tensor_prefetcher", **HOST_HELPER)
def stop_tensor_prefetcher(mesh_device: MeshDevice) -> None:
    """Stop the prefetcher of ``mesh_device``; a no-op when none is active."""
    mesh = _mesh("experimental.stop_tensor_prefetcher", mesh_device)
    if prefetcher_state(mesh).active:
        mesh._tensor_prefetcher = PrefetcherState()  # type: ignore[attr-defined]


def _subset_coords(op: str, mesh: MeshDevice, device_subset: object) -> list:
    """The coordinates of ``device_subset`` (a MeshCoordinateRangeSet; None: the whole mesh), each in the mesh."""
    if device_subset is None:
        return list(mesh.full_range)
    ranges = getattr(device_subset, "ranges", None)
    if not callable(ranges):
        raise MeshnnTypeError(f"ttnn.{op}: device_subset must be a ttnn.MeshCoordinateRangeSet, got {device_subset!r}")
    coords = [c for r in ranges() for c in r]
    for coord in coords:
        if coord not in mesh.full_range:
            raise MeshnnValueError(
                f"ttnn.{op}: target MeshCoordinate {coord} is not in the mesh this prefetcher was started on"
            )
    return coords


def _cq(op: str, cq_id: object) -> int:
    if isinstance(cq_id, bool) or not isinstance(cq_id, int | np.integer):
        raise MeshnnTypeError(f"ttnn.{op}: cq_id must be an int, got {cq_id!r}")
    if not 0 <= cq_id < NUM_CQ_SIGNAL_SLOTS:
        raise MeshnnValueError(f"ttnn.{op}: cq_id ({cq_id}) out of range [0, {NUM_CQ_SIGNAL_SLOTS})")
    return int(cq_id)


@register("experimental.wait_for_cq_on_tensor_prefetcher", **HOST_HELPER)
def wait_for_cq_on_tensor_prefetcher(mesh_device: MeshDevice, cq_id: int = 0, *, device_subset: object = None) -> None:
    """Fence later requests behind the work enqueued on ``cq_id`` (a request reads its tensors'
    bytes when a consumer takes its pages, after that work, so the fence is only counted)."""
    op = "experimental.wait_for_cq_on_tensor_prefetcher"
    mesh = _mesh(op, mesh_device)
    state = _active(op, mesh, "WaitForCqOnTensorPrefetcher")
    queue = _cq(op, cq_id)
    _subset_coords(op, mesh, device_subset)
    if queue >= mesh.num_command_queues:
        raise MeshnnValueError(f"ttnn.{op}: cq_id {queue} is not a command queue of this mesh device")
    state.cq_signals[queue] += 1


def _dram_gcb(op: str, global_cb: object, mesh: MeshDevice) -> DramSenderGlobalCircularBuffer:
    cb = check_global_cb(op, global_cb, mesh)
    if not isinstance(cb, DramSenderGlobalCircularBuffer):
        raise MeshnnValueError(f"ttnn.{op}: QueueTensorPrefetcherRequest requires a DRAM-sender GlobalCircularBuffer")
    return cb


def _page_bytes(op: str, i: int, tensor: Tensor, block_count: int, cb: DramSenderGlobalCircularBuffer) -> int:
    """Bytes of one pushed page of ``tensor``.  K-row-major (WIDTH_SHARDED over the DRAM banks):
    ``ceil(K tiles / block_count)`` rows of ``shard width / receivers per sender`` tiles.
    Receiver-contiguous (ND_SHARDED, one ``(K, n_per_recv)`` shard a receiver): ``K tiles /
    block_count`` rows (K divisible) of ``n_per_recv`` tiles."""
    config = tensor.memory_config()
    name = f"tensors[{i}]"
    if tensor.layout is not Layout.TILE:
        raise MeshnnValueError(f"ttnn.{op}: {name} must be tilized (it is {tensor.layout})")
    if tensor.dtype not in PREFETCHABLE:
        raise MeshnnValueError(f"ttnn.{op}: {name} must be of type Bfp4_b, Bfp8_b, or Float16_b, got {tensor.dtype}")
    (th, tw), tile_bytes = tensor.tile.tile_shape, tensor.dtype.tile_size(tensor.tile)
    if config.buffer_type is BufferType.DRAM and config.memory_layout is TensorMemoryLayout.ND_SHARDED:
        return _recv_contig_page(op, name, tensor, block_count, _ring(cb))
    if config.buffer_type is not BufferType.DRAM or config.memory_layout is not TensorMemoryLayout.WIDTH_SHARDED:
        raise MeshnnValueError(f"ttnn.{op}: {name} must be sharded in DRAM (WIDTH_SHARDED or ND_SHARDED), got {config}")
    height, width = config.shard_spec.shape
    if height % th or width % tw:
        raise MeshnnValueError(f"ttnn.{op}: Tensor prefetcher requires tile-aligned shards; got ({height}, {width})")
    receivers = cb.mapping[0][1].num_cores()
    if (width // tw) % receivers:
        raise MeshnnValueError(
            f"ttnn.{op}: n_per_bank ({width // tw}) must divide num_receivers ({receivers}) ({name})"
        )
    return -(-(height // th) // block_count) * (width // tw // receivers) * tile_bytes


def _recv_contig_page(op: str, name: str, tensor: Tensor, block_count: int, ring: int) -> int:
    """A receiver-contiguous weight's page bytes, checked as tt-metal checks its layout."""
    shape = tuple(tensor.memory_config().nd_shard_spec.shard_shape)
    if len(shape) != 2:
        raise MeshnnValueError(
            f"ttnn.{op}: receiver-contiguous NdShardSpec shard shape must be 2D, got {shape} ({name})"
        )
    (th, tw), padded = tensor.tile.tile_shape, tuple(tensor.padded_shape)
    if shape[0] % th or shape[1] % tw:
        raise MeshnnValueError(f"ttnn.{op}: receiver-contiguous shard shape {shape} must be tile-aligned ({name})")
    rows = int(np.prod(padded[:-1]))
    shards = -(-rows // shape[0]) * -(-padded[-1] // shape[1])
    if shards != ring:
        raise MeshnnValueError(
            f"ttnn.{op}: receiver-contiguous Tensor prefetcher weight must have num_shards == total_receivers "
            f"(ring_size = {ring}); got {shards} shards ({name})"
        )
    k_tiles = shape[0] // th
    if k_tiles % block_count:
        raise MeshnnValueError(
            f"ttnn.{op}: receiver-contiguous: weight K ({k_tiles} tiles) must be divisible by block_count "
            f"({block_count}) ({name})"
        )
    return k_tiles // block_count * (shape[1] // tw) * tensor.dtype.tile_size(tensor.tile)


@register(
    "experimental.queue_tensor_prefetcher_request",
    kind=OpKind.DATA_MOVEMENT,
    family=OpFamily.COPY,
    modelled=False,
    runs=DeviceWork.HOST,
)
def queue_tensor_prefetcher_request(
    mesh_device: MeshDevice,
    tensors: Sequence[tuple[Tensor, int]],
    global_cb: GlobalCircularBuffer,
    *,
    device_subset: object = None,
    cq_id: int | None = None,
) -> None:
    """Queue the prefetch of ``tensors`` (``(weight, block_count)`` pairs, in order) into the
    DRAM-sender ``global_cb``: each weight's K cut into ``block_count`` blocks, one page a block."""
    op = "experimental.queue_tensor_prefetcher_request"
    mesh = _mesh(op, mesh_device)
    state = _active(op, mesh, "QueueTensorPrefetcherRequest")
    cb = _dram_gcb(op, global_cb, mesh)
    if len(cb.mapping) != state.senders:
        raise MeshnnValueError(
            f"ttnn.{op}: GCB num_senders ({len(cb.mapping)}) does not match prefetcher num_senders ({state.senders})"
        )
    if isinstance(tensors, Tensor) or not isinstance(tensors, Sequence) or not tensors:
        raise MeshnnValueError(f"ttnn.{op}: QueueTensorPrefetcherRequest requires at least one (tensor, block_count)")
    queue = 0 if cq_id is None else _cq(op, cq_id)
    coords = _subset_coords(op, mesh, device_subset)
    pages, weights = [], []
    for i, pair in enumerate(tensors):
        if not (isinstance(pair, tuple | list) and len(pair) == 2):
            raise MeshnnTypeError(f"ttnn.{op}: tensors[{i}] must be (ttnn.Tensor, block_count), got {pair!r}")
        tensor, blocks = device_input(op, f"tensors[{i}]", pair[0]), pair[1]
        if isinstance(blocks, bool) or not isinstance(blocks, int | np.integer):
            raise MeshnnTypeError(f"ttnn.{op}: block_count of tensors[{i}] must be an int, got {blocks!r}")
        if blocks <= 0:
            raise MeshnnValueError(f"ttnn.{op}: Tensor prefetcher block_count must be > 0 (tensors[{i}])")
        if tensor.storage.mesh_buffer.mesh_id != mesh.mesh_id:
            raise MeshnnValueError(f"ttnn.{op}: tensors[{i}] lives on another mesh device")
        page = _page_bytes(op, i, tensor, int(blocks), cb)
        if page > cb.size():
            raise MeshnnValueError(
                f"ttnn.{op}: a page of tensors[{i}] ({page} B) does not fit global_cb ({cb.size()} B)"
            )
        pages.append((tensor, int(blocks), page))
        weights.append(tensor)
    attrs = {"global_cb": cb, "block_counts": tuple(p[1] for p in pages)}

    def kernel(_inputs: Sequence[np.ndarray], _outputs: Sequence[np.ndarray], _coords: tuple) -> None:
        """Nothing on the devices: the host's worker pushes the request pages."""

    launch(op, mesh, weights, [], kernel, coords=coords, queue_id=queue, reads_memos=True, attrs=attrs)
    pending_pages(cb).extend(pages)
    state.requests += 1


def _ring(cb: GlobalCircularBuffer) -> int:
    """Receiver cores over every sender (a 1-D ring matmul's ring size)."""
    return sum(r.num_cores() for _, r in cb.mapping)


def _next(op: str, cb: GlobalCircularBuffer, pages: int) -> list[tuple[Tensor, int, int]]:
    """The pending entries holding the next ``pages`` pages (whole entries), left in place (the
    caller checks them, then :func:`_take` takes them)."""
    entries, count = [], 0
    for entry in pending_pages(cb):
        if count >= pages:
            break
        entries.append(entry)
        count += entry[1]
    if count < pages:
        raise MeshnnValueError(
            f"ttnn.{op}: the receivers wait for {pages} pages but the prefetcher pushed {count} (the device would hang)"
        )
    if count != pages:
        raise MeshnnValueError(
            f"ttnn.{op}: {count - pages} pages pushed past the {pages} the receivers take (overflow)"
        )
    return entries


def _take(cb: GlobalCircularBuffer, entries: list) -> None:
    for _ in entries:
        pending_pages(cb).popleft()


def _int(op: str, name: str, value: object, least: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise MeshnnTypeError(f"ttnn.{op}: {name} must be an int, got {value!r}")
    if value < least:
        raise MeshnnValueError(f"ttnn.{op}: {name} must be at least {least}, got {value}")
    return int(value)


@register(
    "experimental.test_dram_prefetcher_validator",
    kind=OpKind.PYTHON,
    family=OpFamily.COPY,
    device_operation="DramPrefetcherValidatorDeviceOperation",
    modelled=False,
)
def test_dram_prefetcher_validator(
    mesh_device: MeshDevice,
    source_tensor: Tensor,
    num_layers: int,
    print_stride: int,
    *,
    global_cb: GlobalCircularBuffer,
) -> None:
    """Take ``num_layers`` layers (ring size pages each) off the DRAM-sender ``global_cb`` and
    compare every page's bytes with ``source_tensor``'s; a mismatch, a page count off, or a block
    count other than the ring size (the validator's tile ranges assume it) raises."""
    op = "experimental.test_dram_prefetcher_validator"
    mesh = _mesh(op, mesh_device)
    source = device_input(op, "source_tensor", source_tensor)
    layers, _ = _int(op, "num_layers", num_layers, 1), _int(op, "print_stride", print_stride, 0)
    cb = check_global_cb(op, global_cb, mesh)
    ring = _ring(cb)
    expected, entries = None, _next(op, cb, layers * ring)
    for tensor, blocks, _ in entries:
        if blocks != ring:
            raise MeshnnValueError(f"ttnn.{op}: a layer pushed {blocks} blocks, the validator expects ring_size {ring}")
        if tensor is source:
            continue
        if expected is None:
            expected = source.to_torch_with_padded_shape()
        got = tensor.to_torch_with_padded_shape()
        if (
            tuple(got.shape) != tuple(expected.shape)
            or tensor.dtype is not source.dtype
            or not bool((got == expected).all())
        ):
            raise MeshnnValueError(
                f"ttnn.{op}: a pushed page differs from source_tensor's bytes (the device would hang)"
            )
    _take(cb, entries)


@register(
    "experimental.test_dram_prefetcher_consumer",
    kind=OpKind.PYTHON,
    family=OpFamily.COPY,
    device_operation="DramPrefetcherConsumerDeviceOperation",
    modelled=False,
)
def test_dram_prefetcher_consumer(
    mesh_device: MeshDevice, num_iters: int, page_size_bytes: int, *, global_cb: GlobalCircularBuffer
) -> None:
    """Take ``num_iters`` pages of ``page_size_bytes`` off the DRAM-sender ``global_cb`` and discard them."""
    op = "experimental.test_dram_prefetcher_consumer"
    mesh = _mesh(op, mesh_device)
    iters, page = _int(op, "num_iters", num_iters, 1), _int(op, "page_size_bytes", page_size_bytes, 1)
    cb = check_global_cb(op, global_cb, mesh)
    entries = _next(op, cb, iters)
    for _, _, pushed in entries:
        if pushed != page:
            raise MeshnnValueError(f"ttnn.{op}: page_size_bytes {page} differs from the pushed page ({pushed} B)")
    _take(cb, entries)
