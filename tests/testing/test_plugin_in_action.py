"""tt-metal's conftest fixtures at work: tests/ttnn_parity/ (written as tt-metal's tests are) run
through `pytest -p meshnn.testing` in a subprocess, and each test's outcome is checked here, the
skips and failures that must happen included."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

SUITE = pathlib.Path(__file__).parent.parent / "ttnn_parity"


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory) -> dict[str, tuple[str, str]]:
    """Each test's (outcome, message) by its name without parameters: passed, skipped, failed, error."""
    xml = tmp_path_factory.mktemp("parity") / "junit.xml"
    command = [sys.executable, "-m", "pytest", "-q", "-p", "meshnn.testing", "-p", "no:cacheprovider", str(SUITE)]
    command.append("--meshnn-leaks=error")  # (the default only warns: tests below check both)
    environment = {k: v for k, v in os.environ.items() if k not in ("MESHNN_SYSTEM", "MESHNN_AS_TTNN", "CI")}
    subprocess.run(
        [*command, f"--junitxml={xml}"],
        capture_output=True,
        text=True,
        timeout=300,
        env=environment | {"MESHNN_TTNN_STYLE": "1"},
    )
    found: dict[str, tuple[str, str]] = {}
    for case in ET.parse(xml).getroot().iter("testcase"):
        name = case.get("name").split("[")[0]
        outcome, message = "passed", ""
        for child in case:
            if child.tag in ("skipped", "failure", "error"):
                outcome, message = child.tag, child.get("message", "") + (child.text or "")
        previous = found.get(name, ("passed", ""))[0]
        found[name] = (outcome, message) if previous == "passed" else found[name]
    return found


PASSING = [
    "test_an_int_opens_1xN_on_the_t3k",
    "test_an_8x4_mesh_runs_on_the_galaxy",
    "test_a_1x2_mesh_runs_on_the_n300",
    "test_a_1x1_mesh_runs_on_the_n150",
    "test_without_a_parameter_the_mesh_is_1xN_of_the_system",
    "test_without_devices_the_default_system",
    "test_device_params_are_applied_and_recorded",
    "test_the_fabric_was_reset_after_the_mesh_closed",
    "test_dispatch_core_axis_is_recorded",
    "test_pcie_mesh_device_is_the_four_pcie_chips_as_1x4",
    "test_t3k_mesh_device_is_1x8",
    "test_n300_mesh_device_is_1x2_on_the_n300",
    "test_device_is_chip_0_as_a_1x1_mesh",
    "test_device_is_ttnn_default_device_while_the_test_runs",
    "test_the_default_device_before_the_test_was_restored_after",
    "test_use_program_cache_enables_it_and_clears_it_after",
    "test_the_program_cache_was_disabled_after_the_test",
    "test_reset_seeds_seeds_torch_numpy_and_random",
    "test_is_ci_env_reads_the_ci_variable",
    "test_is_ci_v2_env_reads_the_infra_variable",
    "test_expect_error_is_pytest_raises_with_a_message",
    "test_ensure_gc_is_autouse",
    "test_silicon_arch_parametrisation",
    "test_model_location_generator_gives_the_name_without_mlperf",
    "test_is_ci_v2_env_reads_the_ci_infra_variable",
    "test_is_single_card_n300_is_true_on_the_n300_only",
    "test_get_tt_cache_path_makes_the_folder_under_default_dir",
]


@pytest.mark.parametrize("name", PASSING)
def test_the_fixture_does_what_tt_metals_does(outcomes, name):
    assert outcomes[name] == ("passed", ""), outcomes.get(name)


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("test_a_64_device_mesh_is_skipped", "no simulated system has 64 devices (the largest, galaxy, has 32)"),
        ("test_pcie_mesh_device_of_two_is_skipped", "Only 4 PCIe devices are supported for testing"),
        ("test_a_blackhole_only_test_is_skipped_on_wormhole", "got empty parameter set"),
        ("test_a_blackhole_mesh_test_is_skipped_on_wormhole", "got empty parameter set"),
    ],
)
def test_what_cannot_run_here_is_skipped_with_its_reason(outcomes, name, reason):
    outcome, message = outcomes[name]
    assert outcome == "skipped" and reason in message, outcomes[name]


def test_an_unknown_device_params_key_fails_the_setup_naming_it(outcomes):
    outcome, message = outcomes["test_an_unknown_device_params_key_is_an_error"]
    assert outcome == "error" and "unknown key(s) ['l1_smal_size']" in message


def test_a_buffer_left_on_a_closed_mesh_fails_the_teardown(outcomes):
    outcome, message = outcomes["test_a_leak_fails_the_teardown"]
    assert outcome == "error" and "leaked device memory after closing" in message and "DRAM" in message


def test_tensors_kept_past_the_test_fail_the_teardown_before_closing_frees_them(outcomes):
    outcome, message = outcomes["test_tensors_kept_past_the_test_fail_the_teardown"]
    assert outcome == "error" and "leaked device memory: the test left buffers allocated" in message, message
    assert "DRAM: 1 buffer(s), 4096 B per device" in message and "L1: 1 buffer(s)" in message, message


def _run_kept(*options: str) -> subprocess.CompletedProcess:
    """The parity suite's test that keeps its tensors in a module global, run alone with ``options``."""
    case = f"{SUITE / 'test_conftest_parity.py'}::test_tensors_kept_past_the_test_fail_the_teardown"
    command = [sys.executable, "-m", "pytest", "-q", "-p", "meshnn.testing", "-p", "no:cacheprovider", case, *options]
    environment = {k: v for k, v in os.environ.items() if k not in ("MESHNN_SYSTEM", "MESHNN_AS_TTNN", "CI")}
    return subprocess.run(command, capture_output=True, text=True, timeout=300, env=environment)


def test_by_default_tensors_kept_past_the_test_are_a_warning_as_real_ttnn_closes_quietly():
    run = _run_kept()
    assert run.returncode == 0, run.stdout[-2000:]
    assert "1 passed" in run.stdout and "MeshnnLeakWarning" in run.stdout, run.stdout[-2000:]
    assert "DRAM: 1 buffer(s), 4096 B per device" in run.stdout, run.stdout[-2000:]


def test_leaks_off_says_nothing_and_an_unknown_policy_is_refused():
    quiet = _run_kept("--meshnn-leaks=off")
    assert quiet.returncode == 0 and "MeshnnLeakWarning" not in quiet.stdout, quiet.stdout[-2000:]
    wrong = _run_kept("--meshnn-leaks=loud")
    assert wrong.returncode != 0 and "invalid choice: 'loud'" in wrong.stderr, wrong.stderr[-2000:]


def test_a_failing_test_fails_once_not_also_as_a_leak(outcomes):
    outcome, message = outcomes["test_a_failing_test_is_not_also_a_leak"]
    assert outcome == "failure" and "fails on purpose" in message and "leaked" not in message, message


def test_every_test_of_the_suite_is_checked(outcomes):
    assert set(outcomes) == set(PASSING) | {
        "test_a_64_device_mesh_is_skipped",
        "test_pcie_mesh_device_of_two_is_skipped",
        "test_a_blackhole_only_test_is_skipped_on_wormhole",
        "test_a_blackhole_mesh_test_is_skipped_on_wormhole",
        "test_an_unknown_device_params_key_is_an_error",
        "test_a_leak_fails_the_teardown",
        "test_tensors_kept_past_the_test_fail_the_teardown",
        "test_a_failing_test_is_not_also_a_leak",
    }
