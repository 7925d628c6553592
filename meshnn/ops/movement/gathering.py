"""Reading by index: ``ttnn.gather`` (torch.gather: ``out[i][j][k] = input[i][index[i][j][k]][k]``
for dim 1), ``ttnn.tosa_gather`` (TOSA's gather: ``[N, K, C]`` values and ``[N, W]`` indices give
``[N, W, C]``), ``ttnn.index_fill`` (a value written at the listed indices of one dim) and
``ttnn.nonzero`` (the count and the positions of a row's non-zero values).

Indices are data on the device: an index out of range reads what lies there on ttnn; meshnn
clamps it into the dim (the result is as undefined as ttnn's, but deterministic).

May import: :mod:`meshnn.errors`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor` and the ops' checks,
launch, outputs, registry, values and rearrange modules.
"""

from __future__ import annotations

import builtins

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.mesh.coord import MeshCoordinate
from meshnn.mesh.op_keywords import QUEUE_ID, SUB_CORE_GRIDS, only, ttnn_keywords
from meshnn.ops.checks import device_input, int_arg, same_mesh
from meshnn.ops.launch import launch
from meshnn.ops.movement.rearrange import rearranged
from meshnn.ops.outputs import Output, out_spec_like, output_into
from meshnn.ops.registry import OpKind, register, torch_golden
from meshnn.ops.values import logical_values, write_values
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor

_INDEX_TYPES = (DataType.UINT16, DataType.UINT32)


def _axis(op: str, dim: object, rank: int) -> int:
    axis = int_arg(op, "dim", dim)
    if not -rank <= axis < rank:
        raise MeshnnValueError(f"ttnn.{op}: dim {axis} is out of range for a tensor of rank {rank}")
    return axis % rank


def gathered(x: np.ndarray, index: np.ndarray, axis: int) -> np.ndarray:
    """``torch.gather`` of device-first arrays (``axis`` counts the device axis): ``x`` cut to
    ``index``'s extent in the other dims, indices clamped into ``x``'s dim."""
    window = tuple(builtins.slice(0, n) if d != axis else builtins.slice(None) for d, n in enumerate(index.shape))
    part = x[window]
    picked = np.clip(index.astype(np.int64), 0, max(part.shape[axis] - 1, 0))
    return np.take_along_axis(part, picked, axis=axis)


@register(
    kind=OpKind.DATA_MOVEMENT,
    family=OpFamily.COPY,
    device_operation="GatherDeviceOperation",
    golden=torch_golden(lambda torch, input, dim, index, **_: torch.gather(input, dim, index.to(torch.int64))),
)
@ttnn_keywords(
    sparse_grad=only(False, "sparse gradients are not supported (as on ttnn)"), sub_core_grids=SUB_CORE_GRIDS
)
def gather(
    input: Tensor, dim: int, index: Tensor, *, out: Tensor | None = None, memory_config: MemoryConfig | None = None
) -> Tensor:
    """``torch.gather(input, dim, index)``: TILE tensors of one rank, a UINT16 / UINT32 index; the
    output has the index's shape and the input's dtype (written into ``out`` when given)."""
    op = "gather"
    tensor = device_input(op, "input", input)
    indices = device_input(op, "index", index)
    rank = len(tensor.shape)
    if len(indices.shape) != rank:
        raise MeshnnValueError(
            f"ttnn.{op}: Input and index tensor must have the same number of dimensions, got {rank} and "
            f"{len(indices.shape)}"
        )
    axis = _axis(op, dim, max(rank, 1)) if rank else 0
    if indices.dtype not in _INDEX_TYPES:
        raise MeshnnTypeError(f"ttnn.{op}: Index tensor must be of type UINT32 or UINT16, got {indices.dtype}")
    for d in range(rank):
        if d != axis and indices.shape[d] > tensor.shape[d]:
            raise MeshnnValueError(
                f"ttnn.{op}: index {list(indices.shape)} is larger than input {list(tensor.shape)} in dim {d}"
            )
    for name, t in (("input", tensor), ("index", indices)):
        if t.layout is not Layout.TILE:
            raise MeshnnValueError(f"ttnn.{op}: The {name} tensor must be in tiled format, it is {t.layout}")
    if memory_config is not None and memory_config.is_sharded():
        raise MeshnnValueError(f"ttnn.{op}: Sharded implementation not supported yet")
    spec = out_spec_like(tensor, shape=tuple(indices.shape), memory_config=memory_config, op=op)
    mesh = same_mesh(op, {"input": tensor, "index": indices})
    if out is not None:
        spec = _out_spec(op, mesh, out, spec, tensor, tuple(indices.shape))
    words = _WORDS.get(spec.dtype) if spec.dtype is not tensor.dtype else None
    pick = (lambda x, i: words(gathered(x, i, axis + 1))) if words else (lambda x, i: gathered(x, i, axis + 1))
    return rearranged(op, tensor, spec, pick, extra=[indices], into=out, attrs={"dim": axis})


_WORDS = {  # a 32-bit integer output of the other 32-bit integer dtype: the kernel's words, reread
    DataType.UINT32: lambda v: np.asarray(v, dtype=np.int64) & 0xFFFFFFFF,
    DataType.INT32: lambda v: (np.asarray(v, dtype=np.int64) + 2**31) % 2**32 - 2**31,
}


def _out_spec(op: str, mesh: object, out: object, spec: object, tensor: Tensor, shape: tuple[int, ...]) -> object:
    """The spec of ``gather``'s ``out``: the index's shape (ttnn checks only that), and the input's
    dtype or, the kernel copying 32-bit words, the other 32-bit integer dtype (INT32 <-> UINT32: the
    same bits); any other dtype is refused (its values would depend on the packer's conversion)."""
    target = output_into(op, mesh, out, out.spec if isinstance(out, Tensor) else spec, tensor.storage.coords)  # type: ignore[union-attr]
    same_words = {target.dtype, tensor.dtype} <= set(_WORDS)
    if tuple(target.shape) != shape or (target.dtype is not tensor.dtype and not same_words):
        raise MeshnnValueError(
            f"ttnn.{op}: out {list(target.shape)} {target.dtype} must have index's shape and input's dtype "
            "(or, of an INT32 / UINT32 input, the other of the two)"
        )
    return target.spec


@register(
    kind=OpKind.DATA_MOVEMENT,
    family=OpFamily.COPY,
    device_operation="GatherDeviceOperation",
    golden=torch_golden(
        lambda torch, input, index, **_: torch.gather(
            input, 1, index.to(torch.int64).unsqueeze(-1).expand(-1, -1, input.shape[-1])
        )
    ),
    modelled=False,
)
def tosa_gather(input: Tensor, index: Tensor, *, memory_config: MemoryConfig | None = None) -> Tensor:
    """TOSA gather: ``output[n, w, c] = input[n, index[n, w], c]`` for ``[N, K, C]`` values and
    ``[N, W]`` indices."""
    op = "tosa_gather"
    tensor = device_input(op, "input", input)
    indices = device_input(op, "index", index)
    if len(tensor.shape) != 3:
        raise MeshnnValueError(f"ttnn.{op}: Input tensor rank must be 3, got: {len(tensor.shape)}")
    if len(indices.shape) != 2:
        raise MeshnnValueError(f"ttnn.{op}: Index tensor rank must be 2, got: {len(indices.shape)}")
    if indices.shape[0] != tensor.shape[0]:
        raise MeshnnValueError(f"ttnn.{op}: Index tensor first dimension must be equal to input tensor first dimension")
    if indices.dtype not in _INDEX_TYPES:
        raise MeshnnTypeError(f"ttnn.{op}: Index tensor must be of type UINT32 or UINT16, got {indices.dtype}")
    n, w, c = tensor.shape[0], indices.shape[1], tensor.shape[2]
    spec = out_spec_like(tensor, shape=(n, w, c), memory_config=memory_config, op=op)

    def pick(x: np.ndarray, i: np.ndarray) -> np.ndarray:
        expanded = np.broadcast_to(i[..., None], (*i.shape, c))
        return gathered(x, expanded, 2)

    return rearranged(op, tensor, spec, pick, extra=[indices])


@register(
    kind=OpKind.DATA_MOVEMENT,
    family=OpFamily.COPY,
    device_operation="IndexFillOperation",
    golden=torch_golden(
        lambda torch, input, dim, index, value, **_: torch.index_fill(input, dim, index.to(torch.int64), value)
    ),
    modelled=False,
)
def index_fill(
    input: Tensor, dim: int, index: Tensor, value: float, *, memory_config: MemoryConfig | None = None
) -> Tensor:
    """``torch.index_fill``: ``value`` at the positions ``index`` (a 1-D integer tensor) of ``dim``."""
    op = "index_fill"
    tensor = device_input(op, "input", input)
    indices = device_input(op, "index", index)
    if len(indices.shape) != 1 or not indices.dtype.is_integer:
        raise MeshnnValueError(f"ttnn.{op}: Index fill: Index tensor must be 1D integers, got {indices.dtype}")
    rank = len(tensor.shape)
    axis = int_arg(op, "dim", dim)
    if not 0 <= axis < rank:
        raise MeshnnValueError(f"ttnn.{op}: Index fill: Invalid dimension {axis} for rank {rank}")
    if isinstance(value, bool) or not isinstance(value, int | float | np.number):
        raise MeshnnTypeError(f"ttnn.{op}: value must be a number, got {value!r}")
    for name, config in (("input", tensor.memory_config()), ("memory_config", memory_config)):
        if config is not None and config.is_sharded():
            raise MeshnnValueError(f"ttnn.{op}: Index fill: Not currently supporting sharding ({name})")
    spec = out_spec_like(tensor, memory_config=memory_config, op=op)

    # (the kernel holds no tensor: a trace must not keep it allocated)
    tensor_dtype, tensor_shape = tensor.dtype, tensor.shape

    def fill(x: np.ndarray, i: np.ndarray) -> np.ndarray:
        result = np.array(x, dtype=np.float32 if tensor_dtype.is_float else x.dtype, copy=True)
        where = np.clip(i.astype(np.int64), 0, tensor_shape[axis] - 1)
        for row in range(result.shape[0]):
            np.moveaxis(result[row], axis, 0)[where[row]] = value
        return result

    return rearranged(op, tensor, spec, fill, extra=[indices], new_values=True)


@register(
    kind=OpKind.DATA_MOVEMENT,
    family=OpFamily.COPY,
    device_operation="NonZeroIndices",
    golden=torch_golden(lambda torch, input_tensor, **_: torch.nonzero(input_tensor.flatten()).flatten()),
    modelled=False,
)
@ttnn_keywords(queue_id=QUEUE_ID)
def nonzero(input_tensor: Tensor, *, memory_config: MemoryConfig | None = None) -> list[Tensor]:
    """``[count, indices]`` of a ROW_MAJOR ``[1, 1, 1, W]`` tensor: the number of non-zero values
    (a ``[1, 1, 1, 8]`` UINT32 tensor, the count first) and their positions in order (a
    ``[1, 1, 1, W]`` UINT32 tensor, the rest zeros)."""
    op = "nonzero"
    tensor = device_input(op, "input_tensor", input_tensor)
    shape = tuple(tensor.shape)
    if len(shape) != 4 or shape[:3] != (1, 1, 1):
        raise MeshnnValueError(f"ttnn.{op}: input_tensor must be [1, 1, 1, W], got {list(shape)}")
    if tensor.layout is not Layout.ROW_MAJOR:
        raise MeshnnValueError(f"ttnn.{op}: input_tensor must be ROW_MAJOR, it is {tensor.layout}")
    width = shape[-1]
    count_spec = out_spec_like(tensor, shape=(1, 1, 1, 8), dtype=DataType.UINT32, memory_config=memory_config, op=op)
    index_spec = out_spec_like(tensor, shape=shape, dtype=DataType.UINT32, memory_config=memory_config, op=op)
    mesh = same_mesh(op, {"input_tensor": tensor})

    tensor_spec = tensor.spec  # (the kernel holds no tensor: a trace must not keep it allocated)

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]) -> None:
        x = logical_values(in_rows[0], tensor_spec).reshape(-1, width)
        counts = np.zeros((x.shape[0], 1, 1, 1, 8), np.uint32)
        places = np.zeros((x.shape[0], 1, 1, 1, width), np.uint32)
        for row in range(x.shape[0]):
            found = np.flatnonzero(x[row]).astype(np.uint32)
            counts[row, ..., 0] = found.size
            places[row, ..., : found.size] = found
        write_values(out_rows[0], counts, count_spec)
        write_values(out_rows[1], places, index_spec)

    outputs = [Output(count_spec), Output(index_spec)]
    return launch(op, mesh, [tensor], outputs, kernel, rowwise=True, attrs={"memory_config": memory_config})
