"""What tt-metal's conftest gives every test besides devices: the simulated system the test runs on
(chosen per test, autouse), ``reset_seeds`` / ``function_level_defaults`` (torch, numpy and random
seeded with 213919), ``is_ci_env`` (``$CI == "true"``), ``is_ci_v2_env`` (``$TT_GH_CI_INFRA`` set),
``expect_error`` (``pytest.raises`` with a message), ``is_single_card_n300``, ``galaxy_type`` ("6U" on
the simulated Galaxy, else None), ``ensure_gc`` (autouse: a garbage collection before each test, as tt-metal's
``tests/ttnn`` conftests do), ``report_per_test`` (autouse, tt-metal's ``tests/ttnn`` conftest's
``pre_and_post``: the test's ``ttnn.CONFIG.report_name`` is its node id and the time unless one is
set, so a test that turns ``enable_logging`` on writes its own report; ``ttnn.database``'s connection
is closed after it), ``model_location_generator`` (where a model's files are: tt-metal's MLPerf
folder ``/mnt/MLPerf/tt_dnn-models/<subdir>/<version>`` when it exists, else the Hugging Face name
itself; tt-metal CI's large-file cache is refused by name), ``get_tt_cache_path`` (the folder of a
model's converted weights), and the ``silicon_arch_name`` /
``silicon_arch_<arch>`` parametrisation.

``silicon_arch_name`` is a session-scoped parameter (test ids carry it), the arch of the system
tests run on (Wormhole unless ``--system`` forces a Blackhole one).  A test that also asks for
``silicon_arch_wormhole_b0`` / ``_blackhole`` / ``_grayskull`` gets ``True`` when that arch is the
one in use and is skipped (empty parameter set) otherwise; asking for one without
``silicon_arch_name`` is an error, as in tt-metal.

Layers: imports the public root, :mod:`meshnn.errors` and the testing modules.
"""

from __future__ import annotations

import datetime
import gc
import os
import random
import sys
from collections.abc import Iterator

import numpy as np
import pytest

import meshnn
from meshnn.errors import MeshnnError
from meshnn.testing.systems import BY_SIZE, DEFAULT, requested_devices, system_for

SEED = 213919
ARCH_FIXTURES = {
    "silicon_arch_grayskull": "grayskull",
    "silicon_arch_wormhole_b0": "wormhole_b0",
    "silicon_arch_blackhole": "blackhole",
}
FORCED = pytest.StashKey[str | None]()


def forced_system(config: pytest.Config) -> str | None:
    return config.stash.get(FORCED, None)


def parametrize_arch(metafunc: pytest.Metafunc) -> None:
    """tt-metal's ``pytest_generate_tests`` for ``silicon_arch_name`` and ``silicon_arch_<arch>``."""
    forced = forced_system(metafunc.config)
    arch = meshnn.SYSTEMS[forced].arch_spec.arch.value if forced else "wormhole_b0"
    wanted = [name for name in ARCH_FIXTURES if name in metafunc.fixturenames]
    if wanted and "silicon_arch_name" not in metafunc.fixturenames:
        raise MeshnnError(
            f"{metafunc.function.__name__} requests a specific silicon target, but doesn't use silicon_arch_name"
        )
    if "silicon_arch_name" in metafunc.fixturenames:
        archs = [arch] if all(ARCH_FIXTURES[name] == arch for name in wanted) else []
        metafunc.parametrize("silicon_arch_name", archs, scope="session")
        for name in wanted:
            metafunc.parametrize(name, [True], scope="session")


@pytest.fixture(autouse=True)
def simulated_system(request: pytest.FixtureRequest) -> Iterator[str]:
    """The system this test runs on ($MESHNN_SYSTEM for the test's duration): forced, or the
    smallest that has the devices the test's fixtures ask for (the largest when none has: the
    device fixture then skips)."""
    forced = forced_system(request.config)
    params = getattr(getattr(request.node, "callspec", None), "params", {})
    whole = meshnn.SYSTEMS[forced or DEFAULT].num_devices
    name = system_for(requested_devices(request.fixturenames, params, whole), forced) or BY_SIZE[-1]
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MESHNN_SYSTEM", name)
        yield name


@pytest.fixture(autouse=True)
def ensure_gc() -> None:
    gc.collect()


@pytest.fixture(autouse=True)
def report_per_test(request: pytest.FixtureRequest) -> Iterator[None]:
    """The test's report name (see the module's text); the report database closed after it."""
    name = f"{request.node.nodeid}: {datetime.datetime.now(datetime.UTC).strftime('%Y-%m-%d %H:%M:%S')} (UTC)"
    with meshnn.manage_config("report_name", meshnn.CONFIG.report_name or name):
        yield
    database = sys.modules.get("meshnn.capture.database")  # (only when a test used it)
    if database is not None and database.SQLITE_CONNECTION is not None:
        database.SQLITE_CONNECTION.close()
        database.SQLITE_CONNECTION = None


@pytest.fixture(scope="function")
def reset_seeds() -> Iterator[None]:
    try:
        import torch
    except ImportError:  # torch is optional: numpy and random are still seeded
        torch = None
    if torch is not None:
        torch.manual_seed(SEED)
    np.random.seed(SEED)
    random.seed(SEED)
    yield


@pytest.fixture(scope="function")
def function_level_defaults(reset_seeds: None) -> Iterator[None]:
    yield


@pytest.fixture(scope="function")
def is_ci_env() -> bool:
    return os.getenv("CI") == "true"


@pytest.fixture(scope="session")
def is_ci_v2_env() -> bool:
    """tt-metal's CI-v2 flag: ``$TT_GH_CI_INFRA`` is set (never here unless the caller sets it)."""
    return "TT_GH_CI_INFRA" in os.environ


@pytest.fixture(scope="function")
def expect_error():
    """tt-metal's ``expect_error``: ``with expect_error(Error, message):`` is ``pytest.raises(Error,
    match=message)`` (tt-metal also logs begin / end markers for its CI's log triage)."""
    return lambda error, message: pytest.raises(error, match=message)


@pytest.fixture(scope="function")
def is_single_card_n300(device) -> bool:
    """True when the system is one N300 card: a single PCIe device and an N300 cluster (tt-metal's
    test of the same name; the simulated N300 has one PCIe chip and its Ethernet-attached twin)."""
    return meshnn.GetNumPCIeDevices() == 1 and meshnn.cluster.get_cluster_type() == meshnn.cluster.ClusterType.N300


@pytest.fixture(scope="function")
def galaxy_type() -> str | None:
    """ "6U" on the simulated Galaxy (a 6U Galaxy: 32 PCIe chips), None on every other system."""
    return "6U" if meshnn.system_spec().name == "galaxy" else None


MLPERF_MODELS = "/mnt/MLPerf/tt_dnn-models"
"""tt-metal's shared folder of model files, read when present."""


@pytest.fixture(scope="session")
def model_location_generator():
    """tt-metal's ``model_location_generator``: a function of ``(model_version, model_subdir="",
    download_if_ci_v2=False, ...)`` giving the MLPerf path of the model when it exists, else
    ``model_version`` (then ``from_pretrained`` reads the local Hugging Face cache or the hub)."""
    from pathlib import Path

    from meshnn.errors import NotImplementedByMeshnn

    def locate(model_version, model_subdir="", download_if_ci_v2=False, ci_v2_timeout_in_s=300, **_):
        path = Path(MLPERF_MODELS) / model_subdir / model_version
        if download_if_ci_v2 and "TT_GH_CI_INFRA" in os.environ and not path.exists():
            raise NotImplementedByMeshnn("model_location_generator's download from tt-metal CI's large-file cache")
        return path if path.exists() else model_version

    return locate


@pytest.fixture(scope="session")
def get_tt_cache_path():
    """tt-metal's ``get_tt_cache_path``: a function of ``(model_version, model_subdir="", default_dir="")``
    giving the folder of a model's converted (TT) weights: ``/mnt/MLPerf/tt_dnn-models/tt/<subdir>/<version>``
    when it exists, else ``<default_dir>/tt_dnn-models/tt/<subdir>/<version>``, made if missing (relative
    to the working directory when ``default_dir`` is empty, as tt-metal's is)."""
    from pathlib import Path

    def locate(model_version, model_subdir="", default_dir=""):
        folder = Path("tt_dnn-models/tt") / model_subdir / model_version
        shared = Path(MLPERF_MODELS).parent / folder
        if shared.exists():
            return shared
        path = Path(default_dir) / folder
        path.mkdir(parents=True, exist_ok=True)
        return path

    return locate
