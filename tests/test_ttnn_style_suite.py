"""tests/ttnn_style/ run the way a TTNN user runs them: `pytest -p meshnn.testing`, in a subprocess."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

SUITE = pathlib.Path(__file__).parent / "ttnn_style"


def run_suite(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", *args, str(SUITE)]
    environment = {k: v for k, v in os.environ.items() if k not in ("MESHNN_SYSTEM", "MESHNN_AS_TTNN")}
    return subprocess.run(
        command, capture_output=True, text=True, timeout=300, env=environment | {"MESHNN_TTNN_STYLE": "1"} | (env or {})
    )


def test_the_ttnn_style_suite_passes_through_the_plugin():
    result = run_suite("-p", "meshnn.testing")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 skipped" in result.stdout and "Requested more devices than available" in result.stdout
    assert " passed" in result.stdout and "failed" not in result.stdout


def test_the_environment_variable_activates_it_too():
    result = run_suite("-k", "system_queries or single_device", env={"MESHNN_AS_TTNN": "1"})
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 passed" in result.stdout


def test_without_activation_nothing_is_aliased():
    result = run_suite("-k", "system_queries")
    assert result.returncode != 0
    assert "No module named 'ttnn'" in result.stdout + result.stderr


def test_the_system_option_forces_one_system_for_every_test():
    result = run_suite("-p", "meshnn.testing", "--system", "t3k", "-k", "galaxy_mesh or system_queries")
    assert result.returncode == 0, result.stdout + result.stderr  # the 8x4 test skips on a forced t3k
    assert "1 passed, 1 skipped" in result.stdout and "'t3k' (forced) has 8" in result.stdout
    result = run_suite("-p", "meshnn.testing", "--system", "galaxy", "-k", "system_queries")
    assert result.returncode == 1 and "where 32 = " in result.stdout  # the default t3k is overridden
