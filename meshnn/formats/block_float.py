"""The block-float formats of ttnn (bfloat8_b = BFP8, bfloat4_b = BFP4, and the bfp_utils-only BFP2)
and their integer rules, the reference every faster path is checked against.

A block is 16 consecutive values of a tile in face order: one face row.  It shares one exponent
byte, the largest biased float32 exponent in the block (inf/NaN count as 255).  Each value
becomes a code ``sign << W | magnitude`` with W = 7, 3, 1 magnitude bits: values with biased
exponent 0 (zeros and subnormals) give 0; otherwise the 24-bit mantissa with its leading 1 is
shifted right by ``shared - own exponent`` (no sticky bits), rounded to nearest even to W bits
and clamped to ``2**W - 1`` (no carry into the exponent); the sign is cleared when the magnitude
is 0.  A packed tile is the exponent section (one byte per block, zero padded up to 16 bytes) and
then the codes, little-endian in uint32 words with element 0 in the low bits (4 codes a word for
BFP8, 8 for BFP4, 16 for BFP2).
Decoding: magnitude 0 gives +-0 (code 0x80 is -0.0); else the magnitude is normalised to its
leading 1 (a shift of s), exponent ``shared - s``, fraction the remaining bits; a negative
exponent gives +0.0.

Part of the ``formats`` layer; imports ``meshnn.errors`` and ``meshnn.formats.dtypes``.
"""

from __future__ import annotations

import enum
import functools

import numpy as np

from meshnn.errors import MeshnnValueError
from meshnn.formats.dtypes import DataType, bfp_exponent_section_size

BLOCK_VALUES = 16
"""Values that share one exponent: one face row."""

CHUNK_VALUES = 1 << 16
"""Values processed per step by the block-float packers (sized for a 2 MiB L2 cache)."""

_EXP_A_REBIAS = 127 - 15  # float32 bias to the 5-bit exponent bias of the exp_a variant


class BlockFloatFormat(enum.Enum):
    """A block-float format, valued by its magnitude bits per value (the sign is one more)."""

    BFP8 = 7
    BFP4 = 3
    BFP2 = 1

    @property
    def magnitude_bits(self) -> int:
        return self.value

    @property
    def code_bits(self) -> int:
        """Bits per packed value: sign and magnitude."""
        return self.value + 1

    @property
    def codes_per_byte(self) -> int:
        return 8 // self.code_bits

    @classmethod
    def of(cls, dtype: DataType) -> BlockFloatFormat:
        """The format of a block-float ``DataType`` (BFLOAT8_B -> BFP8, BFLOAT4_B -> BFP4)."""
        if dtype is DataType.BFLOAT8_B:
            return cls.BFP8
        if dtype is DataType.BFLOAT4_B:
            return cls.BFP4
        raise MeshnnValueError(f"{dtype} is not a block-float format")

    def tile_size(self, values_per_tile: int) -> int:
        """Bytes of one packed tile of ``values_per_tile`` values (exponents, then codes)."""
        _check_values_per_tile(values_per_tile)
        blocks = values_per_tile // BLOCK_VALUES
        return bfp_exponent_section_size(blocks) + values_per_tile // self.codes_per_byte


def _check_values_per_tile(values_per_tile: int) -> None:
    if values_per_tile <= 0 or values_per_tile % BLOCK_VALUES:
        raise MeshnnValueError(f"a block-float tile holds whole blocks of {BLOCK_VALUES} values, got {values_per_tile}")


def _rare_pack_blocks(shared: np.ndarray, scratch: np.ndarray) -> np.ndarray:
    """Numbers (in C order) of the blocks whose shared exponent E (``shared``, uint32) the float32
    arithmetic does not cover: 1 <= E <= 23 and E == 255.  ``scratch``: uint32 of ``shared``'s size.
    In the common case of none, two reductions tell so and no mask is made."""
    flat, spare = shared.reshape(-1), scratch.reshape(-1)[: shared.size]
    np.subtract(flat, 1, out=spare)  # E - 1, which wraps to 2**32 - 1 for E == 0
    if not flat.size or (spare.min() >= 23 and flat.max() < 255):
        return np.empty(0, np.intp)
    return np.flatnonzero((spare < 23) | (flat == 255))


def _redo_block_rows(values: np.ndarray, width: int, blocks: np.ndarray, codes: np.ndarray) -> None:
    """Recompute, by the integer rules of :func:`_codes`, the codes (``codes``, int8 (..., 16))
    of the blocks numbered ``blocks`` (C order over the leading dims) of ``values`` (..., 16)."""
    where = np.unravel_index(blocks, values.shape[:-1])
    bits = values.view(np.uint32)[where].reshape(-1)
    work = np.empty((4, bits.size), np.uint32)
    limits = np.empty((2, bits.size), np.uint32)
    limits[0], limits[1] = 31, (1 << width) - 1
    _codes(bits, width, np.empty(blocks.size, np.uint32), work, limits)
    codes[where] = work[0].reshape(-1, BLOCK_VALUES).astype(np.uint8).view(np.int8)


def _block_max(values: np.ndarray, out: np.ndarray) -> None:
    """The maximum of each run of BLOCK_VALUES consecutive ``values``, into ``out``."""
    by_block = values.reshape(-1, BLOCK_VALUES)
    np.maximum(by_block[:, 0], by_block[:, 1], out=out)
    for column in range(2, BLOCK_VALUES):
        np.maximum(out, by_block[:, column], out=out)


def _to_sign_magnitude(codes: np.ndarray, width: int, spare: np.ndarray) -> None:
    """Rewrite, in place, two's-complement int8 ``codes`` (|code| < 2**width) as sign-magnitude
    codes ``sign << width | magnitude`` (a zero magnitude has no sign); ``spare``: int8 scratch."""
    np.right_shift(codes, 7, out=spare)  # -1 for negative codes, else 0
    np.bitwise_xor(codes, spare, out=codes)
    np.subtract(codes, spare, out=codes)  # |code|
    np.bitwise_and(spare, np.int8(1 << width) if width < 7 else np.int8(-128), out=spare)
    np.bitwise_or(codes, spare, out=codes)


def _redo_blocks(bits: np.ndarray, width: int, blocks: np.ndarray, codes: np.ndarray) -> None:
    """Recompute the codes of the blocks numbered ``blocks`` with the integer rules of
    :func:`_codes` (the blocks the float32 arithmetic does not cover)."""
    values = bits.reshape(-1, BLOCK_VALUES)[blocks].reshape(-1)
    work = np.empty((4, values.size), np.uint32)
    limits = np.empty((2, values.size), np.uint32)
    limits[0], limits[1] = 31, (1 << width) - 1
    _codes(values, width, np.empty(blocks.size, np.uint32), work, limits)
    lead = (*codes.shape[:-1], codes.shape[-1] // BLOCK_VALUES)  # codes may be rows of a larger array
    by_block = codes.reshape(*lead, BLOCK_VALUES, copy=False)
    by_block[np.unravel_index(blocks, lead)] = work[0].reshape(-1, BLOCK_VALUES).astype(np.uint8).view(np.int8)


def _codes(bits: np.ndarray, width: int, shared: np.ndarray, work: np.ndarray, limits: np.ndarray) -> None:
    """Shared exponents (into ``shared``) and sign-magnitude codes (into ``work[0]``) of the
    float32 ``bits``, 16 values a block; ``work`` is 4 scratch rows of ``bits.size`` uint32 and
    ``limits`` two rows holding 31 and ``2**width - 1``."""
    codes, exps, shift, tmp = work
    np.right_shift(bits, 23, out=exps)
    np.bitwise_and(exps, 0xFF, out=exps)
    by_block = exps.reshape(-1, BLOCK_VALUES)
    np.maximum(by_block[:, 0], by_block[:, 1], out=shared)
    for column in range(2, BLOCK_VALUES):
        np.maximum(shared, by_block[:, column], out=shared)
    np.subtract(np.repeat(shared, BLOCK_VALUES), exps, out=shift)
    np.minimum(shift, limits[0], out=shift)  # a mantissa has 24 bits: any shift past 23 gives 0
    np.bitwise_and(bits, 0x7FFFFF, out=codes)
    np.bitwise_or(codes, 0x800000, out=codes)
    if shared.min() < 24:  # only then can a subnormal's (absent) leading 1 survive the shift
        np.multiply(codes, exps != 0, out=codes)
    np.right_shift(codes, shift, out=codes)
    dropped = 24 - width
    np.right_shift(codes, dropped, out=tmp)  # round to nearest even: add half - 1 + lowest kept bit
    np.bitwise_and(tmp, 1, out=tmp)
    np.add(tmp, (1 << (dropped - 1)) - 1, out=tmp)
    np.add(codes, tmp, out=codes)
    np.right_shift(codes, dropped, out=codes)
    np.minimum(codes, limits[1], out=codes)  # clamp: no carry into the exponent
    # The sign moves to bit `width`; `codes + 2**width - 1` has that bit iff the magnitude is > 0.
    np.right_shift(bits, 31 - width, out=tmp)
    np.add(codes, (1 << width) - 1, out=shift)
    np.bitwise_and(tmp, shift, out=tmp)
    np.bitwise_and(tmp, 1 << width, out=tmp)
    np.bitwise_or(codes, tmp, out=codes)


def _exp_a_codes(bits: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray]:
    """The exp_a variant (5-bit shared exponent, bias 15): biased exponents below 0 become 0 with
    an empty fraction, above 31 become 31 with a full fraction; zero tests use the float32
    exponent.  Rarely used, so written for clarity rather than speed."""
    word = bits.astype(np.int64).reshape(-1, BLOCK_VALUES)
    float_exp = (word >> 23) & 0xFF
    rebiased = float_exp - _EXP_A_REBIAS
    fraction = np.where(rebiased < 0, 0, np.where(rebiased > 31, 0x7FFFFF, word & 0x7FFFFF))
    exps = np.clip(rebiased, 0, 31)
    shared = exps.max(axis=1)
    mantissa = (fraction | 0x800000) >> np.minimum(shared[:, None] - exps, 31)
    dropped = 24 - width
    magnitude = (mantissa + (1 << (dropped - 1)) - 1 + ((mantissa >> dropped) & 1)) >> dropped
    magnitude = np.where(float_exp == 0, 0, np.minimum(magnitude, (1 << width) - 1))
    sign = ((word >> 31) & 1) << width
    codes = np.where(magnitude != 0, magnitude | sign, 0)
    return shared.astype(np.uint32), codes.reshape(-1).astype(np.uint32)


def _write_codes(codes: np.ndarray, fmt: BlockFloatFormat, out: np.ndarray) -> None:
    """Pack codes (uint8, one per value) into bytes, element 0 in the low bits of each byte."""
    per_byte = fmt.codes_per_byte
    n_tiles = out.shape[0]
    if per_byte == 1:
        np.copyto(out, codes.reshape(n_tiles, -1))
        return
    grouped = codes.reshape(n_tiles, -1, per_byte)
    np.copyto(out, grouped[..., 0])
    for position in range(1, per_byte):
        np.bitwise_or(out, np.left_shift(grouped[..., position], position * fmt.code_bits), out=out)


@functools.cache
def _decode_table(fmt: BlockFloatFormat) -> np.ndarray:
    """float32 bits of every (shared exponent, code) pair, indexed ``shared << code_bits | code``."""
    width = fmt.magnitude_bits
    shared = np.arange(256, dtype=np.int64)[:, None]
    code = np.arange(1 << fmt.code_bits, dtype=np.int64)[None, :]
    sign = (code >> width) << 31
    magnitude = code & ((1 << width) - 1)
    leading = np.frexp(np.maximum(magnitude, 1))[1] - 1  # position of the leading 1
    shift = (width - 1) - leading
    exponent = shared - shift
    fraction = ((magnitude << shift) & ((1 << (width - 1)) - 1)) << (23 - (width - 1))
    value = np.where(exponent < 0, 0, sign | (exponent << 23) | fraction)
    table = np.where(magnitude == 0, sign, value).astype(np.uint32).reshape(-1)
    table.flags.writeable = False
    return table


def canonical_tiles(tiles: np.ndarray, fmt: BlockFloatFormat, values_per_tile: int) -> bool:
    """Whether packed tiles ``tiles`` (``(n, tile size)`` uint8) are exactly what packing their
    decoded values gives back: in every block, the largest magnitude has its top bit set and the
    shared exponent is in ``[W, 254]`` (so every code decodes to a normal value and the packer
    finds the same exponent and codes), or the block is all zero codes with exponent 0 (what the
    packer writes for zeros); no code has a sign without a magnitude; the exponent section's
    padding is zero.  (Decoded values of such tiles can stand in for their bytes.)  BFP8 and BFP4,
    a block's codes tested as 64-bit words (a byte or a nibble a code), :data:`CANONICAL_TILES`
    tiles at a time (their temporaries stay in cache)."""
    if fmt is BlockFloatFormat.BFP2 or tiles.ndim != 2 or tiles.shape[1] != fmt.tile_size(values_per_tile):
        return False
    return all(
        _canonical_part(tiles[start : start + CANONICAL_TILES], fmt, values_per_tile)
        for start in range(0, tiles.shape[0], CANONICAL_TILES)
    )


CANONICAL_TILES = 128
"""Tiles :func:`canonical_tiles` tests in one pass of numpy calls (128 Ki bytes of codes)."""


@functools.cache
def _code_masks(bits: int) -> tuple[np.uint64, np.uint64, np.uint64]:
    """64-bit words of ``bits``-bit codes: a 1 in each code (0x0101... or 0x1111...), each code's
    sign bit, each code's top magnitude bit."""
    ones = sum(1 << (i * bits) for i in range(64 // bits))
    return np.uint64(ones), np.uint64(ones << (bits - 1)), np.uint64(ones << (bits - 2))


def _canonical_part(tiles: np.ndarray, fmt: BlockFloatFormat, values_per_tile: int) -> bool:
    """:func:`canonical_tiles` of a few tiles."""
    blocks = values_per_tile // BLOCK_VALUES
    section = bfp_exponent_section_size(blocks)
    exps = tiles[:, :blocks]
    if section > blocks and tiles[:, blocks:section].any():
        return False
    words = np.ascontiguousarray(tiles[:, section:]).view(np.uint64).reshape(tiles.shape[0], blocks, -1)
    ones, signs, top = _code_masks(fmt.code_bits)
    merged = words[..., 0].copy()
    for i in range(1, words.shape[-1]):
        merged |= words[..., i]
    flipped = words ^ signs  # a code that is a sign alone becomes all zero bits
    borrowed = flipped - ones  # (a zero code borrows into its sign bit)
    np.invert(flipped, out=flipped)
    borrowed &= flipped
    borrowed &= signs
    if borrowed.any():
        return False
    normal = ((merged & top) != 0) & (exps >= fmt.magnitude_bits) & (exps <= 254)
    zero = (merged == 0) & (exps == 0)
    return bool((normal | zero).all())
