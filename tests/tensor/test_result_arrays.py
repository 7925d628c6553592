"""Recycled result arrays (``storage.ResultArrays``) and byte views (``codec.byte_view``).

Memory is reused only once every view of an earlier result (numpy's or torch's) is gone, within
the documented bound; a byte view's elements in C order are exactly the encoding, both ways.
"""

from __future__ import annotations

import gc
import sys

import numpy as np
import pytest
import torch

from meshnn.formats.codec import byte_view, decode, encode
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout, Tile
from meshnn.formats.packed_spec import packed_spec
from meshnn.tensor.storage import ResultArrays

SHAPE = (1024, 4096)  # 16 MiB of float32: large enough to be recycled
MIN_BYTES = 1 << 20


def address(array: np.ndarray) -> int:
    return array.__array_interface__["data"][0]


def test_a_dropped_result_lends_its_memory_to_the_next():
    pool = ResultArrays(min_bytes=MIN_BYTES)
    first = pool.empty(SHAPE, np.float32)
    where = address(first)
    del first
    again = pool.empty(SHAPE, np.float32)
    assert address(again) == where
    assert again.shape == SHAPE and again.dtype == np.float32
    assert again.flags.c_contiguous and again.flags.writeable


@pytest.mark.parametrize(
    "keep",
    [
        lambda a: a[1:],  # a numpy view
        lambda a: a.view(np.int32).reshape(-1),  # a view of a view
        lambda a: torch.from_numpy(a),  # a torch tensor on its memory
        lambda a: torch.from_numpy(a).view(torch.int32)[2:],
    ],
)
def test_memory_under_a_live_view_is_never_reused(keep):
    pool = ResultArrays(min_bytes=MIN_BYTES)
    first = pool.empty(SHAPE, np.float32)
    first[...] = 1.0
    view = keep(first)
    where = address(first)
    del first
    second = pool.empty(SHAPE, np.float32)
    assert address(second) != where
    second[...] = 2.0
    assert np.all(np.asarray(view).view(np.uint32) == np.float32(1.0).view(np.uint32))  # untouched
    del view
    gc.collect()
    third = pool.empty(SHAPE, np.float32)
    assert address(third) == where  # dropped at last: now it is lent


def test_only_the_latest_results_are_remembered():
    pool = ResultArrays(remembered=2, min_bytes=MIN_BYTES)
    results = [pool.empty(SHAPE, np.float32) for _ in range(3)]
    oldest = address(results[0])
    recent = {address(r) for r in results[1:]}
    del results
    kept = [pool.empty(SHAPE, np.float32) for _ in range(3)]
    assert {address(k) for k in kept[:2]} == recent  # the two remembered are lent again
    assert oldest not in recent and address(kept[2]) not in recent  # the oldest was forgotten


def test_small_and_huge_results_and_far_sizes_are_not_recycled():
    pool = ResultArrays(min_bytes=MIN_BYTES, max_bytes=64 << 20)
    assert pool.empty((16, 16), np.float32).base is None  # plain arrays
    assert pool.empty((4096, 8192), np.float32).base is None  # 128 MiB: above the bound
    big = pool.empty(SHAPE, np.float32)
    where = address(big)
    del big
    quarter = pool.empty((SHAPE[0] // 4, SHAPE[1]), np.float32)  # under half the memory: not lent
    assert address(quarter) != where
    half = pool.empty((SHAPE[0] // 2, SHAPE[1]), np.float32)  # half of it: lent
    assert address(half) == where


def test_recycling_can_be_turned_off_and_cleared():
    off = ResultArrays(remembered=0, min_bytes=MIN_BYTES)
    assert off.empty(SHAPE, np.float32).base is None
    pool = ResultArrays(min_bytes=MIN_BYTES)
    first = pool.empty(SHAPE, np.float32)
    memory = first.base.base.obj  # the recycled memory, held by the pool while remembered
    del first
    assert sys.getrefcount(memory) > 2
    pool.clear()
    assert sys.getrefcount(memory) == 2  # forgotten: only this test holds it now


# ------------------------------------------------------------------------------ byte views

VIEWABLE = [DataType.FLOAT32, DataType.BFLOAT16, DataType.INT32, DataType.UINT32, DataType.UINT16, DataType.UINT8]


def values_of(dtype: DataType, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    bits = rng.integers(0, 2**32, shape, dtype=np.uint64).astype(np.uint32)
    if dtype in (DataType.FLOAT32, DataType.BFLOAT16):
        floats = rng.standard_normal(shape).astype(np.float32)
        return floats if dtype is DataType.FLOAT32 else floats.astype(dtype.numpy_dtype)
    return bits.astype(dtype.numpy_dtype)


@pytest.mark.parametrize("layout", [Layout.ROW_MAJOR, Layout.TILE])
@pytest.mark.parametrize("dtype", VIEWABLE)
def test_a_byte_view_is_the_encoding_both_ways(dtype, layout, rng):
    big = values_of(dtype, (3, 64, 160), rng)
    values = big[:, :, 32:160]  # a strided block, tile-aligned (batches a height apart: they merge)
    view = byte_view(values, dtype, layout, tile=Tile())
    assert view is not None
    raw = encode(values, dtype, layout)
    assert np.ascontiguousarray(view).view(np.uint8).reshape(-1).tobytes() == raw.tobytes()
    out = np.zeros_like(values)
    np.copyto(byte_view(out, dtype, layout, tile=Tile()), raw.view(dtype.storage_dtype).reshape(view.shape))
    want = decode(raw, dtype, layout, packed_spec(values.shape, dtype, layout).shape)
    assert out.tobytes() == want.tobytes()


@pytest.mark.parametrize(
    ("dtype", "layout", "shape", "why"),
    [
        (DataType.FLOAT32, Layout.TILE, (30, 64), "tile padding"),
        (DataType.BFLOAT8_B, Layout.TILE, (64, 64), "block floats are packed"),
        (DataType.FP8_E4M3, Layout.ROW_MAJOR, (64, 64), "fp8 values are float32"),
        (DataType.BFLOAT16, Layout.ROW_MAJOR, (64, 64), "float32 values convert"),
    ],
)
def test_no_byte_view_where_the_encoding_converts(dtype, layout, shape, why):
    values = np.zeros(shape, np.float32)
    assert byte_view(values, dtype, layout) is None, why
    assert byte_view(np.zeros((64, 64), np.float32), DataType.FLOAT32, Layout.TILE, col_tilize=True) is None
