"""``ttnn._ttnn.core.tilize_and_pack_bfp8_b`` / ``tilize_and_pack_bfp4_b`` (tt-metal 2026): the host
bytes of an ``H`` x ``W`` float32 matrix as block-float tiles of ``tile_h`` x ``tile_w``, the bytes a
TILE bfloat8_b / bfloat4_b tensor of that tile holds: tiles in row-major order over the matrix, each
tile's values in face order, packed with the shared exponents first (not ``exp_a``).

``H`` and ``W`` must be whole tiles (tt-metal's loop drops a remainder silently; meshnn refuses it),
and ``data`` must hold at least ``H * W`` values, read row-major.

May import: :mod:`meshnn.errors` and the formats layer.
"""

from __future__ import annotations

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.bfp_tiles import pack_bfp
from meshnn.formats.block_float import BlockFloatFormat
from meshnn.formats.layout import Tile, tilize


def _packed(op: str, fmt: BlockFloatFormat, data: object, H: int, W: int, tile_h: int, tile_w: int) -> bytes:
    values = np.asarray(data)
    if values.dtype != np.float32:
        raise MeshnnTypeError(f"ttnn._ttnn.core.{op}: data must be a float32 array, got {values.dtype}")
    sizes = {"H": H, "W": W, "tile_h": tile_h, "tile_w": tile_w}
    for name, value in sizes.items():
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise MeshnnTypeError(f"ttnn._ttnn.core.{op}: {name} must be a positive int, got {value!r}")
    if H % tile_h or W % tile_w:
        raise MeshnnValueError(f"ttnn._ttnn.core.{op}: H x W ({H} x {W}) must be whole {tile_h} x {tile_w} tiles")
    if values.size < H * W:
        raise MeshnnValueError(f"ttnn._ttnn.core.{op}: data holds {values.size} values, fewer than H x W = {H * W}")
    tile = Tile((tile_h, tile_w))
    tiles = tilize(np.ascontiguousarray(values.reshape(-1)[: H * W]).reshape(H, W), tile)
    return pack_bfp(tiles, fmt).tobytes()


def tilize_and_pack_bfp8_b(data: object, H: int, W: int, tile_h: int = 32, tile_w: int = 32) -> bytes:
    """The bfloat8_b tile bytes of the ``H`` x ``W`` float32 matrix ``data`` (see the module's text)."""
    return _packed("tilize_and_pack_bfp8_b", BlockFloatFormat.BFP8, data, H, W, tile_h, tile_w)


def tilize_and_pack_bfp4_b(data: object, H: int, W: int, tile_h: int = 32, tile_w: int = 32) -> bytes:
    """The bfloat4_b tile bytes of the ``H`` x ``W`` float32 matrix ``data`` (see the module's text)."""
    return _packed("tilize_and_pack_bfp4_b", BlockFloatFormat.BFP4, data, H, W, tile_h, tile_w)
