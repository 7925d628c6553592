"""What the DeepSeek decode ops share: their tensors' shard checks, a tensor's values cut into the
shards its cores hold (the kernels read a core's own L1 shard or a DRAM bank's shard, never the
whole tensor), and the DRAM-bank worker cores their rings run on.

A shard ``k`` of a sharded tensor is the ``k``-th block of its 2-D view (every dim but the last
folded into the height, the last two padded to the tile for TILE), blocks counted row-major in
shard-shape steps, and lives on the ``k``-th core of its shard grid (``ShardSpec.cores()``).

May import: :mod:`meshnn.errors`, :mod:`meshnn.device`, :mod:`meshnn.formats`, :mod:`meshnn.mesh`,
:mod:`meshnn.tensor` and the ops' checks.
"""

from __future__ import annotations

import numpy as np

from meshnn.device.buffer import BufferType, ShardSpec
from meshnn.device.core import CoreCoord
from meshnn.errors import MeshnnValueError
from meshnn.formats.layout import Layout
from meshnn.mesh.mesh_device import MeshDevice
from meshnn.tensor.spec import TensorSpec
from meshnn.tensor.tensor import Tensor

RING_BANKS = 12
"""The DRAM banks (one worker core each) of Wormhole, the ring ``moe_gate_mm`` and ``matmul_wo`` are
written for (tt-metal's kernels hard-code 12)."""


def shard_spec(op: str, name: str, tensor: Tensor) -> ShardSpec:
    """``tensor``'s shard spec; a tensor that is not sharded is refused (ttnn: "must be sharded")."""
    config = tensor.spec.memory_config
    if not config.is_sharded() or config.shard_spec is None:
        raise MeshnnValueError(f"ttnn.{op}: {name} must be sharded, got {config.memory_layout}")
    return config.shard_spec


def padded_2d(values: np.ndarray, spec: TensorSpec) -> np.ndarray:
    """One device's logical ``values`` as the 2-D view the shards cut: the last two dims padded with
    zeros to the tile (TILE layout), every dim but the last folded into the height."""
    shape = tuple(spec.shape)
    if len(shape) < 2:
        values = values.reshape(1, -1)
        shape = tuple(values.shape)
    if spec.layout is Layout.TILE:
        th, tw = spec.tile.tile_shape
        pad_h, pad_w = -shape[-2] % th, -shape[-1] % tw
        if pad_h or pad_w:
            widths = [(0, 0)] * (len(shape) - 2) + [(0, pad_h), (0, pad_w)]
            values = np.pad(values, widths)
    return values.reshape(-1, values.shape[-1])


def block_of(k: int, view: tuple[int, int], shard: tuple[int, int]) -> tuple[slice, slice]:
    """The rows and columns of shard ``k`` in a 2-D view of shape ``view`` cut in ``shard`` blocks."""
    per_row = -(-view[1] // shard[1])
    row, col = divmod(k, per_row)
    return slice(row * shard[0], (row + 1) * shard[0]), slice(col * shard[1], (col + 1) * shard[1])


def shard_count(view: tuple[int, int], shard: tuple[int, int]) -> int:
    """How many shards a 2-D view of shape ``view`` holds (the grid's further cores hold none)."""
    return -(-view[0] // shard[0]) * -(-view[1] // shard[1])


def core_shards(spec: ShardSpec, view: tuple[int, int]) -> dict[CoreCoord, int]:
    """Each core of ``spec``'s grid that holds a shard of the 2-D view, and the shard's index."""
    held = shard_count(view, spec.shape)
    return {core: k for k, core in enumerate(spec.cores()) if k < held}


def ring_banks(op: str, mesh: MeshDevice) -> list[CoreCoord]:
    """The worker core of each DRAM bank (bank id order), checked to be Wormhole's 12: tt-metal's
    ring kernels of ``moe_gate_mm`` / ``matmul_wo`` are written for exactly those."""
    cores = mesh.get_optimal_dram_bank_to_logical_worker_assignment(0)  # RISCV_0_default: NOC_0
    if len(cores) != RING_BANKS:
        raise MeshnnValueError(
            f"ttnn.{op} requires exactly {RING_BANKS} DRAM-aligned cores (Wormhole); got {len(cores)}: its ring "
            f"algorithm is written for Wormhole's {RING_BANKS} DRAM views ({mesh.arch()})"
        )
    return list(cores)


def bank_shards(op: str, name: str, tensor: Tensor, spec: ShardSpec, rows: int) -> dict[int, int]:
    """The shard index each DRAM bank holds of the DRAM-sharded ``tensor`` (its grid's cores are
    ``(bank, 0)``), checked to cover every ring bank and to hold at least ``rows`` rows a shard (the
    kernel reads that far into its bank's shard)."""
    if tensor.spec.memory_config.buffer_type is not BufferType.DRAM:
        raise MeshnnValueError(f"ttnn.{op}: {name} must be sharded in DRAM (the kernel reads it bank by bank)")
    view = padded_shape_2d(tensor.spec)
    held = core_shards(spec, view)
    banks = {core.x: k for core, k in held.items()}
    missing = sorted(set(range(RING_BANKS)) - set(banks))
    if missing:
        raise MeshnnValueError(f"ttnn.{op}: {name} holds no shard in DRAM banks {missing}; each bank reads its own")
    if spec.shape[0] < rows:
        raise MeshnnValueError(
            f"ttnn.{op}: {name}'s shard holds {spec.shape[0]} rows; this layer's block ends at row {rows} "
            "(layer_id out of range for the weights given)"
        )
    return banks


def padded_shape_2d(spec: TensorSpec) -> tuple[int, int]:
    """The shape of :func:`padded_2d`'s view of a tensor of ``spec``."""
    shape = tuple(spec.shape) if len(spec.shape) >= 2 else (1, *tuple(spec.shape))
    h, w = shape[-2], shape[-1]
    if spec.layout is Layout.TILE:
        th, tw = spec.tile.tile_shape
        h, w = h + -h % th, w + -w % tw
    return int(np.prod(shape[:-2], dtype=np.int64)) * h, w


def local_shard(op: str, name: str, spec: ShardSpec, view: tuple[int, int], core: CoreCoord) -> int:
    """The index of the shard ``core`` holds of a tensor sharded by ``spec`` (the kernel reads its
    own L1 there); a core holding none is refused."""
    held = core_shards(spec, view)
    if core not in held:
        raise MeshnnValueError(f"ttnn.{op}: {name} holds no shard on core {core} (the kernel reads its own L1 shard)")
    return held[core]


def logical_of(view: np.ndarray, spec: TensorSpec) -> np.ndarray:
    """One device's logical values of a tensor of ``spec`` from its :func:`padded_2d` view."""
    shape = tuple(spec.shape) if len(spec.shape) >= 2 else (1, *tuple(spec.shape))
    faces = int(np.prod(shape[:-2], dtype=np.int64))
    blocks = view.reshape(faces, view.shape[0] // faces, view.shape[1])
    return blocks[:, : shape[-2], : shape[-1]].reshape(tuple(spec.shape))
