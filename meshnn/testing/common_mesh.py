"""tt-metal's ``models/common/tests`` conftest, on the simulated systems: the ``ttnn_mesh_device``
fixture and the deselection of the cases whose ``mesh_shape`` is not the fixture's mesh.

``ttnn_mesh_device`` is module-scoped and indirect: its parameter is a ``(rows, cols)`` tuple or a
dict with ``mesh_shape`` and ``device_params`` keys (``trace_region_size``, ``fabric_config``, ...,
checked by :mod:`meshnn.testing.params`).  As in tt-metal: no parameter, or a dict without
``mesh_shape``, skips, and so does a Blackhole system; a shape the system does not offer
(:data:`ALLOWED`: the table tt-metal's conftest keeps, by system mesh shape) skips with the
allowed shapes; the whole system's mesh is
opened in the orientation the request fits with the default offset and a request smaller than
the system is its first submesh; a mesh of more than one device gets ``FABRIC_1D_RING`` (8 devices
or more) or ``FABRIC_1D`` unless the parameter names a fabric.  The system is the smallest with the
devices asked for (:mod:`meshnn.testing.systems`), as for ``mesh_device``.  Teardown closes the
meshes, resets the fabric and checks for buffers left allocated, unless a test of the module failed
(its traceback holds its tensors).

A case parametrised with both ``ttnn_mesh_device`` and ``mesh_shape`` runs only where the two are
equal; the others are deselected (not skipped), as tt-metal's ``pytest_collection_modifyitems``.

Layers: imports the public root and the testing modules.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import pytest

import meshnn
from meshnn.testing.environment import forced_system
from meshnn.testing.fixtures import leak_policy, opened
from meshnn.testing.systems import BY_SIZE, common_mesh_shape, system_for

ALLOWED = {  # a system's mesh shape -> the shapes tt-metal's conftest opens on it
    (1, 1): ((1, 1),),
    (1, 2): ((1, 2), (1, 1)),
    (2, 4): ((2, 4), (1, 8), (1, 4), (1, 2), (1, 1)),
    (8, 4): ((8, 4), (4, 8), (1, 8), (1, 4), (1, 2), (1, 1)),
}
RING_FROM = 8  # devices from which the default fabric is a ring


def parent_shape(system: tuple[int, int], wanted: tuple[int, int]) -> tuple[int, int] | None:
    """The shape the whole system opens as so that ``wanted`` is its first submesh; None when no
    orientation holds it."""
    if wanted == (1, 1):
        return wanted
    if math.prod(wanted) == math.prod(system):
        return wanted
    for rows, cols in (system, system[::-1]):
        if wanted[0] <= rows and wanted[1] <= cols:
            return (rows, cols)
    return None


def _device_params(param: object, devices: int) -> dict:
    """The parameter's device settings, the default fabric added for a multi-device mesh."""
    params = {k: v for k, v in param.items() if k != "mesh_shape"} if isinstance(param, dict) else {}
    if devices > 1 and params.get("fabric_config") is None:
        params["fabric_config"] = (
            meshnn.FabricConfig.FABRIC_1D_RING if devices >= RING_FROM else meshnn.FabricConfig.FABRIC_1D
        )
    return params


@pytest.fixture(scope="module")
def ttnn_mesh_device(request: pytest.FixtureRequest) -> Iterator[meshnn.MeshDevice]:
    param = getattr(request, "param", None)
    if param is None:
        pytest.skip("ttnn_mesh_device fixture called without parametrization")
    wanted = common_mesh_shape(param)
    if wanted is None:
        pytest.skip(f"ttnn_mesh_device: mesh_shape is required, got {param!r}")
    name = system_for(math.prod(wanted), forced_system(request.config)) or BY_SIZE[-1]
    if meshnn.SYSTEMS[name].arch_spec.arch.value == "blackhole":
        pytest.skip("Blackhole device is not supported for this test yet")
    with pytest.MonkeyPatch.context() as patch:  # (module-scoped: set up before the test's own system)
        patch.setenv("MESHNN_SYSTEM", name)
        yield from _opened(request, param, wanted)


def _opened(request: pytest.FixtureRequest, param: object, wanted: tuple[int, int]) -> Iterator[meshnn.MeshDevice]:
    """The mesh of ``ttnn_mesh_device`` on the system now set (see the module's text)."""
    system = tuple(meshnn.system_spec().mesh_shape)
    allowed = ALLOWED.get(system, ())
    parent = parent_shape(system, wanted) if wanted in allowed else None
    if parent is None:
        pytest.skip(f"Requested mesh {wanted} unsupported on system {system}. Allowed: {sorted(allowed)}")
    failures = request.session.testsfailed
    params = _device_params(param, math.prod(parent))
    failed = lambda: request.session.testsfailed > failures  # noqa: E731
    with opened(meshnn.MeshShape(*parent), params, failed, leak_policy(request.config)) as mesh:
        yield mesh.create_submesh(meshnn.MeshShape(*wanted)) if parent != wanted else mesh


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Deselect the cases whose ``mesh_shape`` parameter is not their ``ttnn_mesh_device``'s."""
    kept, dropped = [], []
    for item in items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        mismatch = "mesh_shape" in params and "ttnn_mesh_device" in params
        (dropped if mismatch and params["ttnn_mesh_device"] != params["mesh_shape"] else kept).append(item)
    if dropped:
        items[:] = kept
        config.hook.pytest_deselected(items=dropped)
