"""TILE / ROW_MAJOR byte layouts against the 78 golden cases of the real ttnn 0.81.1."""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from meshnn.errors import MeshnnError, MeshnnTypeError, MeshnnValueError
from meshnn.formats.codec import decode, encode
from meshnn.formats.conversions import to_layout, typecast
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import (
    DEFAULT_TILE,
    TILE_SHAPES,
    Layout,
    Tile,
    pad,
    pad_to_tile,
    padded_shape,
    tilize,
    untilize,
)
from meshnn.formats.packed_spec import packed_spec

GOLDEN = Path(__file__).resolve().parent.parent / "golden"
DTYPES = {str(d): d for d in DataType}
LAYOUTS = {str(layout): layout for layout in Layout}


@cache
def golden() -> tuple[list[dict], dict[str, np.ndarray]]:
    with np.load(GOLDEN / "layout.npz") as arrays:
        data = {key: arrays[key] for key in arrays.files}
    return json.loads((GOLDEN / "layout.json").read_text())["cases"], data


CASES = golden()[0]
OK_CASES = [c["case"] for c in CASES if "result" not in c]
FAILING_CASES = [c["case"] for c in CASES if "result" in c]


def reproduce(case: dict, x: np.ndarray) -> np.ndarray:
    """Run the golden case's ttnn call with meshnn: the raw bytes of the resulting host tensor."""
    call = case["call"]
    dtype, layout = DTYPES[case["dtype"]], LAYOUTS[case["layout"]]
    tile = Tile(case["tile"], transpose_tile="transpose_tile=True" in call) if case["tile"] else DEFAULT_TILE
    found = re.search(r"pad_value=([-\w.]+)", call)
    pad_value = float(found.group(1)) if found else 0.0
    if ".pad_to_tile(5.0)" in call:
        return encode(pad_to_tile(x, 5.0), dtype, Layout.ROW_MAJOR)
    if ".pad([1,2,45,56],[0,1,2,3],-1.0)" in call:
        return encode(pad(x, [1, 2, 45, 56], [0, 1, 2, 3], -1.0), dtype, Layout.ROW_MAJOR)
    if call.startswith("ttnn.to_layout(") and call.endswith("ROW_MAJOR)"):
        tiled = encode(x, dtype, Layout.TILE)
        return to_layout(tiled, dtype, Layout.TILE, Layout.ROW_MAJOR, x.shape)
    if call.startswith("ttnn.to_layout(") or ".to(ttnn.TILE_LAYOUT)" in call:
        rows = encode(x, dtype, Layout.ROW_MAJOR)
        return to_layout(rows, dtype, Layout.ROW_MAJOR, Layout.TILE, x.shape, pad_value=pad_value)
    return encode(x, dtype, layout, tile=tile, pad_value=pad_value, col_tilize="col_tilize=True" in call)


def test_golden_has_the_78_cases_described():
    assert len(CASES) == 78 and len(FAILING_CASES) == 4


@pytest.mark.parametrize("number", OK_CASES)
def test_every_golden_case_is_reproduced_byte_for_byte(number):
    cases, data = golden()
    case, x = cases[number], data[f"c{number}_in"]
    assert str(x.dtype) == case["input_dtype"] and list(x.shape) == case["input_shape"]
    raw = reproduce(case, x)
    expected = data[f"c{number}_out"]
    assert raw.dtype == np.uint8 and raw.flags.c_contiguous and raw.size == case["nbytes"]
    np.testing.assert_array_equal(raw, expected)


@pytest.mark.parametrize("number", OK_CASES)
def test_every_golden_case_reports_ttnns_shapes_and_size(number):
    cases, data = golden()
    case, x = cases[number], data[f"c{number}_in"]
    dtype, layout = DTYPES[case["dtype"]], LAYOUTS[case["layout"]]
    call = case["call"]
    if ".pad" in call:  # host padding keeps the logical shape and grows the padded one
        spec = packed_spec(case["padded_shape"], dtype, layout)
        assert spec.nbytes == case["nbytes"]
        return
    tile = Tile(case["tile"]) if case["tile"] else DEFAULT_TILE
    spec = packed_spec(x.shape, dtype, layout, tile=tile, col_tilize="col_tilize=True" in call)
    assert list(spec.shape) == case["shape"]
    assert list(spec.padded_shape) == case["padded_shape"]
    assert spec.nbytes == case["nbytes"]


@pytest.mark.parametrize("number", OK_CASES)
def test_every_golden_case_decodes_back(number):
    """Lossless cases decode to their input; block floats decode to values that re-encode to the
    very same golden bytes (quantising twice changes nothing)."""
    cases, data = golden()
    case, x = cases[number], data[f"c{number}_in"]
    if ".pad" in case["call"]:
        return
    dtype, layout = DTYPES[case["dtype"]], LAYOUTS[case["layout"]]
    tile = Tile(case["tile"], transpose_tile="transpose_tile=True" in case["call"]) if case["tile"] else DEFAULT_TILE
    expected = data[f"c{number}_out"]
    values = decode(expected, dtype, layout, case["shape"], tile=tile)
    assert values.dtype == dtype.numpy_dtype and list(values.shape) == case["shape"]
    if dtype.is_block_float:
        pad_value = 1.0 if "pad_value=1.0" in case["call"] else 0.0
        np.testing.assert_array_equal(encode(values, dtype, layout, tile=tile, pad_value=pad_value), expected)
        return
    logical = x.T if "col_tilize=True" in case["call"] else x
    np.testing.assert_array_equal(values.astype(x.dtype).view(np.uint8), np.ascontiguousarray(logical).view(np.uint8))


def ttnn_message(case: dict) -> str:
    return case["result"].split("info: | ", 1)[1]


def test_float64_and_float16_inputs_fail_for_bfloat16_like_ttnn():
    cases, _ = golden()
    for number, source in ((74, np.float64), (75, np.float16)):
        assert cases[number]["result"].startswith("FAIL RuntimeError")
        with pytest.raises(MeshnnTypeError, match=np.dtype(source).name) as caught:
            encode(np.zeros(4, source), DataType.BFLOAT16, Layout.ROW_MAJOR)
        assert ttnn_message(cases[number]) in str(caught.value)  # "parse_py_tensor: ndarray_import failed."
        assert isinstance(caught.value, RuntimeError)  # TTNN code catches RuntimeError


def test_bfloat8_b_in_row_major_fails_with_ttnns_message():
    cases, _ = golden()
    with pytest.raises(MeshnnValueError) as caught:
        encode(np.zeros((40, 70), np.float32), DataType.BFLOAT8_B, Layout.ROW_MAJOR)
    assert str(caught.value) == ttnn_message(cases[76])


def test_row_major_bfloat16_typecast_to_bfloat8_b_fails_with_ttnns_message():
    cases, _ = golden()
    raw = encode(np.ones((40, 50), np.float32), DataType.BFLOAT16, Layout.ROW_MAJOR)
    with pytest.raises(MeshnnError) as caught:
        typecast(raw, DataType.BFLOAT16, DataType.BFLOAT8_B, Layout.ROW_MAJOR, (40, 50))
    assert str(caught.value) in ttnn_message(cases[77])
    assert "from (40, 50) to (64, 64)" in str(caught.value)


def test_an_aligned_row_major_tensor_is_tilized_by_a_block_float_typecast():
    values = np.random.default_rng(3).standard_normal((64, 32)).astype(np.float32)
    raw = encode(values, DataType.FLOAT32, Layout.ROW_MAJOR)
    packed = typecast(raw, DataType.FLOAT32, DataType.BFLOAT8_B, Layout.ROW_MAJOR, (64, 32))
    np.testing.assert_array_equal(packed, encode(values, DataType.BFLOAT8_B, Layout.TILE))


# --- Tile and shapes ----------------------------------------------------------------------------


@pytest.mark.parametrize("shape", TILE_SHAPES)
def test_tile_faces_and_sizes(shape):
    tile = Tile(list(shape))
    height, width = shape
    assert tile.tile_shape == shape and tile == Tile(shape)
    assert tile.face_shape == (min(16, height), min(16, width))
    assert tile.num_faces == (height * width) // (tile.face_shape[0] * tile.face_shape[1])
    assert tile.get_tile_size(DataType.BFLOAT16) == 2 * height * width
    assert tile.get_tile_size(DataType.UINT8) == height * width
    exponents = max(16, tile.num_faces * tile.face_shape[0])
    assert tile.get_tile_size(DataType.BFLOAT8_B) == exponents + height * width
    assert tile.get_tile_size(DataType.BFLOAT4_B) == exponents + height * width // 2


def test_tile_sizes_of_the_default_tile():
    sizes = {d: DEFAULT_TILE.get_tile_size(d) for d in DataType}
    assert sizes[DataType.BFLOAT16] == 2048 and sizes[DataType.FLOAT32] == 4096
    assert sizes[DataType.UINT8] == 1024 and sizes[DataType.BFLOAT8_B] == 1088
    assert sizes[DataType.BFLOAT4_B] == 576 and Tile([1, 32]).get_tile_size(DataType.BFLOAT8_B) == 48
    assert DEFAULT_TILE.num_faces == 4 and not DEFAULT_TILE.transpose_within_face
    assert Tile([16, 32], transpose_tile=True).transpose_of_faces


@pytest.mark.parametrize("bad", [(64, 64), (32, 8), (32,), (16, 8)])
def test_unsupported_tile_shapes_are_refused_naming_the_allowed_ones(bad):
    with pytest.raises(MeshnnValueError, match=r"unsupported tile shape .* ttnn tiles are \[32, 32\]"):
        Tile(bad)


def test_non_integer_tile_shapes_are_refused():
    with pytest.raises(MeshnnTypeError):
        Tile((32, 31.5))


@pytest.mark.parametrize(
    ("shape", "layout", "tile", "expected"),
    [
        ((5,), Layout.TILE, DEFAULT_TILE, (32, 32)),
        ((0,), Layout.TILE, DEFAULT_TILE, (32, 0)),
        ((0, 32), Layout.TILE, DEFAULT_TILE, (0, 32)),
        ((2, 3, 30, 40), Layout.TILE, DEFAULT_TILE, (2, 3, 32, 64)),
        ((40, 70), Layout.TILE, Tile([1, 32]), (40, 96)),
        ((3, 17, 33), Layout.ROW_MAJOR, DEFAULT_TILE, (3, 17, 33)),
    ],
)
def test_padded_shape(shape, layout, tile, expected):
    assert padded_shape(shape, layout, tile) == expected


def test_empty_tensors_have_no_bytes_and_decode_empty():
    for shape in ((0, 32), (0,)):
        raw = encode(np.zeros(shape, np.float32), DataType.BFLOAT16, Layout.TILE)
        assert raw.size == 0
        assert decode(raw, DataType.BFLOAT16, Layout.TILE, shape).shape == shape


def test_tile_layout_of_a_scalar_is_one_padded_tile():
    """ttnn pads a rank-0 TILE tensor to one tile (its physical shape is 32x32)."""
    raw = encode(np.array(1.5, np.float32), DataType.FLOAT32, Layout.TILE)
    assert raw.size == 32 * 32 * 4
    assert decode(raw, DataType.FLOAT32, Layout.TILE, ()).shape == ()
    assert decode(raw, DataType.FLOAT32, Layout.TILE, ()) == np.float32(1.5)
    tiles = raw.view(np.float32)
    assert tiles[0] == 1.5 and np.count_nonzero(tiles) == 1  # the value first, the padding zeros


def test_first_tile_element_order_is_faces_then_rows():
    values = np.arange(32 * 32, dtype=np.int32).reshape(32, 32)
    tile = tilize(values)[0]
    assert list(tile[:3]) == [0, 1, 2] and tile[15] == 15
    assert tile[16] == 32  # face 0 row 1
    assert tile[256] == 16  # face 1 starts at column 16
    assert tile[512] == 16 * 32  # face 2 starts at row 16
    transposed = tilize(values, Tile([32, 32], transpose_tile=True))[0]
    assert transposed[1] == 32 and transposed[256] == 16 * 32  # faces and elements column-major


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(0, 3), min_size=0, max_size=2),
    st.integers(1, 70),
    st.integers(1, 70),
    st.sampled_from(TILE_SHAPES),
    st.booleans(),
)
def test_tilize_then_untilize_restores_any_array(outer, height, width, tile_shape, transpose):
    tile = Tile(tile_shape, transpose_tile=transpose)
    shape = (*outer, height, width)
    values = np.arange(np.prod(shape), dtype=np.int32).reshape(shape)
    tiles = tilize(values, tile, pad_value=-1)
    assert tiles.shape[1] == tile.values_per_tile
    assert tiles.size == np.prod(padded_shape(shape, Layout.TILE, tile))
    assert (tiles == -1).sum() == tiles.size - values.size  # every padding element, nothing else
    np.testing.assert_array_equal(untilize(tiles, shape, tile), values)


@pytest.mark.parametrize("height", [1, 3, 16, 17])
@pytest.mark.parametrize("tile_shape", [(32, 32), (16, 32), (32, 16)])
def test_untilize_of_short_matrices_reads_their_rows_alone(height, tile_shape):
    """Matrices one tile high whose rows lie in the first row of faces (a decode step's one row per
    user) are untilized from those rows alone: the same values, padding dropped, C order."""
    tile = Tile(tile_shape)
    shape = (3, 2, height, 70)
    values = np.arange(np.prod(shape), dtype=np.int32).reshape(shape)
    tiles = tilize(values, tile, pad_value=-1)
    got = untilize(tiles, shape, tile)
    np.testing.assert_array_equal(got, values)
    assert got.flags.c_contiguous and not np.shares_memory(got, tiles)


def test_pad_places_the_tensor_at_its_start_offset():
    values = np.arange(6, dtype=np.float32).reshape(2, 3)
    out = pad(values, [1, 3, 4], [0, 1, 1], -1.0)
    assert out.shape == (1, 3, 4) and out[0, 1, 1] == 0 and out[0, 2, 3] == 5
    assert (out == -1).sum() == 12 - 6
    with pytest.raises(MeshnnValueError, match="does not fit"):
        pad(values, [2, 3], [1, 1], 0.0)
