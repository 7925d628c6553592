"""Acceptance cases 32-50 and 58-60 of the reference (section 10), through the ttnn-named API.

Each test names its case.  Meshes are the ones tt-metal's fixtures use (n150 1x1, n300 1x2, t3k
2x4 and 1x8, galaxy 8x4) wherever the case allows, opened by the ``open_mesh`` fixture, which
closes them.  Exact dtypes must come back exactly; bfloat16 from torch.bfloat16 is a bit
pass-through, so it is exact too; block floats are held to the PCC the case states and to the
bound of their format (one mantissa step of the face row's shared exponent, see
test_round_trip.py).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import meshnn as ttnn
from meshnn.tensor.storage import HostStorage  # no ttnn name: a host tensor from a bare buffer

MESHES = [(1, 1), (1, 2), (2, 4), (1, 8), (8, 4)]
MULTI = [(1, 2), (2, 4), (1, 8), (8, 4)]
mesh_ids = pytest.mark.parametrize("shape", MESHES, ids=lambda s: f"{s[0]}x{s[1]}")
multi_ids = pytest.mark.parametrize("shape", MULTI, ids=lambda s: f"{s[0]}x{s[1]}")


def coord(*indices: int) -> ttnn.MeshCoordinate:
    return ttnn.MeshCoordinate(*indices)


ORIGIN = coord(0, 0)


def host_buffer(values: list[int]) -> ttnn.HostBuffer:
    return ttnn.HostBuffer(np.array(values, np.int32).view(np.uint8))


def ints(buffer: ttnn.HostBuffer | None) -> list[int] | None:
    return None if buffer is None else np.asarray(buffer).view(np.int32).tolist()


def pcc(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.corrcoef(np.asarray(a, np.float64).ravel(), np.asarray(b, np.float64).ravel())[0, 1])


def bfp_bound(values: np.ndarray, dtype: ttnn.DataType) -> np.ndarray:
    """|error| allowed per element: one step below the shared exponent of its 16-value face row
    (rowmax / 64 for bfloat8_b, rowmax / 4 for bfloat4_b); widths here are multiples of 16."""
    rows = np.abs(values.astype(np.float64)).reshape(*values.shape[:-1], -1, 16).max(axis=-1, keepdims=True)
    step = 64 if dtype is ttnn.bfloat8_b else 4
    return np.broadcast_to(rows / step, (*rows.shape[:-1], 16)).reshape(values.shape)


def to_numpy_shard(tensor: ttnn.Tensor) -> np.ndarray:
    return ttnn.to_torch(tensor).float().numpy()


def live_state(mesh: ttnn.MeshDevice) -> tuple:
    views = tuple(ttnn.get_memory_view(mesh, t).as_dict() for t in (ttnn.BufferType.DRAM, ttnn.BufferType.L1))
    return views, len(mesh.live_buffers())


# --- test_distributed_host_buffer.cpp: cases 32-36 ------------------------------------------------


@pytest.mark.parametrize(
    ("local_shape", "local_offset", "message"),
    [
        (ttnn.MeshShape(3, 1), None, "exceeds global shape"),  # InvalidLocalShape
        (ttnn.MeshShape(1, 1), coord(2, 0), "exceeds global shape"),  # InvalidLocalOffset
        (ttnn.MeshShape(2, 2), coord(0, 2), r"at dimension 1: 2 \+ 2 > 3"),  # InvalidCombination
        (ttnn.MeshShape(2), coord(0), "must have the same dimensions"),  # DimensionMismatch (shape)
        (ttnn.MeshShape(1, 1), coord(0), "must have the same dimensions"),  # DimensionMismatch (offset)
    ],
)
def test_case32_invalid_local_shapes_and_offsets_are_refused(local_shape, local_offset, message):
    """Case 32, InvalidLocalShape / InvalidLocalOffset / InvalidCombination / DimensionMismatch."""
    with pytest.raises(ttnn.MeshnnError, match=message) as caught:
        ttnn.DistributedHostBuffer.create(ttnn.MeshShape(2, 3), local_shape, local_offset)
    assert isinstance(caught.value, ValueError)


def test_case33_emplace_and_get_including_unpopulated_shards():
    """Case 33, EmplaceAndGetBuffer(WithUnpopulatedLocalShards)."""
    buffer = ttnn.DistributedHostBuffer.create(ttnn.MeshShape(3))
    assert buffer.shard_coords() == [] and list(buffer.shape()) == [3]
    buffer.emplace_shard(coord(2), lambda: host_buffer([4, 5, 6]))
    buffer.emplace_shard(coord(0), lambda: host_buffer([1, 2, 3]))
    assert buffer.shard_coords() == [coord(0), coord(2)]  # coordinate order, not emplace order
    assert ints(buffer.get_shard(coord(0))) == [1, 2, 3] and ints(buffer.get_shard(coord(2))) == [4, 5, 6]
    assert buffer.get_shard(coord(1)) is None  # local but never emplaced
    for outside in (
        lambda: buffer.get_shard(coord(3)),
        lambda: buffer.emplace_shard(coord(3), lambda: host_buffer([0])),
    ):
        with pytest.raises(ttnn.MeshnnError, match="out of bounds"):
            outside()
    assert buffer.shard_coords() == [coord(0), coord(2)]


def test_case34_emplace_with_a_local_mesh_shape_keeps_only_local_data():
    """Case 34, EmplaceAndGetBufferWithLocalMeshShape: global 2x3, local 2x1 at (0, 1)."""
    buffer = ttnn.DistributedHostBuffer.create(ttnn.MeshShape(2, 3), ttnn.MeshShape(2, 1), coord(0, 1))
    produced = []

    def producer(c: ttnn.MeshCoordinate):
        def produce() -> ttnn.HostBuffer:
            produced.append(c)
            return host_buffer([c[0], c[1]])

        return produce

    everything = list(ttnn.MeshCoordinateRange(ttnn.MeshShape(2, 3)))
    for c in everything:
        buffer.emplace_shard(c, producer(c))
    assert buffer.shard_coords() == everything  # remote coordinates are recorded as written
    assert produced == [coord(0, 1), coord(1, 1)]  # but their producers never run
    assert {c: ints(buffer.get_shard(c)) for c in everything} == {
        c: ([c[0], c[1]] if c[1] == 1 else None) for c in everything
    }


@pytest.mark.parametrize("local", [None, (ttnn.MeshShape(2, 2), coord(0, 1))], ids=["whole", "local2x2@(0,1)"])
def test_case35_transform_and_apply_visit_local_populated_shards_in_coordinate_order(local):
    """Case 35, Transform / Apply (+-Unpopulated, +-LocalShape)."""
    args = () if local is None else local
    buffer = ttnn.DistributedHostBuffer.create(ttnn.MeshShape(2, 3), *args)
    for c in (coord(1, 2), coord(0, 0), coord(1, 1), coord(0, 2)):  # (0, 1), (1, 0) stay unpopulated
        buffer.emplace_shard(c, lambda c=c: host_buffer([10 * c[0] + c[1]]))
    expected = [c for c in (coord(0, 0), coord(0, 2), coord(1, 1), coord(1, 2)) if buffer.is_local(c)]
    seen: list[list[int]] = []
    buffer.apply(lambda shard: seen.append(ints(shard)))
    assert seen == [[10 * c[0] + c[1]] for c in expected]
    doubled = buffer.transform(lambda shard: host_buffer([2 * v for v in ints(shard)]))
    assert doubled.shard_coords() == buffer.shard_coords()
    assert [ints(doubled.get_shard(c)) for c in expected] == [[2 * (10 * c[0] + c[1])] for c in expected]
    assert doubled.get_shard(coord(0, 1)) is None and doubled.get_shard(coord(1, 0)) is None
    assert [ints(buffer.get_shard(c)) for c in expected] == [[10 * c[0] + c[1]] for c in expected]  # untouched


def test_case36_is_local_by_box_and_by_predicate_and_emplace_shards():
    """Case 36, IsLocal (global 2x2, local 1x2 at (1, 0)) and EmplaceShardsSequential."""
    by_box = ttnn.DistributedHostBuffer.create(ttnn.MeshShape(2, 2), ttnn.MeshShape(1, 2), coord(1, 0))
    by_predicate = ttnn.DistributedHostBuffer(ttnn.MeshShape(2, 2), is_local=lambda c: c[0] == 1)
    for buffer in (by_box, by_predicate):
        assert [buffer.is_local(c) for c in ttnn.MeshCoordinateRange(ttnn.MeshShape(2, 2))] == [
            False,
            False,
            True,
            True,
        ]
        with pytest.raises(ttnn.MeshnnError):
            buffer.is_local(coord(2, 0))
        calls = []
        buffer.emplace_shards(
            list(ttnn.MeshCoordinateRange(ttnn.MeshShape(2, 2))),
            lambda c, calls=calls: calls.append(c) or host_buffer([c[0] * 2 + c[1]]),
        )
        assert calls == [coord(1, 0), coord(1, 1)]
        assert [ints(buffer.get_shard(c)) for c in calls] == [[2], [3]]
        assert buffer.get_shard(coord(0, 0)) is None and len(buffer.shard_coords()) == 4


# --- test_mesh_tensor.cpp: cases 37-45 ------------------------------------------------------------


@mesh_ids
def test_case37_lifecycle_one_address_on_every_device(open_mesh, shape):
    """Case 37, Lifecycle: allocate_tensor_on_device(1x1x32x32 fp32 RM)."""
    mesh = open_mesh(shape)
    spec = ttnn.TensorSpec((1, 1, 32, 32), ttnn.float32, ttnn.ROW_MAJOR_LAYOUT)
    tensor = ttnn.allocate_tensor_on_device(spec, mesh)
    assert tensor.is_allocated() and tensor.storage_type() is ttnn.StorageType.DEVICE
    buffer = tensor.mesh_buffer()
    assert buffer is not None and buffer.is_allocated()
    assert tensor.device_coords() == list(ttnn.MeshCoordinateRange(mesh.shape))
    device_buffers = [buffer.get_device_buffer(c) for c in mesh.shape.coords()]
    assert len(device_buffers) == mesh.get_num_devices()
    assert {b.address() for b in device_buffers} == {buffer.address()} == {tensor.buffer_address()}
    assert all(b.is_allocated() for b in device_buffers)
    tensor.deallocate()
    assert not tensor.is_allocated() and not buffer.is_allocated()
    assert not any(b.is_allocated() for b in device_buffers)
    with pytest.raises(ttnn.DeallocatedError):
        tensor.mesh_buffer()


@pytest.mark.parametrize("shape", [(1, 1), (2, 4)], ids=["1x1", "2x4"])
def test_case38_host_and_device_tensors_know_what_they_are(open_mesh, shape):
    """Case 38, ToHostNonMeshTensor: host-ness checks on both kinds of tensor."""
    mesh = open_mesh(shape)
    host = ttnn.Tensor(np.arange(32 * 32, dtype=np.float32).reshape(32, 32), ttnn.float32)
    assert host.storage_type() is ttnn.StorageType.HOST and host.is_allocated() and host.device() is None
    assert host.devices() == [] and host.device_coords() == [ORIGIN]
    for device_only in (host.mesh_buffer, host.buffer_address, host.buffer_aligned_page_size):
        with pytest.raises(ttnn.MeshnnError, match="host tensor"):
            device_only()
    device = ttnn.to_device(host, mesh)
    assert device.storage_type() is ttnn.StorageType.DEVICE and device.device() is mesh
    assert [d.id() for d in device.devices()] == mesh.get_device_ids()
    with pytest.raises(ttnn.MeshnnError, match="needs a host tensor"):
        device.host_buffer()
    with pytest.raises(ttnn.MeshnnError, match="needs a host tensor and a device tensor"):
        ttnn.copy_host_to_device_tensor(device, device)
    with pytest.raises(ttnn.MeshnnError, match="needs a device tensor and a host tensor"):
        ttnn.copy_device_to_host_tensor(host, host)


@mesh_ids
def test_case39_replicate_host_storage_tensor(open_mesh, shape):
    """Case 39, ReplicateHostStorageTensor: an iota 1x1x32x32 host tensor written to every device."""
    mesh = open_mesh(shape)
    iota = np.arange(32 * 32, dtype=np.float32).reshape(1, 1, 32, 32)
    device = ttnn.to_device(ttnn.Tensor(iota, ttnn.float32), mesh)
    assert device.mesh_buffer() is not None and list(device.shape) == [1, 1, 32, 32]
    assert device.device_coords() == list(mesh.shape.coords())
    assert len(device.device_coords()) == mesh.get_num_devices()
    topology = device.tensor_topology()
    assert topology.distribution_shape == mesh.shape and topology.mesh_coords == tuple(mesh.shape.coords())
    assert all(isinstance(p, ttnn.PlacementReplicate) for p in topology.placements)
    back = ttnn.from_device(device)
    assert back.storage_type() is ttnn.StorageType.HOST and back.host_buffer().shape() == mesh.shape
    for c in mesh.shape.coords():
        np.testing.assert_array_equal(np.asarray(back.host_buffer().get_shard(c)), iota.view(np.uint8).reshape(-1))
    for shard in ttnn.get_device_tensors(back):
        assert list(shard.shape) == [1, 1, 32, 32]
        np.testing.assert_array_equal(shard.to_numpy(), iota)


def write(host: ttnn.Tensor, mesh: ttnn.MeshDevice, how: str) -> ttnn.Tensor:
    if how == "to_device":
        return ttnn.to_device(host, mesh)
    device = ttnn.allocate_tensor_on_device(host.spec, mesh)
    ttnn.copy_host_to_device_tensor(host, device)
    return device


def case40_inputs(mesh: ttnn.MeshDevice) -> dict[str, tuple]:
    """(input, mapper, expected shard coords, shard of each coord) for cases 40 a, c and d."""
    a = torch.arange(8 * 32 * 32, dtype=torch.float32).reshape(1, 8, 32, 32)
    c = torch.arange(32 * 32, dtype=torch.float32).reshape(1, 1, 32, 32)
    d = torch.arange(7 * 3 * 32 * 32, dtype=torch.float32).reshape(7, 3, 32, 32)
    submesh = ttnn.MeshMapperConfig([ttnn.PlacementReplicate(), ttnn.PlacementShard(1)], ttnn.MeshShape(2, 3))
    coords = list(mesh.shape.coords())
    return {
        "a": (a, ttnn.shard_tensor_to_mesh_mapper(mesh, dim=1), coords, lambda i, cd: a[:, i : i + 1]),
        "c": (c, ttnn.replicate_tensor_to_mesh_mapper(mesh), coords, lambda i, cd: c),
        "d": (
            d,
            ttnn.create_mesh_mapper(mesh, submesh),
            [cd for cd in coords if cd[1] < 3],
            lambda i, cd: d[:, cd[1] : cd[1] + 1],
        ),
    }


@pytest.mark.parametrize("how", ["to_device", "allocate_and_copy"])
@pytest.mark.parametrize("which", ["a", "c", "d"])
def test_case40_write_multi_device_host_tensor(open_mesh, which, how):
    """Case 40 a/c/d, WriteMultiDeviceHostTensor (fresh to_device, and pre-allocated + copy), on T3K."""
    mesh = open_mesh((2, 4))
    source, mapper, coords, shard_of = case40_inputs(mesh)[which]
    host = ttnn.from_torch(source, dtype=ttnn.float32, mesh_mapper=mapper)
    assert host.host_buffer().shard_coords() == coords
    device = write(host, mesh, how)
    assert device.device_coords() == coords
    assert device.tensor_topology() == host.tensor_topology()
    back = ttnn.from_device(device)
    assert back.tensor_topology() == host.tensor_topology()
    assert back.host_buffer().shard_coords() == coords
    shards = ttnn.get_device_tensors(device)
    assert [s.device_coords() for s in shards] == [[c] for c in coords]
    for i, (c, shard) in enumerate(zip(coords, shards, strict=True)):
        assert list(shard.shape) == list(shard_of(i, c).shape)
        np.testing.assert_array_equal(ttnn.to_torch(shard).numpy(), shard_of(i, c).numpy())
        np.testing.assert_array_equal(
            np.asarray(back.host_buffer().get_shard(c)), np.asarray(host.host_buffer().get_shard(c))
        )


def test_case40b_uneven_shards_are_refused_before_anything_is_allocated(open_mesh):
    """Case 40 b, removed upstream: 1x9x32x32 over 8 devices (torch.chunk: 2,2,2,2,1) now fails."""
    mesh = open_mesh((2, 4))
    before = live_state(mesh)
    source = torch.zeros(1, 9, 32, 32)
    with pytest.raises(ttnn.MeshnnError) as caught:
        ttnn.from_torch(source, dtype=ttnn.float32, mesh_mapper=ttnn.shard_tensor_to_mesh_mapper(mesh, 1), device=mesh)
    assert str(caught.value) == "Shard shape mismatch: expected Shape([1, 2, 32, 32]) but got Shape([1, 1, 32, 32])"
    assert live_state(mesh) == before


def test_case41_from_host_shards_and_to_host_already_on_host(open_mesh):
    """Case 41, FromHostShards* and ToHostAlreadyOnHost."""
    mesh = open_mesh((1, 2))
    a, b = (ttnn.Tensor(np.full((2, 3), v, np.float32), ttnn.float32) for v in (1.0, 2.0))
    tensor = ttnn.from_host_shards([a, b], ttnn.MeshShape(1, 2))
    assert tensor.storage_type() is ttnn.StorageType.HOST and list(tensor.shape) == [2, 3]
    topology = tensor.tensor_topology()
    assert topology.distribution_shape == ttnn.MeshShape([2]) and topology.placements == (ttnn.PlacementShard(0),)
    assert topology.mesh_coords == (coord(0, 0), coord(0, 1))
    assert tensor.cpu() is tensor and ttnn.from_device(tensor) is tensor  # already on host: a no-op
    both = ttnn.to_torch(ttnn.to_device(tensor, mesh), mesh_composer=ttnn.concat_mesh_to_tensor_composer(mesh, 0))
    np.testing.assert_array_equal(both.numpy(), np.concatenate([np.full((2, 3), 1.0), np.full((2, 3), 2.0)]))
    on_device = ttnn.to_device(a, mesh)
    for shards, message in (
        ([a, on_device], "All tensor shards must be on host"),
        (
            [a, ttnn.Tensor(np.zeros((3, 3), np.float32), ttnn.float32)],
            "All tensor shards must have the same tensor spec",
        ),
        ([a, b, a], "Number of tensor shards must match mesh size"),
    ):
        with pytest.raises(ttnn.MeshnnError, match=message):
            ttnn.from_host_shards(shards, ttnn.MeshShape(1, 2))


@pytest.mark.parametrize("shape", [(1, 1), (2, 4)], ids=["1x1", "2x4"])
def test_case42_to_device_keeps_the_host_memory_config_unless_overridden(open_mesh, shape):
    """Case 42, ToDeviceMemoryConfigOverride: host spec L1 -> device L1; explicit DRAM wins."""
    mesh = open_mesh(shape)
    host = ttnn.from_torch(
        torch.ones(64, 64), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, memory_config=ttnn.L1_MEMORY_CONFIG
    )
    assert host.memory_config() == ttnn.L1_MEMORY_CONFIG
    kept = ttnn.to_device(host, mesh)
    assert kept.memory_config() == ttnn.L1_MEMORY_CONFIG and kept.mesh_buffer().buffer_type() is ttnn.BufferType.L1
    overridden = ttnn.to_device(host, mesh, ttnn.DRAM_MEMORY_CONFIG)
    assert overridden.memory_config() == ttnn.DRAM_MEMORY_CONFIG
    assert overridden.mesh_buffer().buffer_type() is ttnn.BufferType.DRAM
    for tensor in (kept, overridden):
        np.testing.assert_array_equal(
            ttnn.to_torch(ttnn.get_device_tensors(tensor)[0]).float().numpy(), np.ones((64, 64))
        )


@mesh_ids
def test_case43_get_device_tensors_share_the_mesh_buffer(open_mesh, shape):
    """Case 43, GetDeviceTensors."""
    mesh = open_mesh(shape)
    n = mesh.get_num_devices()
    source = torch.arange(n * 32 * 32, dtype=torch.int32).reshape(1, 1, 32, 32 * n)
    tensor = ttnn.from_torch(
        source, dtype=ttnn.int32, device=mesh, mesh_mapper=ttnn.shard_tensor_to_mesh_mapper(mesh, 3)
    )
    shards = ttnn.get_device_tensors(tensor)
    assert len(shards) == n
    assert [s.device_coords() for s in shards] == [[c] for c in ttnn.MeshCoordinateRange(mesh.shape)]
    for i, shard in enumerate(shards):
        assert shard.is_allocated() and shard.mesh_buffer() is tensor.mesh_buffer()
        assert shard.buffer_address() == tensor.buffer_address()
        np.testing.assert_array_equal(ttnn.to_torch(shard).numpy(), source[..., 32 * i : 32 * (i + 1)].numpy())


def test_case44_combine_device_tensors(open_mesh):
    """Case 44, CombineDeviceTensors(Mini) and CombineDeviceTensorsShardDimValidation, on 2x4."""
    mesh = open_mesh((2, 4))
    source = torch.arange(2 * 8 * 32 * 32, dtype=torch.float32).reshape(1, 2, 32 * 8, 32)
    first, second = (
        ttnn.from_torch(
            source + k, dtype=ttnn.float32, device=mesh, mesh_mapper=ttnn.shard_tensor_to_mesh_mapper(mesh, 2)
        )
        for k in (0, 1000)
    )
    a, b = ttnn.get_device_tensors(first), ttnn.get_device_tensors(second)
    with pytest.raises(ttnn.MeshnnError, match=r"same mesh buffer\.$"):
        ttnn.combine_device_tensors(tensors=[a[0], b[1]])
    with pytest.raises(ttnn.MeshnnError, match="duplicate coordinate"):
        ttnn.combine_device_tensors(tensors=[a[0], a[0]])
    combined = ttnn.combine_device_tensors(tensors=[a[6], a[4], a[2], a[0]], shard_dim=2)
    assert combined.device_coords() == [coord(0, 0), coord(0, 2), coord(1, 0), coord(1, 2)]
    topology = combined.tensor_topology()
    assert topology.distribution_shape == ttnn.MeshShape([4]) and topology.placements == (ttnn.PlacementShard(2),)
    assert combined.mesh_buffer() is first.mesh_buffer()
    back = ttnn.to_torch(combined, mesh_composer=ttnn.concat_mesh_to_tensor_composer(mesh, 2)).numpy()
    expected = np.concatenate([source[:, :, 32 * i : 32 * (i + 1)].numpy() for i in (0, 2, 4, 6)], axis=2)
    np.testing.assert_array_equal(back, expected)
    for bad in (4, -1):
        with pytest.raises(ttnn.MeshnnError, match="shard_dim"):
            ttnn.combine_device_tensors(tensors=[a[0], a[1]], shard_dim=bad)


def test_case45_is_uniform_storage(open_mesh):
    """Case 45, IsUniformWrite_* on a 2x2 mesh, UniformToDevice_RejectsEmptyDistributedHostBuffer and
    UniformToDevice_ToHost_Roundtrip."""
    mesh = open_mesh((2, 2), system="t3k")
    shards = [ttnn.Tensor(np.full((4, 8), i, np.float32), ttnn.float32) for i in range(4)]
    full = ttnn.to_device(ttnn.from_host_shards(shards, ttnn.MeshShape(2, 2)), mesh)
    assert full.storage.is_uniform_storage()
    single = ttnn.from_torch(
        torch.ones(1, 8), dtype=ttnn.float32, mesh_mapper=ttnn.shard_tensor_to_mesh_mapper(mesh, 0)
    )
    partial = ttnn.from_torch(
        torch.ones(2, 8), dtype=ttnn.float32, mesh_mapper=ttnn.shard_tensor_to_mesh_mapper(mesh, 0)
    )
    assert not single.storage.is_uniform_storage() and not partial.storage.is_uniform_storage()
    for host, coords in ((single, [coord(0, 0)]), (partial, [coord(0, 0), coord(0, 1)])):
        device = ttnn.to_device(host, mesh)
        assert device.device_coords() == coords and not device.storage.is_uniform_storage()
    empty_buffer = ttnn.DistributedHostBuffer.create(ttnn.MeshShape(2, 2))
    empty = ttnn.Tensor.make(
        shards[0].spec,
        HostStorage(empty_buffer),
        ttnn.TensorTopology(ttnn.MeshShape([1]), (ttnn.PlacementReplicate(),), ()),
    )
    assert not empty.storage.is_uniform_storage()
    before = live_state(mesh)
    with pytest.raises(ttnn.MeshnnError, match="no shards"):
        ttnn.to_device(empty, mesh)
    assert live_state(mesh) == before
    back = ttnn.from_device(full)
    for i, c in enumerate(ttnn.MeshCoordinateRange(mesh.shape)):
        np.testing.assert_array_equal(np.asarray(back.host_buffer().get_shard(c)).view(np.float32), np.full(32, i))


# --- test_multi_device.py: cases 46-50 -------------------------------------------------------------


def test_case46_open_close_and_reopen():
    """Case 46, test_mesh_device_open_close_explicit / test_multi_device_subset_mesh /
    test_multi_device_open_close_galaxy_mesh."""
    for shape, system, devices in [
        ((2, 2), "t3k", 4),
        ((1, 2), "t3k", 2),
        ((1, 4), "galaxy", 4),
        ((8, 1), "galaxy", 8),
        ((8, 4), "galaxy", 32),
        ((3, 2), "galaxy", 6),
    ]:
        for _ in range(2):  # close, then reopen
            mesh = ttnn.open_mesh_device(ttnn.MeshShape(*shape), system=system)
            try:
                assert mesh.get_num_devices() == devices and list(mesh.shape) == list(shape)
                tensor = ttnn.from_torch(torch.ones(1, 32), dtype=ttnn.float32, device=mesh)
                assert tensor.is_allocated()
            finally:
                ttnn.close_mesh_device(mesh)
            assert not mesh.is_open() and not tensor.is_allocated()


@multi_ids
def test_case47_to_device_twice(open_mesh, shape):
    """Case 47, test_ttnn_to_multi_device_multiple_times: bf8 tile (1,1,32,32N) sharded on dim 3."""
    mesh = open_mesh(shape)
    n = mesh.get_num_devices()
    torch.manual_seed(0)
    source = torch.rand((1, 1, 32, 32 * n), dtype=torch.bfloat16)
    host = ttnn.from_torch(
        source, dtype=ttnn.bfloat8_b, layout=ttnn.TILE_LAYOUT, mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=3)
    )
    once = ttnn.to_device(host, mesh)
    twice = ttnn.to_device(once, mesh)
    assert twice is once and twice.buffer_address() == once.buffer_address()
    again = ttnn.to_device(host, mesh)
    assert again.buffer_address() != once.buffer_address()
    values = source.float().numpy()
    for tensor in (twice, again):
        back = ttnn.to_torch(tensor, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=3)).numpy()
        assert pcc(back, values) >= 0.9999
        assert np.all(np.abs(back - values) <= bfp_bound(values, ttnn.bfloat8_b))


@pytest.mark.parametrize("memory_config", [ttnn.DRAM_MEMORY_CONFIG, ttnn.L1_MEMORY_CONFIG], ids=["DRAM", "L1"])
@pytest.mark.parametrize(
    ("dtype", "layout"),
    [
        (ttnn.bfloat16, ttnn.TILE_LAYOUT),
        (ttnn.bfloat16, ttnn.ROW_MAJOR_LAYOUT),
        (ttnn.bfloat8_b, ttnn.TILE_LAYOUT),
        (ttnn.float32, ttnn.ROW_MAJOR_LAYOUT),
        (ttnn.int32, ttnn.TILE_LAYOUT),
    ],
    ids=str,
)
@multi_ids
def test_case48_shard_round_trip(open_mesh, shape, dtype, layout, memory_config):
    """Case 48, test_ttnn_to_and_from_multi_device_shard: {TILE, RM} x {DRAM, L1} x dtypes; float32
    input, so bfloat16 and bfloat8_b really round (PCC >= 0.9999 and their format's bound)."""
    mesh = open_mesh(shape)
    n = mesh.get_num_devices()
    torch.manual_seed(1)
    if dtype is ttnn.int32:
        source = torch.randint(-(2**31), 2**31 - 1, (1, 1, 32, 32 * n), dtype=torch.int32)
    else:
        source = torch.rand((1, 1, 32, 32 * n), dtype=torch.float32)
    tensor = ttnn.from_torch(
        source,
        dtype=dtype,
        layout=layout,
        device=mesh,
        memory_config=memory_config,
        mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=3),
    )
    assert tensor.memory_config() == memory_config and tensor.mesh_buffer().buffer_type() is memory_config.buffer_type
    back = ttnn.to_torch(tensor, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=3))
    if dtype in (ttnn.float32, ttnn.int32):
        assert back.dtype == source.dtype and torch.equal(back, source)
        return
    values, got = source.numpy(), back.float().numpy()
    bound = bfp_bound(values, dtype) if dtype is ttnn.bfloat8_b else np.abs(values) * 2.0**-8
    err = np.abs(got - values)
    assert pcc(got, values) >= 0.9999 and np.all(err <= bound)
    assert err.max() > 0  # it really rounds, so the bound is doing work


@multi_ids
def test_case49_each_device_holds_its_slice(open_mesh, shape):
    """Case 49, test_multi_device_check_per_device_shard: (1,1,32,64N) sharded on dim 3."""
    mesh = open_mesh(shape)
    n = mesh.get_num_devices()
    source = torch.rand((1, 1, 32, 64 * n), dtype=torch.bfloat16)
    tensor = ttnn.from_torch(
        source, layout=ttnn.TILE_LAYOUT, device=mesh, mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=3)
    )
    shards = ttnn.get_device_tensors(tensor)
    assert len(shards) == n
    for i, shard in enumerate(shards):
        assert torch.equal(ttnn.to_torch(shard), source[..., 64 * i : 64 * (i + 1)])


@pytest.mark.parametrize("tensor_shape", [(1, 1, 32, 128), (1, 1, 16, 32)], ids=str)
@multi_ids
def test_case50_replicate_gives_every_device_the_whole_tensor(open_mesh, shape, tensor_shape):
    """Case 50, test_multi_device_replicate (ListMeshToTensor = one torch tensor per device shard)."""
    mesh = open_mesh(shape)
    source = torch.rand(tensor_shape, dtype=torch.bfloat16)
    tensor = ttnn.from_torch(source, layout=ttnn.TILE_LAYOUT, device=mesh, mesh_mapper=ttnn.ReplicateTensorToMesh(mesh))
    per_device = [ttnn.to_torch(t) for t in ttnn.get_device_tensors(tensor)]
    assert len(per_device) == mesh.get_num_devices()
    assert all(torch.equal(t, source) for t in per_device)


# --- test_distributed_tensor.py: cases 58-60 -------------------------------------------------------


@pytest.mark.parametrize("dtype", [ttnn.uint16, ttnn.bfloat16, ttnn.bfloat4_b, ttnn.bfloat8_b, ttnn.float32], ids=str)
@pytest.mark.parametrize("shape", [(1, 1), (2, 4), (8, 4)], ids=["1x1", "2x4", "8x4"])
def test_case58_replicate_to_tensor_mesh(open_mesh, shape, dtype):
    """Case 58, test_replicate_to_tensor_mesh: replicate_tensor_to_mesh_mapper + distribute_tensor."""
    mesh = open_mesh(shape)
    torch.manual_seed(1234)
    if dtype is ttnn.uint16:
        source = torch.randint(0, 2**16, (1, 1, 32, 256), dtype=torch.int32)
    else:
        source = torch.randn((1, 1, 32, 256), dtype=torch.bfloat16).float()
    host = ttnn.from_torch(source, dtype=dtype, layout=ttnn.TILE_LAYOUT)
    tensor = ttnn.distribute_tensor(host, ttnn.replicate_tensor_to_mesh_mapper(mesh), mesh)
    assert tensor.storage_type() is ttnn.StorageType.DEVICE and len(tensor.device_coords()) == mesh.get_num_devices()
    shards = [ttnn.to_torch(t) for t in ttnn.get_device_tensors(tensor)]
    if dtype is ttnn.uint16:  # to_torch gives uint16 as torch.uint16, as ttnn does since tt-metal #36660
        assert shards[0].dtype == torch.uint16
        first = shards[0].numpy().astype(np.float32)
    else:
        first = shards[0].float().numpy()
    values = source.float().numpy()
    assert pcc(first, values) >= 0.99
    if dtype.is_block_float:
        assert np.all(np.abs(first - values) <= bfp_bound(values, dtype))
    else:  # uint16 (given as ints), bfloat16- and float32-exact values come back exactly
        np.testing.assert_array_equal(first, values)
    assert all(torch.equal(s, shards[0]) for s in shards)


@multi_ids
def test_case59_shard_then_concat_to_tensor(open_mesh, shape):
    """Case 59, test_shard_to_tensor_mesh / test_concat_to_tensor / test_concat_slice_to_tensor."""
    mesh = open_mesh(shape)
    n = mesh.get_num_devices()
    source = torch.rand((1, 1, 32, 32 * n), dtype=torch.bfloat16)
    tensor = ttnn.from_torch(
        source, layout=ttnn.TILE_LAYOUT, device=mesh, mesh_mapper=ttnn.shard_tensor_to_mesh_mapper(mesh, 3)
    )
    composer = ttnn.concat_mesh_to_tensor_composer(mesh, 3)
    whole = ttnn.aggregate_tensor(tensor, composer)
    assert whole.storage_type() is ttnn.StorageType.HOST and list(whole.shape) == [1, 1, 32, 32 * n]
    assert torch.equal(ttnn.to_torch(whole), source)
    from_shards = ttnn.aggregate_tensor(ttnn.get_device_tensors(tensor), composer)
    assert torch.equal(ttnn.to_torch(from_shards), source)
    every_other = ttnn.aggregate_tensor(ttnn.get_device_tensors(tensor)[::2], composer)  # a slice of the shards
    expected = torch.cat([source[..., 32 * i : 32 * (i + 1)] for i in range(0, n, 2)], dim=3)
    assert torch.equal(ttnn.to_torch(every_other), expected)


@pytest.mark.parametrize(
    ("tensor_shape", "dims"), [((8, 1, 32, 128), (0, 3)), ((4, 1, 32, 256), (3, 0))], ids=["dims(0,3)", "dims(3,0)"]
)
def test_case60_shard_2d_over_a_galaxy_and_concat_back(open_mesh, tensor_shape, dims):
    """Case 60, test_shard2d_to_tensor_mesh / test_concat2d_to_tensor on 8x4."""
    mesh = open_mesh((8, 4))
    source = torch.randn(tensor_shape).to(torch.bfloat16)
    mapper = ttnn.shard_tensor_to_2d_mesh_mapper(mesh, mesh_shape=(8, 4), dims=dims)
    tensor = ttnn.from_torch(source, layout=ttnn.TILE_LAYOUT, device=mesh, mesh_mapper=mapper)
    assert list(tensor.shape) == [1, 1, 32, 32] and len(tensor.device_coords()) == 32
    row_dim, col_dim = dims
    for c, shard in zip(ttnn.MeshCoordinateRange(mesh.shape), ttnn.get_device_tensors(tensor), strict=True):
        selector = [slice(None)] * 4
        selector[row_dim] = slice(c[0] * source.shape[row_dim] // 8, (c[0] + 1) * source.shape[row_dim] // 8)
        selector[col_dim] = slice(c[1] * source.shape[col_dim] // 4, (c[1] + 1) * source.shape[col_dim] // 4)
        assert torch.equal(ttnn.to_torch(shard), source[tuple(selector)])
    back = ttnn.to_torch(tensor, mesh_composer=ttnn.concat_2d_mesh_to_tensor_composer(mesh, dims=dims))
    assert torch.equal(back, source)
