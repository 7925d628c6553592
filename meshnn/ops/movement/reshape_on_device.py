"""``ttnn.reshape_on_device(input_tensor, W, Z, Y, X, *, memory_config=None)``: tt-metal's older
four-dim reshape (the ``tt_lib`` one that models of 2023-24 still call).

It follows ttnn's dispatch in order: a reshape that keeps the last padded dim is a view of the same
bytes (ttnn calls ``experimental.view``; meshnn moves data only where the tiles' rows would change,
which ttnn's view would read wrong); a host input is refused; a shape whose padded shape is the
input's own is the input (a clone when ``memory_config`` differs); otherwise the reshape device
operation writes a new interleaved tensor in ``memory_config`` (the input's by default), after
ttnn's checks: BFLOAT16 or FLOAT32, TILE volume a whole number of tiles, ROW_MAJOR widths a
multiple of 8 elements (ttnn routes a narrow bfloat16 ROW_MAJOR reshape through the host instead).
Values are always the input's logical values in row-major order under the new shape.

May import: :mod:`meshnn.errors`, :mod:`meshnn.formats`, :mod:`meshnn.tensor` and the ops' checks,
registry and data-movement modules.
"""

from __future__ import annotations

import math

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.ops import goldens
from meshnn.ops.checks import device_input
from meshnn.ops.data_movement import clone
from meshnn.ops.registry import OpKind, register
from meshnn.perf.desc import OpFamily
from meshnn.tensor.reshape import is_view_reshape, reshape
from meshnn.tensor.spec import MemoryConfig, TensorMemoryLayout
from meshnn.tensor.tensor import Tensor

_TILE = 32
_ROW_MAJOR_WIDTH = 8  # elements: the row-major program moves sticks of whole 16-byte words


def _shape(tensor: Tensor, dims: tuple[int, ...]) -> tuple[int, int, int, int]:
    """W, Z, Y, X with one -1 inferred from the input's logical volume (ttnn's
    ``infer_dims_for_reshape``)."""
    for name, dim in zip("WZYX", dims, strict=True):
        if isinstance(dim, bool) or not isinstance(dim, int):
            raise MeshnnTypeError(f"ttnn.reshape_on_device: {name} must be an int, got {dim!r}")
        if dim < -1 or dim == 0:
            raise MeshnnValueError(f"ttnn.reshape_on_device: {name} must be positive or -1, got {dim}")
    volume = tensor.spec.logical_volume()
    known = math.prod(d for d in dims if d != -1)
    if dims.count(-1) > 1:
        raise MeshnnValueError(f"ttnn.reshape_on_device: only one dim may be -1, got {list(dims)}")
    if (-1 in dims and volume % known) or (-1 not in dims and known != volume):
        raise MeshnnValueError(
            f"ttnn.reshape_on_device: [W, Z, Y, X] = {list(dims)} does not hold the {volume} elements of "
            f"input_tensor {list(tensor.shape)}"
        )
    return tuple(volume // known if d == -1 else d for d in dims)  # type: ignore[return-value]


def _padded_last(tensor: Tensor) -> int:
    return int(tensor.spec.padded_shape[-1])


def _device_checks(tensor: Tensor, shape: tuple[int, ...], memory_config: MemoryConfig) -> None:
    """The reshape device operation's own checks (ttnn's validate, in its order)."""
    op = "ttnn.reshape_on_device"
    if tensor.dtype not in (DataType.BFLOAT16, DataType.FLOAT32):
        raise MeshnnValueError(f"{op}: input dtype must be BFLOAT16 or FLOAT32, got {tensor.dtype}")
    if tensor.memory_config().memory_layout is not TensorMemoryLayout.INTERLEAVED:
        raise MeshnnValueError(f"{op}: the input is sharded; use ttnn.reshape for sharded inputs")
    if memory_config.memory_layout is not TensorMemoryLayout.INTERLEAVED:
        raise MeshnnValueError(f"{op}: the output memory config must be interleaved (sharding is not supported)")
    if tensor.layout is Layout.TILE:
        if math.prod(tensor.spec.padded_shape) % (_TILE * _TILE):
            raise MeshnnValueError(f"{op}: the input's physical volume is not a whole number of 32x32 tiles")
    elif _padded_last(tensor) % _ROW_MAJOR_WIDTH or shape[-1] % _ROW_MAJOR_WIDTH:
        raise MeshnnValueError(
            f"{op}: ROW_MAJOR input and output widths must be multiples of {_ROW_MAJOR_WIDTH}, got "
            f"{_padded_last(tensor)} and {shape[-1]}"
        )


def _narrow_row_major(tensor: Tensor, shape: tuple[int, ...]) -> bool:
    """ttnn's host path: a ROW_MAJOR reshape whose widths are not multiples of 8 and that does not
    fall on whole tiles either way."""
    if tensor.layout is not Layout.ROW_MAJOR:
        return False
    if _padded_last(tensor) % _ROW_MAJOR_WIDTH == 0 and shape[-1] % _ROW_MAJOR_WIDTH == 0:
        return False
    rows_in = math.prod(tensor.spec.padded_shape) // _padded_last(tensor)
    rows_out = math.prod(shape) // shape[-1]
    return bool(rows_out % _TILE or shape[-1] % _TILE or _padded_last(tensor) % _TILE or rows_in % _TILE)


@register(
    kind=OpKind.DATA_MOVEMENT, family=OpFamily.COPY, device_operation="ReshapeDeviceOperation", golden=goldens.reshape
)
def reshape_on_device(
    input_tensor: Tensor, W: int, Z: int, Y: int, X: int, *, memory_config: MemoryConfig | None = None
) -> Tensor:
    """``input_tensor`` as ``[W, Z, Y, X]`` (one dim may be -1); see the module's text for which
    reshapes are views and which write a new tensor in ``memory_config``."""
    if not isinstance(input_tensor, Tensor):
        raise MeshnnTypeError(f"ttnn.reshape_on_device: input_tensor must be a ttnn.Tensor, got {input_tensor!r}")
    input_tensor.check_usable("ttnn.reshape_on_device: input_tensor")
    if memory_config is not None and not isinstance(memory_config, MemoryConfig):
        raise MeshnnTypeError(f"ttnn.reshape_on_device: memory_config must be a MemoryConfig, got {memory_config!r}")
    shape = _shape(input_tensor, (W, Z, Y, X))
    out_padded_last = -(-shape[-1] // _TILE) * _TILE if input_tensor.layout is Layout.TILE else shape[-1]
    keeps_last = len(input_tensor.shape) == 4 and out_padded_last == _padded_last(input_tensor)
    if keeps_last and is_view_reshape(input_tensor.spec, shape):
        return reshape(input_tensor, shape)  # ttnn: experimental.view, the same bytes
    tensor = device_input("reshape_on_device", "input_tensor", input_tensor)
    config = memory_config if memory_config is not None else tensor.memory_config()
    if tuple(tensor.spec.padded_shape) == shape:
        return tensor if config == tensor.memory_config() else clone(tensor, memory_config=config)
    if _narrow_row_major(tensor, shape):
        if tensor.dtype is not DataType.BFLOAT16:
            raise MeshnnValueError(
                f"ttnn.reshape_on_device: a ROW_MAJOR reshape of widths {_padded_last(tensor)} -> {shape[-1]} goes "
                f"through the host, which takes BFLOAT16 only, got {tensor.dtype}"
            )
    else:
        _device_checks(tensor, shape, config)
    result = reshape(tensor, shape)
    shares = getattr(result.storage, "mesh_buffer", None) is tensor.storage.mesh_buffer
    if shares or result.memory_config() != config:
        return clone(result, memory_config=config)  # a new buffer, as the device operation writes
    return result
