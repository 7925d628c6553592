"""tt-metal's device fixtures, on the simulated mesh (registered only when the plugin is active).

``mesh_device`` (indirect: an int N opens 1xN, a (rows, cols) tuple that shape; no parameter: 1xN
over the whole system, as tt-metal), ``pcie_mesh_device`` (the four PCIe chips: a 2x2 box at (0, 1)
reshaped to 1x4; skipped unless 4 are asked for), ``t3k_mesh_device`` (1x8), ``n300_mesh_device``
(1x2), ``device`` (chip 0 as a 1x1 mesh), each configured by ``device_params`` (indirect, checked
by :mod:`meshnn.testing.params`).  The fabric is set before a mesh opens and reset to DISABLED
after it closes.  At teardown, before anything is closed, every device buffer a passing test left
allocated (a tensor kept in a global, a class cache, a list) is reported naming each buffer type,
the buffers and their bytes, as ``--meshnn-leaks`` says: ``warn`` (the default) a
:class:`MeshnnLeakWarning` in pytest's warnings summary, since real ttnn closes a device holding
tensors and says nothing (model code caches device tensors in class attributes); ``error`` fails
the teardown; ``off`` says nothing.  The mesh is closed then (which frees them; a check made after
closing could never fire).  A test that failed is not checked: its traceback keeps its tensors
alive.  After closing, the allocator is checked to hold nothing: an allocation no buffer owns is
meshnn's own fault, an error under every policy.

Layers: imports the public root, :mod:`meshnn.errors` and the testing modules.
"""

from __future__ import annotations

import contextlib
import gc
import warnings
from collections.abc import Callable, Iterator

import pytest

import meshnn
from meshnn.errors import MeshnnError
from meshnn.testing.params import EXACT_KEY, open_arguments
from meshnn.testing.systems import mesh_param_devices, requested_devices, skip_reason

LEAKS_OPTION = "--meshnn-leaks"
LEAK_POLICIES = ("warn", "error", "off")


class MeshnnLeakWarning(UserWarning):
    """Device buffers a passing test left allocated when its mesh closed (``--meshnn-leaks=warn``)."""


def leak_policy(config: pytest.Config) -> str:
    """``--meshnn-leaks`` (one of :data:`LEAK_POLICIES`); ``warn`` where the option is not registered."""
    return config.getoption(LEAKS_OPTION, default="warn") or "warn"


@pytest.fixture(scope="function")
def device_params(request: pytest.FixtureRequest) -> dict:
    """The dict given by indirect parametrisation; empty by default (a copy: the fixtures may not
    change the test's parameter)."""
    return dict(getattr(request, "param", {}))


CALL_FAILED = pytest.StashKey[bool]()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Iterator:
    """Note on the test's item whether its call raised (failed, or a plan's read of values, or
    an expected failure): its traceback holds the test's tensors, so its teardown does not check
    for leaks."""
    yield
    if call.when == "call":
        item.stash[CALL_FAILED] = call.excinfo is not None


def buffers_left(mesh: meshnn.MeshDevice) -> str | None:
    """The device buffers still allocated on ``mesh`` (and its submeshes) once unreachable objects
    are collected, by buffer type (``DRAM: 2 buffer(s), 4096 B per device``); None when none.  A
    trace's own buffer (TRACE) is not counted: the device owns a captured trace, and closing it
    releases the traces a test did not (tt-metal's close does the same).  Nor are the buffers the
    program cache holds (a collective's own semaphores): the device's cache owns them, and closing
    it frees them."""
    gc.collect()
    by_type: dict[str, list[int]] = {}
    cached = {id(b) for m in (mesh, *mesh.get_submeshes()) for b in m.program_cache_buffers()}
    for buffer in mesh.live_buffers():
        if buffer.buffer_type() is meshnn.BufferType.TRACE or id(buffer) in cached:
            continue
        by_type.setdefault(buffer.buffer_type().name, []).append(buffer.device_local_size())
    if not by_type:
        return None
    return "; ".join(
        f"{kind}: {len(sizes)} buffer(s), {sum(sizes)} B per device (of {sorted(sizes)[-1]} B at most)"
        for kind, sizes in sorted(by_type.items())
    )


def check_nothing_leaked(mesh: meshnn.MeshDevice) -> None:
    """After ``mesh`` closed: every bank of its allocator is free again."""
    leaked = {}
    for buffer_type in mesh.allocator.managers:
        view = mesh.allocator.memory_view(buffer_type)
        if view.total_bytes_allocated_per_bank:
            leaked[str(buffer_type)] = view.total_bytes_allocated_per_bank
    if leaked:
        raise MeshnnError(f"{mesh!r} leaked device memory after closing (bytes per bank): {leaked}")


@contextlib.contextmanager
def opened(
    shape: meshnn.MeshShape,
    device_params: dict,
    failed: Callable[[], bool] | None = None,
    leaks: str = "error",
    **open_kwargs: object,
) -> Iterator[meshnn.MeshDevice]:
    """A mesh opened as tt-metal's fixtures open it, checked for buffers left allocated (unless
    ``failed()`` says the test failed, or ``leaks`` is ``off``; reported as ``leaks`` says: a
    :class:`MeshnnLeakWarning` or a :class:`MeshnnError`), closed (submeshes first), the fabric
    reset and the allocator checked when the block ends."""
    if leaks not in LEAK_POLICIES:
        raise MeshnnError(f"opened: leaks must be one of {LEAK_POLICIES}, got {leaks!r}")
    arguments = open_arguments(device_params)
    if arguments.fabric_config is not None:
        meshnn.set_fabric_config(arguments.fabric_config, **(arguments.fabric_kwargs or {}))
    try:
        mesh = meshnn.open_mesh_device(shape, **arguments.open_kwargs, **open_kwargs)
        left = None
        try:
            yield mesh
            left = buffers_left(mesh) if leaks != "off" and not (failed and failed()) else None
        finally:
            for sub in mesh.get_submeshes():
                meshnn.close_mesh_device(sub)
            meshnn.close_mesh_device(mesh)
        if left is not None:
            message = (
                f"{mesh!r} leaked device memory: the test left buffers allocated ({left}); deallocate them "
                "(ttnn.deallocate) or drop every reference to their tensors before the test ends"
            )
            if leaks == "error":
                raise MeshnnError(message)
            warnings.warn(MeshnnLeakWarning(message), stacklevel=1)
        check_nothing_leaked(mesh)
    finally:
        if arguments.fabric_config is not None:
            meshnn.set_fabric_config(meshnn.FabricConfig.DISABLED)


def _with_counter(mesh: meshnn.MeshDevice) -> meshnn.MeshDevice:
    """``mesh`` with tt-metal's ``cache_entries_counter`` attached, as tt-metal's conftest attaches it
    to its ``device`` and ``mesh_device`` fixtures' devices (its newer tests measure program-cache
    entries with it), when the tree under test has that helper (``tests/tests_common``)."""
    try:
        from tests.tests_common.cache_entries_counter import CacheEntriesCounter
    except ImportError:  # (not a tt-metal tree, or one older than the helper)
        return mesh
    mesh.cache_entries_counter = CacheEntriesCounter(mesh)
    return mesh


def _checked(request: pytest.FixtureRequest) -> dict:
    """``opened``'s check arguments for the test using the fixture: whether it failed, the leak policy."""
    return {"failed": _failed(request), "leaks": leak_policy(request.config)}


def _failed(request: pytest.FixtureRequest) -> Callable[[], bool]:
    """Whether the test using the fixture failed (known once its call has run)."""
    return lambda: request.node.stash.get(CALL_FAILED, False)


def _skip_unless_fits(request: pytest.FixtureRequest, devices: int) -> None:
    if devices > meshnn.get_num_devices():
        params = getattr(getattr(request.node, "callspec", None), "params", {})
        requested = max(devices, requested_devices(request.fixturenames, params, meshnn.get_num_devices()))
        pytest.skip(skip_reason(requested, meshnn.system_spec().name))


@pytest.fixture(scope="function")
def mesh_device(request: pytest.FixtureRequest, silicon_arch_name: str, device_params: dict) -> Iterator:
    param = getattr(request, "param", None)
    if isinstance(param, tuple | list):
        if len(param) != 2:
            raise MeshnnError(f"mesh_device: a mesh shape parameter must be (rows, cols), got {param!r}")
        shape = meshnn.MeshShape(*param)
    else:
        shape = meshnn.MeshShape(1, mesh_param_devices(param, meshnn.get_num_devices()))
    _skip_unless_fits(request, shape.mesh_size())
    if device_params.get(EXACT_KEY, False) and shape.mesh_size() != meshnn.get_num_devices():
        pytest.skip(
            f"Test requires exact match of requested num devices ({shape.mesh_size()}) to available physical num "
            f"devices ({meshnn.get_num_devices()})."
        )
    with opened(shape, device_params, **_checked(request)) as mesh:
        yield _with_counter(mesh)


@pytest.fixture(scope="function")
def pcie_mesh_device(
    request: pytest.FixtureRequest, silicon_arch_name: str, silicon_arch_wormhole_b0: bool, device_params: dict
) -> Iterator:
    pcie = meshnn.get_pcie_device_ids()
    wanted = min(getattr(request, "param", len(pcie)), len(pcie))
    if wanted != 4:
        pytest.skip("Only 4 PCIe devices are supported for testing")
    with opened(meshnn.MeshShape(2, 2), device_params, **_checked(request), offset=meshnn.MeshCoordinate(0, 1)) as mesh:
        mesh.reshape(meshnn.MeshShape(1, 4))
        yield mesh


@pytest.fixture(scope="function")
def t3k_mesh_device(
    request: pytest.FixtureRequest, silicon_arch_name: str, silicon_arch_wormhole_b0: bool, device_params: dict
) -> Iterator:
    _skip_unless_fits(request, 8)
    with opened(meshnn.MeshShape(1, 8), device_params, **_checked(request)) as mesh:
        yield mesh


@pytest.fixture(scope="function")
def n300_mesh_device(
    request: pytest.FixtureRequest, silicon_arch_name: str, silicon_arch_wormhole_b0: bool, device_params: dict
) -> Iterator:
    _skip_unless_fits(request, 2)
    with opened(meshnn.MeshShape(1, 2), device_params, **_checked(request)) as mesh:
        yield mesh


@pytest.fixture(scope="function")
def bh_1d_mesh_device(
    request: pytest.FixtureRequest, silicon_arch_name: str, silicon_arch_blackhole: bool, device_params: dict
) -> Iterator:
    """Every device of a Blackhole system as an N x 1 line (skipped on the Wormhole systems
    meshnn simulates, by ``silicon_arch_blackhole``, as tt-metal skips it)."""
    with opened(meshnn.MeshShape(meshnn.get_num_devices(), 1), device_params, **_checked(request)) as mesh:
        yield mesh


@pytest.fixture(scope="function")
def bh_2d_mesh_device(
    request: pytest.FixtureRequest, silicon_arch_name: str, silicon_arch_blackhole: bool, device_params: dict
) -> Iterator:
    """A Blackhole system's devices as its 2-D mesh (skipped on Wormhole, as above)."""
    with opened(meshnn.MeshShape(*meshnn.system_spec().mesh_shape), device_params, **_checked(request)) as mesh:
        yield mesh


@pytest.fixture(scope="function")
def device(request: pytest.FixtureRequest, device_params: dict) -> Iterator:
    """Chip 0 of the system as a 1x1 mesh (``ttnn.CreateDevice(device_id=0, ...)``), ttnn's default
    device while the test runs (``ttnn.SetDefaultDevice``; the one before restored after, as
    tt-metal's conftest does: ``tt_lib``'s fallback ops and ``ttnn.outer`` read it)."""
    with opened(meshnn.MeshShape(1, 1), device_params, **_checked(request), physical_device_ids=[0]) as mesh:
        before = meshnn.GetDefaultDevice()
        meshnn.SetDefaultDevice(mesh)
        try:
            yield _with_counter(mesh)
        finally:
            meshnn.SetDefaultDevice(before)


@pytest.fixture(scope="function")
def use_program_cache(request: pytest.FixtureRequest) -> Iterator[None]:
    """Enable the program cache on the test's devices; disable and clear it afterwards."""
    names = ("device", "mesh_device", "pcie_mesh_device", "t3k_mesh_device", "n300_mesh_device")
    devices = [request.getfixturevalue(name) for name in names if name in request.fixturenames]
    for dev in devices:
        dev.enable_program_cache()
    yield
    for dev in devices:
        if dev.is_open():
            dev.disable_and_clear_program_cache()


@pytest.fixture()
def ensure_devices_tg() -> None:
    assert len(meshnn.get_device_ids()) == 32, f"Expected 32 devices, got {len(meshnn.get_device_ids())}"
