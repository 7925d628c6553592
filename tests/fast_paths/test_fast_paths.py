"""The fast host paths give exactly the bytes and values of the plain ones.

- bfloat16 casts through torch (used when the program imports torch) against the golden ttnn
  rounding and against the ml_dtypes cast, NaNs included;
- encode(out=) / decode(out=) against encode / decode;
- from_torch(device=...) (shards encoded one at a time, plain shards written as strided views)
  against host tensor + to_device, for every dtype, layout, mapper and replication;
- to_torch(mesh_composer=...) (each shard read or decoded into its block) against the shards
  decoded and concatenated;
- strided host arrays in enqueue_write_shards / enqueue_read_shards;
- the slab pool: reuse, its bound, and buffers freed while work that uses them is queued.
"""

from __future__ import annotations

import threading
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
import torch

import meshnn as ttnn
from meshnn.errors import MeshnnError, MeshnnValueError
from meshnn.formats import bfloat16
from meshnn.formats.codec import decode, decode_many, encode, encode_many
from meshnn.formats.packed_spec import packed_spec
from meshnn.mesh.slab import SLAB_POOL, SlabPool
from meshnn.tensor import readback
from meshnn.tensor.arrays import MappedArray
from meshnn.tensor.readback import decoded_shards as _decoded_shards

GOLDEN = Path(__file__).resolve().parent.parent / "golden"


# ------------------------------------------------------------------------ bfloat16 through torch


def golden_bf16() -> tuple[np.ndarray, np.ndarray]:
    with np.load(GOLDEN / "bf16_convert.npz") as data:
        return data["input_f32_bits"], data["np_rm"]


def test_torch_cast_is_verified_and_used():
    assert bfloat16._torch_cast_nan() is not None, "torch's cast differs from ml_dtypes on this machine"
    bits, _ = golden_bf16()
    values = np.tile(bits.view(np.float32), 2)
    out = np.empty(values.shape, np.uint16)
    assert bfloat16._torch_cast_into(out, values)  # large enough: the torch path runs


def test_torch_cast_matches_the_golden_ttnn_rounding():
    bits, want = golden_bf16()
    values = np.tile(bits.view(np.float32), 4)  # 130,048 values: past the torch threshold
    assert values.size >= bfloat16.TORCH_CAST_MIN_VALUES
    got = bfloat16.float32_to_bfloat16_bits(values)
    assert np.array_equal(got, np.tile(want, 4))


def test_torch_cast_matches_ml_dtypes_on_random_bits_strided(rng):
    bits = rng.integers(0, 2**32, (512, 1024), dtype=np.uint64).astype(np.uint32)
    values = bits.view(np.float32)[:, ::2]  # a strided source
    got = bfloat16.float32_to_bfloat16_bits(values)
    with np.errstate(invalid="ignore"):
        want = values.astype(ml_dtypes.bfloat16).view(np.uint16).copy()
    bfloat16.quiet_bfloat16_nans(want)
    assert np.array_equal(got, want)
    assert np.all(got[np.isnan(values)] == bfloat16.BFLOAT16_NAN)


def test_small_casts_use_ml_dtypes():
    values = np.array([1.0, np.nan, -np.nan, 3.0e38, 1e-40], np.float32)
    out = np.empty(values.shape, np.uint16)
    assert not bfloat16._torch_cast_into(out, values)
    assert bfloat16.float32_to_bfloat16_bits(values).tolist() == [0x3F80, 0x7FC0, 0x7FC0, 0x7F62, 0x0001]


# ------------------------------------------------------------------------ encode / decode into


CASES = [
    (ttnn.float32, ttnn.ROW_MAJOR_LAYOUT),
    (ttnn.bfloat16, ttnn.ROW_MAJOR_LAYOUT),
    (ttnn.float32, ttnn.TILE_LAYOUT),
    (ttnn.bfloat16, ttnn.TILE_LAYOUT),
    (ttnn.bfloat8_b, ttnn.TILE_LAYOUT),
    (ttnn.bfloat4_b, ttnn.TILE_LAYOUT),
    (ttnn.int32, ttnn.TILE_LAYOUT),
    (ttnn.uint32, ttnn.ROW_MAJOR_LAYOUT),
]


@pytest.mark.parametrize(("dtype", "layout"), CASES)
@pytest.mark.parametrize("shape", [(2, 64, 96), (3, 40, 50), (128, 256)])
def test_encode_and_decode_into_match(dtype, layout, shape, rng):
    values = (rng.standard_normal(shape) * 50).astype(np.float32)
    if dtype in (ttnn.int32, ttnn.uint32):
        values = np.abs(values).astype(np.int32 if dtype is ttnn.int32 else np.uint32)
    raw = encode(values, dtype, layout)
    out = np.full(raw.shape, 0xAB, np.uint8)
    assert encode(values, dtype, layout, out=out) is out
    assert np.array_equal(out, raw)
    spec = packed_spec(shape, dtype, layout)
    plain = decode(raw, dtype, layout, spec.shape)
    big = np.zeros((shape[0] + 3, *shape[1:]), plain.dtype)  # decode into a strided block
    block = big[1 : 1 + shape[0]]
    assert decode(raw, dtype, layout, spec.shape, out=block) is block
    assert np.array_equal(block.view(np.uint8), plain.view(np.uint8))
    assert not big[0].any() and not big[-1].any()


@pytest.mark.parametrize(
    ("dtype", "layout", "col_tilize"),
    [(*case, False) for case in CASES] + [(*case, True) for case in CASES if case[1] is ttnn.TILE_LAYOUT],
)
def test_encode_many_equals_encode_of_each(monkeypatch, dtype, layout, col_tilize, rng):
    """Shards of several shapes (whole tiles, padded, bfloat16 values, strided, several chunks
    each: their chunks handed out to three threads) encoded together give each shard's own
    bytes; a wrong ``out`` anywhere is refused before any is written."""
    monkeypatch.setenv("MESHNN_HOST_THREADS", "3")
    shapes = [(96, 1024), (40, 70), (2, 64, 2048), (64, 96), (1024, 1536)]
    shards = [(rng.standard_normal(shape) * 4).astype(np.float32) for shape in shapes]
    shards.append(shards[-1][:, ::-1][:, 512:])  # a strided view, 1024 x 1024
    shards.append(shards[0].astype(ml_dtypes.bfloat16))
    kind = {"col_tilize": col_tilize}
    expected = [encode(x, dtype, layout, **kind) for x in shards]
    outs = [np.full(e.size, 0xA5, np.uint8) for e in expected]
    encode_many(list(zip(shards, outs, strict=True)), dtype, layout, **kind)
    assert all(np.array_equal(o, e) for o, e in zip(outs, expected, strict=True))
    untouched = [np.full(e.size, 0xA5, np.uint8) for e in expected]
    untouched[4] = untouched[4][:-1]
    with pytest.raises(MeshnnValueError, match="out must be a C-contiguous uint8 array"):
        encode_many(list(zip(shards, untouched, strict=True)), dtype, layout, **kind)
    assert all((o == 0xA5).all() for o in untouched)


@pytest.mark.parametrize(("dtype", "layout"), CASES)
def test_decode_many_equals_decode_of_each(monkeypatch, dtype, layout, rng):
    """Shards decoded together, each into its block of one array (as a composed read does:
    strided blocks, several chunks each, handed out to three threads), give each shard's own
    values; a wrong ``out`` anywhere is refused before any is written."""
    monkeypatch.setenv("MESHNN_HOST_THREADS", "3")
    shape = (512, 1024)
    shards = [(rng.standard_normal(shape) * 4).astype(np.float32) for _ in range(4)]
    raws = [encode(x, dtype, layout) for x in shards]
    expected = [decode(raw, dtype, layout, shape) for raw in raws]
    want = expected[0].dtype
    whole = np.full((1024, 2048), 7, want)
    blocks = [whole[i * 512 : (i + 1) * 512, j * 1024 : (j + 1) * 1024] for i in range(2) for j in range(2)]
    decode_many(list(zip(raws, blocks, strict=True)), dtype, layout, shape)
    assert all(np.array_equal(b.view(np.uint8), e.view(np.uint8)) for b, e in zip(blocks, expected, strict=True))
    untouched = np.full((1024, 2048), 7, want)
    blocks = [untouched[i * 512 : (i + 1) * 512, j * 1024 : (j + 1) * 1024] for i in range(2) for j in range(2)]
    blocks[3] = blocks[3][:, :-1]
    with pytest.raises(MeshnnValueError, match="decode: out must be"):
        decode_many(list(zip(raws, blocks, strict=True)), dtype, layout, shape)
    assert (untouched == 7).all()


def test_encode_into_checks_out():
    with pytest.raises(MeshnnValueError, match="out must be a C-contiguous uint8 array of 128 bytes"):
        encode(np.zeros((4, 8), np.float32), ttnn.float32, ttnn.ROW_MAJOR_LAYOUT, out=np.empty(64, np.uint8))
    with pytest.raises(MeshnnValueError, match="out must be a float32 array of shape"):
        decode(np.zeros(128, np.uint8), ttnn.float32, ttnn.ROW_MAJOR_LAYOUT, (4, 8), out=np.empty((8, 4), np.float32))


# ------------------------------------------------------------------------ tensors, end to end


def raw_shards(tensor: ttnn.Tensor) -> dict:
    host = ttnn.from_device(tensor)
    return {c: b.data.copy() for c, b in host.host_buffer().local_shards().items()}


MAPPERS = {
    "replicate": lambda mesh: ttnn.ReplicateTensorToMesh(mesh),
    "shard dim 1": lambda mesh: ttnn.ShardTensorToMesh(mesh, dim=1),
    "2d": lambda mesh: ttnn.ShardTensor2dMesh(mesh, mesh_shape=(2, 4), dims=(0, 1)),
    "2d replicate rows": lambda mesh: ttnn.ShardTensor2dMesh(mesh, mesh_shape=(2, 4), dims=(None, 1)),
    "none": lambda mesh: None,
}


@pytest.mark.parametrize(("dtype", "layout"), CASES)
@pytest.mark.parametrize("mapper", list(MAPPERS))
def test_from_torch_to_device_equals_host_then_to_device(open_mesh, dtype, layout, mapper, rng):
    mesh = open_mesh((2, 4))
    values = (rng.standard_normal((64, 256)) * 8).astype(np.float32)
    if dtype in (ttnn.int32, ttnn.uint32):
        values = np.abs(values).astype(np.int32 if dtype is ttnn.int32 else np.uint32)
    source = torch.from_numpy(values)
    kwargs = {"dtype": dtype, "layout": layout, "mesh_mapper": MAPPERS[mapper](mesh)}
    direct = ttnn.from_torch(source, device=mesh, **kwargs)
    via_host = ttnn.to_device(ttnn.from_torch(source, **kwargs), mesh)
    assert direct.spec == via_host.spec
    assert direct.tensor_topology() == via_host.tensor_topology()
    assert direct.storage.coords == via_host.storage.coords
    a, b = raw_shards(direct), raw_shards(via_host)
    assert a.keys() == b.keys() and all(np.array_equal(a[c], b[c]) for c in a)


@pytest.mark.parametrize(("dtype", "layout"), CASES)
@pytest.mark.parametrize(("mapper", "composer"), [
    (lambda m: ttnn.ShardTensor2dMesh(m, mesh_shape=(2, 4), dims=(0, 1)),
     lambda m: ttnn.ConcatMesh2dToTensor(m, mesh_shape=(2, 4), dims=(0, 1))),
    (lambda m: ttnn.ShardTensorToMesh(m, dim=1), lambda m: ttnn.ConcatMeshToTensor(m, dim=1)),
    (lambda m: ttnn.ShardTensorToMesh(m, dim=0), lambda m: ttnn.ConcatMeshToTensor(m, dim=0)),
    (lambda m: ttnn.ReplicateTensorToMesh(m), lambda m: ttnn.ConcatMeshToTensor(m, dim=0)),
    (lambda m: ttnn.ShardTensor2dMesh(m, mesh_shape=(2, 4), dims=(1, 0)),
     lambda m: ttnn.ConcatMesh2dToTensor(m, mesh_shape=(2, 4), dims=(1, 0))),
])  # fmt: skip
def test_to_torch_composed_equals_concatenated_shards(open_mesh, dtype, layout, mapper, composer, rng):
    mesh = open_mesh((2, 4))
    values = (rng.standard_normal((128, 256)) * 8).astype(np.float32)
    if dtype in (ttnn.int32, ttnn.uint32):
        values = np.abs(values).astype(np.int32 if dtype is ttnn.int32 else np.uint32)
    t = ttnn.from_torch(torch.from_numpy(values), dtype=dtype, layout=layout, device=mesh, mesh_mapper=mapper(mesh))
    comp = composer(mesh)
    got = ttnn.to_numpy(t, mesh_composer=comp)
    shards = _decoded_shards(t)
    reference = comp.concat(shards)
    assert got.dtype == reference.dtype and got.shape == reference.shape
    assert np.array_equal(got.view(np.uint8), reference.view(np.uint8))


@pytest.mark.parametrize("dtype", [ttnn.bfloat8_b, ttnn.bfloat16, ttnn.bfloat4_b])
@pytest.mark.parametrize(("mapper", "distinct"), [("2d", 8), ("replicate", 1), ("2d replicate rows", 4)])
def test_shards_are_converted_in_device_memory(open_mesh, monkeypatch, dtype, mapper, distinct, rng):
    """A put converts each distinct shard once, straight into device memory (the MeshBuffer's
    own bytes), and a get decodes block floats straight out of it, read-only; the bytes and
    values are those of the host path."""
    mesh = open_mesh((2, 4))
    values = torch.from_numpy(rng.standard_normal((256, 512)).astype(np.float32))
    kwargs = {"dtype": dtype, "layout": ttnn.TILE_LAYOUT, "mesh_mapper": MAPPERS[mapper](mesh)}
    via_host = ttnn.to_device(ttnn.from_torch(values, **kwargs), mesh)
    composer = ttnn.ConcatMeshToTensor(mesh, dim=0)
    expected = ttnn.to_numpy(via_host, mesh_composer=composer)
    written: list[np.ndarray] = []
    read: list[np.ndarray] = []
    encode_one, encode_many_ = MappedArray.encode, MappedArray.encode_many

    def recording_encode(self, shard, out=None):
        written.append(out)
        return encode_one(self, shard, out=out)

    def recording_encode_many(self, jobs):
        written.extend(out for _, out in jobs)
        return encode_many_(self, jobs)

    def recording_decode(raw, *args, **kw):
        read.append(raw)
        return decode(raw, *args, **kw)

    def recording_decode_many(jobs, *args, **kw):
        read.extend(raw for raw, _ in jobs)
        return decode_many(jobs, *args, **kw)

    monkeypatch.setattr(MappedArray, "encode", recording_encode)
    monkeypatch.setattr(MappedArray, "encode_many", recording_encode_many)
    monkeypatch.setattr(readback, "decode", recording_decode)
    monkeypatch.setattr(readback, "decode_many", recording_decode_many)
    direct = ttnn.from_torch(values, device=mesh, **kwargs)
    slab = direct.storage.mesh_buffer.rows()
    assert len(written) == distinct
    assert all(out is not None and np.shares_memory(out, slab) for out in written)
    a, b = raw_shards(direct), raw_shards(via_host)
    assert a.keys() == b.keys() and all(np.array_equal(a[c], b[c]) for c in a)
    got = ttnn.to_numpy(direct, mesh_composer=composer)
    assert np.array_equal(got.view(np.uint32), expected.view(np.uint32))
    assert len(read) == (8 if dtype.is_block_float else 0)  # bfloat16 is read through a byte view: no decode
    assert all(np.shares_memory(raw, slab) and not raw.flags.writeable for raw in read)


def test_composer_slots_join_uneven_shards_like_concatenate():
    comp = ttnn.ConcatMeshToTensor(ttnn.MeshShape(1, 3), dim=1)
    shapes = [(2, 3), (2, 5), (2, 1)]
    shape, slots = comp.slots(shapes)
    assert shape == (2, 9)
    assert [s[1] for s in slots] == [slice(0, 3), slice(3, 8), slice(8, 9)]
    with pytest.raises(MeshnnValueError, match="cannot be joined along dim 1"):
        comp.slots([(2, 3), (3, 3), (2, 3)])


def test_a_failed_write_leaves_nothing_allocated(open_mesh):
    mesh = open_mesh((2, 4))
    before = ttnn.get_memory_view(mesh, ttnn.BufferType.DRAM).as_dict()
    with pytest.raises(MeshnnError):  # a mapper for another mesh: refused before allocation
        other = ttnn.ShardTensorToMesh(ttnn.MeshShape(1, 8), dim=0)
        ttnn.from_torch(torch.zeros(8, 64), dtype=ttnn.float32, device=mesh, mesh_mapper=other)
    assert ttnn.get_memory_view(mesh, ttnn.BufferType.DRAM).as_dict() == before


# ------------------------------------------------------------------------ strided queue transfers


def test_strided_host_arrays_go_straight_through_the_queue(open_mesh, rng):
    mesh = open_mesh((1, 2))
    host = rng.standard_normal((64, 128)).astype(np.float32)
    config = ttnn.ReplicatedBufferConfig(64 * 64 * 4)
    buffer = ttnn.MeshBuffer.create(config, ttnn.DeviceLocalBufferConfig(1024, ttnn.BufferType.DRAM), mesh)
    cq = mesh.mesh_command_queue()
    halves = [host[:, :64], host[:, 64:]]  # strided views
    cq.enqueue_write_shards(
        buffer, [ttnn.ShardDataTransfer(ttnn.MeshCoordinate(0, i), h) for i, h in enumerate(halves)]
    )
    back = np.zeros((64, 128), np.float32)
    cq.enqueue_read_shards(
        [ttnn.ShardDataTransfer(ttnn.MeshCoordinate(0, i), back[:, 64 * i : 64 * (i + 1)]) for i in range(2)], buffer
    )
    assert np.array_equal(back, host)
    assert np.array_equal(buffer.slab()[1].view(np.float32).reshape(64, 64), host[:, 64:])
    with pytest.raises(MeshnnValueError, match=r"host data for device .* has 8192 B, the region needs 16384 B"):
        cq.enqueue_write_shards(buffer, [ttnn.ShardDataTransfer(ttnn.MeshCoordinate(0, 0), host[:32, :64])])
    with pytest.raises(MeshnnValueError, match="is a strided array of 32768 B; the region is 16384 B"):
        cq.enqueue_write_shards(
            buffer, [ttnn.ShardDataTransfer(ttnn.MeshCoordinate(0, 0), np.zeros((64, 256), np.float32)[:, :128])]
        )


# ------------------------------------------------------------------------ the slab pool


def test_the_pool_reuses_released_slabs_within_its_bound():
    pool = SlabPool(limit=3 << 20)
    a = pool.take(2, 1 << 20)
    assert a.shape == (2, 1 << 20) and not a.any()
    a[:] = 7
    pool.give(a)
    assert pool.nbytes == 2 << 20
    b = pool.take(2, 1 << 20)
    assert b is a and pool.nbytes == 0  # reused, stale bytes and all, like device memory
    pool.give(b)
    pool.give(np.zeros((2, 1 << 20), np.uint8))  # over the bound: dropped
    assert pool.nbytes == 2 << 20
    pool.give(np.zeros((1, 1 << 10), np.uint8))  # too small to pool
    assert pool.nbytes == 2 << 20
    pool.clear()
    assert pool.nbytes == 0


def test_a_buffer_freed_while_its_workload_is_queued_keeps_its_memory(open_mesh):
    mesh = open_mesh((2, 4))
    x = ttnn.from_torch(torch.full((256, 1024), 2.0), dtype=ttnn.float32, device=mesh)
    gate, started = threading.Event(), threading.Event()
    cq = mesh.mesh_command_queue()
    blocker = ttnn.MeshWorkload()

    def wait(ctx):
        started.set()
        assert gate.wait(10)

    blocker.add_program(mesh.full_range, ttnn.Program(wait, [], name="gate"))
    # an idle queue runs work on the caller's thread: enqueue the gate from another thread
    runner = threading.Thread(target=cq.enqueue_mesh_workload, args=(blocker,))
    runner.start()
    assert started.wait(10)  # the queue is busy from here on
    y = ttnn.add(x, x)  # queued behind the gate
    slab = x.mesh_buffer().slab()
    ttnn.deallocate(x)  # freed while the add still waits to read it
    z = ttnn.allocate_tensor_on_device(x.spec, mesh)  # x's size: it gets x's slab from the pool
    assert z.mesh_buffer().slab().base is slab.base or z.mesh_buffer().slab() is slab
    fives = np.full(256 * 1024, 5.0, np.float32)
    transfers = [ttnn.ShardDataTransfer(c, fives) for c in mesh.local_coords()]
    cq.enqueue_write_shards(z.mesh_buffer(), transfers, blocking=False)  # queued after the add
    gate.set()
    runner.join(10)
    assert torch.equal(ttnn.to_torch(ttnn.get_device_tensors(y)[0]), torch.full((256, 1024), 4.0))
    assert torch.equal(ttnn.to_torch(ttnn.get_device_tensors(z)[3]), torch.full((256, 1024), 5.0))
    assert SLAB_POOL.limit > 0


# ------------------------------------------------------------------------ float32 row-major matmul


@pytest.mark.parametrize(
    ("a_shape", "b_shape", "options"),
    [((1, 40, 24), (24, 56), {}), ((2, 3, 40, 24), (2, 3, 24, 56), {}), ((3, 40, 24), (1, 24, 56), {}),
     ((40, 24), (56, 24), {"transpose_b": True})],
)  # fmt: skip
def test_float32_row_major_matmul_into_the_slab_equals_the_tiled_one(open_mesh, rng, a_shape, b_shape, options):
    """The row-major float32 matmul writes into the output slab; the tiled one goes through the
    encoder: the same float32 products, so the same values."""
    mesh = open_mesh((2, 4))
    a = rng.standard_normal(a_shape).astype(np.float32)
    b = rng.standard_normal(b_shape).astype(np.float32)
    results = []
    for layout in (ttnn.ROW_MAJOR_LAYOUT, ttnn.TILE_LAYOUT):
        kw = {"dtype": ttnn.float32, "layout": layout, "device": mesh}
        out = ttnn.matmul(
            ttnn.from_torch(torch.from_numpy(a), **kw), ttnn.from_torch(torch.from_numpy(b), **kw), **options
        )
        assert out.layout is layout
        results.append([ttnn.to_torch(t).numpy() for t in ttnn.get_device_tensors(out)])
    want = np.matmul(a, np.swapaxes(b, -1, -2) if options else b)
    for rm, tiled in zip(*results, strict=True):
        assert np.allclose(rm, tiled, rtol=1e-6, atol=1e-5)
        assert np.allclose(rm, want, rtol=1e-5, atol=1e-4)  # float32 dot products of 24 terms
