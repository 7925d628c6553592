"""``ttnn.argmax``: the index (UINT32, ROW_MAJOR) of the largest value along the last dim, or over
all values (``dim`` None: ROW_MAJOR inputs only), with ttnn's rules:

- inputs: ROW_MAJOR BFLOAT16 / FLOAT32 / INT32 / UINT32 / UINT16, or TILE BFLOAT16 / FLOAT32,
  interleaved; ``use_multicore`` only for ROW_MAJOR inputs;
- equal values: the lowest index wins;
- a rank-0 input gives a rank-0 0; a zero-volume input gives the reduced shape filled with 0
  (ttnn's NaN as an integer), refusing a reduced dim of size 0;
- ``output_tensor`` (UINT32 ROW_MAJOR interleaved, ttnn's checks; DRAM or L1, any shape of the
  result's volume: ttnn takes the output's spec as it is, and tt-metal's sampling gives a ``[1, 1,
  1, 32]`` buffer to a ``keepdim=False`` argmax of ``[1, 1, 32, V]``) is written in place, in
  row-major order, as a traced decode step does.

May import: every layer below the ops and the ops' launch, checks, outputs, values and reduce.dims.
"""

from __future__ import annotations

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.mesh.coord import MeshCoordinate
from meshnn.mesh.op_keywords import SUB_CORE_GRIDS, ttnn_keywords
from meshnn.ops import goldens
from meshnn.ops.checks import device_input, int_arg, same_mesh
from meshnn.ops.launch import launch
from meshnn.ops.outputs import Output, out_spec_like
from meshnn.ops.reduce.dims import check_flag, reduced_shape
from meshnn.ops.registry import OpKind, register
from meshnn.ops.values import logical_values, write_values
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig, TensorSpec
from meshnn.tensor.tensor import Tensor

ROW_MAJOR_DTYPES = (DataType.BFLOAT16, DataType.FLOAT32, DataType.INT32, DataType.UINT32, DataType.UINT16)
TILE_DTYPES = (DataType.BFLOAT16, DataType.FLOAT32)


def _check_input(op: str, x: Tensor, use_multicore: bool) -> None:
    if x.spec.memory_config.is_sharded():
        raise MeshnnValueError(f"ttnn.{op}: Only INTERLEAVED memory layout is supported for inputs (input_tensor)")
    if x.layout is Layout.ROW_MAJOR and x.dtype not in ROW_MAJOR_DTYPES:
        raise MeshnnTypeError(
            f"ttnn.{op}: Only BFLOAT16, FLOAT32, INT32, UINT32, and UINT16 are supported for inputs with ROW_MAJOR "
            f"layout (input_tensor is {x.dtype.name})"
        )
    if x.layout is Layout.TILE and x.dtype not in TILE_DTYPES:
        raise MeshnnTypeError(
            f"ttnn.{op}: Only BFLOAT16, FLOAT32 are supported for inputs with TILE layout (input_tensor is "
            f"{x.dtype.name})"
        )
    if use_multicore and x.layout is not Layout.ROW_MAJOR:
        raise MeshnnValueError(f"ttnn.{op}: Multicore argmax only supports ROW_MAJOR layout for inputs (input_tensor)")


def _axes(op: str, x: Tensor, dim: object) -> tuple[int, ...]:
    """The reduced dims: the last (``dim`` names it) or all (None, ROW_MAJOR only)."""
    rank = len(x.shape)
    if dim is None:
        if x.layout is Layout.TILE and rank:
            raise MeshnnValueError(f"ttnn.{op}: For inputs with TILE layout, dim parameter must be specified")
        return tuple(range(rank))
    d = int_arg(op, "dim", dim)
    if not -rank <= d < rank:
        raise MeshnnValueError(f"ttnn.{op}: dim {d} is out of range for input_tensor {list(x.shape)} (rank {rank})")
    if d % rank != rank - 1:
        raise MeshnnValueError(f"ttnn.{op}: Only argmax on last dim is supported (dim {d} of rank {rank})")
    return (rank - 1,)


def argmax_spec(op: str, x: Tensor, dim: object, keepdim: bool, memory_config: object) -> tuple[TensorSpec, tuple]:
    """The output spec (UINT32 ROW_MAJOR; a rank-0 or zero-volume input keeps its layout) and the
    reduced dims, after ttnn's checks."""
    if memory_config is not None and not isinstance(memory_config, MemoryConfig):
        raise MeshnnTypeError(f"ttnn.{op}: memory_config must be a ttnn.MemoryConfig, got {memory_config!r}")
    shape = tuple(x.shape)
    axes = () if not shape else _axes(op, x, dim)
    for a in axes:
        if shape[a] == 0:
            raise MeshnnValueError(f"ttnn.{op}: Expected reduction dim {a} to have non-zero size ({list(shape)})")
    out_shape = reduced_shape(shape, axes, keepdim)
    if memory_config is not None and memory_config.is_sharded():
        raise MeshnnValueError(f"ttnn.{op}: Only INTERLEAVED memory layout is supported for outputs (memory_config)")
    layout = x.layout if not shape or x.logical_volume() == 0 else Layout.ROW_MAJOR
    spec = out_spec_like(x, shape=out_shape, dtype=DataType.UINT32, layout=layout, memory_config=memory_config, op=op)
    return spec, axes


def _output(op: str, x: Tensor, output_tensor: object, spec: TensorSpec) -> Tensor:
    """``output_tensor`` checked as ttnn checks it (UINT32, interleaved, ROW_MAJOR), on the input's
    devices, holding as many values as the result (its own shape and buffer type kept)."""
    out = device_input(op, "output_tensor", output_tensor)
    if out.dtype is not DataType.UINT32:
        raise MeshnnTypeError(f"ttnn.{op}: Only UINT32 is supported for outputs, got {out.dtype.name}")
    if out.spec.memory_config.is_sharded():
        raise MeshnnValueError(f"ttnn.{op}: Only INTERLEAVED memory layout is supported for outputs")
    if out.layout is not Layout.ROW_MAJOR:
        raise MeshnnValueError(f"ttnn.{op}: Output tensor must have ROW_MAJOR layout, got {out.layout}")
    same_mesh(op, {"input_tensor": x, "output_tensor": out})
    if out.logical_volume() != spec.logical_volume():
        raise MeshnnValueError(
            f"ttnn.{op}: output_tensor {list(out.shape)} does not hold the result {list(spec.shape)} (another volume)"
        )
    return out


@register(
    kind=OpKind.REDUCTION, family=OpFamily.ARGMAX, device_operation="ArgMaxDeviceOperation", golden=goldens.argmax
)
@ttnn_keywords(records=("sub_core_grids", "use_multicore"))
def argmax(
    input_tensor: Tensor,
    dim: int | None = None,
    keepdim: bool = False,
    *,
    sub_core_grids: object = None,
    use_multicore: bool = False,
    memory_config: MemoryConfig | None = None,
    output_tensor: Tensor | None = None,
    queue_id: int = 0,
) -> Tensor:
    """Indices of the largest values (see the module docstring)."""
    op = "argmax"
    x = device_input(op, "input_tensor", input_tensor)
    mesh = same_mesh(op, {"input_tensor": x})
    keep = check_flag(op, "keepdim", keepdim)
    multicore = check_flag(op, "use_multicore", use_multicore)
    SUB_CORE_GRIDS.check(op, "sub_core_grids", sub_core_grids)
    _check_input(op, x, multicore)
    spec, _axes_used = argmax_spec(op, x, dim, keep, memory_config)
    into = None
    if output_tensor is not None:
        out = _output(op, x, output_tensor, spec)
        into, spec = [out], out.spec
    compute = bool(x.shape) and x.logical_volume() > 0

    x_spec = x.spec  # (the kernel holds no tensor: a trace must not keep it allocated)

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]) -> None:
        k = in_rows[0].shape[0]
        if not compute:
            write_values(out_rows[0], np.zeros((k, *spec.shape), np.uint32), spec)
            return
        values = logical_values(in_rows[0], x_spec)
        flat = values.reshape(k, -1) if dim is None else values
        index = flat.argmax(axis=-1).astype(np.uint32)
        write_values(out_rows[0], index.reshape((k, *spec.shape)), spec)

    attrs = {"memory_config": spec.memory_config, "dim": dim, "keepdim": keep}
    return launch(
        op, mesh, [x], [Output(spec)], kernel, queue_id=queue_id, into=into, rowwise=True, reads_memos=True, attrs=attrs
    )[0]
