"""``ttnn.full_like``, ``zeros_like``, ``ones_like`` and ``empty_like``: a tensor like another one.

The ``full`` forms choose as tt-metal's ``full_like_impl`` (``ttnn/cpp/ttnn/operations/creation/
creation.cpp``, the same in ttnn 0.81.1): a device tensor in TILE layout, asked for in TILE, whose result
dtype (``dtype``, else the tensor's; ``optional_tensor``'s when given) is bfloat16, bfloat8_b or float32 is
filled on the device by ``ttnn.fill`` (a UnaryDeviceOperation: its output has the tensor's shape and dtype,
``memory_config`` or the tensor's, as fill's output has whatever ``dtype`` asked); any other is built on
the host and written, as ``ttnn.full`` of the tensor's shape (``Tensor::to_device``, or ``copy_to_device``
into ``optional_tensor``: a host write, no device program), in the tensor's memory config unless given
when it is a device tensor.  ``empty_like`` only allocates (``create_device_tensor``).  Graph capture sees
``ttnn::<op>`` around what it ran.

May import: :mod:`meshnn.errors`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor`, the op registry and
:mod:`meshnn.ops.creation`.
"""

from __future__ import annotations

import numpy as np

from meshnn.errors import MeshnnTypeError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.mesh.observers import host_call
from meshnn.mesh.op_keywords import QUEUE_ID, ttnn_keywords
from meshnn.ops import goldens
from meshnn.ops.creation import _empty, _fill_into, _full
from meshnn.ops.registry import DeviceWork, OpKind, lookup, register
from meshnn.perf.desc import OpFamily
from meshnn.tensor.tensor import Tensor, check_tensor

FILLED_ON_DEVICE = frozenset({DataType.BFLOAT16, DataType.BFLOAT8_B, DataType.FLOAT32})
"""The result dtypes ``full_like`` of a TILE device tensor fills on the device (``ttnn.fill``)."""


def _like(op: str, tensor: object, dtype, layout, device, memory_config):
    """``tensor``'s shape, and the dtype, layout, device and memory config given or ``tensor``'s (a device
    tensor's device and memory config; a host tensor's: none, ttnn's defaults)."""
    if not isinstance(tensor, Tensor):
        raise MeshnnTypeError(f"ttnn.{op}: tensor must be a ttnn.Tensor, got {type(tensor).__name__}")
    tensor.check_usable("tensor")
    if tensor.storage_type().name == "DEVICE":
        device = tensor.device() if device is None else device
        memory_config = tensor.memory_config() if memory_config is None else memory_config
    return tuple(tensor.shape), dtype or tensor.dtype, layout or tensor.layout, device, memory_config


def _filled_on_device(tensor: Tensor, dtype: DataType, layout: Layout) -> bool:
    """Whether tt-metal fills a ``*_like`` of ``tensor`` on the device (the ``ttnn.fill`` program)."""
    on_device = tensor.storage_type().name == "DEVICE"
    return on_device and tensor.layout is Layout.TILE and layout is Layout.TILE and dtype in FILLED_ON_DEVICE


def _full_like(op: str, tensor, fill_value, dtype, layout, device, memory_config, optional_tensor=None) -> Tensor:
    """``ttnn.<op>`` of the ``full_like`` family: ``ttnn.fill`` on the device, or a host write."""
    given_config = memory_config
    shape, dtype, layout, device, memory_config = _like(op, tensor, dtype, layout, device, memory_config)
    if optional_tensor is not None:
        given = check_tensor(optional_tensor, f"ttnn.{op}: optional_tensor")
        dtype, layout = given.dtype, given.layout
    if _filled_on_device(tensor, dtype, layout):
        if isinstance(fill_value, bool) or not isinstance(fill_value, int | float | np.number):
            raise MeshnnTypeError(f"ttnn.{op}: fill_value must be a number, got {fill_value!r}")
        fill = lookup("fill").function
        with host_call(f"ttnn::{op}", tensor.device(), (tensor,)) as made:
            made.tensors = (fill(tensor, fill_value, memory_config=given_config, output_tensor=optional_tensor),)
        return made.tensors[0]
    if optional_tensor is not None:
        return _fill_into(op, optional_tensor, fill_value, (tensor,))
    return _full(op, shape, fill_value, dtype, layout, device, memory_config, (tensor,))


@register(kind=OpKind.CREATION, family=OpFamily.COPY, golden=goldens.full_like, runs=DeviceWork.HOST_WRITE)
@ttnn_keywords(queue_id=QUEUE_ID)
def full_like(
    tensor, fill_value, dtype=None, layout=None, device=None, memory_config=None, optional_tensor=None
) -> Tensor:
    """``ttnn.full_like``: ``tensor``'s shape, dtype, layout and device unless given (into
    ``optional_tensor`` when given); on the device by ``ttnn.fill`` where tt-metal fills it there."""
    return _full_like("full_like", tensor, fill_value, dtype, layout, device, memory_config, optional_tensor)


@register(kind=OpKind.CREATION, family=OpFamily.COPY, golden=goldens.zeros_like, runs=DeviceWork.HOST_WRITE)
def zeros_like(tensor, dtype=None, layout=None, device=None, memory_config=None) -> Tensor:
    """``ttnn.zeros_like`` (``full_like`` of 0)."""
    return _full_like("zeros_like", tensor, 0.0, dtype, layout, device, memory_config)


@register(kind=OpKind.CREATION, family=OpFamily.COPY, golden=goldens.ones_like, runs=DeviceWork.HOST_WRITE)
def ones_like(tensor, dtype=None, layout=None, device=None, memory_config=None) -> Tensor:
    """``ttnn.ones_like`` (``full_like`` of 1)."""
    return _full_like("ones_like", tensor, 1.0, dtype, layout, device, memory_config)


@register(kind=OpKind.CREATION, family=OpFamily.COPY, golden=goldens.empty_like, runs=DeviceWork.ALLOCATION)
def empty_like(tensor, dtype=None, layout=None, device=None, memory_config=None) -> Tensor:
    """``ttnn.empty_like``: an uninitialised tensor like ``tensor`` (allocated, nothing written)."""
    shape, dtype, layout, device, memory_config = _like("empty_like", tensor, dtype, layout, device, memory_config)
    return _empty("empty_like", shape, dtype, layout, device, memory_config, (tensor,))
