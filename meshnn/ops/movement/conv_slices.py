"""The slices conv2d's input slicing uses: ``ttnn.experimental.padded_slice`` (also ``ttnn.padded_slice``:
a window of an NHWC tensor flattened into one sharded ROW_MAJOR matrix ``[1, 1, N*H*W, C]``) and the
flattened form of ``ttnn.slice_write``'s input (a sharded ``[1, 1, rows, C]`` written back into an
NHWC window).

``padded_slice`` follows ttnn's output spec (tt-metal's ``PaddedSliceDeviceOperation``): the window's
rows flattened, ``[1, 1, N*H*W, C]``, with the last dim the shard width for HEIGHT_SHARDED (the
channels zero padded, or cut to it) and the rows the shard height for WIDTH_SHARDED; ROW_MAJOR;
bfloat8_b read out as bfloat16, every other dtype's values moved exactly.  The input is interleaved
(ttnn refuses sharded inputs), the steps are 1 and the output sharded; ``output_tensor`` (of the
output's spec) is written in place.  ttnn's ends may reach into a TILE input's padding (they are
checked against the padded shape); those values are the tile padding, zero here.  ``pad_value`` is
checked and recorded, and unused, as ttnn's binding leaves it: the padding is zeros.

May import: :mod:`meshnn.errors`, :mod:`meshnn.formats`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor`
and the ops' checks, creation, data_movement, launch, outputs, registry and values modules.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence

import numpy as np

from meshnn.device.buffer import TensorMemoryLayout
from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.mesh.coord import MeshCoordinate
from meshnn.ops.checks import device_input, int_list, same_mesh
from meshnn.ops.creation import empty
from meshnn.ops.data_movement import to_layout, to_memory_config
from meshnn.ops.launch import Kernel, launch
from meshnn.ops.outputs import Output, out_spec_like, output_into
from meshnn.ops.registry import OpKind, register
from meshnn.ops.values import logical_values, write_values
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig, TensorSpec
from meshnn.tensor.tensor import Tensor

OP = "experimental.padded_slice"
TILE = 32


def _window(tensor: Tensor, begins: object, ends: object, steps: object) -> tuple[list[int], list[int]]:
    """The window's starts and ends (negative ones wrapped as ttnn does), checked against the padded shape."""
    shape, padded = tuple(tensor.shape), tuple(tensor.spec.padded_shape)
    if len(shape) != 4:
        raise MeshnnValueError(f"ttnn.{OP}: Only 4D tensors are supported for padded_slice, got {list(shape)}")
    lo, hi = int_list(OP, "padded_slice_start", begins), int_list(OP, "padded_slice_end", ends)
    step = [1] * 4 if steps is None else int_list(OP, "padded_slice_step", steps)
    if not len(lo) == len(hi) == len(step) == 4:
        raise MeshnnValueError(
            f"ttnn.{OP}: padded_slice_start, padded_slice_end and padded_slice_step need 4 values each, "
            f"got {lo}, {hi}, {step}"
        )
    if any(s != 1 for s in step):
        raise MeshnnValueError(f"ttnn.{OP}: padded_slice_step must be all 1 (Steps != 1 are not supported), got {step}")
    lo = [b + d if b < 0 else b for b, d in zip(lo, shape, strict=True)]
    hi = [e + d if e < 0 else e for e, d in zip(hi, shape, strict=True)]
    for dim, (b, e, p) in enumerate(zip(lo, hi, padded, strict=True)):
        if not 0 <= b <= e <= p or (b == p and e > b):
            raise MeshnnValueError(
                f"ttnn.{OP}: the window {b}:{e} of dim {dim} must satisfy 0 <= start <= end <= {p} (the padded shape)"
            )
    return lo, hi


def _out_shape(lo: list[int], hi: list[int], memory_config: MemoryConfig) -> tuple[int, int, int, int]:
    """ttnn's output shape: ``[1, 1, N*H*W, C]``, C the shard width (height sharded) and the rows
    the shard height (width sharded)."""
    n, h, w, c = (e - b for b, e in zip(lo, hi, strict=True))
    rows, cols = n * h * w, c
    spec = memory_config.shard_spec
    if memory_config.memory_layout is TensorMemoryLayout.HEIGHT_SHARDED and spec is not None:
        cols = int(spec.shape[1])
    elif memory_config.memory_layout is TensorMemoryLayout.WIDTH_SHARDED and spec is not None:
        rows = int(spec.shape[0])
    return (1, 1, rows, cols)


@register(
    OP, kind=OpKind.DATA_MOVEMENT, family=OpFamily.SLICE, device_operation="PaddedSliceDeviceOperation",
    aliases=("padded_slice",),
)  # fmt: skip
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
    """The window ``start:end`` of a 4-D NHWC tensor as one sharded ROW_MAJOR ``[1, 1, N*H*W, C]``
    matrix in ``memory_config`` (see the module docstring for C and the rows)."""
    tensor = device_input(OP, "input_tensor", input_tensor)
    lo, hi = _window(tensor, padded_slice_start, padded_slice_end, padded_slice_step)  # (ttnn's order: these first)
    _check_options(tensor, memory_config, pad_value)
    shape = tuple(tensor.shape)
    spec = memory_config.shard_spec
    if (
        lo == [0] * 4
        and hi == list(shape)
        and tensor.layout is Layout.ROW_MAJOR
        and spec
        and spec.shape[1] == shape[-1]
    ):
        return to_layout(to_memory_config(tensor, memory_config), tensor.layout)  # ttnn's no-op path
    sizes = [e - b for b, e in zip(lo, hi, strict=True)]
    if 0 in sizes:
        return empty(sizes, tensor.dtype, tensor.layout, tensor.device(), memory_config)
    out_shape = _out_shape(lo, hi, memory_config)
    dtype = DataType.BFLOAT16 if tensor.dtype is DataType.BFLOAT8_B else tensor.dtype
    out = _aligned(tensor, out_shape, dtype, memory_config)
    mesh = same_mesh(OP, {"input_tensor": tensor})
    into = None if output_tensor is None else [output_into(OP, mesh, output_tensor, out, tensor.storage.coords)]  # type: ignore[union-attr]
    kernel = _padded_kernel(tensor.spec, out, lo, hi)
    attrs = {"memory_config": memory_config, "start": lo, "end": hi, "pad_value": pad_value}
    return launch(OP, mesh, [tensor], [Output(out)], kernel, into=into, rowwise=True, reads_memos=True, attrs=attrs)[0]


def _aligned(tensor: Tensor, shape: tuple[int, ...], dtype: DataType, memory_config: MemoryConfig) -> TensorSpec:
    """The ROW_MAJOR output spec with ttnn's default alignment of a sharded ROW_MAJOR tensor: its
    width padded to a multiple of the shard width (tt-metal's RowMajorPageConfig alignment)."""
    shard, width = memory_config.shard_spec, shape[-1]
    if shard is None or width % shard.shape[1] == 0:
        layout = Layout.ROW_MAJOR
        return out_spec_like(tensor, shape=shape, dtype=dtype, layout=layout, memory_config=memory_config, op=OP)
    padded = (*shape[:-1], -(-width // shard.shape[1]) * shard.shape[1])
    return TensorSpec(shape, dtype, Layout.ROW_MAJOR, memory_config=memory_config, padded_shape=padded)


def _check_options(tensor: Tensor, memory_config: object, pad_value: object) -> None:
    """A sharded output memory config with a shard spec, an interleaved input, a numeric pad value."""
    if not isinstance(memory_config, MemoryConfig) or not memory_config.is_sharded() or not memory_config.shard_spec:
        raise MeshnnValueError(
            f"ttnn.{OP}: memory_config must be a sharded ttnn.MemoryConfig (use slice for non-sharded outputs), "
            f"got {memory_config!r}"
        )
    if tensor.is_sharded():
        raise MeshnnValueError(f"ttnn.{OP}: input_tensor must be interleaved (padded_slice takes no sharded inputs)")
    if pad_value is not None and (isinstance(pad_value, bool) or not isinstance(pad_value, int | float)):
        raise MeshnnTypeError(f"ttnn.{OP}: pad_value must be a number, got {pad_value!r}")


def _padded_kernel(in_spec: TensorSpec, out: TensorSpec, lo: list[int], hi: list[int]) -> Kernel:
    """The kernel: each device's window, flattened to rows, its columns zero padded or cut (values
    exact: integers stay integers, floats of the input's dtype are written as they are)."""
    selector = (builtins.slice(None), *(builtins.slice(b, e) for b, e in zip(lo, hi, strict=True)))
    shape, out_shape = tuple(in_spec.shape), tuple(out.shape)

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]) -> None:
        values = logical_values(in_rows[0], in_spec, as_float=False)
        grow = [(0, 0)] + [(0, max(0, e - d)) for e, d in zip(hi, shape, strict=True)]
        part = np.pad(values, grow)[selector]  # ends inside a TILE input's padding read zeros
        k, rows, cols = part.shape[0], out_shape[2], out.encoded_shape[-1]  # the alignment's pad is written too
        flat = part.reshape(k, -1, part.shape[-1])
        result = np.zeros((k, rows, cols), flat.dtype)
        r, c = min(rows, flat.shape[1]), min(cols, flat.shape[2])
        result[:, :r, :c] = flat[:, :r, :c]
        exact = in_spec.dtype is out.dtype
        write_values(out_rows[0], result.reshape(k, *out.encoded_shape), out, exact=exact, owned=True)

    return kernel


def flat_window_rows(op: str, source: Tensor, target: Tensor, selector: list[builtins.slice]) -> tuple[int, ...]:
    """``slice_write``'s sharded ``[1, 1, rows, C]`` input as ttnn reads it: the window's rows in
    order, a TILE input's window rounded up to whole tiles in its last two dims (ttnn's padded
    ends) and its channels at least the window's.  Returns the padded window's shape."""
    if any(s.step not in (None, 1) for s in selector):
        raise MeshnnValueError(f"ttnn.{op}: a sharded input_tensor takes unit steps only")
    bounds = [s.indices(d) for s, d in zip(selector, target.shape, strict=True)]
    lengths = [max(0, stop - start) for start, stop, _ in bounds]
    if source.layout is Layout.TILE and len(lengths) >= 2:
        for dim in (-2, -1):
            start, stop, _ = bounds[dim]
            lengths[dim] = max(-(-stop // TILE) * TILE, TILE) - start
    rows, channels = int(np.prod(lengths[:-1])), source.shape[-1]
    if source.shape[-2] != rows or channels < len(range(*bounds[-1])):
        raise MeshnnValueError(
            f"ttnn.{op}: the sharded input_tensor {list(source.shape)} must hold the window's {rows} rows "
            f"(window {lengths} of output_tensor {list(target.shape)}, tile-padded for TILE) of at least "
            f"{len(range(*bounds[-1]))} channels"
        )
    return tuple(lengths)
