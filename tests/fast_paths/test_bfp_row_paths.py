"""The row packers (``BfpRowPacker`` / ``BfpRowUnpacker``: block floats computed in a matrix's own
row-major order, only the codes moved into tile order) give exactly the bytes and values of the
tilize-then-pack reference (numpy's arithmetic), for every tile shape, every kind of block, strided
sources and targets, several chunks (whole and partial tile rows), and through ``encode`` /
``decode`` with torch loaded (padding, batches, transposed faces, unaligned buffers)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from test_bfp_float_paths import KINDS, N_VALUES, bit_patterns, random_packed

from meshnn.formats.bfp_rows import BfpRowPacker, BfpRowUnpacker
from meshnn.formats.bfp_tiles import pack_bfp, unpack_bfp
from meshnn.formats.block_float import BlockFloatFormat
from meshnn.formats.codec import byte_view, decode, encode
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import TILE_SHAPES, Layout, Tile, tilize, untilize

FORMATS = [BlockFloatFormat.BFP8, BlockFloatFormat.BFP4, BlockFloatFormat.BFP2]


def matrix_of(kind: str, height: int, width: int, rng: np.random.Generator) -> np.ndarray:
    """A (height, width) float32 block of a larger matrix (strided rows) filled with ``kind`` values."""
    bits = np.concatenate([bit_patterns(kind, rng) for _ in range(-(-height * width // N_VALUES))])
    big = np.zeros((height + 3, width + 48), np.float32)
    block = big[1 : height + 1, 16 : width + 16]
    block[...] = bits[: height * width].view(np.float32).reshape(height, width)
    return block


def reference_pack(matrix: np.ndarray, fmt: BlockFloatFormat, tile: Tile) -> np.ndarray:
    return pack_bfp(tilize(matrix, tile), fmt, use_torch=False)


def row_pack(matrix: np.ndarray, fmt: BlockFloatFormat, tile: Tile, chunk_tiles: int) -> np.ndarray:
    height, width = tile.tile_shape
    packer = BfpRowPacker(fmt, tile.tile_shape, tile.face_shape[0], chunk_values=chunk_tiles * height * width)
    rows = matrix.reshape(-1, height, matrix.shape[1])
    per_row = matrix.shape[1] // width
    out = np.empty((rows.shape[0] * per_row, packer.tile_size), np.uint8)
    for row in range(rows.shape[0]):  # partial rows of chunk_tiles tiles
        for col in range(0, per_row, packer.chunk_tiles):
            stop = min(per_row, col + packer.chunk_tiles)
            first = row * per_row + col
            packer.pack_rows(torch, rows[row : row + 1, :, col * width : stop * width], out[first : first + stop - col])
    return out


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("tile_shape", TILE_SHAPES)
@pytest.mark.parametrize("fmt", FORMATS)
def test_row_packing_equals_tilize_then_pack(fmt, tile_shape, kind, rng):
    tile = Tile(tile_shape)
    height, width = tile_shape
    matrix = matrix_of(kind, 2 * height, 3 * width, rng)
    got = row_pack(matrix, fmt, tile, chunk_tiles=2)
    np.testing.assert_array_equal(got, reference_pack(matrix, fmt, tile))


@pytest.mark.parametrize("exponents", ["random", "ordinary", "edges"])
@pytest.mark.parametrize("tile_shape", TILE_SHAPES)
@pytest.mark.parametrize("fmt", FORMATS)
def test_row_unpacking_equals_unpack_then_untilize(fmt, tile_shape, exponents, rng):
    tile = Tile(tile_shape)
    height, width = tile_shape
    values_per_tile = height * width
    packed = random_packed(fmt, values_per_tile, exponents, rng)[:6]  # 2 tile rows of 3 tiles
    if fmt is BlockFloatFormat.BFP8:
        packed[0, -40:] = 0x80  # sign, no magnitude: -0.0
    want = untilize(unpack_bfp(packed, fmt, values_per_tile, use_torch=False), (2 * height, 3 * width), tile)
    unpacker = BfpRowUnpacker(fmt, tile_shape, tile.face_shape[0], chunk_values=3 * values_per_tile)
    big = np.full((2 * height + 2, 3 * width + 32), 7.0, np.float32)
    target = big[1:-1, 16:-16]
    rows = target.reshape(2, height, 3 * width)
    for row in range(2):
        unpacker.unpack_rows(torch, packed[3 * row : 3 * row + 3], rows[row : row + 1])
    np.testing.assert_array_equal(target.view(np.uint32), want.view(np.uint32))
    assert np.all(big[0] == 7.0) and np.all(big[:, :16] == 7.0) and np.all(big[:, -16:] == 7.0)


def test_negative_zero_codes_of_every_format_decode_to_negative_zero():
    for fmt in FORMATS:
        unpacker = BfpRowUnpacker(fmt, (32, 32), 16, chunk_values=1024)
        packed = np.zeros((1, unpacker.tile_size), np.uint8)
        packed[0, :64] = 127
        sign_only = 1 << fmt.magnitude_bits
        packed[0, 64:] = sum(sign_only << (k * fmt.code_bits) for k in range(fmt.codes_per_byte))
        got = np.empty((1, 32, 32), np.float32)
        unpacker.unpack_rows(torch, packed, got)
        assert np.all(got.view(np.uint32) == 0x80000000), fmt


LARGE = (2, 96, 1376)  # batches, a height and width of 3 x 43 tiles: over torch's threshold


@pytest.mark.parametrize("dtype", [DataType.BFLOAT8_B, DataType.BFLOAT4_B])
@pytest.mark.parametrize(
    "case", ["aligned", "strided block", "padded", "transposed faces", "col_tilize", "small tiles"]
)
def test_encode_and_decode_with_torch_equal_the_numpy_reference(dtype, case, rng):
    values = rng.standard_normal(LARGE).astype(np.float32)
    values[0, :32, :64] = 0.0
    values[1, 32:64, :48] *= 1e-38  # small exponents: blocks redone by the integer rules
    values[1, 0, 5] = np.nan
    tile, kwargs = Tile(), {}
    if case == "strided block":
        values = np.pad(values, ((0, 0), (0, 32), (16, 16)))[:, 16:112, 16:-16]
    elif case == "padded":
        values = values[:, :90, :1370]
    elif case == "transposed faces":
        tile = Tile((32, 32), transpose_tile=True)
    elif case == "col_tilize":
        kwargs = {"col_tilize": True}
        values = values[:, :, :1344]
    elif case == "small tiles":
        tile = Tile((16, 32))
    raw = encode(values, dtype, Layout.TILE, tile=tile, **kwargs)
    matrices = np.swapaxes(values, -1, -2) if kwargs else values
    fmt = BlockFloatFormat.of(dtype)
    want = pack_bfp(tilize(np.ascontiguousarray(matrices), tile, pad_value=0.0), fmt, use_torch=False).reshape(-1)
    np.testing.assert_array_equal(raw, want)
    shape = matrices.shape
    expect = untilize(unpack_bfp(want, fmt, tile.values_per_tile, use_torch=False), shape, tile)
    np.testing.assert_array_equal(
        decode(raw, dtype, Layout.TILE, shape, tile=tile).view(np.uint32), expect.view(np.uint32)
    )
    out = np.full((shape[0], shape[1] + 32, shape[2] + 64), 3.0, np.float32)
    block = out[:, 32:, 32:-32]
    decode(raw, dtype, Layout.TILE, shape, tile=tile, out=block)
    np.testing.assert_array_equal(block.view(np.uint32), expect.view(np.uint32))
    assert np.all(out[:, :32] == 3.0) and np.all(out[:, :, :32] == 3.0) and np.all(out[:, :, -32:] == 3.0)


def test_unaligned_buffers_pack_and_unpack_alike(rng):
    """Code sections that cannot be viewed as words (an odd offset) take the byte-copy route."""
    values = rng.standard_normal((128, 1024)).astype(np.float32)
    want = encode(values, DataType.BFLOAT8_B, Layout.TILE)
    backing = np.zeros(want.size + 1, np.uint8)
    odd = backing[1:]
    encode(values, DataType.BFLOAT8_B, Layout.TILE, out=odd)
    np.testing.assert_array_equal(odd, want)
    got = decode(odd, DataType.BFLOAT8_B, Layout.TILE, (128, 1024))
    np.testing.assert_array_equal(
        got.view(np.uint32), decode(want, DataType.BFLOAT8_B, Layout.TILE, (128, 1024)).view(np.uint32)
    )


def test_raw_word_copies_keep_every_bit_pattern(rng):
    """Codes move as 16-byte raw words: every byte pattern (an sNaN double's included) survives."""
    fmt = BlockFloatFormat.BFP8
    packed = rng.integers(0, 256, (8, fmt.tile_size(1024))).astype(np.uint8)
    packed[:, :64] = 130
    snan = np.frombuffer(np.array([0x7FF0000000000001, 0xFFF0000000000001], "<u8").tobytes(), np.uint8)
    packed[:, 64:80] = snan
    unpacker = BfpRowUnpacker(fmt, (32, 32), 16, chunk_values=8 * 1024)
    values = np.empty((1, 32, 256), np.float32)
    unpacker.unpack_rows(torch, packed, values)
    want = untilize(unpack_bfp(packed, fmt, 1024, use_torch=False), (32, 256))
    np.testing.assert_array_equal(values[0].view(np.uint32), want.view(np.uint32))
    exact = np.ldexp(np.arange(-127, 128, dtype=np.float32), 130 - 133)  # every code, exactly representable
    matrix = np.resize(exact, (32, 256)).astype(np.float32)
    matrix[:, ::16] = 127 * 2.0 ** (130 - 133)  # every block's exponent is 130
    packer = BfpRowPacker(fmt, (32, 32), 16, chunk_values=8 * 1024)
    again = np.empty_like(packed)
    packer.pack_rows(torch, matrix.reshape(1, 32, 256), again)
    np.testing.assert_array_equal(again, reference_pack(matrix, fmt, Tile()))


@pytest.mark.parametrize("dtype", [DataType.FLOAT32, DataType.BFLOAT16, DataType.BFLOAT8_B, DataType.UINT32])
def test_decoding_into_a_block_whose_batches_are_apart_writes_the_block(dtype, rng):
    """``out[:, 32:]`` of a batched array cannot be tiled as a view (batch and height do not merge):
    the values are decoded aside and copied in, never into a silent copy of the block."""
    values = rng.standard_normal((2, 64, 64)).astype(np.float32)
    if dtype is DataType.UINT32:
        values = rng.integers(0, 2**32, (2, 64, 64), dtype=np.uint64).astype(np.uint32)
    raw = encode(values, dtype, Layout.TILE)
    want = decode(raw, dtype, Layout.TILE, (2, 64, 64))
    out = np.zeros((2, 96, 64), want.dtype)
    decode(raw, dtype, Layout.TILE, (2, 64, 64), out=out[:, 32:])
    np.testing.assert_array_equal(out[:, 32:].view(np.uint8), want.view(np.uint8))
    assert not out[:, :32].view(np.uint8).any()
    assert byte_view(out[:, 32:], dtype, Layout.TILE) is None


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "bfloat8_b"])
def test_a_batched_tensor_sharded_on_height_and_width_comes_back_whole(dtype):
    """Each shard's block of the composed result, ``out[:, h0:h1, w0:w1]``, has batches further
    apart than its height: it is decoded aside and copied in (it once read into a lost copy)."""
    import meshnn as ttnn

    mesh = ttnn.open_mesh_device(ttnn.MeshShape(2, 4), system="t3k")
    try:
        host = torch.randn(2, 128, 256, generator=torch.Generator().manual_seed(0))
        mapper = ttnn.ShardTensor2dMesh(mesh, mesh_shape=(2, 4), dims=(1, 2))
        composer = ttnn.ConcatMesh2dToTensor(mesh, mesh_shape=(2, 4), dims=(1, 2))
        kind = getattr(ttnn, dtype)
        tensor = ttnn.from_torch(host, dtype=kind, layout=ttnn.TILE_LAYOUT, device=mesh, mesh_mapper=mapper)
        got = ttnn.to_torch(tensor, mesh_composer=composer)
        whole = ttnn.to_torch(ttnn.from_torch(host, dtype=kind, layout=ttnn.TILE_LAYOUT))
        assert torch.equal(got.float().view(torch.int32), whole.float().view(torch.int32))
    finally:
        mesh.close()
