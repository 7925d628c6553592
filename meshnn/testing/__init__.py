"""Run TTNN test suites without hardware: ``pytest -p meshnn.testing --noconftest`` (or
``MESHNN_AS_TTNN=1``), tt-metal's own tests included, unmodified.

Once active, ``import ttnn`` (and ``ttnn.device``, ``ttnn.distributed``, ``ttnn.distributed.distributed``,
``ttnn.model_preprocessing``, ``ttnn.reports``) resolves to meshnn before any test module is
collected, and tt-metal's conftest fixtures are provided with its semantics: ``device_params``,
``mesh_device``, ``pcie_mesh_device``, ``t3k_mesh_device``, ``n300_mesh_device``, ``device``,
``use_program_cache``, ``reset_seeds``, ``function_level_defaults``, ``is_ci_env``,
``galaxy_type``, ``ensure_gc``, ``ensure_devices_tg`` and the ``silicon_arch_name`` /
``silicon_arch_<arch>`` parametrisation (:mod:`.fixtures`, :mod:`.environment`), and
``models/common/tests``' ``ttnn_mesh_device`` (:mod:`.common_mesh`).

Each test runs on the simulated system its devices need (8x4 -> galaxy, 2x4 or 1x8 -> t3k, 1x2 ->
n300, 1x1 -> n150; :mod:`.systems`); ``--system`` (or ``$MESHNN_SYSTEM``) forces one.  Without
activation nothing is aliased and no fixture is added.  ``--meshnn-plan`` opens every mesh as a
planning mesh (:mod:`meshnn.testing.planning`).

Layers: imports the public root, :mod:`meshnn.errors` and :mod:`meshnn.compat`.
"""

from __future__ import annotations

import os
import sys

import pytest

from meshnn.compat import ttnn_alias
from meshnn.testing.fixtures import LEAK_POLICIES, LEAKS_OPTION
from meshnn.testing.ranks import pytest_runtest_logreport  # noqa: F401  (a hook: a failed test ends every MPI rank)

SYSTEM_OPTION = "--system"
pytest_plugins = ["meshnn.testing.planning"]  # --meshnn-plan: planning meshes for the whole session


def pytest_addoption(parser: pytest.Parser, pluginmanager: pytest.PytestPluginManager) -> None:
    _register_fixtures(pluginmanager)
    group = parser.getgroup("meshnn", "meshnn: TTNN tests on a simulated mesh")
    group.addoption(
        SYSTEM_OPTION,
        action="store",
        default=None,
        help="simulated system for every test: n150, n300, t3k, galaxy, p150, p300 "
        "(default: per test, the smallest Wormhole system with the devices it asks for)",
    )
    group.addoption(
        LEAKS_OPTION,
        action="store",
        choices=LEAK_POLICIES,
        default="warn",
        help="device buffers a passing test leaves allocated at teardown (a tensor kept in a global or a "
        "class cache): warn (default: a MeshnnLeakWarning naming them; real ttnn closes the device and says "
        "nothing), error (the teardown fails), off",
    )


def _named_on_the_command_line(argv: list[str]) -> bool:
    """Whether ``argv`` (a ``pytest`` command's) asks for this plugin with ``-p meshnn.testing``."""
    pairs = zip(argv, [*argv[1:], ""][: len(argv)], strict=True)  # (none when argv is empty)
    return any(a == "-pmeshnn.testing" or (a == "-p" and b == "meshnn.testing") for a, b in pairs)


if _named_on_the_command_line(sys.argv[1:]):
    # pytest imports the ``-p`` plugins in their order before any hook runs: a plugin named after this one
    # (a model directory's conftest, ``-p models.demos.x.conftest``) that imports ttnn then finds the alias
    ttnn_alias.install()


def pytest_load_initial_conftests(early_config: pytest.Config, parser: pytest.Parser, args: list[str]) -> None:
    """Alias ttnn before any conftest or test module imports it."""
    system = early_config.known_args_namespace.system if hasattr(early_config, "known_args_namespace") else None
    if system:
        os.environ["MESHNN_SYSTEM"] = system
    ttnn_alias.install()


def pytest_configure(config: pytest.Config) -> None:
    import meshnn
    from meshnn.testing import environment

    forced = config.getoption(SYSTEM_OPTION) or os.environ.get("MESHNN_SYSTEM") or None
    if forced is not None:
        try:
            forced = meshnn.system_spec(forced).name
        except meshnn.MeshnnError as error:
            raise pytest.UsageError(str(error)) from None
    config.stash[environment.FORCED] = forced
    _register_fixtures(config.pluginmanager)
    config.addinivalue_line("markers", "requires_fast_runtime_mode_off: accepted for TTNN test suites")


def _register_fixtures(pluginmanager: pytest.PytestPluginManager) -> None:
    """Register tt-metal's conftest fixtures and environment (once), as soon as this plugin is: before
    the plugins named after it on the command line, so a model's conftest loaded as a plugin
    (``-p models.demos.X.conftest``) overrides them, as a model directory's conftest overrides
    tt-metal's root conftest (its own ``mesh_device``, its hooks called first)."""
    from meshnn.testing import common_mesh, environment, fixtures

    plugins = (
        (fixtures, "meshnn-ttnn-fixtures"),
        (environment, "meshnn-ttnn-environment"),
        (common_mesh, "meshnn-ttnn-models-common"),
    )
    for module, name in plugins:
        if not pluginmanager.is_registered(module):
            pluginmanager.register(module, name)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    from meshnn.testing import environment

    environment.parametrize_arch(metafunc)
