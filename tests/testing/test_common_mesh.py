"""tt-metal's ``models/common/tests`` conftest at work: a suite written as those tests are (module-
scoped, indirect ``ttnn_mesh_device``, cross-product ``mesh_shape`` parameters; and tt_dit's
``require_exact_physical_num_devices`` device parameter of ``mesh_device``) run through
``pytest -p meshnn.testing`` in a subprocess, and each case's outcome checked here."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET

import pytest

from meshnn.testing.common_mesh import parent_shape

SUITE = """
import pytest
import ttnn

@pytest.mark.parametrize("ttnn_mesh_device", [(1, 2)], indirect=True)
def test_a_1x2_mesh_on_the_n300_with_a_line_fabric(ttnn_mesh_device):
    assert tuple(ttnn_mesh_device.shape) == (1, 2) and ttnn.get_num_devices() == 2
    assert ttnn.get_fabric_config() == ttnn.FabricConfig.FABRIC_1D

@pytest.mark.parametrize("ttnn_mesh_device", [(1, 8)], indirect=True)
def test_a_1x8_mesh_on_the_t3k_with_a_ring(ttnn_mesh_device):
    assert tuple(ttnn_mesh_device.shape) == (1, 8) and ttnn.get_num_devices() == 8
    assert ttnn.get_fabric_config() == ttnn.FabricConfig.FABRIC_1D_RING

@pytest.mark.parametrize("ttnn_mesh_device", [(1, 4)], indirect=True)
def test_a_1x4_mesh_is_a_submesh_of_the_t3k(ttnn_mesh_device):
    assert tuple(ttnn_mesh_device.shape) == (1, 4) and ttnn.get_num_devices() == 8
    assert ttnn.get_fabric_config() == ttnn.FabricConfig.FABRIC_1D_RING

@pytest.mark.parametrize("ttnn_mesh_device", [{"mesh_shape": (1, 1), "trace_region_size": 65536}], indirect=True)
def test_a_dict_parameter_opens_with_its_settings(ttnn_mesh_device):
    assert tuple(ttnn_mesh_device.shape) == (1, 1) and ttnn_mesh_device.settings.trace_region_size == 65536
    assert ttnn.get_fabric_config() == ttnn.FabricConfig.DISABLED

def test_the_fabric_was_reset_after_the_module_mesh_closed():
    assert ttnn.get_fabric_config() == ttnn.FabricConfig.DISABLED

@pytest.mark.parametrize("ttnn_mesh_device", [(2, 2)], indirect=True)
def test_a_shape_the_system_does_not_offer_is_skipped(ttnn_mesh_device):
    pass

@pytest.mark.parametrize("ttnn_mesh_device", [{"trace_region_size": 1}], indirect=True)
def test_a_dict_without_a_mesh_shape_is_skipped(ttnn_mesh_device):
    pass

def test_without_a_parameter_it_is_skipped(ttnn_mesh_device):
    pass

@pytest.mark.parametrize("ttnn_mesh_device", [{"mesh_shape": (1, 1), "l1_smal_size": 1}], indirect=True)
def test_an_unknown_setting_is_an_error(ttnn_mesh_device):
    pass

@pytest.mark.parametrize("ttnn_mesh_device", [(1, 1), (1, 2)], ids=["1x1", "1x2"], indirect=True)
@pytest.mark.parametrize("mesh_shape", [(1, 1), (1, 2)], ids=["m1x1", "m1x2"])
def test_only_matching_mesh_shapes_run(ttnn_mesh_device, mesh_shape):
    assert tuple(ttnn_mesh_device.shape) == mesh_shape

EXACT = {"require_exact_physical_num_devices": True}

@pytest.mark.parametrize("mesh_device", [(1, 2)], indirect=True)
@pytest.mark.parametrize("device_params", [EXACT], indirect=True)
def test_an_exact_mesh_runs(mesh_device):
    assert ttnn.get_num_devices() == 2

@pytest.mark.parametrize("mesh_device", [(1, 4)], indirect=True)
@pytest.mark.parametrize("device_params", [EXACT], indirect=True)
def test_a_mesh_smaller_than_the_system_is_skipped_when_exact(mesh_device):
    pass
"""


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory) -> tuple[dict[str, tuple[str, str]], str]:
    """Each case's (outcome, message) by its full name, and pytest's output."""
    folder = tmp_path_factory.mktemp("common_mesh")
    (folder / "test_models_common_style.py").write_text(textwrap.dedent(SUITE))
    xml = folder / "junit.xml"
    environment = {k: v for k, v in os.environ.items() if k not in ("MESHNN_SYSTEM", "MESHNN_AS_TTNN", "CI")}
    command = [sys.executable, "-m", "pytest", "-q", "-p", "meshnn.testing", "--noconftest", "-p", "no:cacheprovider"]
    done = subprocess.run(
        [*command, f"--junitxml={xml}", str(folder)], capture_output=True, text=True, timeout=300, env=environment
    )
    found = {}
    for case in ET.parse(xml).getroot().iter("testcase"):
        outcome, message = "passed", ""
        for child in case:
            if child.tag in ("skipped", "failure", "error"):
                outcome, message = child.tag, child.get("message", "") + (child.text or "")
        found[case.get("name")] = (outcome, message)
    return found, done.stdout


@pytest.mark.parametrize(
    "name",
    [
        "test_a_1x2_mesh_on_the_n300_with_a_line_fabric[ttnn_mesh_device0]",
        "test_a_1x8_mesh_on_the_t3k_with_a_ring[ttnn_mesh_device0]",
        "test_a_1x4_mesh_is_a_submesh_of_the_t3k[ttnn_mesh_device0]",
        "test_a_dict_parameter_opens_with_its_settings[ttnn_mesh_device0]",
        "test_the_fabric_was_reset_after_the_module_mesh_closed",
        "test_only_matching_mesh_shapes_run[m1x1-1x1]",
        "test_only_matching_mesh_shapes_run[m1x2-1x2]",
        "test_an_exact_mesh_runs[wormhole_b0-device_params0-mesh_device0]",
    ],
)
def test_the_fixture_opens_what_tt_metals_conftest_opens(outcomes, name):
    assert outcomes[0][name] == ("passed", ""), outcomes[0].get(name)


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("test_a_shape_the_system_does_not_offer_is_skipped[ttnn_mesh_device0]", "unsupported on system (2, 4)"),
        ("test_a_dict_without_a_mesh_shape_is_skipped[ttnn_mesh_device0]", "mesh_shape is required"),
        ("test_without_a_parameter_it_is_skipped", "called without parametrization"),
        (  # tt-metal's root conftest's mesh_device: a 1x4 mesh on the 8-device T3000
            "test_a_mesh_smaller_than_the_system_is_skipped_when_exact[wormhole_b0-device_params0-mesh_device0]",
            "Test requires exact match of requested num devices (4) to available physical num devices (8)",
        ),
    ],
)
def test_what_tt_metals_conftest_skips_is_skipped(outcomes, name, reason):
    outcome, message = outcomes[0][name]
    assert outcome == "skipped" and reason in message, outcomes[0][name]


def test_an_unknown_setting_fails_the_setup_naming_it(outcomes):
    outcome, message = outcomes[0]["test_an_unknown_setting_is_an_error[ttnn_mesh_device0]"]
    assert outcome == "error" and "unknown key(s) ['l1_smal_size']" in message, message


def test_mismatched_mesh_shapes_are_deselected_not_skipped(outcomes):
    found, stdout = outcomes
    assert "2 deselected" in stdout, stdout[-2000:]
    crossed = ("[m1x2-1x1]", "[m1x1-1x2]")
    assert not any(name.startswith("test_only_matching") and name.endswith(crossed) for name in found)
    assert len(found) == 13


@pytest.mark.parametrize(
    ("system", "wanted", "parent"),
    [
        ((2, 4), (1, 1), (1, 1)),
        ((2, 4), (1, 8), (1, 8)),  # every device: opened in the requested view
        ((2, 4), (1, 4), (2, 4)),
        ((8, 4), (1, 8), (4, 8)),  # fits only the rotated view
        ((8, 4), (2, 16), (2, 16)),
        ((2, 4), (1, 6), None),
    ],
)
def test_the_parent_is_the_system_in_the_view_the_request_fits(system, wanted, parent):
    assert parent_shape(system, wanted) == parent
