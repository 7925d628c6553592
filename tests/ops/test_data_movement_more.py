"""More of the data movement family against numpy: copy / assign / experimental.typecast, reshard,
convert_to_hwc / convert_to_chw, dropout's seeded law, moreh_full(_like), embedding's types, and
the tensor-level rules the family relies on (from_torch's dtype inference, scalar TILE tensors,
to_torch_with_padded_shape, program-cache entries, buffer pages)."""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest
import torch

import meshnn as ttnn

from .reference import BFP8_STEPS, mesh_fixtures

meshes, mesh = mesh_fixtures([(1, 1), (1, 8)])
TILE, RM = ttnn.TILE_LAYOUT, ttnn.ROW_MAJOR_LAYOUT


def put(mesh, values, dtype=ttnn.float32, layout=TILE, **kw):
    return ttnn.from_torch(
        torch.from_numpy(np.ascontiguousarray(values)), dtype=dtype, layout=layout, device=mesh,
        mesh_mapper=ttnn.ReplicateTensorToMesh(mesh), **kw,
    )  # fmt: skip


def each(tensor) -> list[np.ndarray]:
    return [ttnn.to_numpy(s).astype(np.float64) for s in ttnn.get_device_tensors(tensor)]


def same(tensor, want) -> None:
    for got in each(tensor):
        np.testing.assert_array_equal(got, want)


def bf16(x: np.ndarray) -> np.ndarray:
    return x.astype(ml_dtypes.bfloat16).astype(np.float64)


@pytest.fixture
def rng():
    return np.random.default_rng(11)


def test_copy_assign_and_experimental_typecast(mesh, rng):
    x = rng.standard_normal((1, 1, 32, 64)).astype(np.float32)
    a = put(mesh, x, dtype=ttnn.bfloat16)
    b = put(mesh, np.zeros_like(x), dtype=ttnn.bfloat16)
    address = b.buffer_address()
    assert ttnn.copy(a, b) is b and b.buffer_address() == address
    same(b, bf16(x))
    c = ttnn.assign(a, memory_config=ttnn.L1_MEMORY_CONFIG, dtype=ttnn.float32)
    assert c.dtype is ttnn.float32 and c.memory_config() == ttnn.L1_MEMORY_CONFIG
    same(c, bf16(x))  # bfloat16 values are exact in float32
    target = put(mesh, np.ones_like(x))
    pages = len(ttnn.reports.get_buffer_pages(mesh))
    ttnn.assign(a, memory_config=ttnn.DRAM_MEMORY_CONFIG, dtype=ttnn.float32, output_tensor=target)
    assert len(ttnn.reports.get_buffer_pages(mesh)) == pages  # written in place: no new pages
    same(target, bf16(x))
    block = ttnn.experimental.typecast(a, ttnn.bfloat8_b)
    assert block.dtype is ttnn.bfloat8_b
    rows = bf16(x).reshape(-1, 16)  # bfloat8_b shares an exponent per 16-value face row
    bound = np.repeat(np.abs(rows).max(axis=1, keepdims=True) / BFP8_STEPS, 16, axis=1).reshape(x.shape)
    for got in each(block):
        assert np.all(np.abs(got - bf16(x)) <= bound)
    with pytest.raises(ttnn.MeshnnValueError, match="padded shape"):
        ttnn.copy(a, put(mesh, np.zeros((1, 1, 32, 32), np.float32), dtype=ttnn.bfloat16))


def test_reshard_moves_between_grids(mesh, rng):
    x = rng.standard_normal((1, 1, 224, 384)).astype(np.float32)
    first = ttnn.create_sharded_memory_config([1, 1, 224, 384], ttnn.CoreGrid(y=1, x=3), ttnn.ShardStrategy.BLOCK)
    second = ttnn.create_sharded_memory_config([1, 1, 224, 384], ttnn.CoreGrid(y=1, x=4), ttnn.ShardStrategy.BLOCK)
    t = put(mesh, x, dtype=ttnn.bfloat16, memory_config=first)
    moved = ttnn.reshard(t, second)
    assert moved.memory_config() == second
    same(moved, bf16(x))
    with pytest.raises(ttnn.MeshnnValueError, match="must be sharded"):
        ttnn.reshard(put(mesh, x), second)


def test_convert_to_hwc_and_back(mesh, rng):
    c, hw = 3, 64
    x = rng.standard_normal((1, 1, c, hw)).astype(np.float32)
    grid = ttnn.CoreRangeSet({ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(1, 0))})
    shard = ttnn.ShardSpec(grid, (c, 32), ttnn.ShardOrientation.ROW_MAJOR)
    config = ttnn.MemoryConfig(ttnn.TensorMemoryLayout.WIDTH_SHARDED, ttnn.BufferType.L1, shard)
    t = put(mesh, x, dtype=ttnn.bfloat16, layout=RM, memory_config=config)
    hwc = ttnn.experimental.convert_to_hwc(t)
    assert tuple(hwc.shape) == (1, 1, hw, 8)  # channels rounded up to 16 bytes of bfloat16
    assert hwc.memory_config().memory_layout is ttnn.TensorMemoryLayout.HEIGHT_SHARDED
    want = np.zeros((1, 1, hw, 8))
    want[..., :c] = bf16(x).transpose(0, 1, 3, 2)
    same(hwc, want)
    dram = ttnn.MemoryConfig(ttnn.TensorMemoryLayout.WIDTH_SHARDED, ttnn.BufferType.DRAM, config.shard_spec)
    with pytest.raises(ttnn.MeshnnValueError, match="output memory_config must be explicitly specified"):
        ttnn.experimental.convert_to_hwc(put(mesh, x, dtype=ttnn.bfloat16, layout=RM, memory_config=dram))
    back = ttnn.experimental.convert_to_chw(hwc)
    assert tuple(back.shape) == (1, 1, 8, hw)
    same(back, want.transpose(0, 1, 3, 2))


def test_convert_to_hwc_of_several_images(mesh, rng):
    """tt-metal of 2026 takes ``[1, B, C, HW]``: each image's HW rows in turn, each core's output
    shard its HW columns of every image."""
    b, c, hw = 3, 5, 64
    x = rng.standard_normal((1, b, c, hw)).astype(np.float32)
    grid = ttnn.CoreRangeSet({ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(1, 0))})
    shard = ttnn.ShardSpec(grid, (b * c, 32), ttnn.ShardOrientation.ROW_MAJOR)
    config = ttnn.MemoryConfig(ttnn.TensorMemoryLayout.WIDTH_SHARDED, ttnn.BufferType.L1, shard)
    hwc = ttnn.experimental.convert_to_hwc(put(mesh, x, dtype=ttnn.bfloat16, layout=RM, memory_config=config))
    assert tuple(hwc.shape) == (1, 1, b * hw, 8)
    assert tuple(hwc.memory_config().shard_spec.shape) == (b * 32, 8)
    want = np.zeros((1, 1, b * hw, 8))
    want[..., :c] = bf16(x).transpose(0, 1, 3, 2).reshape(1, 1, b * hw, c)
    same(hwc, want)
    with pytest.raises(ttnn.MeshnnValueError, match=r"\[1, B, C, HW\]"):
        ttnn.experimental.convert_to_hwc(put(mesh, x.reshape(b, 1, c, hw), dtype=ttnn.bfloat16, layout=RM))


def test_dropout_is_seeded_and_has_the_law(mesh):
    ones = put(mesh, np.ones((4, 1, 32, 64), np.float32), dtype=ttnn.bfloat16)
    p, scale = 0.2, 1.25
    first = each(ttnn.experimental.dropout(ones, probability=p, scale=scale, seed=124))
    again = each(ttnn.experimental.dropout(ones, probability=p, scale=scale, seed=124))
    other = each(ttnn.experimental.dropout(ones, probability=p, scale=scale, seed=125))
    for got in first:
        assert set(np.unique(got)) <= {0.0, scale}
        np.testing.assert_array_equal(got, first[0])  # one mask on every device
    np.testing.assert_array_equal(first[0], again[0])
    assert not np.array_equal(first[0], other[0])
    n = first[0].size
    dropped = np.mean(first[0] == 0)
    assert abs(dropped - p) < 5 * math.sqrt(p * (1 - p) / n)  # five standard deviations of the binomial


def test_dropout_into_an_output_tensor_and_in_place(mesh):
    """tt-metal of 2026's dropout takes ``output_tensor`` (its own input for an in-place dropout)."""
    values = np.arange(4 * 32 * 64, dtype=np.float32).reshape(4, 1, 32, 64) % 7 + 1
    x = put(mesh, values, dtype=ttnn.bfloat16)
    want = each(ttnn.experimental.dropout(x, probability=0.5, scale=2.0, seed=9))
    out = put(mesh, np.zeros_like(values), dtype=ttnn.bfloat16)
    assert ttnn.experimental.dropout(x, probability=0.5, scale=2.0, seed=9, output_tensor=out) is out
    got = ttnn.experimental.dropout(x, probability=0.5, scale=2.0, seed=9, output_tensor=x)  # in place
    assert got is x
    for a, b, c in zip(want, each(out), each(x), strict=True):
        np.testing.assert_array_equal(b, a)
        np.testing.assert_array_equal(c, a)
    with pytest.raises(ttnn.MeshnnValueError, match="output_tensor"):
        ttnn.experimental.dropout(x, 0.5, 2.0, 9, output_tensor=put(mesh, np.zeros_like(values)))  # float32


def test_moreh_full_and_full_like_run_on_device(mesh):
    x = put(mesh, np.zeros((5, 96, 64), np.int32), dtype=ttnn.int32)
    before = mesh.num_program_cache_entries()
    like = ttnn.moreh_full_like(x, 3)
    assert like.dtype is ttnn.int32 and ttnn.is_tensor_storage_on_device(like)
    same(like, np.full((5, 96, 64), 3))
    assert mesh.num_program_cache_entries() == before + 1  # a device op, as ttnn's
    filled = ttnn.moreh_full([3, 40], -3.9921875, mesh)
    assert filled.layout is TILE and filled.dtype is ttnn.bfloat16
    same(filled, np.full((3, 40), -4.0))  # rounded into bfloat16 as ttnn rounds it
    target = put(mesh, np.ones((32, 32), np.float32), dtype=ttnn.bfloat16, memory_config=ttnn.L1_MEMORY_CONFIG)
    assert ttnn.full([32, 32], 2.5, device=mesh, optional_tensor=target) is target
    same(target, np.full((32, 32), 2.5))


def test_embedding_types(mesh, rng):
    table = rng.standard_normal((10, 64)).astype(np.float32)
    ids = np.array([[1, 2, 4, 5], [4, 3, 2, 9]], np.uint32)
    weight = put(mesh, table, dtype=ttnn.bfloat16, layout=RM)
    index = put(mesh, ids, dtype=ttnn.uint32, layout=RM)
    out = ttnn.embedding(index, weight)
    assert out.layout is RM  # the table's layout when none is given
    same(out, bf16(table)[ids])
    padded = ttnn.embedding(index, weight, padding_idx=4, layout=TILE)
    assert padded.layout is TILE
    want = bf16(table)[ids]
    want[ids == 4] = 0
    same(padded, want)
    binary = put(mesh, table[:2], dtype=ttnn.bfloat16, layout=RM)
    bits = put(mesh, (ids % 2).astype(np.uint32), dtype=ttnn.uint32, layout=RM)
    same(ttnn.embedding(bits, binary, embeddings_type=ttnn.EmbeddingsType.BINARY), bf16(table[:2])[ids % 2])
    with pytest.raises(ttnn.MeshnnValueError, match="Pad token must be specified"):
        ttnn.embedding(index, weight, embeddings_type=ttnn.EmbeddingsType.PADDED)
    with pytest.raises(ttnn.MeshnnValueError, match="2 embeddings for BINARY"):
        ttnn.embedding(index, weight, embeddings_type=ttnn.EmbeddingsType.BINARY)
    with pytest.raises(ttnn.MeshnnValueError, match="TILE_LAYOUT"):
        ttnn.embedding(index, weight, dtype=ttnn.float32)


def test_from_torch_infers_ttnns_dtypes():
    # to_torch gives the unsigned types as torch's (tt-metal #36660, 2026-02): -3's bits read unsigned
    cases = [(torch.int64, ttnn.uint32, torch.uint32, 2**32 - 3), (torch.int16, ttnn.uint16, torch.uint16, 2**16 - 3),
             (torch.float16, ttnn.bfloat16, torch.bfloat16, -3)]  # fmt: skip
    for source, dtype, back, last in cases:
        t = ttnn.from_torch(torch.tensor([[1, 2, -3]], dtype=source))
        assert t.dtype is dtype
        out = ttnn.to_torch(t)
        assert out.dtype == back and out.tolist() == [[1, 2, last]]
    wide = ttnn.from_torch(torch.arange(300, dtype=torch.int64).reshape(10, 30), dtype=ttnn.float32)
    np.testing.assert_array_equal(ttnn.to_numpy(wide), np.arange(300.0, dtype=np.float32).reshape(10, 30))
    # torch converts int64 to bfloat16 itself (ttnn's import calls torch's `to`; only numpy, which has
    # no bfloat16, is refused: tests/tensor_api/test_formats_api_golden.py): tt-metal's nightly
    # test_slice_for_conv makes its inputs so
    for source in (torch.int64, torch.int16, torch.float64):
        made = ttnn.from_torch(torch.tensor([1, -3, 300], dtype=source), dtype=ttnn.bfloat16)
        assert made.dtype is ttnn.bfloat16 and ttnn.to_torch(made).tolist() == [1.0, -3.0, 300.0]
    big = ttnn.from_torch(torch.tensor([257, 1 << 40], dtype=torch.int64), dtype=ttnn.bfloat16)
    assert ttnn.to_torch(big).float().tolist() == torch.tensor([257, 1 << 40]).bfloat16().float().tolist()
    with pytest.raises(ttnn.MeshnnTypeError, match="float64"):
        ttnn.from_torch(torch.zeros(3, dtype=torch.float64))  # ttnn infers no dtype for float64 either


def test_scalars_and_padded_reads(mesh):
    scalar = ttnn.full([], 3.0, layout=TILE, device=mesh)
    assert tuple(scalar.shape) == () and scalar.spec.physical_shape == (32, 32)  # one tile, as ttnn
    out = ttnn.to_torch(ttnn.get_device_tensors(scalar)[0])
    assert out.shape == torch.Size([]) and out.item() == 3.0
    t = ttnn.from_torch(torch.ones(17, 40), dtype=ttnn.float32, layout=TILE, pad_value=9.0)
    padded = t.to_torch_with_padded_shape()
    assert padded.shape == torch.Size([32, 64])
    assert padded[:17, :40].eq(1).all() and padded[17:].eq(9).all() and padded[:, 40:].eq(9).all()


def test_program_cache_counts_distinct_programs(mesh, rng):
    x = put(mesh, rng.standard_normal((2, 64)).astype(np.float32), layout=RM)
    mesh.enable_program_cache()
    start = mesh.num_program_cache_entries()
    for _ in range(3):
        ttnn.slice(x, [0, 0], [2, 32])
    assert mesh.num_program_cache_entries() == start + 1
    ttnn.slice(x, [0, 0], [1, 32])
    assert mesh.num_program_cache_entries() == start + 2  # another output spec: another program
    mesh.disable_and_clear_program_cache()
    assert mesh.num_program_cache_entries() == 0
    mesh.enable_program_cache()


# ---------------------------------------------------------------- experimental.broadcast_to


@pytest.mark.parametrize(
    ("shape", "target"),
    [((1,), (2, 10)), ((1, 1, 64, 64), (3, 5, 64, 64)), ((2, 1, 4, 1), (2, 17, 4, 64)), ((1, 3, 1, 4), (7, 3, 32, 4))],
)
@pytest.mark.parametrize("dtype", [ttnn.bfloat16, ttnn.float32])
def test_broadcast_to_is_numpys_broadcast_of_the_values(mesh, rng, shape, target, dtype):
    x = rng.uniform(-50, 50, shape).astype(np.float32)
    want = np.broadcast_to(bf16(x) if dtype is ttnn.bfloat16 else x.astype(np.float64), target)
    out = ttnn.experimental.broadcast_to(put(mesh, x, dtype), ttnn.Shape(target), memory_config=ttnn.L1_MEMORY_CONFIG)
    assert tuple(out.shape) == target and out.dtype is dtype
    assert out.memory_config().buffer_type is ttnn.BufferType.L1
    same(out, want)  # a move: the values exactly, in the input's dtype


@pytest.mark.parametrize(("dtype", "low", "high"), [(ttnn.int32, -(2**31), 2**31 - 1), (ttnn.uint32, 0, 2**32 - 1),
                                                     (ttnn.uint16, 0, 2**16 - 1)])  # fmt: skip
@pytest.mark.parametrize(("shape", "target"), [((1, 1, 1, 40), (2, 3, 33, 40)), ((1, 1, 32, 1), (1, 2, 32, 64))])
def test_broadcast_to_moves_integer_types_exactly(mesh, rng, dtype, low, high, shape, target):
    """2026's ttnn broadcasts int32 / uint32 / uint16 too: every value (the extremes included) exactly."""
    x = rng.integers(low, high, shape, dtype=np.int64, endpoint=True)
    x.flat[0], x.flat[-1] = low, high
    src = x.astype(np.int32) if dtype is ttnn.int32 else x.astype(np.uint32 if dtype is ttnn.uint32 else np.uint16)
    if dtype is ttnn.uint32:
        src = src.view(np.int32)  # torch has no uint32 from numpy: the bits, as ttnn's from_torch takes them
    host = torch.from_numpy(np.ascontiguousarray(src.astype(np.int32) if dtype is ttnn.uint16 else src))
    t = ttnn.from_torch(host, dtype=dtype, layout=TILE, device=mesh, mesh_mapper=ttnn.ReplicateTensorToMesh(mesh))
    out = ttnn.experimental.broadcast_to(t, ttnn.Shape(target))
    assert tuple(out.shape) == target and out.dtype is dtype
    for got in each(out):
        got = got.astype(np.int64)
        if dtype is ttnn.uint32:
            got &= 0xFFFFFFFF
        elif dtype is ttnn.uint16:
            got &= 0xFFFF
        np.testing.assert_array_equal(got, np.broadcast_to(x, target))


def test_broadcast_to_writes_into_a_preallocated_output(mesh, rng):
    x = rng.uniform(-50, 50, (1, 1, 1, 32)).astype(np.float32)
    out = put(mesh, np.zeros((2, 3, 32, 32), np.float32))
    address = out.buffer_address()
    got = ttnn.experimental.broadcast_to(put(mesh, x), [2, 3, 32, 32], output=out)
    assert got.buffer_address() == address
    same(out, np.broadcast_to(x.astype(np.float64), (2, 3, 32, 32)))


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda t, m: ttnn.experimental.broadcast_to(t, [1, 1, 32, 3]), "cannot be broadcast"),
        (lambda t, m: ttnn.experimental.broadcast_to(t, [32, 32]), "more dims"),
        (lambda t, m: ttnn.experimental.broadcast_to(t, [1, 1, 1, 32, 32]), "at most 4D"),
        (lambda t, m: ttnn.experimental.broadcast_to(put(m, np.ones((1, 1, 32, 32)), ttnn.bfloat8_b), [2, 1, 32, 32]),
         "only bfloat16, float32, int32"),
        (lambda t, m: ttnn.experimental.broadcast_to(put(m, np.ones((1, 1, 32, 32)), layout=RM), [2, 1, 32, 32]),
         "TILE"),
        (lambda t, m: ttnn.experimental.broadcast_to(t, [2, 1, 32, 32], output=put(m, np.ones((2, 1, 32, 32)),
                                                                                    ttnn.bfloat16)), "FLOAT32"),
    ],
)  # fmt: skip
def test_broadcast_to_refuses_what_ttnn_refuses(mesh, call, message):
    t = put(mesh, np.ones((1, 1, 32, 32), np.float32))
    with pytest.raises((ttnn.MeshnnValueError, ttnn.MeshnnTypeError), match=message):
        call(t, mesh)
