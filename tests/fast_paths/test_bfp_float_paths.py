"""The float32-arithmetic block-float packer and unpacker give exactly the bytes and values of the
integer rules (``block_float._codes`` and the decode table), on every kind of block: ordinary values,
zeros and subnormals, small normal exponents (the blocks redone by the integer rules), inf/NaN,
the largest exponents, and arbitrary bit patterns; with numpy's arithmetic and with torch's
(``use_torch``), and into strided outputs (a block's tile view)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from meshnn.formats import bfp_tiles, bfp_torch, block_float
from meshnn.formats.bfp_tiles import BfpUnpacker, pack_bfp
from meshnn.formats.block_float import BlockFloatFormat
from meshnn.formats.codec import decode, encode
from meshnn.formats.dtypes import DataType, bfp_exponent_section_size
from meshnn.formats.layout import Layout, Tile, tile_view

FORMATS = [BlockFloatFormat.BFP8, BlockFloatFormat.BFP4, BlockFloatFormat.BFP2]
KERNELS = {"numpy": False, "torch": True}  # use_torch: the chunks here are below torch's threshold
VALUES_PER_TILE = [1024, 256, 32]
N_VALUES = 1 << 13


def block_exponents(rng: np.random.Generator, low: int, high: int) -> np.ndarray:
    """Random float32 bits whose blocks have exponents near a per-block value in [low, high)."""
    bits = rng.integers(0, 2**32, N_VALUES, dtype=np.uint64).astype(np.uint32)
    base = rng.integers(low, high, N_VALUES // block_float.BLOCK_VALUES).repeat(block_float.BLOCK_VALUES)
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
    """Packed tiles by the integer rules of ``block_float._codes`` (the reference)."""
    width = fmt.magnitude_bits
    work = np.empty((4, bits.size), np.uint32)
    limits = np.empty((2, bits.size), np.uint32)
    limits[0], limits[1] = 31, (1 << width) - 1
    shared = np.empty(bits.size // block_float.BLOCK_VALUES, np.uint32)
    block_float._codes(bits, width, shared, work, limits)
    n_tiles = bits.size // values_per_tile
    blocks = values_per_tile // block_float.BLOCK_VALUES
    section = bfp_exponent_section_size(blocks)
    grouped = work[0].reshape(n_tiles, -1, fmt.codes_per_byte)
    codes = np.zeros(grouped.shape[:2], np.uint32)
    for position in range(fmt.codes_per_byte):
        codes |= grouped[..., position] << (position * fmt.code_bits)
    out = np.zeros((n_tiles, section + codes.shape[1]), np.uint8)
    out[:, :blocks] = shared.reshape(n_tiles, blocks)
    out[:, section:] = codes
    return out


def float_pack(bits: np.ndarray, fmt: BlockFloatFormat, values_per_tile: int, use_torch: bool = False) -> np.ndarray:
    tiles = bits.view(np.float32).reshape(-1, values_per_tile)
    return pack_bfp(tiles, fmt, use_torch=use_torch, chunk_values=2048)  # several chunks: scratch reuse


@pytest.mark.parametrize("kernel", list(KERNELS))
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("values_per_tile", VALUES_PER_TILE)
@pytest.mark.parametrize("fmt", FORMATS)
def test_float_packing_equals_the_integer_rules(fmt, values_per_tile, kind, kernel, rng):
    bits = bit_patterns(kind, rng)
    got = float_pack(bits, fmt, values_per_tile, KERNELS[kernel])
    np.testing.assert_array_equal(got, integer_pack(bits, fmt, values_per_tile))


def table_unpack(packed: np.ndarray, fmt: BlockFloatFormat, values_per_tile: int) -> np.ndarray:
    """float32 bits of packed tiles through the decode table (the reference)."""
    blocks = values_per_tile // block_float.BLOCK_VALUES
    section = bfp_exponent_section_size(blocks)
    code_bytes = packed[:, section:].astype(np.uint32)
    mask = (1 << fmt.code_bits) - 1
    parts = [(code_bytes >> (k * fmt.code_bits)) & mask for k in range(fmt.codes_per_byte)]
    codes = np.stack(parts, axis=-1).reshape(packed.shape[0], blocks, block_float.BLOCK_VALUES)
    shared = packed[:, :blocks].astype(np.uint32)[:, :, None]
    return block_float._decode_table(fmt)[(shared << fmt.code_bits) | codes].reshape(packed.shape[0], -1)


def random_packed(fmt: BlockFloatFormat, values_per_tile: int, exponents: str, rng: np.random.Generator) -> np.ndarray:
    """Random packed tiles (N_VALUES values) whose shared exponents are of the given kind."""
    n_tiles = N_VALUES // values_per_tile
    packed = rng.integers(0, 256, (n_tiles, fmt.tile_size(values_per_tile))).astype(np.uint8)
    blocks = values_per_tile // block_float.BLOCK_VALUES
    if exponents == "ordinary":
        packed[:, :blocks] = rng.integers(100, 160, (n_tiles, blocks))
    elif exponents == "edges":  # below W (subnormal-pattern results), 255 (inf / NaN patterns)
        packed[:, :blocks] = rng.choice([0, 1, 2, 5, 6, 7, 8, 253, 254, 255], (n_tiles, blocks))
    return packed


@pytest.mark.parametrize("kernel", list(KERNELS))
@pytest.mark.parametrize("exponents", ["random", "ordinary", "edges"])
@pytest.mark.parametrize("values_per_tile", VALUES_PER_TILE)
@pytest.mark.parametrize("fmt", FORMATS)
def test_float_unpacking_equals_the_decode_table(fmt, values_per_tile, exponents, kernel, rng):
    unpacker = BfpUnpacker(fmt, values_per_tile, chunk_values=2048, use_torch=KERNELS[kernel])
    packed = random_packed(fmt, values_per_tile, exponents, rng)
    n_tiles = packed.shape[0]
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


@pytest.mark.parametrize("kernel", list(KERNELS))
@pytest.mark.parametrize("fmt", FORMATS)
def test_unpacking_into_a_tile_view_untilizes(fmt, kernel, rng):
    """A strided ``out`` (the tile view of a block of a larger matrix) gets the values in place:
    the same as unpacking into tiles and untilizing, rare (table) blocks included."""
    packed = random_packed(fmt, 1024, "edges", rng)[:8]  # 8 tiles: a 64 x 128 block
    unpacker = BfpUnpacker(fmt, 1024, use_torch=KERNELS[kernel])
    tiles = np.empty((8, 1024), np.float32)
    unpacker.unpack_into(packed, tiles)
    matrix = np.full((64, 256), 7.0, np.float32)
    grid = tile_view(matrix[:, 64:192].reshape(1, 64, 128), Tile())
    unpacker.unpack_into(packed, grid)
    want = np.full((64, 256), 7.0, np.float32)
    want_grid = tile_view(want[:, 64:192].reshape(1, 64, 128), Tile())
    np.copyto(want_grid, tiles.reshape(want_grid.shape))
    np.testing.assert_array_equal(matrix.view(np.uint32), want.view(np.uint32))


def test_torch_is_checked_against_numpy_once_and_then_used():
    assert bfp_tiles._torch_bfp_agrees(torch)
    assert bfp_tiles.torch_for(bfp_tiles.TORCH_BFP_MIN_VALUES) is torch
    assert bfp_tiles.torch_for(bfp_tiles.TORCH_BFP_MIN_VALUES - 1) is None  # small chunks: numpy


@pytest.mark.parametrize("fmt", FORMATS)
def test_large_chunks_pack_and_unpack_alike_with_either_kernel(fmt, rng):
    """Chunks past torch's threshold (the path ``encode`` / ``decode`` take with torch loaded)."""
    bits = rng.integers(0, 2**32, bfp_torch.TORCH_CHUNK_VALUES, dtype=np.uint64).astype(np.uint32)
    bits[: bits.size // 2] = rng.standard_normal(bits.size // 2).astype(np.float32).view(np.uint32)
    tiles = bits.view(np.float32).reshape(-1, 1024)
    packed = [bfp_tiles.pack_bfp(tiles, fmt, use_torch=choice) for choice in (False, True)]
    np.testing.assert_array_equal(packed[0], packed[1])
    values = [bfp_tiles.unpack_bfp(packed[0], fmt, 1024, use_torch=choice) for choice in (False, True)]
    np.testing.assert_array_equal(values[0].view(np.uint32), values[1].view(np.uint32))


def test_encoding_a_reversed_view_with_torch_loaded_equals_its_copy(rng):
    """torch takes no negative strides: such a source is tilized by numpy, packed by torch."""
    values = rng.standard_normal((1024, 1024)).astype(np.float32)[::-1]
    raw = encode(values, DataType.BFLOAT8_B, Layout.TILE)
    np.testing.assert_array_equal(raw, encode(np.ascontiguousarray(values), DataType.BFLOAT8_B, Layout.TILE))
    out = np.zeros((1024, 1024), np.float32)[::-1]  # decoded through numpy's copy into it
    decode(raw, DataType.BFLOAT8_B, Layout.TILE, (1024, 1024), out=out)
    want = decode(raw, DataType.BFLOAT8_B, Layout.TILE, (1024, 1024))
    np.testing.assert_array_equal(out.view(np.uint32), want.view(np.uint32))
