"""The checks every op makes of its arguments before it allocates or enqueues anything: device
tensors that are usable (allocated, on an open mesh), all on one mesh over the same devices, ints
and int lists, command queue ids, broadcastable shapes.  Each error names the op and the argument.

May import: :mod:`meshnn.errors`, :mod:`meshnn.mesh` and :mod:`meshnn.tensor`.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError, WrongMeshError
from meshnn.mesh.mesh_device import MeshDevice
from meshnn.tensor.storage import DeviceStorage
from meshnn.tensor.tensor import Tensor


def device_input(op: str, name: str, tensor: object) -> Tensor:
    """``tensor`` checked to be a usable device tensor."""
    if not isinstance(tensor, Tensor):
        raise MeshnnTypeError(f"ttnn.{op}: {name} must be a ttnn.Tensor, got {type(tensor).__name__}")
    storage = tensor.storage
    if isinstance(storage, DeviceStorage) and storage.mesh_buffer.is_allocated():
        return tensor
    tensor.check_usable(f"ttnn.{op}: {name}")  # raises for a deallocated tensor or a closed mesh
    raise MeshnnValueError(
        f"ttnn.{op}: {name} (shape {list(tensor.shape)}) is on the host; move it with ttnn.to_device first"
    )


def same_mesh(op: str, named: dict[str, Tensor]) -> MeshDevice:
    """The one mesh every named input lives on, each populating at least the first input's
    devices: the op runs on those (ttnn runs a device operation on the smallest of its inputs'
    coordinate sets, which must nest; meshnn's ops run on the first input's, so a later input may
    populate more devices, not fewer)."""
    first_name, first = next(iter(named.items()))
    storage = first.storage
    mesh = storage.mesh_buffer.device()  # type: ignore[union-attr]
    for name, tensor in named.items():
        other = tensor.storage
        if other is storage:
            continue
        if other.mesh_buffer.mesh_id != mesh.mesh_id:  # type: ignore[union-attr]
            raise WrongMeshError(f"ttnn.{op}: {name} is on another mesh device than {first_name}")
        mine, theirs = other.coords, storage.coords  # type: ignore[union-attr]
        if mine is not theirs and mine != theirs and not set(theirs) <= set(mine):
            only = sorted(set(theirs) - set(mine))[:4]
            raise MeshnnValueError(
                f"ttnn.{op}: {name} populates {len(mine)} devices and {first_name} {len(theirs)} ({name} lacks "
                f"{[str(c) for c in only]}); {name} must populate every device {first_name} populates"
            )
    return mesh


def int_list(op: str, name: str, values: object) -> list[int]:
    """``values`` checked to be a sequence of ints (numpy integers count; bools do not)."""
    if not isinstance(values, Sequence | np.ndarray) or isinstance(values, str):
        raise MeshnnTypeError(f"ttnn.{op}: {name} must be a sequence of ints, got {values!r}")
    items = list(values)
    if not all(isinstance(v, int | np.integer) and not isinstance(v, bool) for v in items):
        raise MeshnnTypeError(f"ttnn.{op}: {name} must hold ints, got {items}")
    return [int(v) for v in items]


def int_arg(op: str, name: str, value: object) -> int:
    """``value`` checked to be an int: a numpy integer counts, and so does any other integer with
    ``__index__`` (a one-element torch integer tensor: ttnn's bindings convert it, as model code
    passes ``H_ * W_`` of a shapes tensor); a bool, a float and a float tensor do not."""
    if isinstance(value, bool | np.bool_) or "bool" in str(getattr(value, "dtype", "")):
        raise MeshnnTypeError(f"ttnn.{op}: {name} must be an int, got {value!r}")
    if isinstance(value, int | np.integer):
        return int(value)
    try:
        return operator.index(value)  # type: ignore[arg-type]
    except (TypeError, ValueError, RuntimeError):
        raise MeshnnTypeError(f"ttnn.{op}: {name} must be an int, got {value!r}") from None


def check_queue_id(op: str, mesh: MeshDevice, queue_id: object) -> int:
    """``queue_id`` checked to name one of ``mesh``'s command queues."""
    if isinstance(queue_id, bool) or not isinstance(queue_id, int | np.integer):
        raise MeshnnTypeError(f"ttnn.{op}: queue_id must be an int, got {queue_id!r}")
    if not 0 <= queue_id < mesh.num_command_queues:
        raise MeshnnValueError(
            f"ttnn.{op}: queue_id {queue_id} is not a command queue of this mesh (it has {mesh.num_command_queues})"
        )
    return int(queue_id)


def broadcast_shape(op: str, a: Sequence[int], b: Sequence[int]) -> tuple[int, ...]:
    if a == b:
        return tuple(a)
    try:
        return tuple(np.broadcast_shapes(tuple(a), tuple(b)))
    except ValueError:
        raise MeshnnValueError(f"ttnn.{op}: shapes {list(a)} and {list(b)} cannot be broadcast together") from None
