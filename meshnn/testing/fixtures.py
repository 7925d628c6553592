"""tt-metal's device fixtures, on the simulated mesh (registered only when the plugin is active)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import meshnn

SKIP_REASON = "Requested more devices than available. Test not applicable for machine"
OPEN_KEYS = ("l1_small_size", "trace_region_size", "num_command_queues", "worker_l1_size")


@pytest.fixture(scope="function")
def device_params(request: pytest.FixtureRequest) -> dict:
    """The dict given by indirect parametrization (l1_small_size, trace_region_size,
    num_command_queues, fabric_config, ...); empty by default."""
    return dict(getattr(request, "param", {}))


def _open(shape: meshnn.MeshShape, device_params: dict) -> meshnn.MeshDevice:
    fabric = device_params.get("fabric_config")
    if fabric is not None:
        meshnn.set_fabric_config(fabric)
    kwargs = {k: v for k, v in device_params.items() if k in OPEN_KEYS}
    return meshnn.open_mesh_device(shape, **kwargs)


def _close(mesh: meshnn.MeshDevice) -> None:
    for sub in mesh.get_submeshes():
        sub.close()
    mesh.close()


@pytest.fixture(scope="function")
def mesh_device(request: pytest.FixtureRequest, device_params: dict) -> Iterator[meshnn.MeshDevice]:
    """Indirect param: an int N opens MeshShape(1, N), a tuple (rows, cols) that shape; without a
    param, the whole simulated system.  Skipped when the system has fewer devices."""
    system = meshnn.system_spec()
    param = getattr(request, "param", None)
    if param is None:
        shape = meshnn.MeshShape(system.mesh_shape)
    elif isinstance(param, int):
        shape = meshnn.MeshShape(1, param)
    else:
        shape = meshnn.MeshShape(*param)
    if shape.mesh_size() > system.num_devices:
        pytest.skip(SKIP_REASON)
    mesh = _open(shape, device_params)
    try:
        yield mesh
    finally:
        _close(mesh)


@pytest.fixture(scope="function")
def device(device_params: dict) -> Iterator[meshnn.MeshDevice]:
    """One device: a 1x1 mesh."""
    mesh = _open(meshnn.MeshShape(1, 1), device_params)
    try:
        yield mesh
    finally:
        _close(mesh)


@pytest.fixture(scope="session")
def silicon_arch_name() -> str:
    return meshnn.system_spec().arch_spec.arch.value
