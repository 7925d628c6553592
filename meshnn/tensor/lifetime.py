"""A tensor's device memory from allocation to free: the MeshBuffer a spec needs (one Replicated
MeshBuffer sized by the shard spec on every device, as in tt-metal PR #17513), uninitialised device
and zero-filled host tensors (``allocate_tensor_on_device`` / ``_on_host``), the record of the
tensors that view a MeshBuffer (:func:`track_view`: every device tensor is made through
:func:`device_tensor`), and ``ttnn.deallocate``.

Layer: tensor.  Imports errors, mesh, the byte formats (dtypes, layout) and the tensor modules
spec, memory_config, storage, topology and tensor.
"""

from __future__ import annotations

import os
import sys
import weakref
from collections.abc import Sequence

import numpy as np

from meshnn.device.buffer import BufferLayout
from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.host.identity import WeakIdentitySet
from meshnn.mesh import labels
from meshnn.mesh.buffer_config import layout_of
from meshnn.mesh.call_sites import is_meshnns
from meshnn.mesh.coord import MeshCoordinate
from meshnn.mesh.labels import tensor_label
from meshnn.mesh.mesh_buffer import DeviceLocalBufferConfig, MeshBuffer, ReplicatedBufferConfig
from meshnn.mesh.mesh_device import MeshDevice
from meshnn.mesh.observers import CREATE_DEVICE_TENSOR, OBSERVERS, HostOpEvent, host_call
from meshnn.mesh.slab_window import Select
from meshnn.tensor.memory_config import MemoryConfig
from meshnn.tensor.spec import TensorSpec
from meshnn.tensor.storage import DeviceStorage, DistributedHostBuffer, HostBuffer, HostStorage
from meshnn.tensor.tensor import Tensor
from meshnn.tensor.topology import TensorTopology


def device_tensor(
    spec: TensorSpec, buffer: MeshBuffer, coords: Sequence[MeshCoordinate], topology: TensorTopology
) -> Tensor:
    return track_view(
        Tensor.make(spec, DeviceStorage(buffer, coords if type(coords) is tuple else tuple(coords)), topology)
    )


def track_view(tensor: Tensor, buffer: MeshBuffer | None = None) -> Tensor:
    """Record that ``tensor`` views its MeshBuffer, or ``buffer`` (the buffer a narrowed view's
    window is part of): every device tensor must be recorded, or ``deallocate(force=False)`` of
    another view would free the buffer under it.

    The record lives on the buffer (``MeshBuffer.views``): a weak reference to its one view (an
    op's output has one), a :class:`~meshnn.host.identity.WeakIdentitySet` once a second view is
    made.  Weak: a record never keeps a tensor alive."""
    storage = tensor.storage
    if buffer is not None or isinstance(storage, DeviceStorage):
        buffer = buffer or storage.mesh_buffer  # type: ignore[union-attr]
        views = buffer.views
        if views is None:
            buffer.views = weakref.ref(tensor)
        elif type(views) is weakref.ref:
            first = views()
            if first is not tensor:
                every: WeakIdentitySet[Tensor] = WeakIdentitySet()  # (a WeakSet would compare tensors by ==)
                if first is not None:
                    every.add(first)
                every.add(tensor)
                buffer.views = every
        else:
            views.add(tensor)
    return tensor


def handle_copy(tensor: Tensor) -> Tensor:
    """A second handle on ``tensor``'s storage: what ttnn's Python gets when an op returns its input
    (a copy of the C++ ``Tensor``, sharing the input's device memory).  Recorded as a view, so a
    ``deallocate(force=False)`` of either handle keeps the memory while the other lives."""
    return track_view(Tensor.make(tensor.spec, tensor.storage, tensor.tensor_topology()))


def views_of(buffer: MeshBuffer) -> list[Tensor]:
    """The live tensors :func:`track_view` recorded as views of ``buffer``."""
    views = buffer.views
    if views is None:
        return []
    if type(views) is weakref.ref:
        tensor = views()
        return [] if tensor is None else [tensor]
    return list(views)


def _label(buffer: object) -> str | None:
    """A buffer's name in memory reports: the shape and dtype of the first tensor viewing it."""
    views = views_of(buffer)  # type: ignore[arg-type]
    return tensor_label(views[0].shape, views[0].dtype.name) if views else None


labels.register(_label)


def allocate_mesh_buffer(spec: TensorSpec, mesh_device: MeshDevice) -> MeshBuffer:
    """A Replicated MeshBuffer sized by ``spec`` on every device of ``mesh_device``."""
    made = spec._derived.get("mesh_buffer_configs")
    if made is None:
        made = spec._once("mesh_buffer_configs", lambda: _buffer_configs(spec))
    return MeshBuffer.create(made[0], made[1], mesh_device, layout=made[2])


def view_mesh_buffer(spec: TensorSpec, owner: MeshBuffer, address: int, select: Select) -> MeshBuffer:
    """A MeshBuffer laid out by ``spec`` over part of ``owner``'s bytes (``select`` picks them:
    :mod:`meshnn.mesh.slab_window`), at ``address``; it allocates nothing."""
    config, local, layout = _buffer_configs(spec)
    return MeshBuffer.create(config, local, owner.device(), address, layout=layout, within=(owner, select))


def _buffer_configs(spec: TensorSpec) -> tuple[ReplicatedBufferConfig, DeviceLocalBufferConfig, BufferLayout]:
    """The configs of ``spec``'s buffer and their validated layout (made once per spec: they
    depend on the spec alone)."""
    layout = spec.buffer_layout()
    local = DeviceLocalBufferConfig(layout.page_size, layout.buffer_type, layout.memory_layout, layout.shard)
    return ReplicatedBufferConfig(layout.size), local, layout_of(layout.size, local)


def allocate_tensor_on_device(
    spec_or_shape: TensorSpec | Sequence[int],
    dtype: DataType | MeshDevice | None = None,
    layout: Layout | None = None,
    device: MeshDevice | None = None,
    memory_config: MemoryConfig | None = None,
) -> Tensor:
    """An uninitialised device tensor on every device: ``(spec, mesh_device)`` or
    ``(shape, dtype, layout, mesh_device, memory_config=None)``."""
    spec, mesh = _spec_and_device(spec_or_shape, dtype, layout, device, memory_config, "allocate_tensor_on_device")
    with host_call(CREATE_DEVICE_TENSOR, mesh) as made:
        made.tensors = (new_device_tensor(spec, mesh),)
    return made.tensors[0]


def new_device_tensor(spec: TensorSpec, mesh: MeshDevice) -> Tensor:
    """An uninitialised device tensor of ``spec``, replicated on every device of ``mesh`` (no
    graph-capture function of its own: its caller's, ``Tensor::to_device`` or ``create_device_tensor``)."""
    mesh.check_open()
    buffer = allocate_mesh_buffer(spec, mesh)
    return device_tensor(spec, buffer, list(mesh.shape.coords()), TensorTopology.replicated(mesh.shape))


def allocate_tensor_on_host(
    spec_or_shape: TensorSpec | Sequence[int],
    dtype: DataType | MeshDevice | None = None,
    layout: Layout | None = None,
    device: MeshDevice | None = None,
    memory_config: MemoryConfig | None = None,
) -> Tensor:
    """A zero-filled host tensor with a shard per coordinate of ``device``'s mesh."""
    spec, mesh = _spec_and_device(spec_or_shape, dtype, layout, device, memory_config, "allocate_tensor_on_host")
    if spec.compute_packed_buffer_size_bytes() * mesh.get_num_devices() > host_memory_bytes():
        raise MeshnnValueError(
            f"allocate_tensor_on_host: shape {list(spec.shape)} needs {spec.compute_packed_buffer_size_bytes()} B per "
            f"device on {mesh.get_num_devices()} devices, more than this machine's {host_memory_bytes()} B of memory"
        )
    host = DistributedHostBuffer(mesh.shape, is_local=mesh.is_local if mesh.context.world_size > 1 else None)
    for coord in mesh.shape.coords():
        host.emplace_shard(coord, lambda: HostBuffer(np.zeros(spec.compute_packed_buffer_size_bytes(), np.uint8)))
    return Tensor.make(spec, HostStorage(host), TensorTopology.replicated(mesh.shape))


def host_memory_bytes() -> int:
    """The machine's physical memory in bytes: host tensors larger than that are refused."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # not POSIX: a fixed 1 TiB bound
        return 1 << 40


def _spec_and_device(spec_or_shape, dtype, layout, device, memory_config, name):
    if isinstance(spec_or_shape, TensorSpec):
        mesh = dtype if isinstance(dtype, MeshDevice) else device
        spec = spec_or_shape
    else:
        if not isinstance(dtype, DataType) or not isinstance(layout, Layout):
            raise MeshnnTypeError(f"{name}(shape, dtype, layout, mesh_device) needs a DataType and a Layout")
        mesh = device
        spec = TensorSpec(spec_or_shape, dtype, layout, memory_config=memory_config)
    if not isinstance(mesh, MeshDevice):
        raise MeshnnTypeError(f"{name} needs a MeshDevice, got {type(mesh).__name__}")
    return spec, mesh


def caller_site() -> str:
    """``file:line`` of the first frame outside meshnn: where the user made the call."""
    frame = sys._getframe(1)
    while frame is not None and is_meshnns(frame.f_code.co_filename):
        frame = frame.f_back
    return "<unknown>" if frame is None else f"{frame.f_code.co_filename}:{frame.f_lineno}"


def deallocate(tensor: Tensor, force: bool = True) -> None:
    """Free a device tensor's MeshBuffer on every device (a no-op for host tensors).

    ``force=True`` (ttnn's default) frees it even when other tensors view it; ``force=False``
    frees it only when no other live tensor does."""
    if not isinstance(tensor, Tensor):
        raise MeshnnTypeError(f"deallocate needs a ttnn.Tensor, got {type(tensor).__name__}")
    if not isinstance(force, bool):
        raise MeshnnTypeError(f"deallocate: force must be a bool, got {force!r}")
    if isinstance(tensor.storage, HostStorage):
        return
    buffer = tensor.storage.mesh_buffer
    if not buffer.is_allocated():
        return
    if not force:
        others = [t for t in views_of(buffer) if t is not tensor and t.storage.mesh_buffer.is_allocated()]
        if others:
            return
    buffer.deallocated_at = caller_site()  # type: ignore[attr-defined]
    buffer.deallocate()
    if OBSERVERS:
        OBSERVERS.host_op(HostOpEvent("deallocate", buffer.device(), inputs=(tensor,)))
