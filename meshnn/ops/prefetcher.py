"""``ttnn.dram_prefetcher``: streams every layer's weights from DRAM into a global circular buffer
that matmuls (``global_cb=``) read them from.  On hardware it runs on the sender cores of a
sub-device while the matmuls run on another; on the simulator the matmuls read the weights'
bytes themselves, so the prefetcher moves no bytes: it checks its call as ttnn does, records the
pages it would push (one entry a layer and weight, :func:`~meshnn.mesh.dram_sender_gcb.pending_pages`,
taken by a matmul given ``global_cb`` or by tt-metal's test consumers), is recorded
as an op (device operation ``DramPrefetcher``, timed as the DRAM reads of the weights it is
given), and returns what ttnn returns: a [32, 32] TILE tensor of the first weight's dtype in
DRAM (zeros here; its contents are undefined on hardware).

May import: :mod:`meshnn.errors`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor` and the ops' launch,
checks and outputs.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from meshnn.device.buffer import BufferType, TensorMemoryLayout
from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.mesh.dram_sender_gcb import DramSenderGlobalCircularBuffer, pending_pages
from meshnn.mesh.global_circular_buffer import GlobalCircularBuffer, check_global_cb
from meshnn.mesh.mesh_device import MeshDevice
from meshnn.ops.checks import device_input, same_mesh
from meshnn.ops.launch import launch
from meshnn.ops.outputs import Output, out_spec_like
from meshnn.ops.prefetcher_matmul_gcb import check_dram_sender_geometry
from meshnn.ops.registry import OpKind, register
from meshnn.perf.desc import OpFamily
from meshnn.tensor.memory_config import DRAM_MEMORY_CONFIG
from meshnn.tensor.tensor import Tensor

PREFETCHABLE = (DataType.BFLOAT4_B, DataType.BFLOAT8_B, DataType.BFLOAT16)
"""The weight dtypes the prefetcher streams (tt-metal's Bfp4_b, Bfp8_b, Float16_b)."""


def _check_weight(op: str, i: int, tensor: Tensor) -> None:
    """A weight: TILE, WIDTH_SHARDED in DRAM, of a dtype the prefetcher streams."""
    name = f"tensors[{i}]"
    if tensor.layout is not Layout.TILE:
        raise MeshnnValueError(f"ttnn.{op}: all tensors must be tilized ({name} is {tensor.layout})")
    config = tensor.memory_config()
    if config.memory_layout is not TensorMemoryLayout.WIDTH_SHARDED:
        raise MeshnnValueError(f"ttnn.{op}: input tensors must be width sharded ({name} is {config.memory_layout})")
    if config.buffer_type is not BufferType.DRAM:
        raise MeshnnValueError(f"ttnn.{op}: input tensors must be in DRAM ({name} is in {config.buffer_type})")
    if tensor.dtype not in PREFETCHABLE:
        raise MeshnnValueError(f"ttnn.{op}: input tensors must be of type Bfp4_b, Bfp8_b, or Float16_b ({name})")


def _check_widths(op: str, weights: list[Tensor], receivers: int) -> None:
    """Each weight's shard width divisible by the receivers per sender."""
    for i, tensor in enumerate(weights):
        width = tensor.memory_config().shard_spec.shape[1]
        if width % receivers:
            raise MeshnnValueError(
                f"ttnn.{op}: all tensors' padded shard size (in last dim) {width} must be divisible by the number "
                f"of receiver cores per sender {receivers} (tensors[{i}])"
            )


def _check_addresses(op: str, tensor: Tensor) -> None:
    """The last tensor: the weights' DRAM addresses, uint32 ROW_MAJOR height sharded in L1."""
    config = tensor.memory_config()
    if tensor.layout is not Layout.ROW_MAJOR:
        raise MeshnnValueError(f"ttnn.{op}: tensor containing addresses must be row major")
    if config.memory_layout is not TensorMemoryLayout.HEIGHT_SHARDED:
        raise MeshnnValueError(f"ttnn.{op}: tensor containing addresses must be height sharded")
    if config.buffer_type is not BufferType.L1:
        raise MeshnnValueError(f"ttnn.{op}: tensor containing addresses must be in L1")
    if tensor.dtype is not DataType.UINT32:
        raise MeshnnValueError(f"ttnn.{op}: tensor containing addresses must be of type UInt32")


def _checked(op: str, tensors: object, num_layers: object, global_cb: object) -> tuple[list[Tensor], MeshDevice]:
    if isinstance(tensors, Tensor) or not isinstance(tensors, Sequence):
        raise MeshnnTypeError(f"ttnn.{op}: tensors must be a list of ttnn.Tensor, got {type(tensors).__name__}")
    if len(tensors) < 2:
        raise MeshnnValueError(
            f"ttnn.{op}: tensors must hold at least one weight and, last, the tensor of their addresses"
        )
    if isinstance(num_layers, bool) or not isinstance(num_layers, int | np.integer):
        raise MeshnnTypeError(f"ttnn.{op}: num_layers must be an int, got {num_layers!r}")
    if num_layers <= 0:
        raise MeshnnValueError(f"ttnn.{op}: prefetcher must run for at least 1 layer, got num_layers={num_layers}")
    if global_cb is None:
        raise MeshnnValueError(f"ttnn.{op}: global circular buffer must be provided")
    named = {f"tensors[{i}]": device_input(op, f"tensors[{i}]", t) for i, t in enumerate(tensors)}
    mesh = same_mesh(op, named)
    return list(named.values()), mesh


def _check_mapping(op: str, cb: GlobalCircularBuffer, weights: list[Tensor]) -> int:
    """The receivers per sender (the same for the senders the weights' DRAM shards use)."""
    mapping = cb.sender_receiver_core_mapping()
    readers = weights[0].memory_config().shard_spec.grid.num_cores()
    if readers > len(mapping):
        raise MeshnnValueError(
            f"ttnn.{op}: the weights are sharded over {readers} DRAM banks but global_cb has {len(mapping)} senders"
        )
    receivers = mapping[0][1].num_cores()
    if any(r.num_cores() != receivers for _, r in mapping[:readers]):
        raise MeshnnValueError(
            f"ttnn.{op}: global circular buffer must have same number of receivers for each sender core"
        )
    return receivers


def _pages(weights: list[Tensor], receivers: int) -> list[tuple[Tensor, int, int]]:
    """Each weight's pushed pages: ``readers x receivers`` blocks of tile rows (rows padded up to
    a multiple), a block's tiles split over the receivers: ``(weight, blocks, page bytes)``."""
    blocks = weights[0].memory_config().shard_spec.grid.num_cores() * receivers
    pages = []
    for tensor in weights:
        (height, width), (th, tw) = tensor.memory_config().shard_spec.shape, tensor.tile.tile_shape
        rows = -(-(height // th) // blocks) * blocks
        tiles = rows * (width // tw) // blocks // receivers
        pages.append((tensor, blocks, tiles * tensor.dtype.tile_size(tensor.tile)))
    return pages


def _check_fits(op: str, cb: GlobalCircularBuffer, weights: list[Tensor], receivers: int) -> None:
    """tt-metal's sizing: the weights are cut into ``readers x receivers`` blocks of tile rows; the
    largest weight's blocks of the largest tile must fit ``global_cb``, and so must the senders'
    triple-buffered reader CB of one block."""
    blocks = weights[0].memory_config().shard_spec.grid.num_cores() * receivers
    block_tiles, tile_bytes = 0, 0
    for tensor in weights:
        (height, width), (th, tw) = tensor.memory_config().shard_spec.shape, tensor.tile.tile_shape
        rows = -(-(height // th) // blocks) * blocks
        block_tiles = max(block_tiles, rows * (width // tw) // blocks)
        tile_bytes = max(tile_bytes, tensor.dtype.tile_size(tensor.tile))
    block_bytes = tile_bytes * block_tiles
    largest = block_bytes // receivers * blocks
    if largest > cb.size():
        raise MeshnnValueError(f"ttnn.{op}: largest tensor {largest} must fit in global cb {cb.size()}")
    if 3 * block_bytes > cb.size():
        raise MeshnnValueError(
            f"ttnn.{op}: reader_cb_size {3 * block_bytes} must not be larger than global cb {cb.size()}"
        )


@register(kind=OpKind.DATA_MOVEMENT, family=OpFamily.COPY, device_operation="DramPrefetcher")
def dram_prefetcher(
    tensors: Sequence[Tensor],
    num_layers: int,
    global_cb: GlobalCircularBuffer | None = None,
    *,
    enable_performance_mode: bool = False,
) -> Tensor:
    """Check and record the prefetch of ``num_layers`` layers of the weights ``tensors[:-1]``
    (their addresses in ``tensors[-1]``) through ``global_cb``; returns ttnn's placeholder output."""
    op = "dram_prefetcher"
    inputs, mesh = _checked(op, tensors, num_layers, global_cb)
    cb = check_global_cb(op, global_cb, mesh)
    if not isinstance(enable_performance_mode, bool):
        raise MeshnnTypeError(f"ttnn.{op}: enable_performance_mode must be a bool, got {enable_performance_mode!r}")
    weights = inputs[:-1]
    for i, tensor in enumerate(weights):
        _check_weight(op, i, tensor)
    receivers = _check_mapping(op, cb, weights)
    _check_widths(op, weights, receivers)
    _check_addresses(op, inputs[-1])
    _check_fits(op, cb, weights, receivers)
    spec = out_spec_like(weights[0], shape=(32, 32), memory_config=DRAM_MEMORY_CONFIG, op=op)

    def kernel(_inputs: Sequence[np.ndarray], outputs: Sequence[np.ndarray], _coords: tuple) -> None:
        for rows in outputs:
            rows[...] = 0

    attrs = {"num_layers": int(num_layers), "global_cb": cb, "enable_performance_mode": enable_performance_mode}
    # reads_memos: the kernel reads no weight's bytes, so bytes a decoded memo stands for stay let
    # go (made again, a step would re-encode every prefetched weight)
    out = launch(op, mesh, inputs, [Output(spec)], kernel, rowwise=True, reads_memos=True, attrs=attrs)[0]
    pending_pages(cb).extend(_pages(weights, receivers) * int(num_layers))
    return out


def check_matmul_prefetch(op: str, mesh: MeshDevice, operands: tuple, config: object, out_config: object) -> None:
    """A matmul's ``global_cb`` and ``sub_device_id`` checked as ttnn checks them: a live global CB
    of the mesh, a sub-device of the loaded manager; with a 1-D ``gather_in0`` program config,
    ttnn's gather checks (``operands``: a, b, bias, global_cb, sub_device_id)."""
    a, b, bias, global_cb, sub_device_id = operands
    if global_cb is not None:
        check_global_cb(op, global_cb, mesh)
    if sub_device_id is not None:
        if isinstance(sub_device_id, bool) or not isinstance(sub_device_id, int):
            raise MeshnnTypeError(f"ttnn.{op}: sub_device_id must be a ttnn.SubDeviceId, got {sub_device_id!r}")
        count = len(mesh.get_sub_device_ids())
        if not 0 <= sub_device_id < count:
            raise MeshnnValueError(
                f"ttnn.{op}: sub_device_id: SubDevice index {int(sub_device_id)} out of bounds {count}"
            )
    if not getattr(config, "gather_in0", False):
        return
    if config.mcast_in0:  # type: ignore[attr-defined]
        raise MeshnnValueError(f"ttnn.{op}: Matmul1D does not support mcast_in0 and gather_in0 at the same time")
    if a.memory_config().memory_layout is not TensorMemoryLayout.WIDTH_SHARDED:
        raise MeshnnValueError(f"ttnn.{op}: input tensor A must be width sharded when using gather_in0")
    b_config = b.memory_config()
    interleaved_dram = (
        b_config.memory_layout is TensorMemoryLayout.INTERLEAVED and b_config.buffer_type is BufferType.DRAM
    )
    fed = global_cb is not None and b_config.buffer_type is BufferType.DRAM  # (2026: any DRAM weight a global CB feeds)
    if b_config.memory_layout is not TensorMemoryLayout.WIDTH_SHARDED and not interleaved_dram and not fed:
        raise MeshnnValueError(
            f"ttnn.{op}: input tensor B must be width sharded, DRAM interleaved, or a DRAM weight fed via a global "
            "circular buffer when using gather_in0"
        )
    if getattr(out_config, "shard_spec", None) is None:
        raise MeshnnValueError(f"ttnn.{op}: output tensor must be sharded, with a shard spec, when using gather_in0")
    if interleaved_dram and global_cb is not None:
        raise MeshnnValueError(f"ttnn.{op}: global CB is not supported for DRAM_INTERLEAVED in1 when using gather_in0")
    if global_cb is None and config.num_global_cb_receivers != 1:  # type: ignore[attr-defined]
        raise MeshnnValueError(f"ttnn.{op}: num global CB receivers must be 1 when global CB is not provided")
    if isinstance(global_cb, DramSenderGlobalCircularBuffer) and a.memory_config().is_sharded():
        check_dram_sender_geometry(op, global_cb, a, b, config)
    if bias is not None:
        raise MeshnnValueError(f"ttnn.{op}: bias is not supported when using gather_in0")


def take_prefetched(global_cb: object) -> None:
    """A matmul given ``global_cb`` has read one pushed weight from it: its oldest pending entry is
    taken (none pending: nothing; the matmul reads its ``b`` operand's bytes either way)."""
    if isinstance(global_cb, GlobalCircularBuffer):
        pages = pending_pages(global_cb)
        if pages:
            pages.popleft()
