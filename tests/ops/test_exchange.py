"""point_to_point, broadcast, all_broadcast and barrier on 1x2, 1x8, 2x4 and 8x4 meshes, against numpy.

These ops move bytes without arithmetic: every received shard equals the sent one exactly, in every
dtype; a device that takes no part keeps what it had (an ``output_tensor``'s old bytes).
"""

from __future__ import annotations

import numpy as np
import pytest

import meshnn as ttnn

from .reference import BF16, F32, RM, TILE, exact_equal

SYSTEMS = {(1, 2): "n300", (1, 8): "t3k", (2, 4): "t3k", (8, 4): "galaxy"}


@pytest.fixture(scope="module")
def meshes():
    opened = {shape: ttnn.open_mesh_device(ttnn.MeshShape(*shape), system=name) for shape, name in SYSTEMS.items()}
    yield opened
    for mesh in opened.values():
        mesh.close()


@pytest.fixture(params=list(SYSTEMS), ids=[f"{r}x{c}" for r, c in SYSTEMS])
def mesh(request, meshes):
    return meshes[request.param]


@pytest.fixture
def rng():
    return np.random.default_rng(20261205)


def sharded(mesh, values: np.ndarray, dtype, layout) -> ttnn.Tensor:
    """values (devices * d0, ...) with device i holding rows [i d0, (i+1) d0) of dim 0."""
    return ttnn.Tensor(values, dtype, device=mesh, layout=layout, mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0))


def device_results(tensor: ttnn.Tensor) -> list[np.ndarray]:
    return [ttnn.to_numpy(t).astype(np.float64) for t in ttnn.get_device_tensors(tensor)]


def stored(tensor: ttnn.Tensor, n: int) -> list[np.ndarray]:
    """The shards as the device holds them (after the dtype's rounding)."""
    whole = ttnn.to_numpy(tensor, mesh_composer=ttnn.ConcatMeshToTensor(tensor.device(), dim=0))
    return np.split(whole.astype(np.float64), n, axis=0)


def linear(coord: tuple[int, int], shape: tuple[int, int]) -> int:
    return coord[0] * shape[1] + coord[1]


def pairs(shape: tuple[int, int]) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """Sender and receiver pairs that share a row or a column: both ends of each axis, and neighbours."""
    rows, cols = shape
    found = [((0, 0), (0, cols - 1)), ((0, cols - 1), (0, 0))]
    if rows > 1:
        found += [((0, 0), (rows - 1, 0)), ((rows - 1, cols - 1), (rows - 2, cols - 1))]
    return found


@pytest.mark.parametrize("dtype, layout", [(F32, RM), (BF16, TILE), (BF16, RM)], ids=["f32-rm", "bf16-tile", "bf16-rm"])
def test_point_to_point(mesh, dtype, layout, rng):
    """The receiver's shard becomes the sender's; every other device's shard of output_tensor stays."""
    shape = tuple(mesh.shape)
    n = mesh.get_num_devices()
    tensor = sharded(mesh, rng.standard_normal((n, 3, 32)).astype(np.float32), dtype, layout)
    shards = stored(tensor, n)
    for sender, receiver in pairs(shape):
        out = ttnn.point_to_point(tensor, ttnn.MeshCoordinate(sender), ttnn.MeshCoordinate(receiver))
        got = device_results(out)[linear(receiver, shape)]
        exact_equal(got, shards[linear(sender, shape)], f"{sender}->{receiver}")
        keep = sharded(mesh, np.full((n, 3, 32), 7.0, np.float32), dtype, layout)
        ttnn.point_to_point(tensor, ttnn.MeshCoordinate(sender), ttnn.MeshCoordinate(receiver), output_tensor=keep)
        got = device_results(keep)
        for index in range(n):
            expected = shards[linear(sender, shape)] if index == linear(receiver, shape) else np.full((1, 3, 32), 7.0)
            exact_equal(got[index], expected, f"output_tensor device {index}")


def test_point_to_point_ring_hops(meshes):
    """A ring route goes the shorter way round: the recorded hops, 1 from one end of a row to the other."""
    from meshnn.ops.ccl.point_to_point import route_hops

    mesh = meshes[(1, 8)]
    a, b = ttnn.MeshCoordinate(0, 0), ttnn.MeshCoordinate(0, 7)
    assert route_hops("point_to_point", a, b, mesh, ttnn.Topology.Linear) == 7
    assert route_hops("point_to_point", a, b, mesh, ttnn.Topology.Ring) == 1
    assert route_hops("point_to_point", a, ttnn.MeshCoordinate(0, 3), mesh, ttnn.Topology.Ring) == 3


@pytest.mark.parametrize(
    "dtype, layout, shape, expected",
    [
        (BF16, RM, (1, 1, 1, 16), (1, 16)),  # one 32-byte page: one packet of it
        (BF16, RM, (1, 1, 32, 7168), (128, 2048)),  # 32 pages of 14336 bytes, each in four 4096-byte packets
        (BF16, TILE, (1, 1, 32, 64), (1, 2048)),  # two 2048-byte tiles in one 4096-byte packet
        (F32, TILE, (1, 1, 32, 96), (3, 1024)),  # 4096-byte tiles, one per 4352-byte packet
    ],
)
def test_intermediate_spec(meshes, dtype, layout, shape, expected):
    """The packet buffer: whole pages per packet up to the payload (4096 for bfloat16), pages split
    over packets beyond it; the input's dtype, layout and memory config."""
    from meshnn.ops.ccl.point_to_point import p2p_compute_intermediate_tensor_spec

    mesh = meshes[(1, 2)]
    tensor = ttnn.Tensor(np.zeros((2, *shape[1:]), np.float32), dtype, device=mesh, layout=layout,
                         mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0))  # fmt: skip
    spec = p2p_compute_intermediate_tensor_spec(tensor, ttnn.MeshCoordinate(0, 0), ttnn.MeshCoordinate(0, 1),
                                                ttnn.Topology.Linear)  # fmt: skip
    assert tuple(spec.shape) == expected
    assert (spec.dtype, spec.layout, spec.memory_config) == (dtype, layout, tensor.memory_config())


def groups(shape: tuple[int, int], axis: int | None) -> list[list[int]]:
    """The linear device indices of every group, each in member order."""
    rows, cols = shape
    if axis is None:
        return [list(range(rows * cols))]
    if axis == 0:
        return [[r * cols + c for r in range(rows)] for c in range(cols)]
    return [[r * cols + c for c in range(cols)] for r in range(rows)]


@pytest.mark.parametrize("cluster_axis", [None, 0, 1], ids=lambda a: f"axis{a}")
def test_all_broadcast(mesh, cluster_axis, rng):
    """Output i holds member i's shard on every device of each group; a 2-D mesh without
    cluster_axis gives one output per device, in row-major order."""
    shape = tuple(mesh.shape)
    if cluster_axis is not None and shape[cluster_axis] < 2:
        with pytest.raises(ttnn.MeshnnValueError, match="more than one device"):
            ttnn.all_broadcast(sharded(mesh, np.zeros((mesh.get_num_devices(), 1, 32), np.float32), F32, RM),
                               cluster_axis=cluster_axis)  # fmt: skip
        return
    n = mesh.get_num_devices()
    for dtype, layout in [(BF16, TILE), (F32, RM)]:
        tensor = sharded(mesh, rng.standard_normal((n, 2, 32)).astype(np.float32), dtype, layout)
        shards = stored(tensor, n)
        outs = ttnn.all_broadcast(tensor, cluster_axis=cluster_axis, memory_config=ttnn.L1_MEMORY_CONFIG)
        members = groups(shape, cluster_axis)
        assert len(outs) == len(members[0])
        for i, out in enumerate(outs):
            assert out.memory_config().buffer_type is ttnn.BufferType.L1
            got = device_results(out)
            for group in members:
                for device in group:
                    exact_equal(got[device], shards[group[i]], f"output {i} device {device}")


@pytest.mark.parametrize("cluster_axis", [None, 1, 0], ids=lambda a: f"axis{a}")
def test_broadcast(mesh, cluster_axis, rng):
    """Every device of the sender's group gets the sender's shard.  Without cluster_axis the group
    is every device (ShardTensorToMesh's distribution is a line of them); along an axis, a mesh
    with more than one group is refused (the other groups would wait for a sender)."""
    shape = tuple(mesh.shape)
    n = mesh.get_num_devices()
    tensor = sharded(mesh, rng.standard_normal((n, 2, 64)).astype(np.float32), BF16, TILE)
    shards = stored(tensor, n)
    axis = 1 if cluster_axis is None else cluster_axis
    sender = (0, shape[1] - 1) if axis == 1 else (shape[0] - 1, 0)
    if cluster_axis is not None and (shape[axis] < 2 or shape[1 - axis] > 1):
        with pytest.raises(ttnn.MeshnnValueError, match=r"group|more than one"):
            ttnn.broadcast(tensor, ttnn.MeshCoordinate(sender), cluster_axis=cluster_axis)
        return
    out = ttnn.broadcast(tensor, ttnn.MeshCoordinate(sender), cluster_axis=cluster_axis, num_links=1)
    for device, got in enumerate(device_results(out)):
        exact_equal(got, shards[linear(sender, shape)], f"device {device}")


def test_broadcast_refuses_a_2d_distribution(meshes, rng):
    """Without cluster_axis a 2-D distribution (2x4 placements) is refused: it is not a line."""
    mesh = meshes[(2, 4)]
    tensor = ttnn.from_torch(rng.standard_normal((2, 4 * 32)).astype(np.float32), dtype=F32, layout=RM, device=mesh,
                             mesh_mapper=ttnn.ShardTensor2dMesh(mesh, mesh_shape=(2, 4), dims=(0, 1)))  # fmt: skip
    with pytest.raises(ttnn.MeshnnValueError, match="line"):
        ttnn.broadcast(tensor, ttnn.MeshCoordinate(0, 0))


def test_broadcast_on_the_devices_of_a_line_distribution(meshes, rng):
    """Without cluster_axis the group is the devices the input populates (a 1x4 distribution on a
    1x8 mesh): those four get the sender's shard."""
    mesh = meshes[(1, 8)]
    values = rng.standard_normal((1, 2, 4 * 32)).astype(np.float32)
    config = ttnn.MeshMapperConfig([ttnn.PlacementReplicate(), ttnn.PlacementShard(-1)], ttnn.MeshShape(1, 4))
    tensor = ttnn.from_torch(values, dtype=F32, layout=RM, device=mesh,
                             mesh_mapper=ttnn.create_mesh_mapper(mesh, config))  # fmt: skip
    out = ttnn.broadcast(tensor, ttnn.MeshCoordinate(0, 2))
    got = device_results(out)
    assert len(got) == 4
    for device in range(4):
        exact_equal(got[device], values[..., 64:96].astype(np.float64), f"device {device}")


def test_barrier_and_device_delay(mesh, rng):
    """barrier returns the input's values (in its memory config); apply_device_delay takes one
    cycle count per device and changes no tensor."""
    n = mesh.get_num_devices()
    tensor = sharded(mesh, rng.standard_normal((n, 2, 32)).astype(np.float32), F32, TILE)
    out = ttnn.barrier(tensor, memory_config=ttnn.L1_MEMORY_CONFIG)
    assert out.memory_config().buffer_type is ttnn.BufferType.L1
    for got, want in zip(device_results(out), stored(tensor, n), strict=True):
        exact_equal(got, want, "barrier")
    rows, cols = tuple(mesh.shape)
    ttnn.apply_device_delay(mesh, [[100 * (r * cols + c) for c in range(cols)] for r in range(rows)])
    for got, want in zip(device_results(tensor), stored(tensor, n), strict=True):
        exact_equal(got, want, "after the delay")


def test_program_cache_counts_programs(meshes, rng):
    """A program is built once per op, tensor specs and attributes: repeating a broadcast adds no
    entry, another sender adds one, clearing the cache empties it."""
    mesh = meshes[(1, 2)]
    mesh.disable_and_clear_program_cache()
    mesh.enable_program_cache()
    tensor = sharded(mesh, rng.standard_normal((2, 1, 32)).astype(np.float32), F32, RM)
    for _ in range(3):
        ttnn.broadcast(tensor, ttnn.MeshCoordinate(0, 0))
    assert mesh.num_program_cache_entries() == 1
    ttnn.broadcast(tensor, ttnn.MeshCoordinate(0, 1))
    assert mesh.num_program_cache_entries() == 2
    mesh.disable_and_clear_program_cache()
    assert mesh.num_program_cache_entries() == 0
    mesh.enable_program_cache()


def test_all_broadcast_over_the_devices_of_one_column(meshes, rng):
    """A [8, 1] distribution on the 8x4 Galaxy populates one column: all_broadcast along
    cluster_axis=0 runs over those 8 devices (output i: row i's shard on each of them)."""
    mesh = meshes[(8, 4)]
    values = rng.standard_normal((1, 1, 8 * 32)).astype(np.float32)
    config = ttnn.MeshMapperConfig([ttnn.PlacementShard(-1), ttnn.PlacementReplicate()], ttnn.MeshShape(8, 1))
    tensor = ttnn.from_torch(values, dtype=BF16, layout=TILE, device=mesh,
                             mesh_mapper=ttnn.create_mesh_mapper(mesh, config))  # fmt: skip
    outs = ttnn.all_broadcast(tensor, cluster_axis=0)
    assert len(outs) == 8
    expected = [np.asarray(ttnn.to_numpy(t), np.float64) for t in ttnn.get_device_tensors(tensor)]
    for i, out in enumerate(outs):
        got = device_results(out)
        assert len(got) == 8
        for device in range(8):
            exact_equal(got[device], expected[i], f"output {i} device {device}")
