"""The float32-arithmetic block-float packer and unpacker give exactly the bytes and values of the
integer rules (``bfloat._codes`` and the decode table), on every kind of block: ordinary values,
zeros and subnormals, small normal exponents (the blocks redone by the integer rules), inf/NaN,
the largest exponents, and arbitrary bit patterns; and the prefaulted output arrays."""

from __future__ import annotations

import numpy as np
import pytest

from meshnn.tensor import bfloat
from meshnn.tensor.bfloat import BfpPacker, BfpUnpacker, BlockFloatFormat
from meshnn.tensor.dtypes import bfp_exponent_section_size

FORMATS = [BlockFloatFormat.BFP8, BlockFloatFormat.BFP4, BlockFloatFormat.BFP2]
VALUES_PER_TILE = [1024, 256, 32]
N_VALUES = 1 << 13


def block_exponents(rng: np.random.Generator, low: int, high: int) -> np.ndarray:
    """Random float32 bits whose blocks have exponents near a per-block value in [low, high)."""
    bits = rng.integers(0, 2**32, N_VALUES, dtype=np.uint64).astype(np.uint32)
    base = rng.integers(low, high, N_VALUES // bfloat.BLOCK_VALUES).repeat(bfloat.BLOCK_VALUES)
    exps = np.clip(base - rng.integers(0, 30, N_VALUES), 0, 255).astype(np.uint32)
    return (bits & 0x807FFFFF) | (exps << 23)


def bit_patterns(kind: str, rng: np.random.Generator) -> np.ndarray:
    if kind == "random bits":
        return rng.integers(0, 2**32, N_VALUES, dtype=np.uint64).astype(np.uint32)
    if kind == "normal values":
        return rng.standard_normal(N_VALUES).astype(np.float32).view(np.uint32)
    if kind == "small exponents":
        return block_exponents(rng, 0, 40)
    if kind == "large exponents":
        return block_exponents(rng, 200, 256)
    values = rng.standard_normal(N_VALUES).astype(np.float32)  # "zeros and specials"
    values[: N_VALUES // 2] = 0.0
    values[rng.random(N_VALUES) < 0.2] = -0.0
    values[rng.random(N_VALUES) < 0.01] = np.inf
    values[rng.random(N_VALUES) < 0.01] = np.nan
    values[rng.random(N_VALUES) < 0.05] = 1e-40  # subnormal
    values[rng.random(N_VALUES) < 0.05] = 127.75  # rounds past the largest magnitude
    return values.view(np.uint32)


KINDS = ["random bits", "normal values", "small exponents", "large exponents", "zeros and specials"]


def integer_pack(bits: np.ndarray, fmt: BlockFloatFormat, values_per_tile: int) -> np.ndarray:
    """Packed tiles by the integer rules of ``bfloat._codes`` (the reference)."""
    width = fmt.magnitude_bits
    work = np.empty((4, bits.size), np.uint32)
    limits = np.empty((2, bits.size), np.uint32)
    limits[0], limits[1] = 31, (1 << width) - 1
    shared = np.empty(bits.size // bfloat.BLOCK_VALUES, np.uint32)
    bfloat._codes(bits, width, shared, work, limits)
    n_tiles = bits.size // values_per_tile
    blocks = values_per_tile // bfloat.BLOCK_VALUES
    section = bfp_exponent_section_size(blocks)
    grouped = work[0].reshape(n_tiles, -1, fmt.codes_per_byte)
    codes = np.zeros(grouped.shape[:2], np.uint32)
    for position in range(fmt.codes_per_byte):
        codes |= grouped[..., position] << (position * fmt.code_bits)
    out = np.zeros((n_tiles, section + codes.shape[1]), np.uint8)
    out[:, :blocks] = shared.reshape(n_tiles, blocks)
    out[:, section:] = codes
    return out


def float_pack(bits: np.ndarray, fmt: BlockFloatFormat, values_per_tile: int) -> np.ndarray:
    packer = BfpPacker(fmt, values_per_tile, chunk_values=2048)  # several chunks: scratch reuse
    tiles = bits.view(np.float32).reshape(-1, values_per_tile)
    out = np.empty((tiles.shape[0], packer.tile_size), np.uint8)
    for start in range(0, tiles.shape[0], packer.chunk_tiles):
        chunk = tiles[start : start + packer.chunk_tiles]
        buffer = packer.tiles_buffer(chunk.shape[0])
        np.copyto(buffer, chunk)
        packer.pack_into(buffer, out[start : start + chunk.shape[0]])
    return out


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("values_per_tile", VALUES_PER_TILE)
@pytest.mark.parametrize("fmt", FORMATS)
def test_float_packing_equals_the_integer_rules(fmt, values_per_tile, kind, rng):
    bits = bit_patterns(kind, rng)
    np.testing.assert_array_equal(float_pack(bits, fmt, values_per_tile), integer_pack(bits, fmt, values_per_tile))


def table_unpack(packed: np.ndarray, fmt: BlockFloatFormat, values_per_tile: int) -> np.ndarray:
    """float32 bits of packed tiles through the decode table (the reference)."""
    blocks = values_per_tile // bfloat.BLOCK_VALUES
    section = bfp_exponent_section_size(blocks)
    code_bytes = packed[:, section:].astype(np.uint32)
    mask = (1 << fmt.code_bits) - 1
    parts = [(code_bytes >> (k * fmt.code_bits)) & mask for k in range(fmt.codes_per_byte)]
    codes = np.stack(parts, axis=-1).reshape(packed.shape[0], blocks, bfloat.BLOCK_VALUES)
    shared = packed[:, :blocks].astype(np.uint32)[:, :, None]
    return bfloat._decode_table(fmt)[(shared << fmt.code_bits) | codes].reshape(packed.shape[0], -1)


@pytest.mark.parametrize("exponents", ["random", "ordinary", "edges"])
@pytest.mark.parametrize("values_per_tile", VALUES_PER_TILE)
@pytest.mark.parametrize("fmt", FORMATS)
def test_float_unpacking_equals_the_decode_table(fmt, values_per_tile, exponents, rng):
    unpacker = BfpUnpacker(fmt, values_per_tile, chunk_values=2048)
    n_tiles = N_VALUES // values_per_tile
    packed = rng.integers(0, 256, (n_tiles, unpacker.tile_size)).astype(np.uint8)
    blocks = values_per_tile // bfloat.BLOCK_VALUES
    if exponents == "ordinary":
        packed[:, :blocks] = rng.integers(100, 160, (n_tiles, blocks))
    elif exponents == "edges":  # below W (subnormal-pattern results), 255 (inf / NaN patterns)
        packed[:, :blocks] = rng.choice([0, 1, 2, 5, 6, 7, 8, 253, 254, 255], (n_tiles, blocks))
    got = np.empty((n_tiles, values_per_tile), np.float32)
    for start in range(0, n_tiles, unpacker.chunk_tiles):
        chunk = packed[start : start + unpacker.chunk_tiles]
        unpacker.unpack_into(chunk, got[start : start + chunk.shape[0]])
    np.testing.assert_array_equal(got.view(np.uint32), table_unpack(packed, fmt, values_per_tile))


def test_negative_zero_codes_decode_to_negative_zero():
    unpacker = BfpUnpacker(BlockFloatFormat.BFP8, 1024)
    packed = np.zeros((1, unpacker.tile_size), np.uint8)
    packed[0, :64] = 127
    packed[0, 64:] = 0x80
    got = np.empty((1, 1024), np.float32)
    unpacker.unpack_into(packed, got)
    assert np.all(got.view(np.uint32) == 0x80000000)
