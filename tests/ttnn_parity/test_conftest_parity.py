# tt-metal's conftest fixtures as tt-metal's tests use them, run through `pytest -p meshnn.testing`
# by tests/testing/test_plugin_in_action.py, which checks each test's outcome (some skip or fail
# on purpose). Order matters: a test may check what the one before it left behind.
import gc
import os
import random

import numpy as np
import pytest
import torch
import ttnn

KEPT = {}


@pytest.mark.parametrize("mesh_device", [8], indirect=True)
def test_an_int_opens_1xN_on_the_t3k(mesh_device):
    assert mesh_device.shape == ttnn.MeshShape(1, 8)
    assert ttnn.get_num_devices() == 8 and mesh_device.system.name == "t3k"


@pytest.mark.parametrize("mesh_device", [(8, 4)], indirect=True)
def test_an_8x4_mesh_runs_on_the_galaxy(mesh_device, galaxy_type):
    assert mesh_device.shape == ttnn.MeshShape(8, 4) and ttnn.get_num_devices() == 32
    assert galaxy_type == "6U"


@pytest.mark.parametrize("mesh_device", [(1, 2)], indirect=True)
def test_a_1x2_mesh_runs_on_the_n300(mesh_device, galaxy_type):
    assert mesh_device.system.name == "n300" and ttnn.get_num_devices() == 2 and galaxy_type is None


@pytest.mark.parametrize("mesh_device", [1], indirect=True)
def test_a_1x1_mesh_runs_on_the_n150(mesh_device):
    assert mesh_device.system.name == "n150" and mesh_device.shape == ttnn.MeshShape(1, 1)


def test_without_a_parameter_the_mesh_is_1xN_of_the_system(mesh_device):
    assert mesh_device.shape == ttnn.MeshShape(1, 8)


@pytest.mark.parametrize("mesh_device", [(8, 8)], indirect=True)
def test_a_64_device_mesh_is_skipped(mesh_device):
    raise AssertionError("must be skipped")


def test_without_devices_the_default_system(galaxy_type):
    assert ttnn.get_num_devices() == 8 and galaxy_type is None


@pytest.mark.parametrize("mesh_device", [(2, 4)], indirect=True)
@pytest.mark.parametrize(
    "device_params",
    [
        {
            "l1_small_size": 2048,
            "trace_region_size": 200000,
            "num_command_queues": 2,
            "fabric_config": ttnn.FabricConfig.FABRIC_1D,
        }
    ],
    indirect=True,
)
def test_device_params_are_applied_and_recorded(mesh_device, device_params):
    settings = mesh_device.settings
    assert (settings.l1_small_size, settings.trace_region_size, settings.num_command_queues) == (2048, 200000, 2)
    assert mesh_device.num_command_queues == 2 and ttnn.get_fabric_config() == ttnn.FabricConfig.FABRIC_1D
    assert settings.fabric_config == ttnn.FabricConfig.FABRIC_1D
    assert ttnn.get_memory_view(mesh_device, ttnn.BufferType.L1_SMALL).total_bytes_per_bank == 2048


def test_the_fabric_was_reset_after_the_mesh_closed():
    assert ttnn.get_fabric_config() == ttnn.FabricConfig.DISABLED


@pytest.mark.parametrize(
    "device_params",
    [{"dispatch_core_axis": ttnn.DispatchCoreAxis.ROW}, {"dispatch_core_axis": ttnn.DispatchCoreAxis.COL}],
    indirect=True,
)
def test_dispatch_core_axis_is_recorded(mesh_device, device_params):
    config = mesh_device.settings.dispatch_core_config
    assert config.axis == device_params["dispatch_core_axis"]
    assert config.type == (
        ttnn.DispatchCoreType.ETH if config.axis == ttnn.DispatchCoreAxis.ROW else ttnn.DispatchCoreType.WORKER
    )


@pytest.mark.parametrize("device_params", [{"l1_smal_size": 2048}], indirect=True)
def test_an_unknown_device_params_key_is_an_error(mesh_device):
    raise AssertionError("the fixture must refuse the key")


def test_pcie_mesh_device_is_the_four_pcie_chips_as_1x4(pcie_mesh_device):
    assert pcie_mesh_device.shape == ttnn.MeshShape(1, 4)
    assert pcie_mesh_device.get_device_ids() == [1, 2, 5, 6]  # the 2x2 box at (0, 1), reshaped


@pytest.mark.parametrize("pcie_mesh_device", [2], indirect=True)
def test_pcie_mesh_device_of_two_is_skipped(pcie_mesh_device):
    raise AssertionError("must be skipped")


def test_t3k_mesh_device_is_1x8(t3k_mesh_device):
    assert t3k_mesh_device.shape == ttnn.MeshShape(1, 8) and ttnn.get_num_devices() == 8


def test_n300_mesh_device_is_1x2_on_the_n300(n300_mesh_device):
    assert n300_mesh_device.shape == ttnn.MeshShape(1, 2) and n300_mesh_device.system.name == "n300"


@pytest.mark.parametrize("device_params", [{"l1_small_size": 4096}], indirect=True)
def test_device_is_chip_0_as_a_1x1_mesh(device):
    assert device.get_device_ids() == [0] and device.system.name == "n150"
    assert device.settings.l1_small_size == 4096


def test_device_is_ttnn_default_device_while_the_test_runs(device):
    # tt-metal's conftest: SetDefaultDevice(device) (tt_lib's fallback ops and ttnn.outer read it)
    assert ttnn.GetDefaultDevice() is device
    KEPT["default"] = device


def test_the_default_device_before_the_test_was_restored_after():
    assert ttnn.GetDefaultDevice() is None and not KEPT["default"].is_open()


def test_use_program_cache_enables_it_and_clears_it_after(mesh_device, use_program_cache):
    assert mesh_device.program_cache_enabled is True
    KEPT["mesh"] = mesh_device


def test_the_program_cache_was_disabled_after_the_test():
    assert KEPT["mesh"].program_cache_enabled is False and not KEPT["mesh"].is_open()


def test_reset_seeds_seeds_torch_numpy_and_random(function_level_defaults):
    got = (torch.rand(1).item(), np.random.rand(), random.random())
    torch.manual_seed(213919)
    np.random.seed(213919)
    random.seed(213919)
    assert got == (torch.rand(1).item(), np.random.rand(), random.random())


def test_is_ci_env_reads_the_ci_variable(is_ci_env):
    assert is_ci_env is (os.getenv("CI") == "true")


def test_is_ci_v2_env_reads_the_infra_variable(is_ci_v2_env):
    assert is_ci_v2_env is ("TT_GH_CI_INFRA" in os.environ)


def test_expect_error_is_pytest_raises_with_a_message(expect_error):
    with expect_error(ValueError, "wrong size") as caught:
        raise ValueError("the wrong size of page")
    assert caught.type is ValueError
    with pytest.raises(pytest.fail.Exception), expect_error(ValueError, "wrong size"):
        pass  # nothing raised: the block fails as pytest.raises does


def test_model_location_generator_gives_the_name_without_mlperf(model_location_generator):
    name = "tiiuae/falcon-7b-instruct"  # (no /mnt/MLPerf here: the name, for the Hugging Face cache)
    expected = name if not os.path.exists(f"/mnt/MLPerf/tt_dnn-models/{name}") else None
    assert expected is None or model_location_generator(name, model_subdir="") == expected


def test_is_ci_v2_env_reads_the_ci_infra_variable(is_ci_v2_env):
    assert is_ci_v2_env is ("TT_GH_CI_INFRA" in os.environ)


def test_is_single_card_n300_is_true_on_the_n300_only(device, is_single_card_n300):
    assert is_single_card_n300 is (ttnn.cluster.get_cluster_type() == ttnn.cluster.ClusterType.N300)


def test_get_tt_cache_path_makes_the_folder_under_default_dir(get_tt_cache_path, tmp_path):
    path = get_tt_cache_path("state-spaces/mamba-2.8b", model_subdir="mamba", default_dir=str(tmp_path))
    if not os.path.exists("/mnt/MLPerf/tt_dnn-models/tt/mamba/state-spaces/mamba-2.8b"):
        assert path == tmp_path / "tt_dnn-models" / "tt" / "mamba" / "state-spaces" / "mamba-2.8b" and path.is_dir()


def test_ensure_gc_is_autouse(request):
    assert "ensure_gc" in request.fixturenames and gc.isenabled()


def test_silicon_arch_parametrisation(silicon_arch_name, silicon_arch_wormhole_b0):
    assert silicon_arch_name == "wormhole_b0" and silicon_arch_wormhole_b0 is True


def test_a_blackhole_only_test_is_skipped_on_wormhole(silicon_arch_name, silicon_arch_blackhole):
    raise AssertionError("must be skipped")


@pytest.mark.parametrize("device_params", [{"trace_region_size": 100000}], indirect=True)
def test_a_blackhole_mesh_test_is_skipped_on_wormhole(bh_1d_mesh_device, bh_2d_mesh_device):
    raise AssertionError("must be skipped")


def test_a_leak_fails_the_teardown(mesh_device):
    layout = ttnn.MeshBuffer.create(
        ttnn.ReplicatedBufferConfig(2048),
        ttnn.DeviceLocalBufferConfig(page_size=1024, buffer_type=ttnn.BufferType.DRAM),
        mesh_device,
    ).layout
    mesh_device.allocator.allocate(layout)  # an allocation no MeshBuffer owns: close cannot free it


@pytest.mark.parametrize("mesh_device", [(1, 2)], indirect=True)
def test_tensors_kept_past_the_test_fail_the_teardown(mesh_device):
    for memory_config in (ttnn.DRAM_MEMORY_CONFIG, ttnn.L1_MEMORY_CONFIG):
        host = torch.ones(32, 64)
        KEPT.setdefault("leaked", []).append(
            ttnn.from_torch(
                host, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh_device, memory_config=memory_config
            )
        )


@pytest.mark.parametrize("mesh_device", [(1, 2)], indirect=True)
def test_a_failing_test_is_not_also_a_leak(mesh_device):
    kept = ttnn.from_torch(torch.ones(32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh_device)
    assert kept is None, "fails on purpose, holding a device tensor in its traceback"
