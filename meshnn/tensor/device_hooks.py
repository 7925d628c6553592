"""Device-side conversions the tensor layer calls but the ops layer implements.

``ttnn.to_layout``, ``ttnn.typecast``, ``ttnn.reshape`` and ``ttnn.to_memory_config`` of a device
tensor, and the Python operators of a tensor (``a + b``, ``a @ b``, ``a[0:32]``), run as
MeshWorkloads, which live in :mod:`meshnn.ops` (a higher layer).  The ops layer
registers them here when its catalog loads (:func:`set_loader` names the function that loads it,
called at the first hook asked for), so the tensor layer never imports upward.  Gathering shards owned
by other ranks needs only the distributed context and lives here in full.

Layer: tensor.  Imports errors and distributed (never ops: ops registers itself here).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from meshnn.errors import MeshnnError

if TYPE_CHECKING:
    from meshnn.mesh.coord import MeshCoordinate
    from meshnn.tensor.tensor import Tensor

_HOOKS: dict[str, Callable[..., Any]] = {}
_LOADER: list[Callable[[], None]] = []


def register(name: str, function: Callable[..., Any]) -> None:
    _HOOKS[name] = function


def set_loader(loader: Callable[[], None]) -> None:
    """Make ``loader`` the function that registers the hooks (the ops layer's catalog)."""
    _LOADER[:] = [loader]


def _call(name: str, *args: Any, **kwargs: Any) -> Any:
    function = _HOOKS.get(name)
    if function is None:
        for loader in _LOADER:
            loader()
        function = _HOOKS.get(name)
    if function is None:
        raise MeshnnError(f"{name} of a device tensor needs meshnn's ops layer: import meshnn")
    return function(*args, **kwargs)


def operator(name: str, *args: Any) -> Any:
    """``tensor + other`` and friends: the ttnn op ``name`` (``add``, ``matmul``, ``getitem``...)."""
    return _call(name, *args)


def device_to_layout(tensor: Tensor, layout: Any, **kwargs: Any) -> Tensor:
    return _call("to_layout", tensor, layout, **kwargs)


def device_typecast(tensor: Tensor, dtype: Any, **kwargs: Any) -> Tensor:
    return _call("typecast", tensor, dtype, **kwargs)


def device_reshape(tensor: Tensor, shape: tuple[int, ...]) -> Tensor:
    return _call("reshape", tensor, shape)


def convert_memory_config(tensor: Tensor, memory_config: Any) -> Tensor:
    return _call("to_memory_config", tensor, memory_config)


def gather_remote_shards(
    local: dict[MeshCoordinate, np.ndarray], missing: list[MeshCoordinate], what: str
) -> dict[MeshCoordinate, np.ndarray]:
    """The decoded shards at ``missing`` coordinates, from the ranks that hold them: every rank
    that lacks shards calls this, with the shards it holds (``local``), and meets the others'
    calls in order; ``what`` (the read and its tensor) is compared first, on the data channel
    (after the read of the device, in order with the collectives of kernels): ranks reading
    different tensors are named, never given each other's data."""
    from meshnn.distributed.context import get_context

    context = get_context()
    if context.world_size == 1:
        raise MeshnnError(f"shards at {missing[:4]} are not populated on this host")
    gathered: dict[MeshCoordinate, np.ndarray] = {}
    for part in context.allgather_object(local, op=what, data=True):
        gathered.update(part)  # type: ignore[arg-type]
    absent = [c for c in missing if c not in gathered]
    if absent:
        raise MeshnnError(f"no rank holds the shards at {absent[:4]} ({what})")
    return {c: gathered[c] for c in missing}
