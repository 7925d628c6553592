"""Creating tensors (``ttnn.zeros``, ``ones``, ``full``, ``empty``, ``arange``; the ``*_like`` forms are in
:mod:`meshnn.ops.creation_like`) and the shape helpers ``squeeze`` / ``unsqueeze``.

None of these runs a device program in tt-metal (``creation.cpp``): ``full`` / ``zeros`` / ``ones`` /
``arange`` on a device build the values on the host and write them (``Tensor::to_device``; into
``optional_tensor``: ``copy_to_device``), ``empty`` only allocates; their registry entries say so
(``runs``), and the perf capture records a host write or nothing, never a device row.

On a mesh device a created tensor is replicated: every device holds the whole tensor, as
``from_torch`` without a mapper gives.  Defaults are ttnn's: bfloat16, ROW_MAJOR, host.

May import: :mod:`meshnn.errors`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor` and the ops' checks,
outputs and element-wise kernel modules.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.mesh.mesh_device import MeshDevice
from meshnn.mesh.observers import COPY_TO_DEVICE, CREATE_DEVICE_TENSOR, TO_DEVICE, host_call
from meshnn.mesh.op_keywords import QUEUE_ID, ttnn_keywords
from meshnn.ops import goldens
from meshnn.ops.checks import device_input
from meshnn.ops.filled import fill_device_tensor
from meshnn.ops.registry import DeviceWork, OpKind, register
from meshnn.perf.desc import OpFamily
from meshnn.tensor.copies import copy_host_to_device_tensor
from meshnn.tensor.lifetime import deallocate, host_memory_bytes, new_device_tensor
from meshnn.tensor.reshape import reshape
from meshnn.tensor.spec import MemoryConfig, TensorSpec
from meshnn.tensor.tensor import Tensor

MAX_CREATED_VALUES = 1 << 48  # more values than any device holds: refused before anything else


def _shape(op: str, shape: object) -> tuple[int, ...]:
    if isinstance(shape, str) or not isinstance(shape, Sequence | np.ndarray):
        raise MeshnnTypeError(f"ttnn.{op}: shape must be a sequence of ints, got {shape!r}")
    dims = tuple(shape)
    if not all(isinstance(d, int | np.integer) and not isinstance(d, bool) for d in dims):
        raise MeshnnTypeError(f"ttnn.{op}: shape must hold ints, got {list(dims)}")
    if not all(d >= 0 for d in dims):
        raise MeshnnValueError(f"ttnn.{op}: shape must hold non-negative ints, got {list(dims)}")
    if float(np.prod(dims, dtype=np.float64)) > MAX_CREATED_VALUES:
        raise MeshnnValueError(f"ttnn.{op}: shape {list(dims)} is absurdly large")
    return tuple(int(d) for d in dims)


def _check_host_memory(op: str, dims: tuple[int, ...]) -> None:
    """Refuse values that would not fit in this machine's memory (before numpy tries)."""
    if float(np.prod(dims, dtype=np.float64)) * 4 > host_memory_bytes():
        raise MeshnnValueError(
            f"ttnn.{op}: shape {list(dims)} is absurdly large: its float32 values alone need more than this "
            f"machine's {host_memory_bytes() / 2**30:.1f} GiB of memory"
        )


def _kinds(op: str, dtype: object, layout: object, device: object) -> tuple[DataType, Layout]:
    dtype = DataType.BFLOAT16 if dtype is None else dtype
    if not isinstance(dtype, DataType):
        raise MeshnnTypeError(f"ttnn.{op}: dtype must be a ttnn DataType, got {dtype!r}")
    layout = (Layout.TILE if dtype.is_block_float else Layout.ROW_MAJOR) if layout is None else layout
    if not isinstance(layout, Layout):
        raise MeshnnTypeError(f"ttnn.{op}: layout must be a ttnn Layout, got {layout!r}")
    if device is not None and not isinstance(device, MeshDevice):
        raise MeshnnTypeError(f"ttnn.{op}: device must be a MeshDevice, got {type(device).__name__}")
    return dtype, layout


def _made(values: np.ndarray, dtype: DataType, layout: Layout, device, memory_config) -> Tensor:
    return Tensor(values, dtype, device=device, layout=layout, memory_config=memory_config)


@register(
    kind=OpKind.CREATION,
    family=OpFamily.COPY,
    golden=goldens.full,
    modelled=False,
    runs=DeviceWork.HOST_WRITE,
)
@ttnn_keywords(queue_id=QUEUE_ID)
def full(
    shape: Sequence[int],
    fill_value: float,
    dtype: DataType | None = None,
    layout: Layout | None = None,
    device: MeshDevice | None = None,
    memory_config: MemoryConfig | None = None,
    optional_tensor: Tensor | None = None,
) -> Tensor:
    """``ttnn.full``: a tensor of ``shape`` holding ``fill_value`` (rounded into ``dtype``); with
    ``optional_tensor``, that device tensor is filled instead (its shape, dtype, layout and memory
    config win) and returned."""
    if optional_tensor is not None:
        return _fill_into("full", optional_tensor, fill_value)
    return _full("full", shape, fill_value, dtype, layout, device, memory_config)


def _full(op: str, shape, fill_value, dtype, layout, device, memory_config, inputs: Sequence[Tensor] = ()) -> Tensor:
    """``ttnn.<op>`` of the full family (``full``, ``zeros``, ``ones``, the ``*_like`` forms' host path;
    ``inputs``: the tensor a ``*_like`` form was given, for graph capture)."""
    dims = _shape(op, shape)
    dtype, layout = _kinds(op, dtype, layout, device)
    if isinstance(fill_value, bool) or not isinstance(fill_value, int | float | np.number):
        raise MeshnnTypeError(f"ttnn.{op}: fill_value must be a number, got {fill_value!r}")
    kind = np.float32 if dtype.is_float else dtype.storage_dtype
    if device is None:
        _check_host_memory(op, dims)
        return _made(np.full(dims, fill_value, kind), dtype, layout, device, memory_config)
    constant = np.array(fill_value).astype(kind)[()]  # as np.full(dims, fill_value, kind) holds it
    values = lambda: np.full(dims, fill_value, kind)  # noqa: E731
    return _filled(op, values, dims, dtype, layout, device, memory_config, constant, inputs)


def _fill_into(op: str, target: object, fill_value: object, inputs: Sequence[Tensor] = ()) -> Tensor:
    """``fill_value`` written into the device tensor ``target`` (no new allocation): ttnn builds the
    values on the host and runs ``tt::tt_metal::copy_to_device`` (a host write, no device program);
    graph capture sees ``ttnn::<op>`` around it."""
    tensor = device_input(op, "optional_tensor", target)
    if isinstance(fill_value, bool) or not isinstance(fill_value, int | float | np.number):
        raise MeshnnTypeError(f"ttnn.{op}: fill_value must be a number, got {fill_value!r}")
    kind = np.float32 if tensor.dtype.is_float else tensor.dtype.storage_dtype
    values = np.full(tuple(tensor.shape), fill_value, kind)
    host = Tensor(values, tensor.dtype, layout=tensor.layout, tile=tensor.tile)
    mesh = tensor.device()
    with host_call(f"ttnn::{op}", mesh, inputs) as made, host_call(COPY_TO_DEVICE, mesh, (host, tensor)) as put:
        copy_host_to_device_tensor(host, tensor)
        put.tensors = made.tensors = (tensor,)
    return tensor


def _filled(
    op: str, values, dims, dtype: DataType, layout: Layout, device: MeshDevice, memory_config, constant=None, inputs=()
) -> Tensor:
    """A replicated device tensor of ``values()``: the MeshBuffer is allocated first, so a tensor
    that cannot fit raises OutOfMemoryError before any host memory is spent on its values; a
    ``constant`` (every value the same) is made in device memory (:mod:`meshnn.ops.filled`).
    Graph capture sees ttnn's ``ttnn::<op>`` around its ``Tensor::to_device``."""
    with host_call(f"ttnn::{op}", device, inputs) as made, host_call(TO_DEVICE, device) as put:
        put.tensors = made.tensors = (_written(op, values, dims, dtype, layout, device, memory_config, constant),)
    return made.tensors[0]


def _written(op: str, values, dims, dtype, layout, device: MeshDevice, memory_config, constant) -> Tensor:
    """:func:`_filled`'s tensor: allocated, then its values written (or made on the device)."""
    target = new_device_tensor(TensorSpec(dims, dtype, layout, memory_config=memory_config), device)
    if not device.executes:
        return target  # a planning mesh: the values are neither made nor written
    try:
        if constant is not None and fill_device_tensor(target, constant):  # made on the device: no host copy
            return target
        _check_host_memory(op, dims)
        host = Tensor(values(), dtype, layout=layout)
        if target.spec.explicit_padded_shape is not None:  # a sharded row-major width padded to its shards
            host = host.pad(list(target.padded_shape), [0] * len(dims), 0)
        copy_host_to_device_tensor(host, target)
    except BaseException:
        deallocate(target)
        raise
    return target


@register(
    kind=OpKind.CREATION,
    family=OpFamily.COPY,
    golden=goldens.zeros,
    modelled=False,
    runs=DeviceWork.HOST_WRITE,
)
def zeros(shape, dtype=None, layout=None, device=None, memory_config=None) -> Tensor:
    """``ttnn.zeros``."""
    return _full("zeros", shape, 0.0, dtype, layout, device, memory_config)


@register(
    kind=OpKind.CREATION,
    family=OpFamily.COPY,
    golden=goldens.ones,
    modelled=False,
    runs=DeviceWork.HOST_WRITE,
)
def ones(shape, dtype=None, layout=None, device=None, memory_config=None) -> Tensor:
    """``ttnn.ones``."""
    return _full("ones", shape, 1.0, dtype, layout, device, memory_config)


@register(
    kind=OpKind.CREATION,
    family=OpFamily.COPY,
    golden=goldens.empty,
    modelled=False,
    runs=DeviceWork.ALLOCATION,
)
def empty(shape, dtype=None, layout=None, device=None, memory_config=None) -> Tensor:
    """``ttnn.empty``: an uninitialised device tensor (a zero host tensor without a device)."""
    return _empty("empty", shape, dtype, layout, device, memory_config)


def _empty(op: str, shape, dtype, layout, device, memory_config, inputs: Sequence[Tensor] = ()) -> Tensor:
    """``ttnn.<op>`` (``empty``, ``empty_like``); graph capture sees ttnn's ``ttnn::<op>`` around
    its ``tt::tt_metal::create_device_tensor``."""
    dims = _shape(op, shape)
    dtype, layout = _kinds(op, dtype, layout, device)
    if device is None:
        return _full(op, dims, 0.0, dtype, layout, None, None)
    spec = TensorSpec(dims, dtype, layout, memory_config=memory_config)
    with host_call(f"ttnn::{op}", device, inputs) as made, host_call(CREATE_DEVICE_TENSOR, device) as created:
        created.tensors = made.tensors = (new_device_tensor(spec, device),)
    return made.tensors[0]


@register(kind=OpKind.CREATION, family=OpFamily.COPY, modelled=False, runs=DeviceWork.HOST_WRITE)
def from_buffer(buffer, shape, dtype, device, layout=None, memory_config=None) -> Tensor:
    """``ttnn.from_buffer``: a device tensor of ``shape`` holding the flat list ``buffer`` (integers
    exact), ROW_MAJOR unless told; a block-float dtype is refused, as ttnn refuses it."""
    unreadable = isinstance(dtype, DataType) and (dtype.is_block_float or dtype is DataType.FP8_E4M3)
    if dtype is DataType.INVALID or unreadable:
        raise MeshnnValueError(f"ttnn.from_buffer: Unreachable: a buffer cannot be read as {dtype!r}")
    dims = _shape("from_buffer", shape)
    dtype, layout = _kinds("from_buffer", dtype, layout, device)
    if device is None:
        raise MeshnnTypeError("ttnn.from_buffer: device is required (a MeshDevice)")
    if isinstance(buffer, str) or not isinstance(buffer, Sequence | np.ndarray):
        raise MeshnnTypeError(f"ttnn.from_buffer: buffer must be a flat list of values, got {type(buffer).__name__}")
    host = Tensor(list(buffer), list(dims), dtype, layout)
    with host_call("ttnn::from_buffer", device) as made:  # around its Tensor::to_device, as ttnn's graph has it
        made.tensors = (host.to(device, memory_config),)
    return made.tensors[0]


@register(
    kind=OpKind.CREATION,
    family=OpFamily.COPY,
    golden=goldens.arange,
    modelled=False,
    runs=DeviceWork.HOST_WRITE,
)
def arange(
    start: float = 0,
    end: float | None = None,
    step: float = 1,
    dtype: DataType | None = None,
    device: MeshDevice | None = None,
    layout: Layout = Layout.ROW_MAJOR,
    memory_config: MemoryConfig | None = None,
) -> Tensor:
    """``ttnn.arange(start, end, step)`` (``arange(end)`` counts from 0): a 1-D tensor."""
    if end is None:
        start, end = 0, start
    for name, value in (("start", start), ("end", end), ("step", step)):
        if isinstance(value, bool) or not isinstance(value, int | float | np.number):
            raise MeshnnTypeError(f"ttnn.arange: {name} must be a number, got {value!r}")
    if step == 0:
        raise MeshnnValueError("ttnn.arange: step must not be 0")
    length = float(np.ceil((end - start) / step))
    if not length <= MAX_CREATED_VALUES:
        raise MeshnnValueError(f"ttnn.arange: start {start}, end {end}, step {step} give an absurd length")
    dims = _shape("arange", (max(0, int(length)),))
    dtype, layout = _kinds("arange", dtype, layout, device)
    kind = np.float32 if dtype.is_float else dtype.storage_dtype

    def values() -> np.ndarray:
        return (start + step * np.arange(dims[0], dtype=np.float64)).astype(kind)

    if device is None:
        _check_host_memory("arange", dims)
        return _made(values(), dtype, layout, device, memory_config)
    return _filled("arange", values, dims, dtype, layout, device, memory_config)


def _axis(op: str, dim: object, rank: int) -> int:
    if isinstance(dim, bool) or not isinstance(dim, int | np.integer):
        raise MeshnnTypeError(f"ttnn.{op}: dim must be an int, got {dim!r}")
    if not -rank <= dim < rank:
        raise MeshnnValueError(f"ttnn.{op}: dim {dim!r} is out of range for a tensor of rank {rank}")
    return dim % rank


@register(
    kind=OpKind.DATA_MOVEMENT,
    family=OpFamily.COPY,
    device_operation="ReshapeViewDeviceOperation",
    golden=goldens.reshape,
    modelled=False,
)
def squeeze(input_tensor: Tensor, dim: int | Sequence[int] | None = None) -> Tensor:
    """``ttnn.squeeze``: drop the dims of size 1 among ``dim`` (an int, a list of them, or every dim
    when None), as torch.squeeze; a dim of another size is kept; a tensor left as it was is returned."""
    if not isinstance(input_tensor, Tensor):
        raise MeshnnTypeError(f"ttnn.squeeze: input_tensor must be a ttnn.Tensor, got {type(input_tensor).__name__}")
    shape = list(input_tensor.shape)
    dims = list(range(len(shape))) if dim is None else [dim] if not isinstance(dim, Sequence) else list(dim)
    if not shape:  # rank 0: dims of [] / 0 / -1 only, as torch
        if dims and (len(dims) > 1 or dims[0] not in (0, -1)):
            raise MeshnnValueError(
                f"ttnn.squeeze: Dimension out of range (expected to be of [-1, 0], but got {dims[0]})"
            )
        return input_tensor
    axes = [_axis("squeeze", d, len(shape)) for d in dims]
    if len(set(axes)) != len(axes):
        raise MeshnnValueError(f"ttnn.squeeze: a dim appears multiple times in the list of dims {dims}")
    kept = [size for i, size in enumerate(shape) if not (i in axes and size == 1)]
    return input_tensor if kept == shape else reshape(input_tensor, kept)


@register(
    kind=OpKind.DATA_MOVEMENT,
    family=OpFamily.COPY,
    device_operation="ReshapeViewDeviceOperation",
    golden=goldens.reshape,
    modelled=False,
)
def unsqueeze(input_tensor: Tensor, dim: int) -> Tensor:
    """``ttnn.unsqueeze``: insert a dimension of size 1 at ``dim``."""
    if not isinstance(input_tensor, Tensor):
        raise MeshnnTypeError(f"ttnn.unsqueeze: input_tensor must be a ttnn.Tensor, got {type(input_tensor).__name__}")
    shape = list(input_tensor.shape)
    axis = _axis("unsqueeze", dim, len(shape) + 1)
    return reshape(input_tensor, [*shape[:axis], 1, *shape[axis:]])
