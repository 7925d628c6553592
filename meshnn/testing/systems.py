"""Which simulated system a test runs on: the one its devices need.

A test that asks for an 8x4 ``mesh_device`` runs on the simulated Galaxy, a 2x4 or 1x8 one on the
T3000, 1x2 on the N300 and 1x1 on the N150: the smallest Wormhole system with enough devices
(:data:`BY_SIZE`).  The devices a test asks for come from its device fixtures and their indirect
parameters (:func:`requested_devices`).  ``--system`` (or ``$MESHNN_SYSTEM`` set before the run)
forces one system for every test instead; then a test that needs more devices skips, as on that
machine.  Tests without a device fixture run on the default system (t3k).

Layers: imports the public root only.
"""

from __future__ import annotations

import math

import meshnn

BY_SIZE = ("n150", "n300", "t3k", "galaxy")  # the Wormhole systems, smallest first
DEFAULT = "t3k"
FIXED_DEVICES = {  # fixtures whose device count does not depend on a parameter
    "device": 1,
    "n300_mesh_device": 2,
    "pcie_mesh_device": 4,
    "t3k_mesh_device": 8,
    "t3k_single_board_mesh_device": 8,
    "ensure_devices_tg": 32,
}
SKIP_REASON = "Requested more devices than available. Test not applicable for machine"


def mesh_param_devices(param: object, whole: int) -> int:
    """Devices of a ``mesh_device`` parameter: an int N (1xN), a (rows, cols) tuple, or None (the
    whole system: ``whole`` devices)."""
    if param is None:
        return whole
    if isinstance(param, int):
        return param
    return math.prod(param)  # type: ignore[arg-type]


def common_mesh_shape(param: object) -> tuple[int, int] | None:
    """The mesh shape a ``ttnn_mesh_device`` parameter (tt-metal's ``models/common/tests``: a
    ``(rows, cols)`` tuple, or a dict with ``mesh_shape``) asks for; None when it names none."""
    shape = param.get("mesh_shape") if isinstance(param, dict) else param
    return tuple(shape) if isinstance(shape, tuple | list) else None


def requested_devices(fixturenames: list[str], params: dict[str, object], whole: int) -> int:
    """The most devices any of the test's device fixtures needs (0: none)."""
    counts = [count for name, count in FIXED_DEVICES.items() if name in fixturenames]
    if "mesh_device" in fixturenames:
        counts.append(mesh_param_devices(params.get("mesh_device"), whole))
    if "ttnn_mesh_device" in fixturenames:
        counts.append(math.prod(common_mesh_shape(params.get("ttnn_mesh_device")) or (0,)))
    return max(counts, default=0)


def system_for(requested: int, forced: str | None) -> str | None:
    """The system a test needing ``requested`` devices runs on; None when no simulated system has
    that many (the test is skipped)."""
    if forced is not None:
        return forced
    if requested == 0:
        return DEFAULT
    return next((name for name in BY_SIZE if meshnn.SYSTEMS[name].num_devices >= requested), None)


def skip_reason(requested: int, system: str) -> str:
    """tt-metal's skip message, and why."""
    largest = max(meshnn.SYSTEMS.values(), key=lambda spec: spec.num_devices)
    have = meshnn.SYSTEMS[system].num_devices
    if requested > largest.num_devices:
        why = f"no simulated system has {requested} devices (the largest, {largest.name}, has {largest.num_devices})"
    else:
        why = f"{requested} devices requested; the simulated system {system!r} (forced) has {have}"
    return f"{SKIP_REASON}: {why}"
