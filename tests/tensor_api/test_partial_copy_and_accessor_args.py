"""tt-metal 2026's tensor APIs of tests/ttnn/unit_tests/tensor: ``copy_host_to_device_tensor_partial``
(only the shards dealt to some cores are written), ``TensorAccessorArgs`` (a kernel's accessor
arguments for a device tensor) and ``worker_core_from_logical_core`` (translated NoC coordinates).

The expected accessor arguments are written out by hand from tt-metal's layout of them (config bits,
aligned page size, rank, banks, shapes in pages, two bank coordinates a word)."""

from __future__ import annotations

import numpy as np
import pytest

import meshnn as ttnn

U32, RM = ttnn.uint32, ttnn.ROW_MAJOR_LAYOUT
SHAPE = (1, 1, 64, 32)


def crs(*boxes: tuple[int, int, int, int]) -> ttnn.CoreRangeSet:
    return ttnn.CoreRangeSet([ttnn.CoreRange(ttnn.CoreCoord(a, b), ttnn.CoreCoord(c, d)) for a, b, c, d in boxes])


def sharded(layout: ttnn.TensorMemoryLayout, buffer_type: ttnn.BufferType, grid, shard) -> ttnn.MemoryConfig:
    return ttnn.MemoryConfig(layout, buffer_type, ttnn.ShardSpec(grid, shard, ttnn.ShardOrientation.ROW_MAJOR))


HEIGHT_L1 = sharded(ttnn.TensorMemoryLayout.HEIGHT_SHARDED, ttnn.BufferType.L1, crs((0, 0, 0, 1)), (32, 32))
HEIGHT_DRAM = sharded(ttnn.TensorMemoryLayout.HEIGHT_SHARDED, ttnn.BufferType.DRAM, crs((0, 0, 1, 0)), (32, 32))


@pytest.fixture
def mesh():
    device = ttnn.open_mesh_device(ttnn.MeshShape(1, 1))
    yield device
    ttnn.close_mesh_device(device)


def host(values: np.ndarray, layout=RM, dtype=U32) -> ttnn.Tensor:
    return ttnn.from_torch(values, dtype=dtype, layout=layout)


def filled(mesh, value: int, memory_config: ttnn.MemoryConfig, shape=SHAPE, layout=RM) -> ttnn.Tensor:
    dev = ttnn.allocate_tensor_on_device(ttnn.Shape(shape), U32, layout, mesh, memory_config)
    ttnn.copy_host_to_device_tensor(host(np.full(shape, value, np.uint32), layout), dev)
    return dev


def read(t: ttnn.Tensor) -> np.ndarray:
    return ttnn.to_torch(ttnn.from_device(t)).numpy().view(np.uint32)


@pytest.mark.parametrize("config, first, second", [(HEIGHT_L1, (0, 0), (0, 1)), (HEIGHT_DRAM, (0, 0), (1, 0))])
def test_partial_copies_write_only_the_filtered_cores_shards(mesh, config, first, second):
    values = np.arange(np.prod(SHAPE), dtype=np.uint32).reshape(SHAPE) + 7
    dev = filled(mesh, 0xABCD1234, config)
    ttnn.copy_host_to_device_tensor_partial(host(values), dev, crs((*first, *first)))
    got = read(dev)
    assert (got[..., :32, :] == values[..., :32, :]).all()  # the first core's shard: rows 0-31
    assert (got[..., 32:, :] == 0xABCD1234).all()  # the other core's shard untouched
    ttnn.copy_host_to_device_tensor_partial(host(values), dev, crs((*second, *second)))
    assert (read(dev) == values).all()


def test_partial_copy_of_a_block_sharded_tile_tensor_keeps_the_other_blocks(mesh):
    """2x2 cores of 32x32 tiles over a 64x64 tensor: core (1, 0) holds the top-right tile, whose
    pages are not contiguous with any other core's in the buffer's page order."""
    shape = (1, 1, 64, 64)
    config = sharded(ttnn.TensorMemoryLayout.BLOCK_SHARDED, ttnn.BufferType.L1, crs((0, 0, 1, 1)), (32, 32))
    values = np.arange(64 * 64, dtype=np.uint32).reshape(shape)
    dev = filled(mesh, 5, config, shape, ttnn.TILE_LAYOUT)
    ttnn.copy_host_to_device_tensor_partial(host(values, ttnn.TILE_LAYOUT), dev, crs((1, 0, 1, 0)))
    expected = np.full(shape, 5, np.uint32)
    expected[..., :32, 32:] = values[..., :32, 32:]
    assert (read(dev) == expected).all()


def test_an_empty_filter_writes_nothing_and_an_interleaved_tensor_is_refused(mesh):
    dev = filled(mesh, 0x55AA55AA, HEIGHT_L1)
    ttnn.copy_host_to_device_tensor_partial(host(np.ones(SHAPE, np.uint32)), dev, ttnn.CoreRangeSet([]))
    assert (read(dev) == 0x55AA55AA).all()
    plain = filled(mesh, 3, ttnn.DRAM_MEMORY_CONFIG)
    with pytest.raises(ttnn.MeshnnValueError, match="interleaved"):
        ttnn.copy_host_to_device_tensor_partial(host(np.ones(SHAPE, np.uint32)), plain, crs((0, 0, 0, 0)))
    assert (read(plain) == 3).all()


def test_partial_copy_over_a_mesh_writes_each_devices_own_shard():
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 2))
    try:
        values = np.arange(2 * 64 * 32, dtype=np.uint32).reshape(2, 1, 64, 32)
        mapper = ttnn.ShardTensorToMesh(mesh, dim=0)
        src = ttnn.from_torch(values, dtype=U32, layout=RM, mesh_mapper=mapper)
        dev = ttnn.allocate_tensor_on_device(ttnn.Shape(SHAPE), U32, RM, mesh, HEIGHT_L1)
        ttnn.copy_host_to_device_tensor(
            ttnn.from_torch(np.zeros_like(values), dtype=U32, layout=RM, mesh_mapper=mapper), dev
        )
        ttnn.copy_host_to_device_tensor_partial(src, dev, crs((0, 1, 0, 1)))
        got = ttnn.to_torch(ttnn.from_device(dev), mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0)).numpy()
        assert (got.view(np.uint32)[:, :, 32:] == values[:, :, 32:]).all()
        assert (got[:, :, :32] == 0).all()
    finally:
        ttnn.close_mesh_device(mesh)


def test_accessor_args_of_interleaved_tensors(mesh):
    dram = ttnn.from_torch(np.zeros((32, 64), np.float32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh)
    l1 = ttnn.from_torch(
        np.zeros((32, 64), np.float32), dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT, device=mesh,
        memory_config=ttnn.L1_MEMORY_CONFIG,
    )  # fmt: skip
    assert ttnn.TensorAccessorArgs(dram).get_compile_time_args() == [2, 2048]  # IsDram; a bfloat16 tile
    assert ttnn.TensorAccessorArgs(dram).get_common_runtime_args() == []
    assert ttnn.TensorAccessorArgs(l1).get_compile_time_args() == [0, 4096]  # a float32 tile


def test_accessor_args_of_sharded_tensors(mesh):
    l1 = filled(mesh, 0, HEIGHT_L1)  # pages are 128 B rows; [64, 1] pages in shards of [32, 1] squeeze to rank 1
    words = 18 << 24 | 19 << 16 | 18 << 8 | 18  # cores (0, 0), (0, 1) translated to (18, 18), (18, 19)
    assert ttnn.TensorAccessorArgs(l1).get_compile_time_args() == [1, 128, 1, 2, 64, 32, words]
    dram = filled(mesh, 0, HEIGHT_DRAM)  # DRAM banks by their logical (bank, 0): not translated
    assert ttnn.TensorAccessorArgs(dram).get_compile_time_args() == [3, 128, 1, 2, 64, 32, 1 << 24]
    three = sharded(ttnn.TensorMemoryLayout.HEIGHT_SHARDED, ttnn.BufferType.L1, crs((0, 0, 2, 0)), (32, 32))
    odd = filled(mesh, 0, three, (1, 1, 96, 32))  # three banks: the last word holds one
    args = ttnn.TensorAccessorArgs(odd).get_compile_time_args()
    assert args == [1, 128, 1, 3, 96, 32, 19 << 24 | 18 << 16 | 18 << 8 | 18, 20 << 8 | 18]


def test_accessor_args_refuse_host_and_deallocated_tensors(mesh):
    with pytest.raises(ttnn.MeshnnValueError, match="host"):
        ttnn.TensorAccessorArgs(host(np.ones(SHAPE, np.uint32)))
    dev = filled(mesh, 0, HEIGHT_L1)
    ttnn.deallocate(dev)
    with pytest.raises(ttnn.DeallocatedError):
        ttnn.TensorAccessorArgs(dev)


@pytest.mark.parametrize(
    "system, logical, translated",
    [("t3k", (0, 0), (18, 18)), ("t3k", (7, 7), (25, 25)), ("p150", (0, 0), (1, 2)), ("p150", (7, 3), (10, 5))],
)
def test_worker_core_from_logical_core(system, logical, translated):
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 1), system=system)
    try:
        core = ttnn.CoreCoord(*logical)
        assert mesh.worker_core_from_logical_core(core) == ttnn.CoreCoord(*translated)
        assert mesh.get_devices()[0].worker_core_from_logical_core(core) == ttnn.CoreCoord(*translated)
        grid = mesh.system.worker_grid
        with pytest.raises(ttnn.MeshnnValueError, match="outside the logical worker grid"):
            mesh.worker_core_from_logical_core(ttnn.CoreCoord(grid[0], 0))
        assert mesh.worker_core_from_logical_core(logical) == ttnn.CoreCoord(*translated)  # an (x, y) pair
        with pytest.raises(ttnn.MeshnnTypeError, match="logical_core"):
            mesh.worker_core_from_logical_core("0,0")
    finally:
        ttnn.close_mesh_device(mesh)


@pytest.mark.parametrize(
    "dtype, tile, element",
    [(ttnn.bfloat16, 2048, 2), (ttnn.float32, 4096, 4), (ttnn.uint16, 2048, 2), (ttnn.uint32, 4096, 4)],
)
def test_tile_and_element_sizes(dtype, tile, element):
    assert (ttnn.tile_size(dtype), ttnn.element_size(dtype)) == (tile, element)


def test_block_floats_have_a_tile_size_and_no_element_size():
    assert ttnn.tile_size(ttnn.bfloat8_b) == 1088  # 64 B of exponents + 1024 B of codes
    assert ttnn.tile_size(ttnn.bfloat4_b) == 576  # 64 + 512
    for dtype in (ttnn.bfloat8_b, ttnn.bfloat4_b):
        with pytest.raises(ttnn.MeshnnValueError, match="block float"):
            ttnn.element_size(dtype)


@pytest.mark.parametrize("system, dram, l1_unreserved", [("t3k", 32, 1463968), ("p150", 64, 1531776)])
def test_alignments_follow_the_systems_arch(monkeypatch, system, dram, l1_unreserved):
    monkeypatch.setenv("MESHNN_SYSTEM", system)
    assert (ttnn.get_dram_alignment(), ttnn.get_l1_alignment()) == (dram, 16)
    assert ttnn.get_max_worker_l1_unreserved_size() == l1_unreserved  # the arch's figure, as ttnn 0.81.1 reports


def test_an_x_y_pair_stands_for_a_core_coord_as_ttnn_converts_it():
    by_pair = ttnn.num_cores_to_corerangeset(56, [8, 7], True)
    assert by_pair == ttnn.num_cores_to_corerangeset(56, ttnn.CoreCoord(8, 7), True)
    assert by_pair.num_cores() == 56
    assert ttnn.split_work_to_cores((8, 8), 10)[0] == 10
    assert ttnn.CoreRange([0, 0], [1, 1]).grid_size() == ttnn.CoreCoord(2, 2)
    with pytest.raises(ttnn.MeshnnTypeError, match="grid_size"):
        ttnn.num_cores_to_corerangeset(4, (8, 8, 1))


def test_from_buffer_and_flat_lists_keep_integers_exact(mesh):
    edges = [-(2**31), -(2**31) + 1, -1, 0, 1, 2**31 - 2, 2**31 - 1, -1000000]
    made = ttnn.from_buffer(edges, [2, 4], ttnn.int32, mesh)
    assert (made.layout, made.storage_type(), made.to_list()) == (RM, ttnn.StorageType.DEVICE, [edges[:4], edges[4:]])
    unsigned = [0, 1, 2**32 - 1, 2**31]
    assert ttnn.Tensor(unsigned, [1, 4], ttnn.uint32, RM).to_list() == [unsigned]  # float32 would round 2**32 - 1
    placed = ttnn.Tensor(list(range(64)), [2, 32], ttnn.int32, RM, mesh, ttnn.L1_MEMORY_CONFIG)  # the 6th: a config
    assert placed.memory_config().buffer_type is ttnn.BufferType.L1
    assert ttnn.to_torch(placed).flatten().tolist() == list(range(64))
    for dtype in (ttnn.bfloat8_b, ttnn.bfloat4_b, ttnn.DataType.INVALID):
        with pytest.raises(ttnn.MeshnnValueError, match="Unreachable"):
            ttnn.from_buffer([[1, 2, 3], [4, 5, 6]], [2, 3], dtype, mesh, ttnn.TILE_LAYOUT)
