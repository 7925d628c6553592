"""encode / decode / typecast / to_layout against the golden conversions of the real ttnn 0.81.1."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.codec import decode, encode
from meshnn.formats.conversions import to_layout, typecast
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import DEFAULT_TILE, TILE_SHAPES, Layout, Tile
from meshnn.formats.packed_spec import packed_spec

GOLDEN = Path(__file__).resolve().parent.parent / "golden"
RM, TILE = Layout.ROW_MAJOR, Layout.TILE
BY_NAME = {d.name.lower(): d for d in DataType}


@cache
def golden(name: str) -> tuple[dict, dict[str, np.ndarray]]:
    with np.load(GOLDEN / f"{name}.npz") as arrays_:
        data = {key: arrays_[key] for key in arrays_.files}
    return json.loads((GOLDEN / f"{name}.json").read_text()), data


# --- typecast.json: every stored case -------------------------------------------------------------


def typecast_cases() -> list[str]:
    meta, _ = golden("typecast")
    return [key for key in meta["arrays"] if "_to_" in key]


def reproduce_typecast(key: str, data: dict[str, np.ndarray]) -> np.ndarray:
    """meshnn's version of the golden call ``<src>_to_<dst>_<path>``."""
    path = next(p for p in ("from_torch", "to_dtype", "typecast", "ctor") if key.endswith(f"_{p}"))
    source, target_name = key.removesuffix(f"_{path}").split("_to_", 1)
    target = BY_NAME[target_name]
    if source.startswith("np_"):  # numpy int64/uint64/int16/bool input to the constructor
        return encode(data[f"{source}_input"], target, RM)
    if source.startswith("bfloat"):  # TILE block floats made from the 64x64 bfp input
        values, layout = data["bfp_input"], TILE
    elif source in ("fp8_e4m3", "float32"):  # fp8: the tensor the constructor made from the float input
        values, layout = data["float_input"], RM
    else:  # the uint32 tensor is the int32 input's bits
        values, layout = data["int32_input"].view(source), RM
    src = BY_NAME[source]
    if path in ("ctor", "from_torch"):
        return encode(values, target, layout)
    return typecast(encode(values, src, layout), src, target, layout, values.shape)


@pytest.mark.parametrize("key", typecast_cases())
def test_every_stored_typecast_case_is_reproduced_bit_for_bit(key):
    _, data = golden("typecast")
    np.testing.assert_array_equal(reproduce_typecast(key, data), data[key])


def test_typecast_golden_covers_every_target_and_the_edge_values():
    keys = typecast_cases()
    assert len(keys) == 69
    _, data = golden("typecast")
    floats = data["float_input"].reshape(-1)
    assert np.isnan(floats).any() and np.isinf(floats).any() and (floats == 2.0**31).any()
    int32 = decode(data["float32_to_int32_ctor"], DataType.INT32, RM, floats.shape)
    assert int32[floats == 2.0**31][0] == -(2**31) and int32[np.isnan(floats)].tolist() == [-(2**31)] * 2
    fp8 = data["float32_to_fp8_e4m3_ctor"]
    assert fp8[floats == 464.0][0] == 0x7E and set(fp8[np.isnan(floats)].tolist()) == {0x7F}


@pytest.mark.parametrize("call", ["np.int64->bfloat16:ctor", "np.uint64->bfloat16:ctor", "np.int16->bfloat16:ctor"])
def test_integer_inputs_ttnn_refuses_for_bfloat16_are_refused(call):
    meta, data = golden("typecast")
    assert meta["calls"][call].startswith("FAIL")
    source = call.split("->")[0].removeprefix("np.")
    values = data[f"np_{source}_input"]
    with pytest.raises(MeshnnTypeError, match=f"numpy {source} input .* cast it first"):
        encode(values, DataType.BFLOAT16, RM)
    for target in (DataType.BFLOAT8_B, DataType.BFLOAT4_B):
        with pytest.raises(MeshnnTypeError, match=source):
            encode(values, target, TILE)


def test_fp8_to_numpy_gives_float32():
    _, data = golden("typecast")
    raw = encode(data["float_input"], DataType.FP8_E4M3, RM)
    values = decode(raw, DataType.FP8_E4M3, RM, (8, 32))
    expected = data["fp8_e4m3_to_float32_typecast"].view(np.float32).reshape(8, 32)
    assert values.dtype == np.float32
    np.testing.assert_array_equal(values.view(np.uint32), expected.view(np.uint32))


# --- bf16_convert: every stored path --------------------------------------------------------------


def test_bfloat16_paths_of_bf16_convert():
    _, data = golden("bf16_convert")
    values = data["input_f32_bits"].view(np.float32).reshape(254, 128)
    expected = data["np_rm"].view(np.uint8)
    np.testing.assert_array_equal(encode(values, DataType.BFLOAT16, RM), expected)  # ctor, from_torch
    tiled = encode(values, DataType.BFLOAT16, TILE)
    np.testing.assert_array_equal(to_layout(tiled, DataType.BFLOAT16, TILE, RM, values.shape), expected)
    as_float32 = encode(values, DataType.FLOAT32, RM)
    np.testing.assert_array_equal(
        typecast(as_float32, DataType.FLOAT32, DataType.BFLOAT16, RM, values.shape), expected
    )  # typecast, to_dtype
    decoded = decode(tiled, DataType.BFLOAT16, TILE, values.shape)
    assert decoded.dtype == ml_dtypes.bfloat16
    np.testing.assert_array_equal(decoded.view(np.uint16).reshape(-1), data["np_rm"])


def test_bfloat16_input_passes_through_and_widens_like_ttnn():
    _, data = golden("bf16_convert")
    patterns = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).reshape(256, 256)
    raw = encode(patterns.view(ml_dtypes.bfloat16), DataType.BFLOAT16, RM)
    np.testing.assert_array_equal(raw.view(np.uint16), patterns.reshape(-1))  # NaN payloads kept
    widened = typecast(raw, DataType.BFLOAT16, DataType.FLOAT32, RM, (256, 256))
    np.testing.assert_array_equal(widened.view(np.uint32), data["bf16_to_f32_typecast"])
    back = decode(raw, DataType.BFLOAT16, RM, (256, 256))
    np.testing.assert_array_equal(back.view(np.uint16), patterns)  # to_torch is the identity
    # to_list goes through Python floats (doubles), which quiet signalling NaNs: 0x7F81 -> 0x7FC1...
    as_list = np.array(back.astype(np.float32).reshape(-1).tolist(), np.float32)
    np.testing.assert_array_equal(as_list.view(np.uint32), data["bf16_to_list_f32_bits"])


# --- bfp_pack: every stored path ------------------------------------------------------------------


def torch_bfloat16(values: np.ndarray) -> np.ndarray:
    """What ``torch.from_numpy(values).to(torch.bfloat16)`` holds, as ml_dtypes.bfloat16."""
    torch = pytest.importorskip("torch")
    bits = torch.from_numpy(values.copy()).to(torch.bfloat16).view(torch.int16).numpy()
    return bits.view(ml_dtypes.bfloat16)


@pytest.mark.parametrize(("name", "dtype"), [("bfp8", DataType.BFLOAT8_B), ("bfp4", DataType.BFLOAT4_B)])
def test_block_float_paths_of_bfp_pack(name, dtype):
    meta, data = golden("bfp_pack")
    paths = meta["summary"][name]["paths"]
    values = data["input_f32_bits"].view(np.float32)
    shape = values.shape
    packed = encode(values, dtype, TILE)
    assert packed.size == paths["np_tile"]["nbytes"] == packed_spec(shape, dtype, TILE).nbytes
    np.testing.assert_array_equal(packed, data[f"{name}_np_tile"])  # ctor, from_torch(float32)
    as_float32 = encode(values, DataType.FLOAT32, TILE)
    np.testing.assert_array_equal(typecast(as_float32, DataType.FLOAT32, dtype, TILE, shape), data[f"{name}_np_tile"])
    # A list of Python floats quiets the signalling NaNs first (doubles): the list-constructor path.
    quieted = np.array(values.tolist(), np.float32)
    np.testing.assert_array_equal(encode(quieted, dtype, TILE), data[f"{name}_list_tile"])
    # from_torch(torch.bfloat16): the model applied to torch's own bfloat16 rounding.
    from_torch = encode(torch_bfloat16(values), dtype, TILE)
    np.testing.assert_array_equal(from_torch, data[f"{name}_from_torch_bf16"])
    # typecast / to_dtype of a ttnn bfloat16 TILE tensor: the model applied to ttnn's bfloat16.
    ttnn_bf16 = encode(values, DataType.BFLOAT16, TILE)
    recast = typecast(ttnn_bf16, DataType.BFLOAT16, dtype, TILE, shape)
    np.testing.assert_array_equal(recast, data[f"{name}_typecast_from_bf16_tile"])
    np.testing.assert_array_equal(recast, data[f"{name}_to_dtype_from_bf16_tile"])
    assert not np.array_equal(recast, packed)  # the double rounding really differs
    # to_numpy of both stored packings.
    for raw_key in (f"{name}_np_tile", f"{name}_from_torch_bf16"):
        decoded = decode(data[raw_key], dtype, TILE, shape)
        np.testing.assert_array_equal(decoded.view(np.uint32), data[f"{raw_key}_to_numpy_bits"])


def test_block_float_to_layout_keeps_values_as_float32_in_row_major():
    values = np.random.default_rng(11).standard_normal((40, 50)).astype(np.float32)
    packed = encode(values, DataType.BFLOAT8_B, TILE)
    rows = to_layout(packed, DataType.BFLOAT8_B, TILE, RM, (40, 50))
    assert rows.size == 40 * 50 * 4
    np.testing.assert_array_equal(
        rows.view(np.float32).reshape(40, 50), decode(packed, DataType.BFLOAT8_B, TILE, (40, 50))
    )
    np.testing.assert_array_equal(to_layout(rows, DataType.BFLOAT8_B, RM, TILE, (40, 50)), packed)


# --- properties -----------------------------------------------------------------------------------

LOSSLESS = [DataType.FLOAT32, DataType.INT32, DataType.UINT32, DataType.UINT16, DataType.UINT8, DataType.INT8]


@st.composite
def lossless_tensors(draw):
    dtype = draw(st.sampled_from(LOSSLESS))
    shape = tuple(draw(st.lists(st.integers(1, 40), min_size=1, max_size=3)))
    numpy_dtype = dtype.numpy_dtype
    if dtype is DataType.FLOAT32:
        elements = st.floats(width=32, allow_nan=False)
    else:
        limits = np.iinfo(numpy_dtype)
        elements = st.integers(int(limits.min), int(limits.max))
    return dtype, draw(arrays(numpy_dtype, shape, elements=elements))


@settings(max_examples=80, deadline=None)
@given(lossless_tensors(), st.sampled_from(TILE_SHAPES), st.sampled_from([RM, TILE]))
def test_encode_then_decode_is_exact_for_lossless_dtypes(tensor, tile_shape, layout):
    dtype, values = tensor
    tile = Tile(tile_shape)
    raw = encode(values, dtype, layout, tile=tile, pad_value=7)
    assert raw.size == packed_spec(values.shape, dtype, layout, tile=tile).nbytes
    back = decode(raw, dtype, layout, values.shape, tile=tile)
    assert back.dtype == dtype.numpy_dtype
    np.testing.assert_array_equal(back.view(np.uint8), values.view(np.uint8))  # bits, incl. -0.0


@settings(max_examples=60, deadline=None)
@given(arrays(np.uint16, st.integers(1, 200), elements=st.integers(0, 0xFFFF)), st.sampled_from([RM, TILE]))
def test_bfloat16_bits_survive_encode_and_decode(bits, layout):
    raw = encode(bits.view(ml_dtypes.bfloat16), DataType.BFLOAT16, layout)
    np.testing.assert_array_equal(decode(raw, DataType.BFLOAT16, layout, bits.shape).view(np.uint16), bits)
    widened = decode(raw, DataType.BFLOAT16, layout, bits.shape).astype(np.float32)
    rounded = encode(widened, DataType.BFLOAT16, layout)  # float32 -> bfloat16: NaNs become 0x7FC0
    is_nan = (bits & 0x7FFF) > 0x7F80
    again = decode(rounded, DataType.BFLOAT16, layout, bits.shape).view(np.uint16)
    np.testing.assert_array_equal(again, np.where(is_nan, 0x7FC0, bits))


FLOAT_TARGETS = [d for d in DataType if not d.is_block_float]


@settings(max_examples=60, deadline=None)
@given(
    arrays(np.float32, st.integers(1, 64), elements=st.floats(width=32)),
    st.sampled_from(FLOAT_TARGETS),
)
def test_constructor_and_typecast_agree_for_every_target(values, target):
    """All ttnn host paths agree (golden typecast.json); so must meshnn's two code paths."""
    direct = encode(values, target, RM)
    recast = typecast(encode(values, DataType.FLOAT32, RM), DataType.FLOAT32, target, RM, values.shape)
    np.testing.assert_array_equal(direct, recast)


def test_fp8_subnormals_flush_and_the_largest_finite_value_saturates():
    values = np.array([2.0**-7, -(2.0**-7), 2.0**-6, 447.0, 1e9, -np.inf, np.nan], np.float32)
    codes = encode(values, DataType.FP8_E4M3, RM)
    assert codes.tolist() == [0x00, 0x80, 0x08, 0x7E, 0x7E, 0xFE, 0x7F]


# --- argument checking ----------------------------------------------------------------------------


def test_col_tilize_packs_the_transposed_matrix_and_reports_its_shape():
    values = np.random.default_rng(2).standard_normal((40, 70)).astype(np.float32)
    spec = packed_spec(values.shape, DataType.BFLOAT8_B, TILE, col_tilize=True)
    assert spec.shape == (70, 40) and spec.padded_shape == (96, 64)
    np.testing.assert_array_equal(
        encode(values, DataType.BFLOAT8_B, TILE, col_tilize=True),
        encode(np.ascontiguousarray(values.T), DataType.BFLOAT8_B, TILE),
    )
    with pytest.raises(MeshnnValueError, match=r"col_tilize=True needs Layout\.TILE"):
        encode(values, DataType.FLOAT32, RM, col_tilize=True)


def test_non_numpy_inputs_and_wrong_sizes_are_refused():
    with pytest.raises(MeshnnTypeError, match="expected a numpy array, got list"):
        encode([1.0, 2.0], DataType.FLOAT32, RM)
    with pytest.raises(MeshnnTypeError, match="cannot convert numpy complex64"):
        encode(np.zeros(2, np.complex64), DataType.FLOAT32, RM)
    raw = encode(np.zeros((3, 4), np.float32), DataType.FLOAT32, TILE)
    with pytest.raises(MeshnnValueError, match=r"4096 bytes do not hold .* \(it needs 8192 bytes\)"):
        decode(raw, DataType.FLOAT32, TILE, (3, 40))
    with pytest.raises(MeshnnTypeError, match="DataType"):
        encode(np.zeros(2, np.float32), "float32", RM)


def test_non_contiguous_inputs_encode_like_their_copies():
    base = np.random.default_rng(4).standard_normal((70, 90)).astype(np.float32)
    view = base[::2, 5:80].T
    for dtype, layout in [
        (DataType.BFLOAT16, TILE),
        (DataType.BFLOAT8_B, TILE),
        (DataType.INT32, TILE),
        (DataType.FLOAT32, RM),
        (DataType.UINT8, RM),
    ]:
        raw = encode(view, dtype, layout)
        np.testing.assert_array_equal(raw, encode(np.ascontiguousarray(view), dtype, layout))
    assert DEFAULT_TILE.tile_shape == (32, 32)
