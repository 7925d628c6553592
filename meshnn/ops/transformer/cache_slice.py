"""``ttnn.experimental.nlp_kv_cache_load_slice``: a window of sequence positions of a KV cache,
``[d0, d1, max_seq, head_dim]`` (TILE, on device) to ``[d0, d1, seq_len_end - seq_len_start,
head_dim]``, height-sharded in L1 a ``(d0, d1)`` pair a core: ``d0 x d1`` cores of the compute grid
taken row-wise from (0, 0), shards of ``[seq_len_end - seq_len_start, head_dim]`` (row-major
orientation).  The memory config ttnn's binding takes is unused by its device operation, as here.

The checks are the device operation's, on the input's padded shape: 4 dims, ``seq_len_start`` and
the slice length multiples of the 32-row tile, ``seq_len_start < seq_len_end <= max_seq``, at most
as many ``(d0, d1)`` pairs as the grid has cores.  The slice is a copy: values move unchanged.

May import: every layer below the ops and the ops' launch, checks, outputs and values modules.
"""

from __future__ import annotations

import numpy as np

from meshnn.device.buffer import BufferType, ShardOrientation, ShardSpec, TensorMemoryLayout
from meshnn.device.core import num_cores_to_corerangeset
from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.layout import Layout
from meshnn.mesh.coord import MeshCoordinate
from meshnn.ops.checks import device_input, same_mesh
from meshnn.ops.launch import launch
from meshnn.ops.outputs import Output, output_into
from meshnn.ops.registry import OpKind, register
from meshnn.ops.values import logical_values, write_values
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig, TensorSpec
from meshnn.tensor.tensor import Tensor

_OP = "experimental.nlp_kv_cache_load_slice"
_TILE = 32  # rows and columns of a tile: the slice moves whole tiles


def _position(name: str, value: object) -> int:
    """A sequence position: a non-negative int (ttnn binds a uint32 without conversion)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise MeshnnTypeError(f"ttnn.{_OP}: {name} must be an int, got {value!r}")
    if value < 0:
        raise MeshnnTypeError(f"ttnn.{_OP}: {name} must be non-negative (a uint32), got {value}")
    return value


def _check(x: Tensor, start: int, end: int, cores: int) -> tuple[int, int, int, int]:
    """The input's padded ``(d0, d1, max_seq, head_dim)``, the window checked against it."""
    padded = tuple(x.padded_shape)
    if len(padded) != 4:
        raise MeshnnValueError(f"ttnn.{_OP}: input_tensor must be 4D, its padded shape is {list(padded)}")
    d0, d1, max_seq, head_dim = padded
    if not start < end <= max_seq:
        raise MeshnnValueError(
            f"ttnn.{_OP}: seq_len_start ({start}) < seq_len_end ({end}) <= the input's padded sequence "
            f"length ({max_seq}) must hold"
        )
    if start % _TILE or (end - start) % _TILE:
        raise MeshnnValueError(
            f"ttnn.{_OP}: seq_len_start ({start}) and seq_len_end - seq_len_start ({end - start}) must be "
            f"multiples of {_TILE}: only whole tiles are sliced"
        )
    if d0 * d1 > cores:
        raise MeshnnValueError(f"ttnn.{_OP}: the fused batch x heads ({d0 * d1}) must be <= the grid's {cores} cores")
    return d0, d1, max_seq, head_dim


@register(
    _OP,
    kind=OpKind.TRANSFORMER,
    family=OpFamily.COPY,
    device_operation="NlpKVCacheLoadSliceDeviceOperation",
)
def nlp_kv_cache_load_slice(
    input_tensor: Tensor,
    *,
    seq_len_start: int,
    seq_len_end: int,
    memory_config: MemoryConfig | None = None,
    output_tensor: Tensor | None = None,
) -> Tensor:
    """Positions ``[seq_len_start, seq_len_end)`` of every ``(d0, d1)`` row of a TILE KV cache,
    height-sharded in L1 one ``(d0, d1)`` pair a core (see the module's docstring)."""
    x = device_input(_OP, "input_tensor", input_tensor)
    if x.layout is not Layout.TILE:
        raise MeshnnValueError(f"ttnn.{_OP}: input_tensor must be in TILE layout, it is {x.layout}")
    mesh = same_mesh(_OP, {"input_tensor": x})
    start, end = _position("seq_len_start", seq_len_start), _position("seq_len_end", seq_len_end)
    if memory_config is not None and not isinstance(memory_config, MemoryConfig):
        raise MeshnnTypeError(f"ttnn.{_OP}: memory_config must be a ttnn.MemoryConfig, got {memory_config!r}")
    grid = mesh.compute_with_storage_grid_size()
    d0, d1, _, head_dim = _check(x, start, end, grid.x * grid.y)
    length = end - start
    shard = ShardSpec(num_cores_to_corerangeset(d0 * d1, grid, True), (length, head_dim), ShardOrientation.ROW_MAJOR)
    config = MemoryConfig(TensorMemoryLayout.HEIGHT_SHARDED, BufferType.L1, shard)
    spec = TensorSpec((d0, d1, length, head_dim), x.dtype, Layout.TILE, memory_config=config)
    into = None if output_tensor is None else [output_into(_OP, mesh, output_tensor, spec, x.storage.coords)]  # type: ignore[union-attr]
    padded, exact = (d0, d1, *tuple(x.padded_shape)[2:]), not x.dtype.is_block_float

    x_spec = x.spec  # (the kernel holds no tensor: a trace must not keep it allocated)

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]) -> None:
        values = logical_values(in_rows[0], x_spec, as_float=False)
        if values.shape[1:] != padded:  # the tile padding past the logical shape holds zeros
            values = np.pad(values, [(0, 0), *((0, p - s) for p, s in zip(padded, values.shape[1:], strict=True))])
        window = np.ascontiguousarray(values[:, :, :, start:end, :])
        write_values(out_rows[0], window, spec, exact=exact, owned=True)

    attrs = {"seq_len_start": start, "seq_len_end": end}
    return launch(_OP, mesh, [x], [Output(spec)], kernel, into=into, rowwise=True, reads_memos=True, attrs=attrs)[0]
