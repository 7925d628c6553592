"""The rows of a ttnn report database, made from meshes and tensors.

Column meanings are ttnn's (tt-metal's report writer and ttnn-visualizer's reader):

- ``devices``: one row per device of a mesh, the figures of ``ttnn.reports.get_device_info``;
- ``tensors``: shape / dtype / layout / memory config as ttnn's Python texts, the device and
  address of the first device holding it (NULL for a host tensor), ``buffer_type`` as ttnn's
  BufferType value (0 DRAM, 1 L1, ...); ``device_tensors`` gives the address on each device (the
  same on all of them: lock-step);
- ``buffers``: after each op, every live buffer of every mesh the report has seen, once per device
  of its mesh: ``max_size_per_bank`` is ``ceil(pages / banks) * page_size`` (interleaved) or
  ``pages per shard * page_size`` (sharded), ``buffer_layout`` the TensorMemoryLayout value;
- ``buffer_pages`` (``enable_detailed_buffer_report``): every page of every live L1 buffer, with its
  core, bank and address.  L1 bank ``i`` is compute core ``(i mod x, i div x)`` of the device's
  compute grid (one bank per core), as meshnn's allocator lays them out.

Layers: imports the device layer's buffer types, the mesh layer's ``DeviceInfo`` and the capture layer's
tensor helpers and op names.
"""

from __future__ import annotations

import dataclasses
import datetime
import math
import traceback
from collections.abc import Iterable
from typing import Any

from meshnn.capture.op_names import python_name
from meshnn.capture.tensors import mesh_buffer_of, shape_text, tensor_id
from meshnn.device.buffer import BufferType
from meshnn.mesh.reports import DeviceInfo

DEVICE_COLUMNS = tuple(f.name for f in dataclasses.fields(DeviceInfo))
"""The ``devices`` table's columns after ``device_id``: ``ttnn.reports.DeviceInfo``'s fields, in order."""


def device_rows(mesh: Any) -> list[tuple]:
    """One ``devices`` row per device of ``mesh`` (every device of a mesh is alike)."""
    info = mesh.allocator.device_info()
    return [(device_id, *(info[c] for c in DEVICE_COLUMNS)) for device_id in mesh.get_device_ids()]


def tensor_row(tensor: Any) -> tuple:
    """The ``tensors`` row of ``tensor``."""
    buffer = mesh_buffer_of(tensor)
    head = (tensor_id(tensor), shape_text(tensor), str(tensor.dtype), str(tensor.layout))
    if buffer is None:
        return (*head, None, None, None, None)
    device = buffer.device().get_device_id(tensor.storage.coords[0])
    return (*head, repr(tensor.memory_config()), device, buffer.address(), buffer.buffer_type().value)


def device_tensor_rows(tensor: Any) -> list[tuple]:
    """The ``device_tensors`` rows of ``tensor``: its address on each device that holds it."""
    buffer = mesh_buffer_of(tensor)
    if buffer is None:
        return []
    mesh = buffer.device()
    return [(tensor_id(tensor), mesh.get_device_id(c), buffer.address()) for c in tensor.storage.coords]


def _max_size_per_bank(mesh: Any, layout: Any) -> int:
    if layout.shard is not None:
        return layout.shard.pages_per_core * layout.page_size
    banks = max(mesh.allocator.manager(layout.buffer_type).num_banks, 1)
    return math.ceil(layout.num_pages / banks) * layout.page_size


def own_live_buffers(meshes: Iterable[Any]) -> list[tuple[Any, Any]]:
    """(mesh, buffer) for every live buffer that each open mesh itself allocated."""
    found = []
    for mesh in meshes:
        if mesh.is_open():
            found += [(mesh, b) for b in mesh.live_buffers() if b.mesh_id == mesh.mesh_id]
    return found


def buffer_rows(operation_id: int, meshes: Iterable[Any]) -> list[tuple]:
    """The ``buffers`` snapshot after operation ``operation_id``."""
    rows = []
    for mesh, buffer in own_live_buffers(meshes):
        layout = buffer.layout
        size = _max_size_per_bank(mesh, layout)
        kind, memory = layout.buffer_type.value, layout.memory_layout.value
        rows += [(operation_id, d, buffer.address(), size, kind, memory) for d in mesh.get_device_ids()]
    return rows


def _page_rows(operation_id: int, mesh: Any, buffer: Any) -> list[tuple]:
    grid_x = mesh.system.compute_grid[0]
    view = buffer.get_device_buffer(mesh.local[0])
    layout = buffer.layout
    pages = []
    for page in range(layout.num_pages):
        where = view.page_location(page)
        if where.core is not None:
            x, y = where.core.x, where.core.y
            bank = y * grid_x + x
        else:
            bank = where.bank_id
            x, y = bank % grid_x, bank // grid_x
        pages.append((y, x, bank, page, where.address, layout.page_size))
    kind = layout.buffer_type.value
    return [(operation_id, d, buffer.address(), *page, kind) for d in mesh.get_device_ids() for page in pages]


def buffer_page_rows(operation_id: int, meshes: Iterable[Any]) -> list[tuple]:
    """The ``buffer_pages`` rows after operation ``operation_id``: every page of every live L1 buffer."""
    rows = []
    for mesh, buffer in own_live_buffers(meshes):
        if buffer.buffer_type() is BufferType.L1 and mesh.local:
            rows += _page_rows(operation_id, mesh, buffer)
    return rows


def error_row(operation_id: int, op: str, error: BaseException) -> tuple:
    """The ``errors`` row of an operation that raised ``error``, as ttnn's writer fills it: the
    operation's Python name, the error's type as ttnn's Python sees it (the first builtin class:
    meshnn's errors are RuntimeErrors, as ttnn's C++ exceptions are), its message, the traceback
    and the UTC time."""
    kind = next(c.__name__ for c in type(error).__mro__ if c.__module__ == "builtins")
    trace = "".join(traceback.format_exception(error))
    now = datetime.datetime.now(datetime.UTC).isoformat()
    return (operation_id, python_name(op), kind, str(error), trace, now)
