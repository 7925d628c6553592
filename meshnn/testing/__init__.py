"""Run TTNN test suites without hardware: ``pytest -p meshnn.testing`` (or ``MESHNN_AS_TTNN=1``).

Once active, ``import ttnn`` (and ``import ttnn.distributed``, ``ttnn.model_preprocessing``,
``ttnn.reports``) resolves to meshnn before any test module is collected, and tt-metal's
fixtures are available: ``device_params``, ``mesh_device``, ``device``, ``silicon_arch_name``.
The simulated system comes from ``--system`` or ``$MESHNN_SYSTEM`` (default t3k).  Without
activation nothing is aliased and no fixture is added.  ``--meshnn-plan`` opens every mesh as a
planning mesh (:mod:`meshnn.testing.planning`).
"""

from __future__ import annotations

import os

import pytest

from meshnn.compat import ttnn_alias
from meshnn.testing.ranks import pytest_runtest_logreport  # noqa: F401  (a hook: a failed test ends every MPI rank)

SYSTEM_OPTION = "--system"
pytest_plugins = ["meshnn.testing.planning"]  # --meshnn-plan: planning meshes for the whole session


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("meshnn", "meshnn: TTNN tests on a simulated mesh")
    group.addoption(
        SYSTEM_OPTION,
        action="store",
        default=None,
        help="simulated system for the ttnn fixtures: n150, n300, t3k, galaxy, p150, p300",
    )


def pytest_load_initial_conftests(early_config: pytest.Config, parser: pytest.Parser, args: list[str]) -> None:
    """Alias ttnn before any conftest or test module imports it."""
    system = early_config.known_args_namespace.system if hasattr(early_config, "known_args_namespace") else None
    if system:
        os.environ["MESHNN_SYSTEM"] = system
    ttnn_alias.install()


def pytest_configure(config: pytest.Config) -> None:
    from meshnn.testing import fixtures

    if not config.pluginmanager.is_registered(fixtures):
        config.pluginmanager.register(fixtures, "meshnn-ttnn-fixtures")
    config.addinivalue_line("markers", "requires_fast_runtime_mode_off: accepted for TTNN test suites")
