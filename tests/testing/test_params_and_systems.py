"""The plugin's pure parts: device_params checked and split as tt-metal's conftest does, the system
each test runs on, and the silicon_arch parametrisation."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

import meshnn as ttnn
from meshnn.testing import environment
from meshnn.testing.params import KNOWN_KEYS, open_arguments
from meshnn.testing.systems import requested_devices, skip_reason, system_for


def test_the_sizes_and_queues_go_to_open_mesh_device_as_given():
    args = open_arguments({"l1_small_size": 2048, "trace_region_size": 200000, "num_command_queues": 2})
    assert args.open_kwargs == {"l1_small_size": 2048, "trace_region_size": 200000, "num_command_queues": 2}
    assert args.fabric_config is None and args.fabric_kwargs == {}


def test_an_unknown_key_is_an_error_that_names_it():
    with pytest.raises(ttnn.MeshnnTypeError, match=r"unknown key\(s\) \['l1_smal_size'\]") as caught:
        open_arguments({"l1_smal_size": 2048, "trace_region_size": 0})
    assert "l1_small_size" in str(caught.value)  # the known keys are listed
    with pytest.raises(ttnn.MeshnnTypeError, match="device_params must be a dict"):
        open_arguments([("l1_small_size", 1)])


@pytest.mark.parametrize(
    ("system", "given", "expected"),
    [
        (
            "t3k",
            {"dispatch_core_axis": ttnn.DispatchCoreAxis.ROW},
            (ttnn.DispatchCoreType.ETH, ttnn.DispatchCoreAxis.ROW),
        ),
        (
            "t3k",
            {"dispatch_core_axis": ttnn.DispatchCoreAxis.COL},
            (ttnn.DispatchCoreType.WORKER, ttnn.DispatchCoreAxis.COL),
        ),
        (
            "galaxy",
            {"dispatch_core_axis": ttnn.DispatchCoreAxis.ROW},
            (ttnn.DispatchCoreType.WORKER, ttnn.DispatchCoreAxis.ROW),
        ),
        (
            "n300",
            {"dispatch_core_type": ttnn.DispatchCoreType.WORKER},
            (ttnn.DispatchCoreType.WORKER, ttnn.DispatchCoreAxis.ROW),
        ),
    ],
)
def test_the_dispatch_keys_become_a_dispatch_core_config(monkeypatch, system, given, expected):
    monkeypatch.setenv("MESHNN_SYSTEM", system)
    config = open_arguments(given).open_kwargs["dispatch_core_config"]
    assert (config.type, config.axis) == expected


def test_dispatch_keys_and_a_ready_config_together_are_refused():
    both = {"dispatch_core_axis": ttnn.DispatchCoreAxis.COL, "dispatch_core_config": ttnn.DispatchCoreConfig()}
    with pytest.raises(ttnn.MeshnnValueError, match="not both"):
        open_arguments(both)
    with pytest.raises(ttnn.MeshnnValueError, match="Invalid dispatch core axis"):
        open_arguments({"dispatch_core_axis": "COL"})


def test_the_fabric_keys_go_to_set_fabric_config():
    router = object()
    args = open_arguments(
        {
            "fabric_config": ttnn.FabricConfig.FABRIC_1D,
            "fabric_router_config": router,
            "fabric_tensix_config": ttnn.FabricTensixConfig.MUX,
        }
    )
    assert args.fabric_config is ttnn.FabricConfig.FABRIC_1D
    assert args.fabric_kwargs == {"router_config": router, "fabric_tensix_config": ttnn.FabricTensixConfig.MUX}
    with pytest.raises(ttnn.MeshnnValueError, match=r"\['router_config'\] need a fabric_config"):
        open_arguments({"fabric_router_config": router})
    with pytest.raises(ttnn.MeshnnTypeError, match=r"fabric_config must be a ttnn\.FabricConfig"):
        open_arguments({"fabric_config": "FABRIC_1D"})
    # tt-metal's Mixtral tests: {"fabric_config": True}; its conftest sets a fabric only for a true value
    assert open_arguments({"fabric_config": True}).fabric_config is ttnn.FabricConfig.FABRIC_1D
    assert open_arguments({"fabric_config": False}).fabric_config is None
    with pytest.raises(ttnn.MeshnnValueError, match=r"no ttnn\.FabricConfig value"):
        open_arguments({"fabric_config": 99})
    assert {"fabric_config", "dispatch_core_axis", "worker_l1_size"} <= set(KNOWN_KEYS)


@pytest.mark.parametrize(
    ("fixtures", "params", "devices", "system"),
    [
        (["mesh_device"], {"mesh_device": (8, 4)}, 32, "galaxy"),
        (["mesh_device"], {"mesh_device": (2, 4)}, 8, "t3k"),
        (["mesh_device"], {"mesh_device": 8}, 8, "t3k"),
        (["mesh_device"], {"mesh_device": (1, 2)}, 2, "n300"),
        (["mesh_device"], {"mesh_device": 1}, 1, "n150"),
        (["mesh_device"], {"mesh_device": 4}, 4, "t3k"),
        (["mesh_device"], {}, 8, "t3k"),  # no parameter: the whole default system, 1x8
        (["device"], {}, 1, "n150"),
        (["pcie_mesh_device"], {}, 4, "t3k"),
        (["n300_mesh_device"], {}, 2, "n300"),
        (["t3k_mesh_device"], {}, 8, "t3k"),
        (["ensure_devices_tg", "mesh_device"], {"mesh_device": (2, 4)}, 32, "galaxy"),
        (["reset_seeds"], {}, 0, "t3k"),  # no device at all: the default system
        (["mesh_device"], {"mesh_device": (8, 8)}, 64, None),  # no simulated system has 64
    ],
)
def test_each_test_runs_on_the_smallest_system_with_its_devices(fixtures, params, devices, system):
    assert requested_devices(fixtures, params, 8) == devices
    assert system_for(devices, None) == system
    assert system_for(devices, "p150") == "p150"  # --system forces one


def test_the_skip_reason_says_why():
    assert skip_reason(64, "galaxy") == (
        "Requested more devices than available. Test not applicable for machine: no simulated system has 64 "
        "devices (the largest, galaxy, has 32)"
    )
    assert skip_reason(32, "t3k").endswith("32 devices requested; the simulated system 't3k' (forced) has 8")


class Metafunc:
    """What parametrize_arch reads of pytest's Metafunc, and what it parametrizes."""

    def __init__(self, fixturenames, forced=None):
        self.fixturenames = fixturenames
        self.config = SimpleNamespace(stash={environment.FORCED: forced})
        self.function = SimpleNamespace(__name__="test_x")
        self.calls = {}

    def parametrize(self, name, values, scope):
        assert scope == "session"
        self.calls[name] = list(values)


def test_silicon_arch_name_is_the_arch_of_the_systems_in_use():
    metafunc = Metafunc(["silicon_arch_name", "silicon_arch_wormhole_b0"])
    environment.parametrize_arch(metafunc)
    assert metafunc.calls == {"silicon_arch_name": ["wormhole_b0"], "silicon_arch_wormhole_b0": [True]}
    blackhole = Metafunc(["silicon_arch_name", "silicon_arch_wormhole_b0"], forced="p150")
    environment.parametrize_arch(blackhole)
    assert blackhole.calls["silicon_arch_name"] == []  # an empty parameter set: pytest skips the test
    plain = Metafunc(["silicon_arch_name"], forced="p300")
    environment.parametrize_arch(plain)
    assert plain.calls == {"silicon_arch_name": ["blackhole"]}
    untouched = Metafunc(["mesh_device"])
    environment.parametrize_arch(untouched)
    assert untouched.calls == {}


def test_an_arch_fixture_without_silicon_arch_name_is_an_error():
    with pytest.raises(ttnn.MeshnnError, match="doesn't use silicon_arch_name"):
        environment.parametrize_arch(Metafunc(["silicon_arch_blackhole"]))
