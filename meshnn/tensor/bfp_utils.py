"""``ttnn._ttnn.bfp_utils`` (tt-metal 2026): host helpers for packing block-float tiles by hand, as
DeepSeek-V3's compressed tensors (per-tile BSPM precisions) use them.

``pack_bfp8`` / ``pack_bfp4`` / ``pack_bfp2``: a flat float32 array of whole 32x32 tiles (each in
face order, or row-major with ``row_major_input``) packed into the device's block-float tiles,
returned as their uint32 words (per tile: the exponent section, then the codes; see
:mod:`meshnn.formats.block_float`); ``is_exp_a`` the exp_a variant.  ``unpack_*`` the inverse
(float32, face order unless ``row_major_output``).  ``get_l1_alignment`` / ``get_dram_alignment``:
the chips' alignments in bytes.  ``compute_shard_page_mapping``: for each core of an N-D shard
spec in dealing order, the host pages (row-major over the tensor in pages) it holds, padding left
out (tt-metal's ``BufferDistributionSpec.compute_page_mapping``).

Layer: tensor.  Imports errors, formats, device and mesh.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from meshnn.device.buffer import ShardOrientation
from meshnn.device.core import CoreCoord, CoreRangeSet
from meshnn.device.nd_shard import NdShardSpec, NdShardSpecBuffer, ShardDistributionStrategy, shape_in_pages
from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.bfp_tiles import pack_bfp, unpack_bfp
from meshnn.formats.block_float import BlockFloatFormat
from meshnn.mesh.cluster import get_dram_alignment, get_l1_alignment

TILE_VALUES = 1024
"""Values of one 32x32 tile: the helpers' unit."""


def _faces(tiles: np.ndarray) -> np.ndarray:
    """Row-major 32x32 tiles (n x 1024) in face order (four 16x16 faces, each row-major)."""
    return tiles.reshape(-1, 2, 16, 2, 16).transpose(0, 1, 3, 2, 4).reshape(-1, TILE_VALUES)


def _rows(tiles: np.ndarray) -> np.ndarray:
    """Face-order 32x32 tiles (n x 1024) as row-major tiles."""
    return tiles.reshape(-1, 2, 2, 16, 16).transpose(0, 1, 3, 2, 4).reshape(-1, TILE_VALUES)


def _flat(values: object, dtype: type, what: str) -> np.ndarray:
    """A 1-D array of ``dtype`` from any array-like (numpy, torch on the CPU), whole tiles."""
    if hasattr(values, "numpy") and not isinstance(values, np.ndarray):
        values = values.detach().cpu().numpy() if hasattr(values, "detach") else values.numpy()
    array = np.asarray(values)
    if array.ndim != 1 or array.dtype != np.dtype(dtype):
        raise MeshnnTypeError(f"bfp_utils.{what}: input must be a 1-D {np.dtype(dtype).name} array, got {array.dtype}")
    return np.ascontiguousarray(array)


def _packer(fmt: BlockFloatFormat) -> Callable[..., np.ndarray]:
    name = f"pack_{fmt.name.lower()}"

    def pack(input: object, row_major_input: bool = False, is_exp_a: bool = False) -> np.ndarray:
        values = _flat(input, np.float32, name)
        if values.size % TILE_VALUES:
            raise MeshnnValueError(f"bfp_utils.{name}: {values.size} values are not whole 32x32 tiles of 1024")
        tiles = values.reshape(-1, TILE_VALUES)
        tiles = _faces(tiles) if row_major_input else tiles
        return pack_bfp(np.ascontiguousarray(tiles), fmt, exp_a=bool(is_exp_a)).reshape(-1).view(np.uint32)

    pack.__name__ = name
    pack.__doc__ = f"Float32 tiles packed as {fmt.name} tiles: their uint32 words."
    return pack


def _unpacker(fmt: BlockFloatFormat) -> Callable[..., np.ndarray]:
    name = f"unpack_{fmt.name.lower()}"

    def unpack(input: object, row_major_output: bool = False, is_exp_a: bool = False) -> np.ndarray:
        words = _flat(input, np.uint32, name)
        if is_exp_a:
            raise MeshnnValueError(f"bfp_utils.{name}: is_exp_a unpacking is not supported by meshnn")
        tiles = unpack_bfp(words.view(np.uint8), fmt, TILE_VALUES)
        return (_rows(tiles) if row_major_output else tiles).reshape(-1)

    unpack.__name__ = name
    unpack.__doc__ = f"{fmt.name} tiles (uint32 words) unpacked to float32."
    return unpack


def compute_shard_page_mapping(
    tensor_shape: Sequence[int],
    shard_shape: Sequence[int],
    page_height: int,
    page_width: int,
    core_range_set: CoreRangeSet,
    shard_orientation: ShardOrientation,
    distribution_strategy: ShardDistributionStrategy = ShardDistributionStrategy.ROUND_ROBIN_1D,
) -> list[tuple[CoreCoord, list[int]]]:
    """For each core the shards are dealt to (in order), the host pages it holds, padding left out."""
    if not isinstance(core_range_set, CoreRangeSet):
        raise MeshnnTypeError(
            f"bfp_utils.compute_shard_page_mapping: core_range_set must be a CoreRangeSet, got {core_range_set!r}"
        )
    page = (int(page_height), int(page_width))
    if page[0] <= 0 or page[1] <= 0:
        raise MeshnnValueError(f"bfp_utils.compute_shard_page_mapping: pages must be positive, got {list(page)}")
    spec = NdShardSpec(list(shard_shape), core_range_set, shard_orientation, distribution_strategy)
    buffer = NdShardSpecBuffer(spec, page, shape_in_pages(list(tensor_shape), page))
    cores = buffer.dealt_cores()
    return [(core, [p for p in pages if p >= 0]) for core, pages in zip(cores, buffer.core_pages(), strict=True)]


TTNN_NAMES = {
    **{f"pack_{f.name.lower()}": _packer(f) for f in BlockFloatFormat},
    **{f"unpack_{f.name.lower()}": _unpacker(f) for f in BlockFloatFormat},
    "get_l1_alignment": get_l1_alignment,
    "get_dram_alignment": get_dram_alignment,
    "compute_shard_page_mapping": compute_shard_page_mapping,
}
"""``ttnn._ttnn.bfp_utils``'s names."""
