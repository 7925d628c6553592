"""What the asynchronous (fabric) collectives take beyond the synchronous ones, checked as ttnn
checks them: their global semaphores (``multi_device_global_semaphore``, ``barrier_semaphore``: of
the input's mesh, as many as the op's kernels use), the link options (``num_links``, ``topology``,
``chunks_per_sync``, ``num_workers_per_link``, ``num_buffers_per_channel``, ``subdevice_id``), the
group size (more than one device), a caller's persistent output buffer (live, on the mesh, of the
output's shape, dtype, layout and memory config), and the overloads of a binding
(:func:`bind_overload`).  On the simulated mesh none of these changes a value; each is recorded in
the op's ``attrs``.

May import: :mod:`meshnn.errors`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor`, :mod:`meshnn.ops.checks`
and the collectives' arguments and groups.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError, WrongMeshError
from meshnn.mesh.global_semaphore import GlobalSemaphore, check_semaphore
from meshnn.mesh.mesh_device import MeshDevice
from meshnn.ops.ccl.arguments import Topology, check_subdevice, group_grid, tensor_grid
from meshnn.ops.ccl.groups import group_size
from meshnn.ops.checks import device_input
from meshnn.tensor.spec import TensorSpec
from meshnn.tensor.tensor import Tensor


def semaphores(op: str, name: str, value: object, mesh: MeshDevice, count: int | None) -> tuple[GlobalSemaphore, ...]:
    """``value`` (one GlobalSemaphore or a list of them) checked; ``count``: how many the op needs."""
    items = list(value) if isinstance(value, list | tuple) else [value]
    checked = tuple(check_semaphore(op, name, s, mesh) for s in items)
    if count is not None and len(checked) != count:
        raise MeshnnValueError(
            f"ttnn.{op}: {name} needs {count} semaphores (its kernels use {count}), got {len(checked)}"
        )
    return checked


def optional_semaphore(op: str, name: str, value: object, mesh: MeshDevice) -> GlobalSemaphore | None:
    return None if value is None else check_semaphore(op, name, value, mesh)


def _count(op: str, name: str, value: object) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise MeshnnTypeError(f"ttnn.{op}: {name} must be an int or None, got {value!r}")
    if value < 1:
        raise MeshnnValueError(f"ttnn.{op}: {name} must be positive, got {value}")
    return int(value)


def link_options(op: str, mesh: MeshDevice, options: dict[str, object], *, links_required: bool) -> dict[str, object]:
    """The link options checked (num_links within the worker rows, topology Ring or Linear, the
    chunk, worker and buffer counts positive when given); returned as attrs."""
    links = options.get("num_links")
    if links is None and links_required:
        raise MeshnnTypeError(f"ttnn.{op}: num_links must be an int, got None")
    links = _count(op, "num_links", links)
    rows = mesh.compute_with_storage_grid_size().y
    if links is not None and links > rows:
        raise MeshnnValueError(
            f"ttnn.{op}: num_links {links} exceeds the {rows} worker rows of the compute grid "
            "(the workers of each link are laid out over rows)"
        )
    topology = options.get("topology")
    if topology is not None and topology not in (Topology.Ring, Topology.Linear):
        raise MeshnnValueError(f"ttnn.{op}: topology must be ttnn.Topology.Ring or Linear, got {topology!r}")
    for name in ("chunks_per_sync", "chunk_width_in_mm_blocks", "num_workers_per_link", "num_buffers_per_channel"):
        _count(op, name, options.get(name))
    check_subdevice(op, mesh, options.get("subdevice_id"))
    return dict(options)


def ring_size(op: str, mesh: MeshDevice, cluster_axis: object, tensor: Tensor | None = None) -> int:
    """Devices in a group along ``cluster_axis`` (of the devices ``tensor`` populates, when given:
    :func:`~meshnn.ops.ccl.arguments.tensor_grid`); an async collective needs more than one."""
    if tensor is None:
        shape, axis = group_grid(mesh, cluster_axis, op)  # type: ignore[arg-type]
    else:
        shape, axis = tensor_grid(op, tensor, mesh, cluster_axis)  # type: ignore[arg-type]
    n = group_size(shape, axis)
    if n < 2:
        where = "the mesh" if axis is None else f"cluster_axis {axis} of the {list(shape)} mesh"
        raise MeshnnValueError(f"ttnn.{op} only works for more than one device; {where} has {n}")
    return n


def persistent(op: str, name: str, value: object, mesh: MeshDevice, spec: TensorSpec) -> Tensor:
    """A caller's persistent buffer: a live device tensor of ``mesh`` that the output of ``spec``
    is written into, at its own address (same shape, dtype, layout and memory config)."""
    tensor = device_input(op, name, value)
    if tensor.storage.mesh_buffer.mesh_id != mesh.mesh_id:  # type: ignore[union-attr]
        raise WrongMeshError(f"ttnn.{op}: {name} is on another mesh device than input_tensor")
    have = tensor.spec
    for what, mine, theirs in (
        ("layout", have.layout, spec.layout),
        ("dtype", have.dtype, spec.dtype),
        ("shape", tuple(have.padded_shape), tuple(spec.padded_shape)),
        ("memory config", have.memory_config, spec.memory_config),
    ):
        if mine != theirs:
            raise MeshnnValueError(f"ttnn.{op}: {name}'s {what} should be the output's {theirs}, but has {mine}")
    if tuple(have.shape) != tuple(spec.shape):
        raise MeshnnValueError(f"ttnn.{op}: {name} has shape {list(have.shape)}; the output is {list(spec.shape)}")
    return tensor


def bind_overload(
    op: str, overloads: Sequence[tuple[Callable, Callable[[dict], bool]]], args: tuple, kwargs: dict
) -> tuple[int, dict[str, object]]:
    """The first of ``overloads`` (a stub giving the signature, and a test of the bound arguments)
    that takes ``args`` and ``kwargs``, as a nanobind binding resolves its overloads: its index and
    its arguments with the defaults applied."""
    for index, (stub, accepts) in enumerate(overloads):
        try:
            bound = inspect.signature(stub).bind(*args, **kwargs)
        except TypeError:
            continue
        bound.apply_defaults()
        if accepts(bound.arguments):
            return index, dict(bound.arguments)
    forms = "; ".join(f"{op}{inspect.signature(stub)}" for stub, _ in overloads)
    raise MeshnnTypeError(f"ttnn.{op}: incompatible function arguments; the supported forms are: {forms}")


def same_mesh_device(op: str, mesh_device: object, mesh: MeshDevice) -> None:
    """``mesh_device`` checked to be the mesh the input lives on."""
    if not isinstance(mesh_device, MeshDevice):
        raise MeshnnTypeError(f"ttnn.{op}: mesh_device must be a MeshDevice, got {type(mesh_device).__name__}")
    if mesh_device.mesh_id != mesh.mesh_id:
        raise WrongMeshError(f"ttnn.{op}: mesh_device is not the mesh device input_tensor lives on")
