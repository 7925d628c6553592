"""ttnn names tt-metal's multi-device tests call: aggregate_as_tensor, get_device_tensor,
get_memory_config, the Cpp* mapper names, positional MeshMapperConfig / MeshComposerConfig,
to_torch composing by default when the topology determines the answer, the .tensorbin rule of
tensor files, visualize_mesh_device / visualize_tensor, ttnn.mish and ttnn.ReduceType."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import meshnn as ttnn


def shards_of(n, shape=(1, 1, 32, 16), seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(shape).astype(np.float32) for _ in range(n)]


def test_aggregate_as_tensor_of_host_shards_is_a_1d_distribution_in_order(open_mesh):
    mesh = open_mesh((2, 4))
    arrays = shards_of(8)
    tensor = ttnn.aggregate_as_tensor([ttnn.from_torch(a, layout=ttnn.TILE_LAYOUT) for a in arrays])
    assert tensor.storage_type() == ttnn.StorageType.HOST and tensor.shape == ttnn.Shape([1, 1, 32, 16])
    composed = ttnn.to_numpy(tensor, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=3))
    assert np.array_equal(composed, np.concatenate(arrays, axis=3))
    assert tensor.host_buffer().shape() == ttnn.MeshShape(8)
    for array, shard in zip(arrays, ttnn.get_device_tensors(tensor), strict=True):
        assert np.array_equal(ttnn.to_numpy(shard), array)


def test_aggregate_as_tensor_of_device_shards_keeps_them_on_their_buffer(open_mesh):
    mesh = open_mesh((1, 2))
    tensor = ttnn.from_torch(
        np.arange(64, dtype=np.float32).reshape(2, 32), device=mesh, mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0)
    )
    back = ttnn.aggregate_as_tensor(ttnn.get_device_tensors(tensor))
    assert back.buffer_address() == tensor.buffer_address() and back.device_coords() == tensor.device_coords()
    host = ttnn.from_torch(np.ones((1, 32), np.float32))
    with pytest.raises(ttnn.MeshnnValueError, match="all on host or all on device"):
        ttnn.aggregate_as_tensor([ttnn.get_device_tensors(tensor)[0], host])
    with pytest.raises(ttnn.MeshnnValueError, match="same tensor spec"):
        ttnn.aggregate_as_tensor([host, ttnn.from_torch(np.ones((2, 32), np.float32))])
    with pytest.raises(ttnn.MeshnnTypeError, match="non-empty list"):
        ttnn.aggregate_as_tensor([])


def test_get_device_tensor_is_the_shard_on_that_device(open_mesh):
    mesh = open_mesh((2, 4))
    values = np.arange(8 * 32, dtype=np.float32).reshape(8, 32)
    tensor = ttnn.from_torch(values, device=mesh, mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0))
    device = mesh.get_devices()[6]
    assert np.array_equal(ttnn.to_numpy(ttnn.get_device_tensor(tensor, device)), values[6:7])
    assert np.array_equal(ttnn.to_numpy(ttnn.get_device_tensor(tensor, 3)), values[3:4])
    assert ttnn.get_device_tensor(tensor, 3).buffer_address() == tensor.buffer_address()
    with pytest.raises(ttnn.MeshnnValueError, match="device 9 is not a device of"):
        ttnn.get_device_tensor(tensor, 9)
    with pytest.raises(ttnn.MeshnnValueError, match="needs a device tensor"):
        ttnn.get_device_tensor(ttnn.from_torch(values), 0)


def test_get_memory_config_and_the_cpp_mapper_names(open_mesh):
    mesh = open_mesh((1, 2))
    tensor = ttnn.from_torch(np.ones((2, 32), np.float32), device=mesh, memory_config=ttnn.L1_MEMORY_CONFIG)
    assert ttnn.get_memory_config(tensor) == ttnn.L1_MEMORY_CONFIG
    values = np.arange(64, dtype=np.float32).reshape(2, 32)
    sharded = ttnn.from_torch(values, mesh_mapper=ttnn.CppShardTensorToMesh(mesh, 0))
    assert (
        sharded.tensor_topology()
        == ttnn.from_torch(values, mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0)).tensor_topology()
    )
    replicated = ttnn.from_torch(values, mesh_mapper=ttnn.CppReplicateTensorToMesh(mesh))
    assert [p for p in replicated.tensor_topology().placements] == [ttnn.PlacementReplicate()]


def test_positional_mapper_and_composer_configs_are_ttnns_row_col_form(open_mesh):
    assert ttnn.MeshMapperConfig(0, None).placements == (ttnn.PlacementShard(0), ttnn.PlacementReplicate())
    assert ttnn.MeshMapperConfig(None, 3, ttnn.MeshShape(2, 2)).mesh_shape_override == ttnn.MeshShape(2, 2)
    assert ttnn.MeshMapperConfig(2, 3) == ttnn.MeshMapperConfig(row_dim=2, col_dim=3)
    assert ttnn.MeshComposerConfig(2, 3).dims == (2, 3)
    assert ttnn.MeshComposerConfig(0, 1, ttnn.MeshShape(1, 2)).mesh_shape_override == ttnn.MeshShape(1, 2)
    assert ttnn.MeshComposerConfig([3]).dims == (3,)  # the list form is unchanged
    mesh = open_mesh((2, 4))
    values = np.arange(64 * 128, dtype=np.float32).reshape(1, 1, 64, 128)
    tensor = ttnn.from_torch(values, mesh_mapper=ttnn.create_mesh_mapper(mesh, ttnn.MeshMapperConfig(2, 3)))
    back = ttnn.to_numpy(tensor, mesh_composer=ttnn.create_mesh_composer(mesh, ttnn.MeshComposerConfig(2, 3)))
    assert np.array_equal(back, values)


def test_a_composer_of_one_shard_takes_the_same_dim_twice_more_shards_do_not(open_mesh):
    """models/common/auto_compose.py composes a replicated tensor of a 1x1 mesh with dims [0, 0] and
    a [1, 1] override: one shard, returned whole (tt-metal's concat_ndim returns a single view
    before it checks dims); with two shards the same dims are refused, as tt-metal refuses them."""
    one = open_mesh((1, 1))
    values = np.arange(12, dtype=np.float32).reshape(3, 4)
    config = ttnn.MeshComposerConfig(dims=[0, 0], mesh_shape_override=ttnn.MeshShape([1, 1]))
    tensor = ttnn.from_torch(values, device=one)
    assert np.array_equal(ttnn.to_numpy(tensor, mesh_composer=ttnn.create_mesh_composer(one, config)), values)
    two = open_mesh((1, 2))
    replicated = ttnn.from_torch(values, device=two, mesh_mapper=ttnn.ReplicateTensorToMesh(two))
    with pytest.raises(ttnn.MeshnnValueError, match="must be different"):
        ttnn.to_numpy(replicated, mesh_composer=ttnn.create_mesh_composer(two, ttnn.MeshComposerConfig(dims=[0, 0])))


def test_to_torch_composes_when_every_multi_device_axis_is_a_shard(open_mesh):
    mesh = open_mesh((2, 4))
    values = torch.arange(64 * 128, dtype=torch.float32).reshape(1, 1, 64, 128)
    one_axis = ttnn.from_torch(values, mesh_mapper=ttnn.shard_tensor_to_mesh_mapper(mesh, dim=3))
    assert torch.equal(one_axis.to_torch(), values) and torch.equal(
        ttnn.to_torch(ttnn.to_device(one_axis, mesh)), values
    )
    both = ttnn.from_torch(values, mesh_mapper=ttnn.ShardTensor2dMesh(mesh, mesh_shape=(2, 4), dims=(2, 3)))
    assert torch.equal(ttnn.to_torch(both), values)
    half = ttnn.from_torch(values, mesh_mapper=ttnn.ShardTensor2dMesh(mesh, mesh_shape=(2, 4), dims=(None, 3)))
    with pytest.raises(ttnn.MeshnnValueError, match="Supply a mesh composer"):  # rows replicate: no default
        ttnn.to_torch(half)
    with pytest.raises(RuntimeError, match="Supply a mesh composer"):
        ttnn.from_torch(values, mesh_mapper=ttnn.ReplicateTensorToMesh(mesh)).to_torch()


def test_tensor_files_must_end_in_tensorbin_before_anything_is_touched(tmp_path):
    tensor = ttnn.from_torch(np.ones((2, 32), np.float32))
    with pytest.raises(RuntimeError, match=r"must have \.tensorbin extension"):
        ttnn.dump_tensor(str(tmp_path / "t.bin"), tensor)
    assert not (tmp_path / "t.bin").exists()
    with pytest.raises(RuntimeError, match=r"must have \.tensorbin extension"):
        ttnn.dump_tensor(tmp_path / "t.bin", torch.rand(1, 1, 32, 32))  # the path is checked first
    good = tmp_path / "t.tensorbin"
    ttnn.dump_tensor(good, tensor)
    renamed = good.rename(tmp_path / "t.bin")
    with pytest.raises(ttnn.TensorFileError, match=r"must have \.tensorbin extension") as caught:
        ttnn.load_tensor(renamed)  # a good file, refused by its name alone
    assert caught.value.path == str(renamed)


def test_visualize_mesh_device_prints_ttnns_table(open_mesh, capsys):
    mesh = open_mesh((2, 4))
    assert ttnn.visualize_mesh_device(mesh) is None
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].strip() == "MeshDevice(rows=2, cols=4)"
    assert lines[1] == "┌" + "┬".join(["─" * 30] * 4) + "┐" and lines[-1] == "└" + "┴".join(["─" * 30] * 4) + "┘"
    assert lines[2].split("│")[1:-1] == [f"Dev. ID: {i}".center(30) for i in range(4)]
    assert lines[3].split("│")[1:-1] == [f"(0, {c})".center(30) for c in range(4)]
    assert lines[4] == "├" + "┼".join(["─" * 30] * 4) + "┤"
    assert lines[5].split("│")[1:-1] == [f"Dev. ID: {i}".center(30) for i in range(4, 8)]
    sub = mesh.create_submesh(ttnn.MeshShape(1, 2), ttnn.MeshCoordinate(1, 2))
    tensor = ttnn.from_torch(np.ones((2, 32), np.float32), device=mesh, mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0))
    ttnn.visualize_mesh_device(mesh, tensor=tensor)  # two rows over eight devices: two shards
    assert capsys.readouterr().out.count("Shape([1, 32])") == 2
    ttnn.visualize_mesh_device(sub)
    assert "Dev. ID: 6" in capsys.readouterr().out
    with pytest.raises(ttnn.MeshnnTypeError, match="mesh_device must be a MeshDevice"):
        ttnn.visualize_mesh_device("mesh")


def test_visualize_tensor_shows_each_shards_slice_of_the_global_tensor(open_mesh, capsys):
    mesh = open_mesh((2, 4))
    values = np.zeros((1, 1, 64, 128), np.float32)
    mapper = ttnn.create_mesh_mapper(mesh, ttnn.MeshMapperConfig([ttnn.PlacementReplicate(), ttnn.PlacementShard(3)]))
    tensor = ttnn.from_torch(values, mesh_mapper=mapper, layout=ttnn.ROW_MAJOR_LAYOUT)
    for target in (tensor, ttnn.to_device(tensor, mesh)):
        ttnn.visualize_tensor(target)
        out = capsys.readouterr().out
        assert "Placement Configuration" in out and "[PlacementReplicate(), PlacementShard(3)]" in out
        for c in range(4):
            assert out.count(f"[0:0, 0:0, 0:63, {32 * c}:{32 * c + 31}]") == 2  # both rows: replicas
        assert out.count("Shape: [1, 1, 64, 32]") == 8 and "Layout: ROW_MAJOR" in out and "Dtype: FLOAT32" in out
    assert "Tensor(storage: StorageType.DEVICE)" in out and "Dev. ID: 7" in out


def test_render_table_is_exact():
    table = ttnn.tensor.visualize.render_table("T", [[["a"], ["b", "c"]]], width=3)
    assert table.splitlines() == ["    T", "┌───┬───┐", "│ a │ b │", "│   │ c │", "└───┴───┘"]


def test_mish_is_x_tanh_softplus_x(open_mesh):
    mesh = open_mesh((1, 2))
    x = torch.linspace(-8, 8, 2 * 32 * 32).reshape(2, 32, 32)
    tensor = ttnn.from_torch(
        x, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT, device=mesh, mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0)
    )
    got = ttnn.to_torch(ttnn.mish(tensor), mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0))
    expected = torch.nn.functional.mish(x.double()).float()
    bound = 4 * torch.finfo(torch.float32).eps * (1 + expected.abs())  # float32 compute, a few ulps
    assert ((got - expected).abs() <= bound).all()
    assert not (
        (ttnn.to_torch(ttnn.silu(tensor), mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0)) - expected).abs() <= bound
    ).all()


def test_reduce_scatter_takes_reduce_type_sum_and_refuses_the_others(open_mesh):
    mesh = open_mesh((1, 2))
    x = np.arange(32 * 64, dtype=np.float32).reshape(1, 1, 32, 64)
    tensor = ttnn.from_torch(x, layout=ttnn.TILE_LAYOUT, device=mesh, mesh_mapper=ttnn.ReplicateTensorToMesh(mesh))
    summed = ttnn.reduce_scatter(tensor, 3, math_op=ttnn.ReduceType.Sum)
    plain = ttnn.reduce_scatter(tensor, 3)
    composer = ttnn.ConcatMeshToTensor(mesh, dim=3)
    assert np.array_equal(ttnn.to_numpy(summed, mesh_composer=composer), ttnn.to_numpy(plain, mesh_composer=composer))
    before = len(mesh.live_buffers())
    with pytest.raises(ttnn.MeshnnValueError, match=r"math_op ReduceType\.Max is not supported"):
        ttnn.reduce_scatter(tensor, 3, math_op=ttnn.ReduceType.Max)
    with pytest.raises(ttnn.MeshnnTypeError, match=r"math_op must be a ttnn\.ReduceType"):
        ttnn.reduce_scatter(tensor, 3, math_op="sum")
    assert len(mesh.live_buffers()) == before
