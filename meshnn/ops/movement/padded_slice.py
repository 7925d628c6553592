"""``ttnn.experimental.padded_slice``: a 4-D slice of an interleaved tensor written straight into a
sharded row-major tensor, as conv's input slices need it.

The output is ``[1, 1, rows, cols]`` ROW_MAJOR in ``memory_config`` (which must be sharded and carry
a shard spec): ``rows`` the sliced ``d0 x d1 x d2`` (a WIDTH_SHARDED config's shard height
instead), ``cols`` a HEIGHT_SHARDED config's shard width (the slice's channels, zero-padded up to
it) or else the sliced channel count.  bfloat8_b comes out as bfloat16, every other dtype as it is.
Indices wrap as Python's do; steps other than 1 are refused, as are sharded inputs (ttnn's checks).
``pad_value`` is accepted and unused, as ttnn's binding does.

May import: every layer below the ops and the ops' launch, checks, outputs and values modules.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from meshnn.device.buffer import TensorMemoryLayout
from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
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

_OP = "experimental.padded_slice"


def _ints(name: str, values: object) -> list[int]:
    if not isinstance(values, Sequence) or isinstance(values, str):
        raise MeshnnTypeError(f"ttnn.{_OP}: {name} must be a list of 4 ints, got {values!r}")
    out = list(values)
    if len(out) != 4 or not all(isinstance(v, int) and not isinstance(v, bool) for v in out):
        raise MeshnnTypeError(f"ttnn.{_OP}: {name} must be 4 ints (the input is 4-D), got {out!r}")
    return out


def _window(shape: tuple[int, ...], starts: list[int], ends: list[int]) -> list[tuple[int, int]]:
    """``(begin, end)`` per dim, wrapped as Python indices, checked to lie in ``shape``."""
    window = []
    for dim, (b, e, n) in enumerate(zip(starts, ends, shape, strict=True)):
        b, e = b + n if b < 0 else b, e + n if e < 0 else e
        if not 0 <= b <= e <= n:
            raise MeshnnValueError(
                f"ttnn.{_OP}: padded_slice_start {starts} / padded_slice_end {ends} at dim {dim} must satisfy "
                f"0 <= start <= end <= {n}"
            )
        window.append((b, e))
    return window


def _out_shape(dims: list[int], config: MemoryConfig) -> tuple[int, int, int, int]:
    rows, cols = dims[0] * dims[1] * dims[2], dims[3]
    shard = config.shard_spec.shape  # type: ignore[union-attr]
    if config.memory_layout is TensorMemoryLayout.HEIGHT_SHARDED:
        if shard[1] < cols:
            raise MeshnnValueError(
                f"ttnn.{_OP}: the shard width {shard[1]} is narrower than the slice's {cols} channels"
            )
        cols = shard[1]
    elif config.memory_layout is TensorMemoryLayout.WIDTH_SHARDED:
        rows = shard[0]
    return (1, 1, rows, cols)


@register(_OP, kind=OpKind.DATA_MOVEMENT, family=OpFamily.SLICE, device_operation="PaddedSliceDeviceOperation")
def padded_slice(
    input_tensor: Tensor,
    padded_slice_start: Sequence[int],
    padded_slice_end: Sequence[int],
    padded_slice_step: Sequence[int] | None = None,
    *,
    memory_config: MemoryConfig,
    output_tensor: Tensor | None = None,
    pad_value: float | None = None,
) -> Tensor:
    """The slice ``[start, end)`` of a 4-D interleaved tensor, flattened to ``[1, 1, rows, cols]``
    row-major in the sharded ``memory_config`` (see the module's docstring)."""
    x = device_input(_OP, "input_tensor", input_tensor)
    starts, ends = _ints("padded_slice_start", padded_slice_start), _ints("padded_slice_end", padded_slice_end)
    steps = [1] * 4 if padded_slice_step is None else _ints("padded_slice_step", padded_slice_step)
    if len(x.shape) != 4:
        raise MeshnnValueError(f"ttnn.{_OP}: input_tensor must be 4-D, got {list(x.shape)}")
    if any(s != 1 for s in steps):
        raise MeshnnValueError(f"ttnn.{_OP}: padded_slice_step {steps}: steps other than 1 are not supported")
    if not isinstance(memory_config, MemoryConfig):
        raise MeshnnTypeError(f"ttnn.{_OP}: memory_config must be a ttnn.MemoryConfig, got {memory_config!r}")
    if not memory_config.is_sharded() or memory_config.shard_spec is None:
        raise MeshnnValueError(f"ttnn.{_OP}: memory_config must be sharded with a shard spec, got {memory_config}")
    if x.memory_config().is_sharded():
        raise MeshnnValueError(f"ttnn.{_OP}: input_tensor must be interleaved, it is {x.memory_config().memory_layout}")
    window = _window(tuple(x.shape), starts, ends)
    dims = [e - b for b, e in window]
    shape = _out_shape(dims, memory_config)
    dtype = DataType.BFLOAT16 if x.dtype is DataType.BFLOAT8_B else x.dtype
    spec = TensorSpec(shape, dtype, Layout.ROW_MAJOR, memory_config=memory_config)
    mesh = same_mesh(_OP, {"input_tensor": x})
    into = None if output_tensor is None else [output_into(_OP, mesh, output_tensor, spec, x.storage.coords)]  # type: ignore[union-attr]
    picks = tuple(slice(b, e) for b, e in window)

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]) -> None:
        values = logical_values(in_rows[0], x.spec, as_float=False)[(slice(None), *picks)]
        flat = values.reshape(values.shape[0], -1, dims[3])[:, : shape[2]]
        out = np.zeros((values.shape[0], *shape), dtype=flat.dtype)
        out[:, 0, 0, : flat.shape[1], : dims[3]] = flat
        write_values(out_rows[0], out, spec, exact=x.dtype is dtype, owned=True)

    attrs = {"window": tuple(window), "memory_config": memory_config}
    return launch(_OP, mesh, [x], [Output(spec)], kernel, into=into, rowwise=True, attrs=attrs)[0]
