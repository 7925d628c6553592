"""``ttnn.manual_seed``: the seeds of the random streams ``ttnn.sampling`` draws from, one per user
(the 32 rows of a decode batch; on the device, the PRNG of the core that samples that user).

- ``manual_seed(seed, device=mesh)`` seeds every user's stream; ``user_ids=u`` (0..31) only that
  user's; tensors ``seeds`` and ``user_ids`` (UINT32 ROW_MAJOR, rank 1, one shape) seed each listed
  user with its seed; a seed tensor alone seeds users 0, 1, ... in order; a scalar ``user_ids``
  with a seed tensor is refused, as ttnn refuses it; the seed 2**32 - 1 leaves a stream as it is.
- ``sampling(..., seed=None)`` then draws each user's uniform number from its stream (advancing
  it), the same number on every device; ``seed=s`` draws from a fresh numpy PCG64(s) instead (one
  row per device), as meshnn always did; with no stream set, ``seed=None`` is seed 0.

A stream is numpy's PCG64 seeded with (seed, user): the device's generator is not reproduced (the
same seeds give the same tokens here, not the device's).

On a planning mesh (``execute=False``) seed and user-id tensors hold no values: the call checks
what their specs show (dtype, layout, rank, the two tensors' lengths) and sets no stream, as a
plan computes no tokens (the 70B Galaxy's ``TTSampling`` seeds from tensors at every decode step).

May import: every layer below the ops and the ops' checks and values.
"""

from __future__ import annotations

import weakref

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.mesh.mesh_device import MeshDevice
from meshnn.ops.checks import device_input, int_arg
from meshnn.ops.registry import OpKind, register
from meshnn.ops.values import logical_values
from meshnn.perf.desc import OpFamily
from meshnn.tensor.tensor import Tensor

USERS = 32
SKIP_SEED = 2**32 - 1
"""A seed that leaves its stream as it is (ttnn: rand_tile_init is skipped)."""

_STREAMS: weakref.WeakKeyDictionary[MeshDevice, dict[int, np.random.Generator]] = weakref.WeakKeyDictionary()


def uniforms(mesh: MeshDevice, seed: int | None, devices: int) -> np.ndarray:
    """``(devices, 32)`` uniform numbers in [0, 1) for one sampling call (see the module docstring)."""
    streams = _STREAMS.get(mesh)
    if seed is not None or streams is None:
        return np.random.Generator(np.random.PCG64(0 if seed is None else seed)).random((devices, USERS))
    row = np.array([streams[u].random() for u in range(USERS)])
    return np.broadcast_to(row, (devices, USERS))


def _stream(seed: int, user: int) -> np.random.Generator:
    return np.random.Generator(np.random.PCG64([seed, user]))


def _uint32_values(op: str, name: str, value: object) -> tuple[MeshDevice, list[int] | None]:
    """A UINT32 ROW_MAJOR rank-1 tensor's values (read when its writes have landed); None on a
    planning mesh, which holds none."""
    t = device_input(op, name, value)
    if t.dtype is not DataType.UINT32 or t.layout is not Layout.ROW_MAJOR or len(t.shape) != 1:
        raise MeshnnTypeError(
            f"ttnn.{op}: {name} must be a rank-1 UINT32 ROW_MAJOR tensor, got {t.dtype.name} {t.layout}"
        )
    mesh = t.storage.mesh_buffer.device()  # type: ignore[union-attr]
    if not mesh.executes:
        return mesh, None
    mesh.mesh_command_queue(0).finish()
    row = mesh.local_row(t.storage.coords[0])  # type: ignore[union-attr]
    values = logical_values(t.storage.mesh_buffer.slab()[row : row + 1], t.spec, as_float=False)  # type: ignore[union-attr]
    return mesh, [int(v) for v in np.asarray(values).reshape(-1)]


def _pairs(op: str, seeds: object, user_ids: object) -> tuple[MeshDevice | None, list[tuple[int, int]]]:
    """The (user, seed) pairs the call sets, checked as ttnn checks them."""
    if isinstance(seeds, Tensor):
        if user_ids is not None and not isinstance(user_ids, Tensor):
            raise MeshnnValueError(
                f"ttnn.{op}: Seeds were provided as a tensor, so user_ids must not be provided as a scalar."
            )
        mesh, values = _uint32_values(op, "seeds", seeds)
        users = None if user_ids is None else _uint32_values(op, "user_ids", user_ids)[1]
        if user_ids is not None and seeds.shape[0] != user_ids.shape[0]:  # type: ignore[union-attr]
            raise MeshnnValueError(f"ttnn.{op}: Seeds tensor and User IDs tensor must have the same number of elements")
        if values is None:
            return mesh, []  # a planning mesh: checked, no stream to set
        return mesh, list(zip(range(len(values)) if users is None else users, values, strict=True))
    seed = int_arg(op, "seeds", seeds)
    if not 0 <= seed <= SKIP_SEED:
        raise MeshnnValueError(f"ttnn.{op}: seeds must be a uint32 value, got {seed}")
    if user_ids is None:
        return None, [(u, seed) for u in range(USERS)]
    if isinstance(user_ids, Tensor):
        mesh, users = _uint32_values(op, "user_ids", user_ids)
        return mesh, [(u, seed) for u in users or ()]
    return None, [(int_arg(op, "user_ids", user_ids), seed)]


@register(kind=OpKind.RANDOM, family=OpFamily.COPY, device_operation="ManualSeedDeviceOperation", modelled=False)
def manual_seed(
    seeds: int | Tensor = 0,
    *,
    device: MeshDevice | None = None,
    user_ids: int | Tensor | None = None,
    sub_core_grids: object = None,
) -> None:
    """Seed the sampling streams (see the module docstring)."""
    op = "manual_seed"
    if device is not None and not isinstance(device, MeshDevice):
        raise MeshnnTypeError(f"ttnn.{op}: device must be a ttnn.MeshDevice, got {device!r}")
    mesh, pairs = _pairs(op, seeds, user_ids)
    mesh = device if device is not None else mesh
    if mesh is None:
        raise MeshnnValueError(f"ttnn.{op}: Device must be provided when seeds is a uint32_t value (device)")
    if any(not 0 <= user < USERS for user, _ in pairs):
        raise MeshnnValueError(f"ttnn.{op}: User IDs must be in the range [0, 31] (user_ids)")
    streams = _STREAMS.setdefault(mesh, {u: _stream(0, u) for u in range(USERS)})
    for user, seed in pairs:
        if seed != SKIP_SEED:
            streams[user] = _stream(seed, user)
