"""MeshBuffer: tt-metal's test_mesh_buffer.cpp and test_mesh_allocator.cpp cases, plus the slab."""

from __future__ import annotations

import contextlib
import gc

import numpy as np
import pytest

from meshnn.device.buffer import (
    BufferType,
    ShardOrientation,
    ShardSpec,
    ShardSpecBuffer,
    TensorMemoryLayout,
)
from meshnn.device.core import CoreGrid
from meshnn.errors import DeallocatedError, DeviceClosedError, MeshnnError, OutOfMemoryError
from meshnn.mesh import (
    BufferRegion,
    DeviceLocalBufferConfig,
    HostDecoder,
    HostEncoder,
    MeshBuffer,
    MeshBufferLayout,
    MeshCoordinate,
    MeshCoordinateRange,
    MeshEvent,
    MeshShape,
    ReplicatedBufferConfig,
    ShardDataTransfer,
    ShardedBufferConfig,
    open_mesh_device,
)

KiB = 1024
DRAM_1K = DeviceLocalBufferConfig(page_size=1024, buffer_type=BufferType.DRAM)
MESHES = [(1, 1), (1, 2), (2, 4), (8, 4)]


def test_config_validation(open_mesh):
    """ConfigValidation: unaligned shards and too many shards are refused; 32x32 on 2x4 is fine."""
    mesh = open_mesh((2, 4))
    with pytest.raises(MeshnnError, match="aligned with the shard shape"):
        MeshBuffer.create(ShardedBufferConfig(16 * KiB, (64, 128), (32, 120)), DRAM_1K, mesh)
    with pytest.raises(MeshnnError, match="Num shards in buffer 32, Num Devices 8"):
        MeshBuffer.create(ShardedBufferConfig(16 * KiB, (64, 128), (16, 16)), DRAM_1K, mesh)
    buffer = MeshBuffer.create(ShardedBufferConfig(16 * KiB, (64, 128), (32, 32)), DRAM_1K, mesh)
    assert buffer.is_allocated()
    assert mesh.get_memory_view(BufferType.DRAM).total_bytes_allocated_per_bank == 1024  # 2 pages over 12 banks
    del buffer
    assert mesh.get_memory_view(BufferType.DRAM).total_bytes_allocated_per_bank == 0  # nothing refers to it


@pytest.mark.parametrize("shape", MESHES)
def test_generic_mesh_shard_shape_fits(open_mesh, shape):
    """ConfigValidation (generic): shard (128/rows, 256/cols) of 128x256 fits any mesh."""
    mesh = open_mesh(shape)
    rows, cols = shape
    config = ShardedBufferConfig(128 * 256 * 4, (128, 256), (128 // rows, 256 // cols))
    buffer = MeshBuffer.create(config, DeviceLocalBufferConfig(4 * 256 // cols), mesh)
    assert buffer.device_local_size() == 128 * 256 * 4 // (rows * cols)


def test_sharded_and_replicated_initialisation(open_mesh):
    """ShardedBufferInitialization / ReplicatedBufferInitialization."""
    mesh = open_mesh((2, 4))
    sharded = MeshBuffer.create(ShardedBufferConfig(16 * KiB, (64, 128), (32, 32)), DRAM_1K, mesh)
    assert sharded.global_shard_spec().compute_datum_size_bytes() == 2
    assert (sharded.size(), sharded.device_local_size()) == (16 * KiB, 2 * KiB)
    assert sharded.global_layout() is MeshBufferLayout.SHARDED
    replicated = MeshBuffer.create(ReplicatedBufferConfig(16 * KiB), DRAM_1K, mesh)
    assert (replicated.size(), replicated.device_local_size()) == (16 * KiB, 16 * KiB)
    assert replicated.global_layout() is MeshBufferLayout.REPLICATED


@pytest.mark.parametrize("shape", MESHES)
def test_deallocation_frees_the_address_for_reuse(open_mesh, shape):
    """Deallocation: a dead buffer's address comes back; deallocate() is explicit and idempotent;
    a view at the same address ends only itself."""
    mesh = open_mesh(shape)
    address = MeshBuffer.create(ReplicatedBufferConfig(16 * KiB), DRAM_1K, mesh).address()
    gc.collect()
    buffer1 = MeshBuffer.create(ReplicatedBufferConfig(16 * KiB), DRAM_1K, mesh)
    assert buffer1.address() == address
    buffer1.deallocate()
    buffer1.deallocate()
    assert not buffer1.is_allocated()
    buffer2 = MeshBuffer.create(ReplicatedBufferConfig(16 * KiB), DRAM_1K, mesh)
    assert buffer2.address() == address
    view = MeshBuffer.create(ReplicatedBufferConfig(16 * KiB), DRAM_1K, mesh, address=buffer2.address())
    assert view.is_allocated() and view.address() == address and not view.owns_data
    view.deallocate()
    assert not view.is_allocated() and buffer2.is_allocated()
    assert mesh.get_memory_view(BufferType.DRAM).total_bytes_allocated_per_bank == 2 * KiB  # 16 pages / 12 banks


@pytest.mark.parametrize("closing", ["close", "drop"])
def test_buffers_outliving_their_mesh(closing):
    """DeallocationWithoutMeshDevice / DeallocationWithMeshDeviceClosed: 100 rounds, no crash."""
    for _ in range(100):
        mesh = open_mesh_device(MeshShape(1, 1), system="n150")
        buffer = MeshBuffer.create(ReplicatedBufferConfig(2 * KiB), DRAM_1K, mesh)
        if closing == "close":
            mesh.close()
        else:
            mesh.close()
            del mesh
            gc.collect()
        assert not buffer.is_allocated()
        with pytest.raises(DeviceClosedError):
            buffer.slab()
        del buffer


def test_get_device_buffer(open_mesh):
    """GetDeviceBuffer: (2, 4) is outside a 2x4 mesh; (1, 3) is a view at the mesh address."""
    mesh = open_mesh((2, 4))
    buffer = MeshBuffer.create(ReplicatedBufferConfig(16 * KiB), DRAM_1K, mesh)
    with pytest.raises(MeshnnError, match="out of bounds"):
        buffer.get_device_buffer(MeshCoordinate(2, 4))
    device_buffer = buffer.get_device_buffer(MeshCoordinate(1, 3))
    assert device_buffer.address() == buffer.address() and device_buffer.size() == 16 * KiB
    assert device_buffer.device_id == mesh.get_device_id(MeshCoordinate(1, 3))
    assert device_buffer.page_location(13).bank_id == 1
    assert np.shares_memory(device_buffer.data(), buffer.slab())


def test_write_source_size(open_mesh):
    """EnqueueWriteMeshBufferValidSrcSize: 8 B into 16 B throws; 16 B and 32 B are accepted."""
    mesh = open_mesh((2, 4))
    buffer = MeshBuffer.create(ReplicatedBufferConfig(16), DeviceLocalBufferConfig(16), mesh)
    cq = mesh.mesh_command_queue()
    with pytest.raises(MeshnnError, match="8 B"):
        cq.enqueue_write_mesh_buffer(buffer, np.zeros(8, np.uint8), blocking=True)
    for size in (16, 32):
        src = np.arange(size, dtype=np.uint8)
        cq.enqueue_write_mesh_buffer(buffer, src, blocking=True)
        assert (buffer.slab() == src[:16]).all()


@pytest.mark.parametrize("shape", MESHES)
def test_interleaved_shards_read_write(open_mesh, shape, rng):
    """InterleavedShardsReadWrite: random 1-1024 uint32 tiles in replicated L1; every coord reads back."""
    mesh = open_mesh(shape)
    cq = mesh.mesh_command_queue()
    for _ in range(20 if shape == (8, 4) else 100):
        tiles = int(rng.integers(1, 1025))
        config = DeviceLocalBufferConfig(4096, BufferType.L1)
        buffer = MeshBuffer.create(ReplicatedBufferConfig(tiles * 4096), config, mesh)
        src = np.arange(tiles * 1024, dtype=np.uint32)
        cq.enqueue_write_shards(buffer, [ShardDataTransfer(c, src) for c in mesh.local_coords()], blocking=False)
        for coord in mesh.local_coords():
            out = np.zeros_like(src)
            cq.enqueue_read_shards([ShardDataTransfer(coord, out)], buffer, blocking=True)
            np.testing.assert_array_equal(out, src)


@pytest.mark.parametrize(
    "layout",
    [TensorMemoryLayout.HEIGHT_SHARDED, TensorMemoryLayout.WIDTH_SHARDED, TensorMemoryLayout.BLOCK_SHARDED],
)
@pytest.mark.parametrize("pages_per_core", [(1, 1), (3, 137), (67, 4), (7, 11), (2, 2)])
@pytest.mark.parametrize("page_shape", [(1, 1024), (1, 2048), (1, 4), (32, 32), (1, 120)])
def test_device_local_sharding(open_mesh, layout, pages_per_core, page_shape):
    """DeviceLocalMeshBufferShardingTest.ShardingTest: a replicated L1 buffer sharded over the full
    compute grid of each device; iota written to every device reads back, and every page's core and
    address lie inside its shard's reservation."""
    mesh = open_mesh((1, 2))
    grid = mesh.compute_with_storage_grid_size()
    cores = grid.x * grid.y
    ph, pw = pages_per_core
    shard = (ph * page_shape[0], pw * page_shape[1])
    if layout is TensorMemoryLayout.HEIGHT_SHARDED:
        pages_2d = (ph * cores, pw)
    elif layout is TensorMemoryLayout.WIDTH_SHARDED:
        pages_2d = (ph, pw * cores)
    else:
        pages_2d = (ph * grid.y, pw * grid.x)
    page_size = page_shape[0] * page_shape[1]  # one byte per element
    size = pages_2d[0] * pages_2d[1] * page_size
    spec = ShardSpecBuffer(ShardSpec(CoreGrid(grid.x, grid.y).to_core_range_set(), shard), page_shape, pages_2d)
    buffer = MeshBuffer.create(
        ReplicatedBufferConfig(size), DeviceLocalBufferConfig(page_size, BufferType.L1, layout, spec), mesh
    )
    src = np.resize(np.arange(251, dtype=np.uint8), size)
    cq = mesh.mesh_command_queue()
    cq.enqueue_write_mesh_buffer(buffer, src, blocking=False)
    view = mesh.get_memory_view(BufferType.L1)
    assert view.total_bytes_allocated_per_bank == max(32, -(-ph * pw * -(-page_size // 16) * 16 // 32) * 32)
    for coord in mesh.local_coords():
        out = np.empty_like(src)
        cq.enqueue_read_shards([ShardDataTransfer(coord, out)], buffer, blocking=True)
        assert np.array_equal(out, src)
    device_buffer = buffer.get_device_buffer(MeshCoordinate(0, 1))
    aligned = device_buffer.aligned_page_size()
    for page in (0, buffer.num_pages() - 1):
        where = device_buffer.page_location(page)
        assert where.core is not None and buffer.address() <= where.address < buffer.address() + ph * pw * aligned


SWEEP = [
    ((64, 128), (32, 32)),
    ((128, 128), (32, 64)),
    ((32, 1024), (32, 128)),
    ((1024, 32), (128, 32)),
    ((512, 64), (128, 32)),
    ((2048, 2048), (512, 1024)),
]


@pytest.mark.parametrize(("global_shape", "shard_shape"), SWEEP)
@pytest.mark.parametrize("orientation", list(ShardOrientation))
def test_sweep_shard_and_concat(open_mesh, global_shape, shard_shape, orientation):
    """SweepShardAndConcat: uint32 global buffers written whole and read back whole."""
    mesh = open_mesh((2, 4))
    size = global_shape[0] * global_shape[1] * 4
    config = ShardedBufferConfig(size, global_shape, shard_shape, orientation)
    buffer = MeshBuffer.create(config, DeviceLocalBufferConfig(4096, bottom_up=True), mesh)
    src = np.arange(global_shape[0] * global_shape[1], dtype=np.uint32)
    cq = mesh.mesh_command_queue()
    cq.enqueue_write_mesh_buffer(buffer, src, blocking=False)
    dst = np.zeros_like(src)
    cq.enqueue_read_mesh_buffer(dst, buffer, blocking=True)
    np.testing.assert_array_equal(dst, src)
    # the first shard lives on the first device, row by row
    first = buffer.slab()[0].view(np.uint32).reshape(shard_shape)
    np.testing.assert_array_equal(first, src.reshape(global_shape)[: shard_shape[0], : shard_shape[1]])


@pytest.mark.parametrize("global_shape", [(64, 256), (128, 128), (256, 2048), (32, 512), (512, 1024)])
def test_row_major_sharding_and_replication(open_mesh, global_shape):
    """RowMajorShardingAndReplication: height-replicated shards fill mesh columns; a view at the same
    address as a plain sharded buffer reads every device row as the whole source."""
    mesh = open_mesh((2, 4))
    (h, w), rows, cols = global_shape, 2, 4
    config = ShardedBufferConfig(h * w * 4, (h, w), (0, w // cols), ShardOrientation.ROW_MAJOR)
    buffer = MeshBuffer.create(config, DeviceLocalBufferConfig(4096 if w // cols * 4 * h % 4096 == 0 else 4), mesh)
    src = np.arange(h * w, dtype=np.uint32)
    cq = mesh.mesh_command_queue()
    cq.enqueue_write_mesh_buffer(buffer, src, blocking=True)
    with pytest.raises(MeshnnError, match="replicated along any dimension"):
        cq.enqueue_read_mesh_buffer(np.zeros_like(src), buffer, blocking=True)
    view_config = ShardedBufferConfig(h * w * 4 * rows, (h * rows, w), (h, w // cols), ShardOrientation.ROW_MAJOR)
    view = MeshBuffer.create(view_config, buffer.device_local_config(), mesh, address=buffer.address())
    dst = np.zeros(h * w * rows, dtype=np.uint32)
    cq.enqueue_read_mesh_buffer(dst, view, blocking=True)
    np.testing.assert_array_equal(dst, np.arange(dst.size) % src.size)


@pytest.mark.parametrize("global_shape", [(256, 64), (1024, 1024), (128, 32), (512, 64), (2048, 256)])
def test_col_major_sharding_and_replication(open_mesh, global_shape):
    """ColMajorShardingAndReplication: width-replicated shards fill mesh rows."""
    mesh = open_mesh((2, 4))
    (h, w), rows, cols = global_shape, 2, 4
    config = ShardedBufferConfig(h * w * 4, (h, w), (h // rows, 0), ShardOrientation.COL_MAJOR)
    buffer = MeshBuffer.create(config, DeviceLocalBufferConfig(4), mesh)
    src = np.arange(h * w, dtype=np.uint32)
    cq = mesh.mesh_command_queue()
    cq.enqueue_write_mesh_buffer(buffer, src, blocking=True)
    view_config = ShardedBufferConfig(h * w * 4 * cols, (h, w * cols), (h // rows, w), ShardOrientation.ROW_MAJOR)
    view = MeshBuffer.create(view_config, buffer.device_local_config(), mesh, address=buffer.address())
    dst = np.zeros(h * w * cols, dtype=np.uint32)
    cq.enqueue_read_mesh_buffer(dst, view, blocking=True)
    i = np.arange(dst.size)
    np.testing.assert_array_equal(dst, (i // (w * cols)) * w + i % w)


@pytest.mark.parametrize("orientation", list(ShardOrientation))
def test_multi_shard_read_write(open_mesh, orientation, rng):
    """MultiShardReadWrite: random global shapes, shard = global / mesh; the same source written to
    every coordinate without blocking, each read back with blocking."""
    mesh = open_mesh((2, 4))
    cq = mesh.mesh_command_queue()
    for _ in range(50):
        h, w = int(rng.integers(1, 5)) * 32 * 2, int(rng.integers(1, 5)) * 32 * 4
        shard = (h // 2, w // 4)
        config = ShardedBufferConfig(h * w * 4, (h, w), shard, orientation)
        buffer = MeshBuffer.create(
            config, DeviceLocalBufferConfig(4096 if shard[0] * shard[1] % 1024 == 0 else 4), mesh
        )
        src = rng.integers(0, 2**32, shard[0] * shard[1], dtype=np.uint32)
        cq.enqueue_write_shards(buffer, [ShardDataTransfer(c, src) for c in mesh.local_coords()], blocking=False)
        outs = {c: np.zeros_like(src) for c in mesh.local_coords()}
        cq.enqueue_read_shards([ShardDataTransfer(c, o) for c, o in outs.items()], buffer, blocking=True)
        for out in outs.values():
            np.testing.assert_array_equal(out, src)


def test_read_shards_with_a_region(open_mesh):
    """EnqueueReadShardsWithPinnedMemoryFullRange (simulated): 128 tiles written to shard (0, 0)
    through an explicit region read back equal, and the bytes around the region are untouched."""
    mesh = open_mesh((2, 4))
    buffer = MeshBuffer.create(ReplicatedBufferConfig(256 * 4096), DeviceLocalBufferConfig(4096), mesh)
    src = np.arange(128 * 1024, dtype=np.uint32)
    cq = mesh.mesh_command_queue()
    region = BufferRegion(64 * 4096, 128 * 4096)
    # device memory is not cleared on allocation (a slab may be reused): start from known bytes
    cq.enqueue_write_mesh_buffer(buffer, np.zeros(256 * 4096, np.uint8), blocking=True)
    cq.enqueue_write_shards(buffer, [ShardDataTransfer(MeshCoordinate(0, 0), src, region)], blocking=True)
    out = np.zeros_like(src)
    cq.enqueue_read_shards([ShardDataTransfer(MeshCoordinate(0, 0), out, region)], buffer, blocking=True)
    np.testing.assert_array_equal(out, src)
    assert not buffer.slab()[0, : 64 * 4096].any() and not buffer.slab()[1].any()
    with pytest.raises(MeshnnError, match="runs past"):
        cq.enqueue_read_shards(
            [ShardDataTransfer(MeshCoordinate(0, 0), out, BufferRegion(200 * 4096, 128 * 4096))], buffer
        )


def test_basic_allocation_sanity(open_mesh):
    """test_mesh_allocator BasicAllocationSanityCheck: an 8 KiB L1 buffer on a mesh."""
    mesh = open_mesh((2, 4))
    buffer = MeshBuffer.create(ReplicatedBufferConfig(8 * KiB), DeviceLocalBufferConfig(1024, BufferType.L1), mesh)
    assert buffer.is_allocated() and buffer.size() == 8192 and buffer.buffer_type() is BufferType.L1


@pytest.mark.parametrize("shape", MESHES)
def test_out_of_memory_leaves_nothing_allocated(open_mesh, shape):
    mesh = open_mesh(shape)
    kept = MeshBuffer.create(ReplicatedBufferConfig(4096 * 64), DeviceLocalBufferConfig(4096, BufferType.L1), mesh)
    before = mesh.get_memory_view(BufferType.L1)
    with pytest.raises(OutOfMemoryError) as oom:
        MeshBuffer.create(ReplicatedBufferConfig(1 << 30), DeviceLocalBufferConfig(4096, BufferType.L1), mesh)
    assert isinstance(oom.value, MemoryError) and oom.value.buffer_type == "L1"
    assert oom.value.largest_free == before.largest_contiguous_bytes_free_per_bank
    after = mesh.get_memory_view(BufferType.L1)
    assert after == before and after.block_table == before.block_table
    assert [b.address() for b in mesh.live_buffers()] == [kept.address()]


def test_closing_the_mesh_deallocates_everything_and_io_then_fails(open_mesh):
    mesh = open_mesh((2, 4))
    buffer = MeshBuffer.create(ReplicatedBufferConfig(4096), DRAM_1K, mesh)
    cq = mesh.mesh_command_queue()
    mesh.close()
    assert not buffer.is_allocated()
    with pytest.raises(DeviceClosedError, match="closed"):
        cq.enqueue_write_mesh_buffer(buffer, np.zeros(4096, np.uint8), blocking=True)
    with pytest.raises(DeviceClosedError):
        buffer.get_device_buffer(MeshCoordinate(0, 0))
    with pytest.raises(DeviceClosedError):
        MeshBuffer.create(ReplicatedBufferConfig(4096), DRAM_1K, mesh)


def test_explicit_deallocation_then_io_fails(open_mesh):
    mesh = open_mesh((1, 2))
    buffer = MeshBuffer.create(ReplicatedBufferConfig(4096), DRAM_1K, mesh)
    buffer.deallocate()
    with pytest.raises(DeallocatedError, match="deallocated"):
        mesh.mesh_command_queue().enqueue_read_shards([ShardDataTransfer((0, 0), np.zeros(4096, np.uint8))], buffer)
    with pytest.raises(MeshnnError, match="not the address of a live"):
        MeshBuffer.create(ReplicatedBufferConfig(4096), DRAM_1K, mesh, address=buffer.address())


def test_a_mesh_larger_than_the_system_is_refused():
    with pytest.raises(MeshnnError, match="has 8"):
        open_mesh_device(MeshShape(8, 4), system="t3k")
    with pytest.raises(MeshnnError, match="has 1"):
        open_mesh_device(MeshShape(1, 2), system="n150")


@pytest.mark.parametrize("order", ["in order", "reversed", "every other", "strided source"])
def test_shard_transfers_land_on_their_devices_however_the_host_bytes_lie(open_mesh, order):
    mesh = open_mesh((2, 4))
    buffer = MeshBuffer.create(ReplicatedBufferConfig(4096), DeviceLocalBufferConfig(4096), mesh)
    host = np.arange(8 * 2 * 1024, dtype=np.uint32).reshape(16, 1024)
    coords = list(mesh.shape.coords())
    sources = {
        "in order": [host[i] for i in range(8)],
        "reversed": [host[7 - i] for i in range(8)],
        "every other": [host[2 * i] for i in range(8)],
        "strided source": [host[i, ::1] if i % 2 else host[i + 8] for i in range(8)],
    }[order]
    cq = mesh.mesh_command_queue()
    cq.enqueue_write_shards(buffer, [ShardDataTransfer(c, s) for c, s in zip(coords, sources, strict=True)], True)
    for i, coord in enumerate(coords):
        assert np.array_equal(buffer.slab()[mesh.local_row(coord)].view(np.uint32), sources[i])
    back = np.zeros((8, 1024), np.uint32)
    cq.enqueue_read_shards([ShardDataTransfer(c, back[i]) for i, c in enumerate(coords)], buffer, blocking=True)
    assert np.array_equal(back, np.stack(sources))


# ---------------------------------------------------------------- host encoders and decoders


def _recording_encoder(payloads: dict[int, np.ndarray], calls: list) -> dict[int, HostEncoder]:
    """An encoder per payload that writes it and records the array it was handed."""

    def encoder(key: int) -> HostEncoder:
        def encode(out: np.ndarray) -> None:
            calls.append((key, out))
            out[...] = payloads[key]

        return HostEncoder(payloads[key].size, encode)

    return {key: encoder(key) for key in payloads}


def test_an_encoder_writes_straight_into_device_memory(open_mesh, rng):
    """A HostEncoder of one device is handed that device's bytes themselves (no staging array),
    once; each device gets its own encoder's bytes."""
    mesh = open_mesh((2, 4))
    buffer = MeshBuffer.create(ReplicatedBufferConfig(4096), DeviceLocalBufferConfig(1024), mesh)
    coords = list(mesh.shape.coords())
    payloads = {i: rng.integers(0, 256, 4096, dtype=np.uint8) for i in range(8)}
    calls: list = []
    encoders = _recording_encoder(payloads, calls)
    cq = mesh.mesh_command_queue()
    cq.enqueue_write_shards(buffer, [ShardDataTransfer(c, encoders[i]) for i, c in enumerate(coords)], True)
    slab = buffer.slab()
    assert sorted(key for key, _ in calls) == list(range(8))
    for key, out in calls:
        row = mesh.local_row(coords[key])
        assert np.shares_memory(out, slab[row]) and out.shape == (4096,) and out.flags.c_contiguous
        assert np.array_equal(slab[row], payloads[key])


def test_one_encoder_for_every_device_runs_once(open_mesh, rng):
    """The same encoder for every device (a replicated write) is called once; every device then
    holds its bytes.  Given to two devices of eight, it is made once too, in the first one's
    memory, and copied from there."""
    mesh = open_mesh((2, 4))
    buffer = MeshBuffer.create(ReplicatedBufferConfig(2048), DeviceLocalBufferConfig(1024), mesh)
    coords = list(mesh.shape.coords())
    calls: list = []
    encoder = _recording_encoder({0: rng.integers(0, 256, 2048, dtype=np.uint8)}, calls)[0]
    cq = mesh.mesh_command_queue()
    cq.enqueue_write_mesh_buffer(buffer, np.zeros(2048, np.uint8), blocking=True)
    cq.enqueue_write_shards(buffer, [ShardDataTransfer(c, encoder) for c in coords], True)
    assert len(calls) == 1
    assert np.array_equal(buffer.slab(), np.broadcast_to(calls[0][1], (8, 2048)))
    calls.clear()
    cq.enqueue_write_mesh_buffer(buffer, np.zeros(2048, np.uint8), blocking=True)
    cq.enqueue_write_shards(buffer, [ShardDataTransfer(c, encoder) for c in (coords[1], coords[6])], True)
    rows = [mesh.local_row(c) for c in (coords[1], coords[6])]
    assert len(calls) == 1 and np.shares_memory(calls[0][1], buffer.slab()[rows[0]])  # made on the first
    written = buffer.slab()[rows]
    assert all(np.array_equal(r, calls[0][1]) for r in written)
    others = np.delete(buffer.slab(), rows, axis=0)
    assert not others.any()


def test_an_encoder_of_a_region_fills_only_the_region(open_mesh, rng):
    mesh = open_mesh((1, 2))
    buffer = MeshBuffer.create(ReplicatedBufferConfig(8192), DeviceLocalBufferConfig(1024), mesh)
    cq = mesh.mesh_command_queue()
    cq.enqueue_write_mesh_buffer(buffer, np.zeros(8192, np.uint8), blocking=True)
    calls: list = []
    encoder = _recording_encoder({0: rng.integers(1, 256, 1024, dtype=np.uint8)}, calls)[0]
    region = BufferRegion(2048, 1024)
    cq.enqueue_write_shards(buffer, [ShardDataTransfer(MeshCoordinate(0, 1), encoder, region)], True)
    slab = buffer.slab()
    assert np.array_equal(slab[1, 2048:3072], calls[0][1]) and np.shares_memory(calls[0][1], slab)
    assert not slab[0].any() and not slab[1, :2048].any() and not slab[1, 3072:].any()


@contextlib.contextmanager
def _queue_held(mesh):
    """Inside the block, ``mesh``'s cq 0 waits on an event that completes when the block ends:
    work enqueued there is queued, not run at once."""
    cq = mesh.mesh_command_queue()
    gate = MeshEvent(cq_id=0, event_id=-1, device_range=MeshCoordinateRange(mesh.shape), mesh_id=mesh.mesh_id)
    cq.enqueue_wait_for_event(gate)
    try:
        yield cq
    finally:
        gate._done.set()


def test_a_queued_non_blocking_encoder_runs_at_enqueue_into_memory_the_write_owns(open_mesh, rng):
    """Behind a wait, a non-blocking write cannot run at once: its encoder runs during the
    enqueue (so it may read host memory the caller changes afterwards) into a host array, which
    lands on the device when the wait ends."""
    mesh = open_mesh((1, 2))
    buffer = MeshBuffer.create(ReplicatedBufferConfig(1024), DeviceLocalBufferConfig(1024), mesh)
    cq = mesh.mesh_command_queue()
    cq.enqueue_write_mesh_buffer(buffer, np.zeros(1024, np.uint8), blocking=True)
    source = rng.integers(1, 256, 1024, dtype=np.uint8)
    expected = source.copy()
    calls: list = []
    encoder = HostEncoder(1024, lambda out: (calls.append(out), np.copyto(out, source)))
    with _queue_held(mesh):
        cq.enqueue_write_shards(buffer, [ShardDataTransfer(MeshCoordinate(0, 0), encoder)], False)
        assert len(calls) == 1 and not np.shares_memory(calls[0], buffer.slab())
        source[...] = 0  # the caller reuses its memory: the write must not see it
    cq.finish()
    assert np.array_equal(buffer.slab()[0], expected) and not buffer.slab()[1].any()


def test_codecs_of_the_wrong_size_are_refused_before_anything_is_written(open_mesh):
    mesh = open_mesh((1, 2))
    buffer = MeshBuffer.create(ReplicatedBufferConfig(2048), DeviceLocalBufferConfig(1024), mesh)
    cq = mesh.mesh_command_queue()
    cq.enqueue_write_mesh_buffer(buffer, np.zeros(2048, np.uint8), blocking=True)
    calls: list = []
    good = HostEncoder(2048, lambda out: (calls.append(out), out.fill(7)))
    short = HostEncoder(1024, lambda out: calls.append(out))
    transfers = [ShardDataTransfer(MeshCoordinate(0, 0), good), ShardDataTransfer(MeshCoordinate(0, 1), short)]
    with pytest.raises(MeshnnError, match="HostEncoder of 1024 B; the region is 2048 B"):
        cq.enqueue_write_shards(buffer, transfers, True)
    assert not calls and not buffer.slab().any()
    decoder = HostDecoder(4096, lambda data: calls.append(data))
    with pytest.raises(MeshnnError, match="HostDecoder of 4096 B; the region is 2048 B"):
        cq.enqueue_read_shards([ShardDataTransfer(MeshCoordinate(0, 0), decoder)], buffer)
    assert not calls


def test_a_decoder_reads_device_memory_itself_read_only(open_mesh, rng):
    """A HostDecoder gets the region's bytes as a read-only view of device memory (no staging
    copy), per device, in the order given."""
    mesh = open_mesh((2, 4))
    buffer = MeshBuffer.create(ReplicatedBufferConfig(4096), DeviceLocalBufferConfig(1024), mesh)
    coords = list(mesh.shape.coords())
    host = rng.integers(0, 256, (8, 4096), dtype=np.uint8)
    cq = mesh.mesh_command_queue()
    cq.enqueue_write_shards(buffer, [ShardDataTransfer(c, host[i]) for i, c in enumerate(coords)], True)
    seen: list = []

    def decoder(key: int, region: BufferRegion) -> ShardDataTransfer:
        def decode(data: np.ndarray) -> None:
            assert not data.flags.writeable and data.flags.c_contiguous and data.shape == (region.size,)
            assert np.shares_memory(data, buffer.slab())
            seen.append((key, data.copy()))

        return ShardDataTransfer(coords[key], HostDecoder(region.size, decode), region)

    whole, part = BufferRegion(0, 4096), BufferRegion(1000, 96)
    cq.enqueue_read_shards([decoder(5, whole), decoder(2, part), decoder(0, whole)], buffer, True)
    assert [key for key, _ in seen] == [5, 2, 0]
    assert np.array_equal(seen[0][1], host[5]) and np.array_equal(seen[2][1], host[0])
    assert np.array_equal(seen[1][1], host[2, 1000:1096])


def test_a_queued_non_blocking_write_copies_the_callers_bytes_at_enqueue(open_mesh, rng):
    """The caller may change its array in place as soon as a non-blocking write returns."""
    mesh = open_mesh((1, 2))
    buffer = MeshBuffer.create(ReplicatedBufferConfig(1024), DeviceLocalBufferConfig(1024), mesh)
    source = rng.integers(1, 256, 1024, dtype=np.uint8)
    expected = source.copy()
    with _queue_held(mesh) as cq:
        cq.enqueue_write_shards(buffer, [ShardDataTransfer(c, source) for c in mesh.local_coords()], False)
        source[...] = 0
    cq.finish()
    assert np.array_equal(buffer.slab(), np.broadcast_to(expected, (2, 1024)))


def test_encoders_that_share_together_are_made_by_one_call(open_mesh, rng):
    """Encoders of one write sharing a ``together`` are made by one call of it, given every
    (encoder, device memory) pair; an encoder without one is made by its own ``encode``."""
    mesh = open_mesh((2, 4))
    buffer = MeshBuffer.create(ReplicatedBufferConfig(1024), DeviceLocalBufferConfig(1024), mesh)
    coords = list(mesh.shape.coords())
    payloads = {i: rng.integers(0, 256, 1024, dtype=np.uint8) for i in range(8)}
    calls: list = []

    def together(pairs):
        calls.append([encoders.index(encoder) for encoder, _ in pairs])
        for encoder, out in pairs:
            assert np.shares_memory(out, buffer.slab())
            out[...] = payloads[encoders.index(encoder)]

    def alone(key):
        return lambda out: (calls.append(key), np.copyto(out, payloads[key]))

    encoders = [HostEncoder(1024, alone(i), together if i != 3 else None) for i in range(8)]
    cq = mesh.mesh_command_queue()
    cq.enqueue_write_shards(buffer, [ShardDataTransfer(c, encoders[i]) for i, c in enumerate(coords)], True)
    assert calls == [3, [0, 1, 2, 4, 5, 6, 7]]
    for i, c in enumerate(coords):
        assert np.array_equal(buffer.slab()[mesh.local_row(c)], payloads[i])


def test_encoders_made_together_still_land_in_the_order_given(open_mesh):
    """A plain copy between encoders, or an encoder over a place another waiting one writes,
    lands after those before it, as in a write of plain bytes."""
    mesh = open_mesh((1, 2))
    buffer = MeshBuffer.create(ReplicatedBufferConfig(1024), DeviceLocalBufferConfig(1024), mesh)
    calls: list = []

    def together(pairs):
        calls.append(len(pairs))
        for encoder, out in pairs:
            encoder.encode(out)

    def filler(value, size):
        return HostEncoder(size, lambda out: out.fill(value), together)

    first, second = MeshCoordinate(0, 0), MeshCoordinate(0, 1)
    transfers = [
        ShardDataTransfer(first, filler(1, 1024)),
        ShardDataTransfer(second, filler(2, 1024)),
        ShardDataTransfer(first, np.full(512, 3, np.uint8), BufferRegion(0, 512)),  # after the 1s
        ShardDataTransfer(second, filler(4, 256), BufferRegion(256, 256)),  # after the 2s
        ShardDataTransfer(first, filler(5, 256), BufferRegion(768, 256)),
    ]
    cq = mesh.mesh_command_queue()
    cq.enqueue_write_shards(buffer, transfers, True)
    slab = buffer.slab()
    assert calls == [2, 2]  # flushed at the plain copy; the last two (disjoint) made together
    assert (slab[0, :512] == 3).all() and (slab[0, 512:768] == 1).all() and (slab[0, 768:] == 5).all()
    assert (slab[1, :256] == 2).all() and (slab[1, 256:512] == 4).all() and (slab[1, 512:] == 2).all()
    calls.clear()
    overlapping = [
        ShardDataTransfer(first, filler(6, 1024)),
        ShardDataTransfer(first, filler(7, 256), BufferRegion(0, 256)),
    ]
    cq.enqueue_write_shards(buffer, overlapping, True)
    assert calls == [] and (buffer.slab()[0, :256] == 7).all() and (buffer.slab()[0, 256:] == 6).all()


def test_an_encoder_whose_first_place_is_overwritten_is_made_again_for_its_next(open_mesh):
    """Encoder E for device 0 then device 1, with a plain write over device 0's bytes between:
    device 1 still gets E's bytes (made once more, in host memory), device 0 the plain bytes."""
    mesh = open_mesh((1, 2))
    buffer = MeshBuffer.create(ReplicatedBufferConfig(1024), DeviceLocalBufferConfig(1024), mesh)
    calls: list = []
    encoder = HostEncoder(1024, lambda out: (calls.append(out), out.fill(9)))
    first, second = MeshCoordinate(0, 0), MeshCoordinate(0, 1)
    transfers = [
        ShardDataTransfer(first, encoder),
        ShardDataTransfer(first, np.full(1024, 4, np.uint8)),
        ShardDataTransfer(second, encoder),
    ]
    mesh.mesh_command_queue().enqueue_write_shards(buffer, transfers, True)
    assert (buffer.slab()[0] == 4).all() and (buffer.slab()[1] == 9).all()
    assert (
        len(calls) == 2 and np.shares_memory(calls[0], buffer.slab()) and not np.shares_memory(calls[1], buffer.slab())
    )


class _Failed(Exception):
    pass


@pytest.mark.parametrize("error", [_Failed("the encoder failed"), KeyboardInterrupt()])
@pytest.mark.parametrize("where", ["encode", "together", "decode", "decode together"])
def test_an_encoder_or_decoder_error_surfaces_as_itself(open_mesh, error, where):
    """The caller's own encoder or decoder code failing is not a kernel failing: its error (or an
    interrupt) is raised as itself, not wrapped in a QueueError, and the queue stays usable."""
    mesh = open_mesh((1, 2))
    buffer = MeshBuffer.create(ReplicatedBufferConfig(1024), DeviceLocalBufferConfig(1024), mesh)
    cq = mesh.mesh_command_queue()

    def fail(*_):
        raise error

    good = HostEncoder(1024, lambda out: out.fill(1), fail if where == "together" else None)
    if where.startswith("decode"):
        together = fail if where == "decode together" else None
        decoders = [HostDecoder(1024, fail if together is None else (lambda data: None), together) for _ in range(2)]
        transfers = [ShardDataTransfer(c, d) for c, d in zip(mesh.local_coords(), decoders, strict=True)]
        call = lambda: cq.enqueue_read_shards(transfers, buffer, True)  # noqa: E731
    else:
        bad = HostEncoder(1024, fail, good.together)
        transfers = [ShardDataTransfer(MeshCoordinate(0, 0), good), ShardDataTransfer(MeshCoordinate(0, 1), bad)]
        call = lambda: cq.enqueue_write_shards(buffer, transfers, True)  # noqa: E731
    with pytest.raises(type(error)) as raised:
        call()
    assert raised.value is error
    cq.enqueue_write_shards(
        buffer, [ShardDataTransfer(c, np.full(1024, 5, np.uint8)) for c in mesh.local_coords()], True
    )
    assert (buffer.slab() == 5).all()


def test_codecs_are_checked_when_made():
    with pytest.raises(MeshnnError, match="encode \\(and together, when given\\) must be callables"):
        HostEncoder(1024, None)
    with pytest.raises(MeshnnError, match="nbytes must be an integer"):
        HostEncoder(10.5, lambda out: None)
    with pytest.raises(MeshnnError, match="nbytes must be >= 0"):
        HostDecoder(-1, lambda data: None)
    assert HostEncoder(np.int64(64), lambda out: None).nbytes == 64


def test_decoders_that_share_together_are_called_as_one_run(open_mesh, rng):
    """Decoders of one read sharing a ``together`` are called by one call per run of them (a
    plain read between ends a run), each with its device's bytes, read-only; one without a
    ``together`` is called alone."""
    mesh = open_mesh((2, 4))
    buffer = MeshBuffer.create(ReplicatedBufferConfig(1024), DeviceLocalBufferConfig(1024), mesh)
    coords = list(mesh.shape.coords())
    host = rng.integers(0, 256, (8, 1024), dtype=np.uint8)
    cq = mesh.mesh_command_queue()
    cq.enqueue_write_shards(buffer, [ShardDataTransfer(c, host[i]) for i, c in enumerate(coords)], True)
    calls: list = []
    got: dict = {}

    def together(pairs):
        calls.append(sorted(decoders.index(d) for d, _ in pairs))
        for decoder, data in pairs:
            assert not data.flags.writeable and np.shares_memory(data, buffer.slab())
            got[decoders.index(decoder)] = data.copy()

    def alone(key):
        return lambda data: (calls.append(key), got.__setitem__(key, data.copy()))

    decoders = [HostDecoder(1024, alone(i), together if i != 2 else None) for i in range(8)]
    plain = np.zeros(1024, np.uint8)
    transfers = [ShardDataTransfer(coords[i], decoders[i]) for i in range(4)]
    transfers += [ShardDataTransfer(coords[4], plain)]
    transfers += [ShardDataTransfer(coords[i], decoders[i]) for i in range(5, 8)]
    cq.enqueue_read_shards(transfers, buffer, True)
    assert calls == [2, [0, 1, 3], [5, 6, 7]]
    assert all(np.array_equal(got[i], host[i]) for i in got) and sorted(got) == [0, 1, 2, 3, 5, 6, 7]
    assert np.array_equal(plain, host[4])
