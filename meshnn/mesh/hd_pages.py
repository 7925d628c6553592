"""The host bytes a host <-> device socket writes from or reads into (:mod:`meshnn.mesh.hd_socket`):
a flat uint8 view, without copying, of

- a host ``ttnn.Tensor`` (its one host shard's packed bytes; found by its ``host_buffer()``, as
  this layer knows no tensors);
- a C-contiguous CPU torch tensor or numpy array (tt-metal's ``nb::c_contig, nb::device::cpu``);
- an int: a host memory address, with the byte count the call implies (tt-metal's raw ``write`` /
  ``read``; the caller answers for the memory, as in tt-metal).

Layers: imports :mod:`meshnn.errors` only (torch lazily, when the data is a torch tensor).
"""

from __future__ import annotations

import ctypes

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError


def _from_address(what: str, address: int, nbytes: int | None) -> np.ndarray:
    if isinstance(address, bool) or address <= 0 or nbytes is None:
        raise MeshnnValueError(f"{what}: data must be a non-null host address (int), got {address!r}")
    return np.ctypeslib.as_array((ctypes.c_uint8 * nbytes).from_address(address))


def _from_host_tensor(what: str, tensor: object) -> np.ndarray:
    if str(tensor.storage_type()).rsplit(".", 1)[-1] != "HOST":  # type: ignore[attr-defined]
        raise MeshnnValueError(f"{what}: tensor must be on host (HostStorage)")
    shards = tensor.host_buffer().local_shards()  # type: ignore[attr-defined]
    if len(shards) != 1:
        raise MeshnnValueError(f"{what}: tensor must hold one host buffer, it holds {len(shards)} shards")
    return next(iter(shards.values())).data


def _from_torch(what: str, tensor: object) -> np.ndarray:
    import torch

    assert isinstance(tensor, torch.Tensor)
    if tensor.device.type != "cpu" or not tensor.is_contiguous():
        raise MeshnnValueError(f"{what}: a torch tensor must be a contiguous CPU tensor")
    flat = tensor.detach().reshape(-1)
    return flat.view(torch.uint8).numpy() if flat.numel() else np.zeros(0, dtype=np.uint8)


def host_view(what: str, data: object, nbytes: int | None = None, *, writable: bool = False) -> np.ndarray:
    """A flat uint8 view of ``data`` (see the module's text); ``nbytes``: the bytes of an address."""
    if isinstance(data, int) and not isinstance(data, bool):
        return _from_address(what, data, nbytes)
    if type(data).__module__.startswith("torch"):
        view = _from_torch(what, data)
    elif isinstance(data, np.ndarray):
        if not data.flags.c_contiguous:
            raise MeshnnValueError(f"{what}: a numpy array must be C-contiguous")
        view = data.reshape(-1).view(np.uint8)
    elif callable(getattr(data, "host_buffer", None)) and callable(getattr(data, "storage_type", None)):
        view = _from_host_tensor(what, data)
    else:
        raise MeshnnTypeError(f"{what}: expected a host ttnn.Tensor, a CPU torch tensor or a numpy array, got {data!r}")
    if writable and not view.flags.writeable:
        raise MeshnnValueError(f"{what}: the destination is read-only")
    return view
