# TTNN-style multi-device tests: written as tt-metal's own tests are, run by
# `python -m pytest -p meshnn.testing tests/ttnn_style` (tests/test_ttnn_style_suite.py does it).
import pytest
import torch
import ttnn


def pcc(a, b):
    return torch.corrcoef(torch.stack([a.float().flatten(), b.float().flatten()]))[0, 1].item()


@pytest.mark.parametrize("mesh_device", [2, 8, (2, 4), (1, 1)], indirect=True)
def test_shard_and_concat_round_trip(mesh_device):
    n = mesh_device.get_num_devices()
    torch_tensor = torch.rand((1, 1, 32, 32 * n), dtype=torch.bfloat16)
    tensor = ttnn.from_torch(
        torch_tensor,
        dtype=ttnn.bfloat16,
        layout=ttnn.TILE_LAYOUT,
        device=mesh_device,
        mesh_mapper=ttnn.ShardTensorToMesh(mesh_device, dim=3),
    )
    back = ttnn.to_torch(tensor, mesh_composer=ttnn.ConcatMeshToTensor(mesh_device, dim=3))
    assert torch.equal(back, torch_tensor)


@pytest.mark.parametrize("mesh_device", [pytest.param((2, 4), id="2x4_grid")], indirect=True)
@pytest.mark.parametrize(
    "device_params",
    [{"l1_small_size": 24576, "trace_region_size": 1048576, "fabric_config": ttnn.FabricConfig.FABRIC_1D}],
    indirect=True,
)
def test_device_params_open_the_mesh_as_asked(mesh_device, device_params):
    assert ttnn.get_memory_view(mesh_device, ttnn.BufferType.L1_SMALL).total_bytes_per_bank == 24576
    assert ttnn.get_memory_view(mesh_device, ttnn.BufferType.TRACE).total_bytes_per_bank == 90112
    assert ttnn.get_fabric_config() == ttnn.FabricConfig.FABRIC_1D


@pytest.mark.parametrize("mesh_device", [(2, 4)], indirect=True)
def test_distribute_context(mesh_device):
    torch_tensor = torch.arange(8 * 64, dtype=torch.float32).reshape(8, 64)
    with ttnn.distribute(ttnn.ShardTensorToMesh(mesh_device, dim=0)):
        tensor = ttnn.from_torch(torch_tensor, dtype=ttnn.float32, device=mesh_device)
    assert tensor.shape == ttnn.Shape([1, 64])
    with ttnn.distribute(ttnn.ConcatMeshToTensor(mesh_device, dim=0)):
        back = ttnn.to_torch(tensor)
    assert torch.equal(back, torch_tensor)


@pytest.mark.parametrize("mesh_device", [(2, 4)], indirect=True)
def test_2d_mapper_and_get_device_tensors(mesh_device):
    torch_tensor = torch.randn(1, 1, 64, 128)
    mapper = ttnn.ShardTensor2dMesh(mesh_device, mesh_shape=(2, 4), dims=(2, 3))
    tensor = ttnn.from_torch(torch_tensor, dtype=ttnn.float32, device=mesh_device, mesh_mapper=mapper)
    shards = ttnn.get_device_tensors(tensor)
    assert len(shards) == 8
    for index, shard in enumerate(shards):
        r, c = divmod(index, 4)
        assert torch.equal(ttnn.to_torch(shard), torch_tensor[..., 32 * r : 32 * (r + 1), 32 * c : 32 * (c + 1)])
    composer = ttnn.ConcatMesh2dToTensor(mesh_device, mesh_shape=(2, 4), dims=(2, 3))
    assert torch.equal(ttnn.to_torch(tensor, mesh_composer=composer), torch_tensor)


@pytest.mark.parametrize("mesh_device", [8], indirect=True)
def test_all_gather(mesh_device):
    n = mesh_device.get_num_devices()
    full = torch.cat([torch.full((1, 1, 32, 32), float(i)) for i in range(n)], dim=3)
    tensor = ttnn.from_torch(
        full,
        dtype=ttnn.bfloat16,
        layout=ttnn.TILE_LAYOUT,
        device=mesh_device,
        mesh_mapper=ttnn.ShardTensorToMesh(mesh_device, dim=3),
    )
    gathered = ttnn.all_gather(tensor, dim=3, num_links=1, topology=ttnn.Topology.Linear)
    for device_tensor in ttnn.get_device_tensors(gathered):
        assert torch.equal(ttnn.to_torch(device_tensor).float(), full)


@pytest.mark.parametrize("mesh_device", [(2, 4)], indirect=True)
def test_reduce_scatter_and_all_reduce_on_rows(mesh_device):
    x = torch.randn(1, 1, 32, 128)
    tensor = ttnn.from_torch(
        x,
        dtype=ttnn.float32,
        layout=ttnn.TILE_LAYOUT,
        device=mesh_device,
        mesh_mapper=ttnn.ReplicateTensorToMesh(mesh_device),
    )
    reduced = ttnn.all_reduce(tensor, cluster_axis=1)
    scattered = ttnn.reduce_scatter(tensor, dim=3, cluster_axis=1)
    for index, (r, s) in enumerate(
        zip(ttnn.get_device_tensors(reduced), ttnn.get_device_tensors(scattered), strict=True)
    ):
        column = index % 4
        assert torch.allclose(ttnn.to_torch(r), 4 * x, atol=1e-5)
        assert torch.allclose(ttnn.to_torch(s), 4 * x[..., 32 * column : 32 * (column + 1)], atol=1e-5)


def test_single_device_fixture(device):
    assert device.get_num_devices() == 1
    tensor = ttnn.from_torch(torch.ones(32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    assert torch.equal(ttnn.to_torch(ttnn.relu(tensor)), torch.ones(32, 32, dtype=torch.bfloat16))


def test_arch_name(silicon_arch_name):
    assert silicon_arch_name == "wormhole_b0"


def test_system_queries():
    assert ttnn.get_num_devices() == 8 and ttnn.GetNumAvailableDevices() == 8
    assert ttnn.get_device_ids() == list(range(8)) and ttnn.get_pcie_device_ids() == [0, 1, 2, 3]
    assert not ttnn.using_distributed_env()


@pytest.mark.parametrize("mesh_device", [(8, 4)], indirect=True)
def test_a_galaxy_mesh_runs_on_the_simulated_galaxy(mesh_device):
    assert mesh_device.shape == ttnn.MeshShape(8, 4) and ttnn.get_num_devices() == 32


@pytest.mark.parametrize("mesh_device", [(8, 8)], indirect=True)
def test_a_mesh_larger_than_every_system_is_skipped(mesh_device):
    raise AssertionError("must be skipped: no simulated system has 64 devices")


def test_a_missing_name_says_what_is_missing():
    with pytest.raises(AttributeError, match=r"ttnn\.fold_the_universe is not implemented by meshnn yet"):
        ttnn.fold_the_universe()


@pytest.mark.parametrize("mesh_device", [(2, 4)], indirect=True)
def test_preprocess_model_parameters_mlp(mesh_device):
    from ttnn.model_preprocessing import preprocess_model_parameters

    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(64, 128), torch.nn.GELU(), torch.nn.Linear(128, 64), torch.nn.LayerNorm(64)
    )
    with ttnn.distribute(ttnn.ReplicateTensorToMesh(mesh_device)):
        parameters = preprocess_model_parameters(initialize_model=lambda: model, device=mesh_device)
    assert parameters[0].weight.shape == ttnn.Shape([64, 128]) and parameters[0].bias.shape == ttnn.Shape([1, 128])
    x = torch.randn(1, 32, 64)
    tx = ttnn.from_torch(
        x,
        dtype=ttnn.bfloat16,
        layout=ttnn.TILE_LAYOUT,
        device=mesh_device,
        mesh_mapper=ttnn.ReplicateTensorToMesh(mesh_device),
    )
    h = ttnn.gelu(ttnn.linear(tx, parameters[0].weight, bias=parameters[0].bias))
    h = ttnn.linear(h, parameters[2].weight, bias=parameters[2].bias)
    out = ttnn.layer_norm(h, weight=parameters[3].weight, bias=parameters[3].bias, epsilon=1e-5)
    expected = model(x).detach()
    for shard in ttnn.get_device_tensors(out):
        assert pcc(ttnn.to_torch(shard), expected) > 0.99


def test_the_ttnn_device_module():
    import ttnn.device
    from ttnn.device import Arch, DispatchCoreConfig

    assert ttnn.device.Device is ttnn.MeshDevice is ttnn.Device and Arch is ttnn.Arch
    assert DispatchCoreConfig().type == ttnn.device.DispatchCoreType.ETH  # the t3k's default
    assert ttnn.device.is_wormhole_b0() and not ttnn.device.is_blackhole() and not ttnn.device.is_grayskull()
    assert [ttnn.device.GetPCIeDeviceID(i) for i in (0, 3, 4, 7)] == [0, 3, 0, 3]  # 4-7 through 0-3
    assert ttnn.GetPCIeDeviceID is ttnn.device.GetPCIeDeviceID  # ttnn re-exports it at the top (root conftest)
    with ttnn.device.manage_device(device_id=0) as device:
        banks = ttnn.get_optimal_dram_bank_to_logical_worker_assignment(device, ttnn.NOC.NOC_0)
        assert banks == device.get_optimal_dram_bank_to_logical_worker_assignment(ttnn.NOC.NOC_0) and len(banks) == 12
    ttnn.device.EnableMemoryReports()
    assert ttnn.device.SWITCHES["memory_reports"] is True
    ttnn.device.DisableMemoryReports()
    assert ttnn.device.SWITCHES["memory_reports"] is False
    with ttnn.device.manage_device(device_id=1) as device:
        assert ttnn.device.is_wormhole_b0(device) and device.get_device_ids() == [1]
    assert not device.is_open()
    with pytest.raises(AttributeError, match=r"ttnn\.device\.no_such_name is not implemented by meshnn yet"):
        ttnn.device.no_such_name  # noqa: B018


def test_distributed_distributed_is_a_module_path_and_reports_answer(mesh_device):
    import ttnn.distributed.distributed as distributed
    from ttnn.distributed.distributed import ConcatMeshToTensor

    assert ConcatMeshToTensor is ttnn.ConcatMeshToTensor and distributed.visualize_tensor is ttnn.visualize_tensor
    tensor = ttnn.from_torch(
        torch.ones(32, 32), device=mesh_device, mesh_mapper=ttnn.ReplicateTensorToMesh(mesh_device)
    )
    assert [row.address for row in ttnn.reports.get_buffers(mesh_device)] == [tensor.buffer_address()]
