"""bfloat16 and block-float bit formats against the golden data of the real ttnn 0.81.1."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.bfloat16 import bfloat16_bits_to_float32, float32_to_bfloat16_bits, round_to_bfloat16
from meshnn.formats.bfp_tiles import BfpPacker, pack_bfp, unpack_bfp
from meshnn.formats.block_float import BlockFloatFormat
from meshnn.formats.dtypes import DataType

GOLDEN = Path(__file__).resolve().parent.parent / "golden"
TILES = 16  # bfp_pack input: 16 tiles of 32x32 stacked vertically


@cache
def golden(name: str) -> tuple[dict, dict[str, np.ndarray]]:
    with np.load(GOLDEN / f"{name}.npz") as arrays_:
        data = {key: arrays_[key] for key in arrays_.files}
    return json.loads((GOLDEN / f"{name}.json").read_text()), data


def to_faces(matrix: np.ndarray) -> np.ndarray:
    """(T*32, 32) stacked tiles -> (T, 1024) in face order (face 0..3, each row-major)."""
    return matrix.reshape(-1, 2, 16, 2, 16).transpose(0, 1, 3, 2, 4).reshape(-1, 1024)


def from_faces(tiles: np.ndarray) -> np.ndarray:
    return tiles.reshape(-1, 2, 2, 16, 16).transpose(0, 1, 3, 2, 4).reshape(-1, 32)


def rne_model(bits: np.ndarray) -> np.ndarray:
    """The golden README's formula: (b + 0x7FFF + ((b >> 16) & 1)) >> 16, any NaN -> 0x7FC0."""
    wide = bits.astype(np.uint64)
    out = ((wide + 0x7FFF + ((wide >> 16) & 1)) >> 16).astype(np.uint16)
    out[np.isnan(bits.view(np.float32))] = 0x7FC0
    return out


# --- bfloat16 -----------------------------------------------------------------------------------


def test_float32_to_bfloat16_matches_ttnn_for_every_stored_pattern():
    _, data = golden("bf16_convert")
    values = data["input_f32_bits"].view(np.float32)
    assert values.size == 32512
    np.testing.assert_array_equal(float32_to_bfloat16_bits(values), data["np_rm"])


def test_bfloat16_to_float32_is_a_16_bit_shift_for_all_65536_patterns():
    _, data = golden("bf16_convert")
    patterns = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
    got = bfloat16_bits_to_float32(patterns).view(np.uint32)
    np.testing.assert_array_equal(got, data["bf16_to_f32_typecast"])
    assert got[0x7F81] == 0x7F810000  # a signalling NaN keeps its payload


def test_every_nan_becomes_0x7fc0_and_non_nans_round_trip():
    patterns = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
    again = float32_to_bfloat16_bits(bfloat16_bits_to_float32(patterns))
    is_nan = (patterns & 0x7FFF) > 0x7F80
    assert is_nan.sum() == 2 * 127
    assert np.all(again[is_nan] == 0x7FC0)
    np.testing.assert_array_equal(again[~is_nan], patterns[~is_nan])


@settings(max_examples=60, deadline=None)
@given(arrays(np.uint32, st.integers(1, 300), elements=st.integers(0, 2**32 - 1)))
def test_ml_dtypes_rounding_equals_the_integer_formula(bits):
    np.testing.assert_array_equal(float32_to_bfloat16_bits(bits.view(np.float32)), rne_model(bits))


@pytest.mark.parametrize("in_place", [False, True])
def test_round_to_bfloat16_is_the_cast_there_and_back_for_the_golden_patterns(in_place):
    """The ops' rounding (float32 kept, NaNs found by a maximum first) against the host cast, on
    ttnn's stored patterns (NaNs, infinities, subnormals, ties) and on arrays without any NaN."""
    _, data = golden("bf16_convert")
    values = data["input_f32_bits"].view(np.float32)
    finite = values[np.isfinite(values)]
    for case in (values, finite, values[:1], np.zeros(0, np.float32)):
        source = np.ascontiguousarray(case)
        want = bfloat16_bits_to_float32(float32_to_bfloat16_bits(source)).view(np.uint32)
        given_ = source.copy()
        got = round_to_bfloat16(given_, in_place=in_place)
        np.testing.assert_array_equal(got.view(np.uint32), want)
        assert np.shares_memory(got, given_) == (in_place and source.size > 0)
        if not in_place:
            np.testing.assert_array_equal(given_.view(np.uint32), source.view(np.uint32))


def test_bfloat16_conversion_rejects_other_float_types():
    with pytest.raises(MeshnnTypeError, match="float64"):
        float32_to_bfloat16_bits(np.zeros(3))


# --- block floats: packing ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fmt", "key", "tile_size"),
    [
        (BlockFloatFormat.BFP8, "bfp8_np_tile", 1088),
        (BlockFloatFormat.BFP4, "bfp4_np_tile", 576),
        (BlockFloatFormat.BFP2, "bfp2_bfp_utils_pack", 320),
    ],
)
def test_pack_reproduces_every_golden_byte(fmt, key, tile_size):
    _, data = golden("bfp_pack")
    tiles = to_faces(data["input_f32_bits"].view(np.float32))
    packed = pack_bfp(tiles, fmt)
    assert packed.shape == (TILES, tile_size) == (TILES, fmt.tile_size(1024))
    np.testing.assert_array_equal(packed.reshape(-1), data[key])


def test_pack_exp_a_variant_reproduces_every_golden_byte():
    _, data = golden("bfp_pack")
    tiles = to_faces(data["input_f32_bits"].view(np.float32))
    packed = pack_bfp(tiles, BlockFloatFormat.BFP8, exp_a=True)
    np.testing.assert_array_equal(packed.reshape(-1), data["bfp8_exp_a_bfp_utils_pack"])
    assert packed.reshape(TILES, -1)[:, :64].max() == 31  # 5-bit shared exponents


def block(packed: np.ndarray, names: list[str], name: str, fmt: BlockFloatFormat) -> tuple[int, np.ndarray]:
    """(shared exponent, the 16 codes) of the first crafted block called ``name``."""
    k = names.index(name)
    tile, index = divmod(k, 64)
    codes_bytes = packed.reshape(TILES, -1)[tile, 64 + index * 16 // fmt.codes_per_byte :]
    raw = codes_bytes[: 16 // fmt.codes_per_byte].astype(np.uint32)
    width = fmt.code_bits
    codes = np.stack([(raw >> (i * width)) & ((1 << width) - 1) for i in range(fmt.codes_per_byte)], axis=1)
    return int(packed.reshape(TILES, -1)[tile, index]), codes.reshape(-1)


def test_crafted_blocks_pack_as_the_golden_findings_say():
    meta, data = golden("bfp_pack")
    names = meta["block_names"]
    bfp8 = data["bfp8_np_tile"]
    fmt = BlockFloatFormat.BFP8
    exp, codes = block(bfp8, names, "all -0", fmt)
    assert exp == 0 and not codes.any()  # the sign is cleared with a zero magnitude
    exp, codes = block(bfp8, names, "subnormal + min normal", fmt)
    assert exp == 1 and codes[0] == 0x40 and codes[1] == 0 and codes[4] == 0xC0  # subnormal -> 0
    exp, codes = block(bfp8, names, "+inf with normals", fmt)
    assert exp == 255 and codes[0] == 0x40 and not codes[1:].any()  # finite values flushed
    assert block(bfp8, names, "qNaN with normals", fmt)[1][0] == 0x60
    assert block(bfp8, names, "-qNaN with normals", fmt)[1][0] == 0xE0
    exp, codes = block(bfp8, names, "round-up overflow max 1.9999999", fmt)
    assert exp == 127 and codes[0] == 0x7F  # clamped, no carry into the exponent
    codes = block(bfp8, names, "bfp8 ties at exp0", fmt)[1]
    assert list(codes[:4]) == [0x40, 0x40, 0x42, 0x42]  # ties go to the even magnitude
    exp, codes = block(data["bfp4_np_tile"], names, "integers 0..15", BlockFloatFormat.BFP4)
    assert exp == 130 and list(codes[:8]) == [0, 0, 1, 2, 2, 2, 3, 4]  # ties 1, 3, 5, 7 go to even


def test_packer_reuses_its_scratch_across_chunks_without_mixing_them():
    rng = np.random.default_rng(5)
    tiles = rng.standard_normal((40, 1024)).astype(np.float32)
    packer = BfpPacker(BlockFloatFormat.BFP8, 1024, chunk_values=3 * 1024)
    assert packer.chunk_tiles == 3
    out = np.empty((40, packer.tile_size), np.uint8)
    for start in range(0, 40, 3):
        buffer = packer.tiles_buffer(min(3, 40 - start))
        buffer[...] = tiles[start : start + 3]
        packer.pack_into(buffer, out[start : start + 3])
    np.testing.assert_array_equal(out, pack_bfp(tiles, BlockFloatFormat.BFP8))


def test_small_tiles_pad_the_exponent_section_with_zeros():
    values = np.linspace(-3, 3, 32, dtype=np.float32).reshape(1, 32)  # one Tile([1, 32]): 2 blocks
    packed = pack_bfp(values, BlockFloatFormat.BFP8)
    assert packed.shape == (1, 48)
    assert packed[0, 0] == packed[0, 1] == 128 and not packed[0, 2:16].any()


def test_pack_rejects_partial_blocks_and_wrong_types():
    with pytest.raises(MeshnnValueError, match="whole blocks of 16"):
        pack_bfp(np.zeros((2, 24), np.float32), BlockFloatFormat.BFP8)
    with pytest.raises(MeshnnTypeError, match="float32"):
        pack_bfp(np.zeros((2, 32)), BlockFloatFormat.BFP8)
    assert BlockFloatFormat.of(DataType.BFLOAT4_B) is BlockFloatFormat.BFP4
    with pytest.raises(MeshnnValueError, match="not a block-float"):
        BlockFloatFormat.of(DataType.BFLOAT16)


# --- block floats: unpacking --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fmt", "packed_key", "decoded_keys"),
    [
        (
            BlockFloatFormat.BFP8,
            "bfp8_np_tile",
            ["bfp8_bfp_utils_unpack_bits", "bfp8_np_tile_to_numpy_bits", "bfp8_np_preserve_nan_to_numpy_bits"],
        ),
        (
            BlockFloatFormat.BFP4,
            "bfp4_np_tile",
            ["bfp4_bfp_utils_unpack_bits", "bfp4_np_tile_to_numpy_bits", "bfp4_np_enable_bfloat_opt_to_numpy_bits"],
        ),
        (BlockFloatFormat.BFP2, "bfp2_bfp_utils_pack", ["bfp2_bfp_utils_unpack_bits"]),
        (BlockFloatFormat.BFP8, "bfp8_from_torch_bf16", ["bfp8_from_torch_bf16_to_numpy_bits"]),
        (BlockFloatFormat.BFP4, "bfp4_from_torch_bf16", ["bfp4_from_torch_bf16_to_numpy_bits"]),
    ],
)
def test_unpack_reproduces_every_golden_decode(fmt, packed_key, decoded_keys):
    _, data = golden("bfp_pack")
    decoded = from_faces(unpack_bfp(data[packed_key], fmt, 1024)).view(np.uint32)
    for key in decoded_keys:
        np.testing.assert_array_equal(decoded.reshape(-1), data[key].reshape(-1), err_msg=key)


@pytest.mark.parametrize(("fmt", "name"), [(BlockFloatFormat.BFP8, "bfp8"), (BlockFloatFormat.BFP4, "bfp4")])
def test_unpack_of_arbitrary_bytes_follows_the_decoding_rules(fmt, name):
    _, data = golden("bfp_pack")
    raw = data[f"{name}_crafted_raw"]
    decoded = unpack_bfp(raw, fmt, 1024)
    np.testing.assert_array_equal(
        from_faces(decoded).view(np.uint32).reshape(-1), data[f"{name}_crafted_raw_unpack_bits"]
    )
    codes = raw.reshape(4, -1)[:, 64:]
    if fmt is BlockFloatFormat.BFP8:  # code 0x80 (sign, zero magnitude) decodes to -0.0
        negative_zero = codes == 0x80
        assert negative_zero.any()
        assert np.all(decoded.view(np.uint32)[negative_zero] == 0x80000000)
    # tile 1 has shared exponent 0: its codes decode to zeros or subnormal patterns, never a normal
    assert not ((decoded.view(np.uint32)[1] >> 23) & 0xFF).any()
    assert decoded.view(np.uint32)[1].any()


@settings(max_examples=40, deadline=None)
@given(
    arrays(
        np.float32,
        (2, 1024),
        elements=st.floats(-(2.0**100), 2.0**100, width=32, allow_subnormal=False),
    ),
    st.sampled_from([BlockFloatFormat.BFP8, BlockFloatFormat.BFP4]),
)
def test_block_float_error_is_at_most_one_step_of_the_shared_exponent(tiles, fmt):
    decoded = unpack_bfp(pack_bfp(tiles, fmt), fmt, 1024)
    blocks = tiles.reshape(-1, 16).astype(np.float64)
    shared = np.frexp(np.abs(blocks).max(axis=1))[1] - 1  # exponent of the block's largest value
    # W magnitude bits with the block maximum's leading 1 on top: one step is 2**(shared - (W - 1)).
    # Shifting then rounding to nearest is off by half a step, the no-carry clamp by < 1 step.
    step = np.ldexp(1.0, shared - (fmt.magnitude_bits - 1))[:, None]
    error = np.abs(decoded.reshape(-1, 16).astype(np.float64) - blocks)
    assert np.all(error <= step)
    block_max = np.abs(blocks).max(axis=1, keepdims=True)
    assert np.all((step <= 2.0 ** -(fmt.magnitude_bits - 1) * block_max)[block_max > 0])  # a real bound
    # Re-packing what was decoded changes nothing: every decoded value is representable.
    np.testing.assert_array_equal(pack_bfp(decoded, fmt), pack_bfp(tiles, fmt))


def test_the_error_bound_is_reached_so_it_is_not_vacuous():
    values = np.random.default_rng(7).standard_normal((64, 1024)).astype(np.float32)
    decoded = unpack_bfp(pack_bfp(values, BlockFloatFormat.BFP8), BlockFloatFormat.BFP8, 1024)
    blocks = values.reshape(-1, 16).astype(np.float64)
    step = np.ldexp(1.0, np.frexp(np.abs(blocks).max(axis=1))[1] - 1 - 6)[:, None]
    ratio = np.abs(decoded.reshape(-1, 16) - blocks) / step
    assert 0.45 < ratio.max() <= 1.0  # round to nearest: the worst case is half a step
