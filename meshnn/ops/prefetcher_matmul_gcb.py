"""DRAM-sender global circular buffers sized for the 1-D ring matmuls (``gather_in0``) they feed,
and the block count a receiver-contiguous weight is queued with (tt-metal 2026's
``ttnn.experimental.create_global_circular_buffer_for_matmul_1d``, ``..._recv_contig`` and
``tensor_prefetcher_block_count_for_matmul_1d``): the (program config, weight, bank mapping)
triples checked in one place as tt-metal checks them, then
:func:`~meshnn.mesh.dram_sender_gcb.create_global_circular_buffer_with_dram_senders`.

The ring: ``compute_with_storage_grid_size.x * .y`` matmul workers, one receiver each.  A page is
one K block of one receiver: ``K tiles / ring`` rows of ``per_core_N`` tiles; the buffer must
hold ``ring`` pages of the largest (the matmul waits for them all) and at most
:data:`MAX_CB_PAGES_BYTES`.

May import: :mod:`meshnn.errors`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor` and the ops' configs.
"""

from __future__ import annotations

from collections.abc import Sequence

from meshnn.device.buffer import BufferType, TensorMemoryLayout
from meshnn.device.core import CoreRangeSet
from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.mesh.dram_sender_gcb import DramSenderGlobalCircularBuffer, create_global_circular_buffer_with_dram_senders
from meshnn.mesh.global_circular_buffer import GlobalCircularBuffer
from meshnn.mesh.mesh_device import MeshDevice
from meshnn.ops.matmul_config import MatmulMultiCoreReuseMultiCast1DProgramConfig as Config1D
from meshnn.ops.registry import DeviceWork, OpKind, register
from meshnn.perf.desc import OpFamily
from meshnn.tensor.tensor import Tensor

MAX_CB_PAGES_BYTES = 131072 * 16
"""The largest buffer a remote CB's page count can address (bytes)."""

_FOR_1D = "experimental.create_global_circular_buffer_for_matmul_1d"
_RECV = "experimental.create_global_circular_buffer_for_matmul_1d_recv_contig"
_COUNT = "experimental.tensor_prefetcher_block_count_for_matmul_1d"


def _pairs(op: str, program_configs: object, weights: object, bank_to_receivers: object, size: object) -> list:
    """``(config, weight)`` pairs: one weight a 1-D config, a positive size, banks given."""
    if isinstance(program_configs, Config1D) or not isinstance(program_configs, Sequence) or not program_configs:
        raise MeshnnValueError(f"ttnn.{op}: Must provide at least one program config")
    if isinstance(weights, Tensor) or not isinstance(weights, Sequence) or len(weights) != len(program_configs):
        count = len(weights) if isinstance(weights, Sequence) else weights
        raise MeshnnValueError(
            f"ttnn.{op}: Expected one weight tensor per program config; got {len(program_configs)} configs and "
            f"{count} weights"
        )
    for i, (config, weight) in enumerate(zip(program_configs, weights, strict=True)):
        if not isinstance(config, Config1D):
            raise MeshnnTypeError(f"ttnn.{op}: program_configs[{i}] must be a 1-D mcast config, got {config!r}")
        if not isinstance(weight, Tensor):
            raise MeshnnTypeError(f"ttnn.{op}: weights[{i}] must be a ttnn.Tensor, got {type(weight).__name__}")
    if isinstance(size, bool) or not isinstance(size, int) or size <= 0:
        raise MeshnnValueError(f"ttnn.{op}: size must be > 0, got {size!r}")
    if isinstance(bank_to_receivers, str | bytes) or not isinstance(bank_to_receivers, Sequence):
        raise MeshnnTypeError(f"ttnn.{op}: bank_to_receivers must be a list of (bank_id, CoreRangeSet)")
    if not bank_to_receivers:
        raise MeshnnValueError(f"ttnn.{op}: bank_to_receivers must be non-empty")
    for pair in bank_to_receivers:
        if not (isinstance(pair, tuple | list) and len(pair) == 2 and isinstance(pair[1], CoreRangeSet)):
            raise MeshnnTypeError(f"ttnn.{op}: each entry must be (bank_id, CoreRangeSet), got {pair!r}")
    return list(zip(program_configs, weights, strict=True))


def _tiles(op: str, i: int, weight: Tensor) -> tuple[int, int, int, int]:
    """The weight's K and N (elements) and tile height and width, tile-aligned."""
    padded = tuple(weight.padded_shape)
    th, tw = weight.tile.tile_shape
    if len(padded) < 2:
        raise MeshnnValueError(f"ttnn.{op}: weights[{i}] must be at least 2D; got rank {len(padded)}")
    k, n = padded[-2], padded[-1]
    if k % th or n % tw:
        raise MeshnnValueError(f"ttnn.{op}: weights[{i}] K ({k}) and N ({n}) must be tile-aligned ({th}x{tw})")
    return k, n, th, tw


def _check_size(op: str, size: int, page: int, ring: int, what: str) -> None:
    if size < page * ring:
        raise MeshnnValueError(
            f"ttnn.{op}: GCB size ({size} B) must be at least {what} ({ring} * {page} = {ring * page} B)"
        )
    if size > MAX_CB_PAGES_BYTES:
        raise MeshnnValueError(
            f"ttnn.{op}: GCB size ({size} B) exceeds the remote-CB page-count cap ({MAX_CB_PAGES_BYTES} B)"
        )


def _krow_page(op: str, i: int, config: Config1D, weight: Tensor, ring: int, shape: tuple[int, int]) -> int:
    """A K-row-major (WIDTH_SHARDED, one full-K shard a bank) weight's page bytes, checked."""
    senders, per_bank = shape
    k, n, th, tw = _tiles(op, i, weight)
    k_tiles, n_tiles = k // th, n // tw
    if k_tiles % ring:
        raise MeshnnValueError(
            f"ttnn.{op}: weights[{i}] K must be divisible by ring_size in tiles ({k_tiles} % {ring})"
        )
    if k_tiles % config.in0_block_w:
        raise MeshnnValueError(
            f"ttnn.{op}: weights[{i}] K ({k_tiles} tiles) must be divisible by in0_block_w ({config.in0_block_w})"
        )
    if n_tiles % senders:
        raise MeshnnValueError(
            f"ttnn.{op}: weights[{i}] N ({n_tiles} tiles) must be divisible by num_senders ({senders})"
        )
    memory = weight.memory_config()
    if memory.buffer_type is not BufferType.DRAM or memory.shard_spec is None:
        raise MeshnnValueError(f"ttnn.{op}: weights[{i}] must live in DRAM, width-sharded across the banks")
    shard_k, shard_n = memory.shard_spec.shape
    if shard_k != k or shard_n * senders != n:
        raise MeshnnValueError(
            f"ttnn.{op}: weights[{i}] DRAM shard ({shard_k}, {shard_n}) must hold the full K ({k}) and N / num_senders "
            f"({n} / {senders})"
        )
    if (shard_n // tw) % per_bank:
        raise MeshnnValueError(
            f"ttnn.{op}: weights[{i}] per-bank N ({shard_n // tw} tiles) must be divisible by "
            f"num_global_cb_receivers ({per_bank})"
        )
    if shard_n // tw // per_bank != config.per_core_N:
        raise MeshnnValueError(
            f"ttnn.{op}: config[{i}].per_core_N ({config.per_core_N}) must equal weights[{i}] per-receiver N "
            f"({shard_n // tw // per_bank})"
        )
    return k_tiles // ring * config.per_core_N * weight.dtype.tile_size(weight.tile)


@register(_FOR_1D, kind=OpKind.PYTHON, family=OpFamily.COPY, modelled=False, runs=DeviceWork.HOST)
def create_global_circular_buffer_for_matmul_1d(
    mesh_device: MeshDevice,
    program_configs: Sequence[Config1D],
    weights: Sequence[Tensor],
    bank_to_receivers: Sequence[tuple[int, CoreRangeSet]],
    size: int,
    buffer_type: BufferType = BufferType.L1,
) -> DramSenderGlobalCircularBuffer:
    """A DRAM-sender buffer of ``size`` bytes a receiver feeding the ``gather_in0`` matmuls
    ``program_configs`` their K-row-major DRAM weights (one a config)."""
    pairs = _pairs(_FOR_1D, program_configs, weights, bank_to_receivers, size)
    first = pairs[0][0]
    if not first.gather_in0:
        raise MeshnnValueError(
            f"ttnn.{_FOR_1D}: requires gather_in0=true on every program config; config[0] has gather_in0=false"
        )
    grid, per_bank, senders = (
        first.compute_with_storage_grid_size,
        first.num_global_cb_receivers,
        len(bank_to_receivers),
    )
    ring = grid.x * grid.y
    if senders * per_bank != ring:
        raise MeshnnValueError(
            f"ttnn.{_FOR_1D}: bank_to_receivers has {senders} senders * {per_bank} receivers/bank = "
            f"{senders * per_bank} cores, but program_config ring_size ({grid.x} x {grid.y} = {ring}) needs that many"
        )
    for b, (bank, receivers) in enumerate(bank_to_receivers):
        if receivers.num_cores() != per_bank:
            raise MeshnnValueError(
                f"ttnn.{_FOR_1D}: bank_to_receivers[{b}] (bank_id={bank}) has {receivers.num_cores()} receiver cores; "
                f"expected num_global_cb_receivers={per_bank}"
            )
    largest = 0
    for i, (config, weight) in enumerate(pairs):
        if not config.gather_in0:
            raise MeshnnValueError(f"ttnn.{_FOR_1D}: config[{i}].gather_in0 must be true")
        cgrid = config.compute_with_storage_grid_size
        if (cgrid.x, cgrid.y) != (grid.x, grid.y) or config.num_global_cb_receivers != per_bank:
            raise MeshnnValueError(
                f"ttnn.{_FOR_1D}: config[{i}] must share config[0]'s grid ({grid.x}, {grid.y}) and "
                f"num_global_cb_receivers ({per_bank})"
            )
        largest = max(largest, _krow_page(_FOR_1D, i, config, weight, ring, (senders, per_bank)))
    _check_size(_FOR_1D, int(size), largest, ring, "num_blocks * largest in1_block")
    return create_global_circular_buffer_with_dram_senders(mesh_device, bank_to_receivers, size, buffer_type)


def _recv_contig_page(op: str, i: int, config: Config1D, weight: Tensor, ring: int) -> int:
    """A receiver-contiguous weight's page bytes, checked against its config and the ring."""
    if not config.gather_in0:
        raise MeshnnValueError(f"ttnn.{op}: receiver-contiguous Tensor prefetcher requires gather_in0=true")
    memory = weight.memory_config()
    if memory.buffer_type is not BufferType.DRAM or memory.nd_shard_spec is None:
        raise MeshnnValueError(
            f"ttnn.{op}: weight must be allocated with an NdShardSpec in DRAM for the receiver-contiguous path"
        )
    shard = tuple(memory.nd_shard_spec.shard_shape)
    if len(shard) != 2:
        raise MeshnnValueError(
            f"ttnn.{op}: receiver-contiguous NdShardSpec shard shape must be 2D; got rank {len(shard)}"
        )
    k, n, th, tw = _tiles(op, i, weight)
    if shard[0] % th or shard[1] % tw:
        raise MeshnnValueError(f"ttnn.{op}: receiver-contiguous shard shape {shard} must be tile-aligned ({th}x{tw})")
    if shard[0] != k:
        raise MeshnnValueError(f"ttnn.{op}: receiver-contiguous shard K ({shard[0]}) must equal full weight K ({k})")
    rows = 1
    for d in tuple(weight.padded_shape)[:-1]:
        rows *= d
    shards = -(-rows // shard[0]) * -(-n // shard[1])
    if shards != ring:
        raise MeshnnValueError(
            f"ttnn.{op}: receiver-contiguous weight has {shards} shards but global_cb ring_size is {ring}"
        )
    if (k // th) % ring:
        raise MeshnnValueError(f"ttnn.{op}: weight K ({k // th} tiles) must be divisible by ring_size ({ring})")
    if shard[1] // tw != config.per_core_N:
        raise MeshnnValueError(
            f"ttnn.{op}: program_config.per_core_N ({config.per_core_N}) must equal the weight's per-receiver N "
            f"({shard[1] // tw} tiles)"
        )
    return k // th // ring * config.per_core_N * weight.dtype.tile_size(weight.tile)


@register(_COUNT, kind=OpKind.PYTHON, family=OpFamily.COPY, modelled=False, runs=DeviceWork.HOST)
def tensor_prefetcher_block_count_for_matmul_1d(
    program_config: Config1D, weight: Tensor, global_cb: GlobalCircularBuffer
) -> int:
    """The block count to queue the receiver-contiguous ``weight`` with for the matmul
    ``program_config`` fed by ``global_cb``: its ring size, once the three are checked to agree."""
    if not isinstance(program_config, Config1D):
        raise MeshnnTypeError(f"ttnn.{_COUNT}: program_config must be a 1-D mcast config, got {program_config!r}")
    if not isinstance(weight, Tensor):
        raise MeshnnTypeError(f"ttnn.{_COUNT}: weight must be a ttnn.Tensor, got {type(weight).__name__}")
    if not isinstance(global_cb, GlobalCircularBuffer):
        raise MeshnnTypeError(f"ttnn.{_COUNT}: global_cb must be a GlobalCircularBuffer, got {global_cb!r}")
    ring = global_cb.receiver_cores().num_cores()
    _recv_contig_page(_COUNT, 0, program_config, weight, ring)
    return ring


@register(_RECV, kind=OpKind.PYTHON, family=OpFamily.COPY, modelled=False, runs=DeviceWork.HOST)
def create_global_circular_buffer_for_matmul_1d_recv_contig(
    mesh_device: MeshDevice,
    program_configs: Sequence[Config1D],
    weights: Sequence[Tensor],
    bank_to_receivers: Sequence[tuple[int, CoreRangeSet]],
    size: int,
    buffer_type: BufferType = BufferType.L1,
    dual_senders_per_bank: bool = False,
) -> DramSenderGlobalCircularBuffer:
    """The receiver-contiguous counterpart of :func:`create_global_circular_buffer_for_matmul_1d`:
    ND-sharded weights, one ``(K, per_core_N)`` shard a receiver."""
    pairs = _pairs(_RECV, program_configs, weights, bank_to_receivers, size)
    ring = sum(receivers.num_cores() for _, receivers in bank_to_receivers)
    if ring == 0:
        raise MeshnnValueError(f"ttnn.{_RECV}: bank_to_receivers has no receivers")
    largest = 0
    for i, (config, weight) in enumerate(pairs):
        grid = config.compute_with_storage_grid_size
        if grid.x * grid.y != ring:
            raise MeshnnValueError(
                f"ttnn.{_RECV}: program_configs[{i}] grid {grid.x}x{grid.y} = {grid.x * grid.y} workers, but "
                f"bank_to_receivers has {ring} total receivers; they must match"
            )
        largest = max(largest, _recv_contig_page(_RECV, i, config, weight, ring))
    _check_size(_RECV, int(size), largest, ring, "ring_size * largest page")
    return create_global_circular_buffer_with_dram_senders(
        mesh_device, bank_to_receivers, size, buffer_type, dual_senders_per_bank
    )


def check_dram_sender_geometry(
    op: str, cb: DramSenderGlobalCircularBuffer, a: Tensor, b: Tensor, config: Config1D
) -> None:
    """A ``gather_in0`` matmul fed by the DRAM-sender ``cb``, checked as tt-metal checks it (the
    configs that would leave the matmul waiting for pages never pushed): the receivers are the
    activation's ring; K a multiple of the ring in tiles; the weight's per-receiver N is
    ``per_core_N``.  A WIDTH_SHARDED weight's bank ``b`` feeds ring positions
    ``[b * r, (b + 1) * r)`` (``r``: ``num_global_cb_receivers``)."""
    ring_cores = sorted(a.memory_config().shard_spec.grid.cores(), key=lambda c: (c.y, c.x))
    ring, receivers = len(ring_cores), cb.receiver_cores().num_cores()
    (th, tw), padded = b.tile.tile_shape, tuple(b.padded_shape)
    k_tiles, n_tiles = padded[-2] // th, padded[-1] // tw
    layout = b.memory_config().memory_layout
    if layout not in (TensorMemoryLayout.WIDTH_SHARDED, TensorMemoryLayout.ND_SHARDED):
        raise MeshnnValueError(
            f"ttnn.{op}: gather_in0 matmul with a DRAM-sender global CB requires in1 to be WIDTH_SHARDED "
            f"(K-row-major) or ND_SHARDED (receiver-contiguous), but got {layout}"
        )
    if receivers != ring:
        raise MeshnnValueError(
            f"ttnn.{op}: global_cb receiver count ({receivers}) must equal in0 (activation) ring_size ({ring})"
        )
    if k_tiles % ring:
        raise MeshnnValueError(f"ttnn.{op}: Weight K ({k_tiles} tiles) must be divisible by ring_size ({ring})")
    if layout is TensorMemoryLayout.ND_SHARDED:
        if n_tiles % ring or n_tiles // ring != config.per_core_N:
            raise MeshnnValueError(
                f"ttnn.{op}: Matmul per_core_N ({config.per_core_N}) must equal weight per-receiver N "
                f"(N {n_tiles} tiles / ring_size {ring})"
            )
        return
    per_bank, senders = config.num_global_cb_receivers, len(cb.mapping)
    if receivers != senders * per_bank:
        raise MeshnnValueError(
            f"ttnn.{op}: global_cb receiver count ({receivers}) must equal num_senders ({senders}) * "
            f"num_global_cb_receivers ({per_bank})"
        )
    for bank, (_, cores) in enumerate(cb.mapping):
        walk = sorted(cores.cores(), key=lambda c: (c.y, c.x))
        if walk != ring_cores[bank * per_bank : (bank + 1) * per_bank]:
            raise MeshnnValueError(
                f"ttnn.{op}: global_cb bank {bank}'s receivers must be the matmul ring's positions "
                f"[{bank * per_bank}, {(bank + 1) * per_bank})"
            )
    if n_tiles % senders or (n_tiles // senders) % per_bank or n_tiles // senders // per_bank != config.per_core_N:
        raise MeshnnValueError(
            f"ttnn.{op}: Matmul per_core_N ({config.per_core_N}) must equal weight per-receiver N "
            f"(N {n_tiles} tiles / num_senders {senders} / num_global_cb_receivers {per_bank})"
        )
