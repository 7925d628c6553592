"""Block-float tiles decoded straight to bfloat16, in the matrix's own order, with torch.

Every bfloat8_b / bfloat4_b value of a block with a shared exponent ``E`` in ``[W, 254]`` is
``±m * 2**(E - 127 - (W - 1))`` with a ``W``-bit magnitude ``m``: a small integer (exact in
bfloat16) times a power of two (a normal bfloat16), so a bfloat16 product of the two is exact.  A
chunk of whole tile rows becomes: the codes moved from tile order to the matrix's (one byte a
value), the sign-magnitude codes made two's-complement integers, converted to bfloat16 and
multiplied by each block's power of two, written into the caller's bfloat16 matrix.  Blocks with
another exponent (zeros, tiny or non-finite values, the decoding rules' special cases) are left
to the reference decoder: :func:`unpack_bf16_rows` says when a chunk holds one.

Part of the ``formats`` layer; imports ``meshnn.formats`` (block_float, dtypes).
"""

from __future__ import annotations

import numpy as np

from meshnn.formats.block_float import BLOCK_VALUES, BlockFloatFormat
from meshnn.formats.dtypes import bfp_exponent_section_size

TILE = 32
FACE = 16


PART_VALUES = 1 << 17
"""Values decoded in one pass of numpy calls: the pass's temporaries (about 9 bytes a value) then
stay in a core's 2 MiB L2 (measured on a 2-core host: 1.7 ns a value against 4 to 6 ns for
passes of 4 Mi values, whose temporaries go out to memory)."""


def unpack_bf16_rows(tiles: np.ndarray, fmt: BlockFloatFormat, out: np.ndarray) -> bool:
    """Decode ``tiles`` (``(rows x columns, tile size)`` uint8: ``rows`` tile rows of ``columns``
    32 x 32 tiles, faces 16 x 16 not transposed) into ``out``, the bfloat16 bits (uint16) of a
    ``(rows x 32, columns x 32)`` matrix (any strides), the values
    :func:`meshnn.formats.codec.decode` gives them.  False, nothing written, when a block's
    exponent is outside ``[W, 254]`` (zero blocks included): the caller decodes that chunk the
    reference way.  numpy alone (one thread: no waiting on other threads on a busy host), in parts
    of about :data:`PART_VALUES` values (whole tile rows, or a tile row's columns)."""
    width = fmt.magnitude_bits
    blocks = TILE * TILE // BLOCK_VALUES
    count, columns = out.shape[0] // TILE, out.shape[1] // TILE
    exps = tiles[:, :blocks]
    if exps.min() < width or exps.max() > 254:
        return False
    per_part = max(1, PART_VALUES // (TILE * TILE))  # tiles
    if columns <= per_part:  # whole tile rows at a time
        step = per_part // columns
        for row in range(0, count, step):
            stop = min(count, row + step)
            _unpack(tiles[row * columns : stop * columns], fmt, out[row * TILE : stop * TILE], stop - row, columns)
        return True
    for row in range(count):  # a tile row's columns at a time
        for column in range(0, columns, per_part):
            stop = min(columns, column + per_part)
            part = tiles[row * columns + column : row * columns + stop]
            _unpack(part, fmt, out[row * TILE : (row + 1) * TILE, column * TILE : stop * TILE], 1, stop - column)
    return True


def _unpack(tiles: np.ndarray, fmt: BlockFloatFormat, out: np.ndarray, count: int, columns: int) -> None:
    """:func:`unpack_bf16_rows` of ``count`` tile rows of ``columns`` tiles whose exponents are
    in range."""
    width = fmt.magnitude_bits
    blocks = TILE * TILE // BLOCK_VALUES
    exps = tiles[:, :blocks]
    codes = tiles[:, bfp_exponent_section_size(blocks) :]
    if fmt.codes_per_byte > 1:  # nibbles (bfloat4_b): the low one first
        codes = np.stack((codes & 0x0F, codes >> 4), axis=-1).reshape(codes.shape[0], -1)
    # tile order (row, column, face row, face column, row in face, value) -> the matrix's, a
    # face row (16 codes) moved as one 16-byte item
    words = np.ascontiguousarray(codes).view(np.dtype("V16")).reshape(count, columns, 2, 2, FACE)
    ordered = np.ascontiguousarray(words.transpose(0, 2, 4, 1, 3)).view(np.uint8)  # (row, fr, r, column, fc) x 16
    ordered = ordered.reshape(count, 2, FACE, columns, 2, FACE)
    scale = np.left_shift(exps.astype(np.uint32) - (width - 1), 23).view(np.float32)  # 2**(E - 127 - (W - 1))
    scale = scale.reshape(count, columns, 2, 2, FACE).transpose(0, 2, 4, 1, 3)[..., None]
    values = (ordered & ((1 << width) - 1)).astype(np.float32)
    values *= scale  # a magnitude times a power of two: exact
    bits = np.right_shift(values.view(np.uint32), 16).astype(np.uint16)
    sign_bit = 1 << width
    bits |= np.left_shift((ordered & sign_bit).astype(np.uint16), 15 - width)  # the sign (of zeros too)
    out[...] = bits.reshape(count * TILE, columns * TILE)
