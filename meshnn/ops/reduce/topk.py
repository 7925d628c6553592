"""``ttnn.topk`` and ``ttnn.moe``.

``topk``: the ``k`` largest (``largest=False``: smallest) values along ``dim`` and their indices,
both TILE, with ttnn's rules: the input is BFLOAT16 or BFLOAT8_B TILE, interleaved; the values
keep the input's dtype; the indices are UINT16 while the (tile-padded, at least 64 wide) reduced
dim holds fewer than 65536 values, else UINT32; ``k`` larger than the dim gives the whole dim;
the values come out in order (ttnn's kernel sorts them whether or not ``sorted`` is asked),
equal values lowest index first; with ``indices_tensor`` (UINT16 / UINT32, the input's shape)
the indices are its entries at the chosen positions where ttnn's multi-core program runs (a
reduced dim of 8192 to 65535 values, k up to 64), the positions themselves elsewhere (ttnn's
single-core program makes its own); ``out=(values, indices)`` are written in
place (values of the input's dtype, indices UINT16 / UINT32, the output's shape).

``moe``: the routing weight of expert 0 for each row of a ``[N, C, H, W]`` gate tensor: the rows
plus ``expert_mask_tensor`` (``[N, C, 1, W]``, -inf past the experts), their ``k`` (= 32) largest
values plus ``topk_mask_tensor`` (``[N, C, 1, k]``, -inf past the experts a token uses) softmaxed,
and the probability at the position of expert 0 (0 when it is not among them): ``[N, C, H, 1]``.

May import: every layer below the ops and the ops' launch, checks, outputs, values and reduce.dims.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from meshnn.device.core import CoreRangeSet
from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.mesh.coord import MeshCoordinate
from meshnn.mesh.op_keywords import ttnn_keywords
from meshnn.ops import goldens
from meshnn.ops.checks import device_input, int_arg, same_mesh
from meshnn.ops.launch import launch
from meshnn.ops.outputs import Output, out_spec_like, output_into
from meshnn.ops.reduce.dims import check_flag
from meshnn.ops.registry import OpKind, register
from meshnn.ops.values import logical_values, write_values
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig, TensorSpec
from meshnn.tensor.tensor import Tensor

VALUE_DTYPES = (DataType.BFLOAT16, DataType.BFLOAT8_B)
INDEX_DTYPES = (DataType.UINT16, DataType.UINT32)
MIN_DIM = 64
"""The narrowest reduced dim topk's kernel takes (ttnn pads a narrower one)."""


def _tile_input(op: str, name: str, tensor: object) -> Tensor:
    x = device_input(op, name, tensor)
    if x.layout is not Layout.TILE or x.dtype not in VALUE_DTYPES:
        raise MeshnnTypeError(
            f"ttnn.{op}: Input tensor must be BFLOAT16, or BFLOAT8_B, in TILE layout; {name} is {x.dtype.name} "
            f"{x.layout}"
        )
    if x.spec.memory_config.is_sharded():
        raise MeshnnValueError(f"ttnn.{op}: Sharded implementation not supported yet ({name} is sharded)")
    return x


def _sub_core_grids(op: str, grids: object) -> None:
    if grids is None:
        return
    if not isinstance(grids, CoreRangeSet):
        raise MeshnnTypeError(f"ttnn.{op}: sub_core_grids must be a ttnn.CoreRangeSet or None, got {grids!r}")
    if len(grids.ranges()) != 1:
        raise MeshnnValueError(f"ttnn.{op}: Only one core range is supported right now (sub_core_grids has {grids})")


def _topk_specs(op, x, axis, count, memory_config) -> list[TensorSpec]:
    size = x.shape[axis]
    padded = -(-size // 32) * 32 if axis >= len(x.shape) - 2 else size
    index_dtype = DataType.UINT16 if max(padded, MIN_DIM) < 1 << 16 else DataType.UINT32
    shape = tuple(count if i == axis else n for i, n in enumerate(x.shape))
    if memory_config is not None and isinstance(memory_config, MemoryConfig) and memory_config.is_sharded():
        raise MeshnnValueError(f"ttnn.{op}: Sharded implementation not supported yet (memory_config is sharded)")
    return [
        out_spec_like(x, shape=shape, layout=Layout.TILE, memory_config=memory_config, op=op),
        out_spec_like(x, shape=shape, dtype=index_dtype, layout=Layout.TILE, memory_config=memory_config, op=op),
    ]


def _outputs(op, mesh, x, out, specs) -> list[Tensor] | None:
    """``out=(values, indices)`` checked (dtypes as ttnn checks them, then the output's shape)."""
    if out is None:
        return None
    if not isinstance(out, Sequence) or isinstance(out, str) or len(out) != 2:
        raise MeshnnTypeError(f"ttnn.{op}: out must be a (values, indices) pair of tensors, got {out!r}")
    values, indices = (device_input(op, f"out[{i}]", t) for i, t in enumerate(out))
    if values.dtype is not x.dtype:
        raise MeshnnTypeError(
            f"ttnn.{op}: Preallocated output tensor dtype must match input tensor dtype. Got output: "
            f"{values.dtype.name}, input: {x.dtype.name} (out[0])"
        )
    if indices.dtype not in INDEX_DTYPES:
        raise MeshnnTypeError(
            f"ttnn.{op}: Preallocated indices tensor must be UINT16 or UINT32 got: {indices.dtype.name}"
        )
    index_spec = TensorSpec(specs[1].shape, indices.dtype, Layout.TILE, memory_config=specs[1].memory_config)
    where = x.storage.coords  # type: ignore[union-attr]
    return [output_into(op, mesh, values, specs[0], where), output_into(op, mesh, indices, index_spec, where)]


def _order(values: np.ndarray, axis: int, count: int, largest: bool) -> np.ndarray:
    """Indices of the ``count`` first values along ``axis`` in the order asked (ties: lower index)."""
    key = -values.astype(np.float64) if largest else values.astype(np.float64)
    size = values.shape[axis]
    if count < size // 4:  # select first, then sort only the chosen ones
        part = np.argpartition(key, count - 1, axis=axis)
        chosen = np.take(part, range(count), axis=axis)
        chosen = np.sort(chosen, axis=axis)  # index order, so a stable sort breaks ties by index
        ranked = np.argsort(np.take_along_axis(key, chosen, axis=axis), axis=axis, kind="stable")
        return np.take_along_axis(chosen, ranked, axis=axis)
    return np.take(np.argsort(key, axis=axis, kind="stable"), range(count), axis=axis)


@register(
    kind=OpKind.REDUCTION,
    family=OpFamily.COPY,
    device_operation="TopKDeviceOperation",
    golden=goldens.topk,
)
@ttnn_keywords(records=("sub_core_grids",))
def topk(
    input_tensor: Tensor,
    k: int = 32,
    dim: int = -1,
    largest: bool = True,
    sorted: bool = True,
    *,
    out: tuple[Tensor, Tensor] | None = None,
    memory_config: MemoryConfig | None = None,
    sub_core_grids: CoreRangeSet | None = None,
    indices_tensor: Tensor | None = None,
    output_tensor: tuple[Tensor, Tensor] | None = None,
    queue_id: int = 0,
) -> tuple[Tensor, Tensor]:
    """The top ``k`` values along ``dim`` and their indices (see the module docstring);
    ``output_tensor`` is ttnn's newer name of ``out``."""
    op = "topk"
    x = _tile_input(op, "input_tensor", input_tensor)
    for name, value in (("largest", largest), ("sorted", sorted)):
        check_flag(op, name, value)
    _sub_core_grids(op, sub_core_grids)
    rank = len(x.shape)
    axis = int_arg(op, "dim", dim)
    if not -rank <= axis < rank:
        raise MeshnnValueError(f"ttnn.{op}: dim {axis} is out of range for input_tensor {list(x.shape)}")
    axis %= rank
    count = int_arg(op, "k", k)
    if count < 1:
        raise MeshnnValueError(f"ttnn.{op}: k must be at least 1, got {count}")
    count = min(count, x.shape[axis])
    named = {"input_tensor": x}
    if indices_tensor is not None:
        named["indices_tensor"] = _indices_input(op, x, indices_tensor, _multicore(x, axis, count))
    mesh = same_mesh(op, named)
    specs = _topk_specs(op, x, axis, count, memory_config)
    if out is not None and output_tensor is not None:
        raise MeshnnValueError(f"ttnn.{op}: give out or output_tensor, not both")
    into = _outputs(op, mesh, x, out if out is not None else output_tensor, specs)
    if into is not None:
        specs = [t.spec for t in into]
    uses_indices = _multicore(x, axis, count)
    inputs = list(named.values()) if uses_indices else [x]  # the single-core program never reads it
    in_specs = [t.spec for t in inputs]  # (the kernel holds no tensor: a trace must not keep it allocated)

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]) -> None:
        values = logical_values(in_rows[0], in_specs[0])
        order = _order(values, axis + 1, count, bool(largest))
        picked = np.take_along_axis(values, order, axis=axis + 1)
        if len(in_specs) == 2 and uses_indices:
            given = np.asarray(logical_values(in_rows[1], in_specs[1], as_float=False)).astype(np.int64)
            order = np.take_along_axis(given, order, axis=axis + 1)
        write_values(out_rows[0], np.ascontiguousarray(picked), specs[0], exact=specs[0].dtype is in_specs[0].dtype)
        write_values(out_rows[1], order.astype(np.float32), specs[1])

    attrs = {"k": count, "dim": axis, "largest": bool(largest), "sorted": bool(sorted)}
    launched = launch(
        op, mesh, inputs, [Output(s) for s in specs], kernel, queue_id=queue_id, into=into, rowwise=True, attrs=attrs
    )
    return launched[0], launched[1]


MULTICORE_MIN_WIDTH = 8192
"""The narrowest reduced dim ttnn's multi-core topk takes (narrower: the single-core program)."""


def _multicore(x: Tensor, axis: int, count: int) -> bool:
    """Whether ttnn runs its multi-core program, the one that reads ``indices_tensor`` (the
    single-core program makes its own indices): a reduced dim of 8192 to 65535 (padded) values
    and k (rounded up to whole tiles) at most 64."""
    size = x.shape[axis]
    padded = max(-(-size // 32) * 32, MIN_DIM)
    return MULTICORE_MIN_WIDTH <= padded < 1 << 16 and -(-count // 32) * 32 <= 64


def _indices_input(op: str, x: Tensor, indices_tensor: object, read: bool) -> Tensor:
    """``indices_tensor`` checked as ttnn checks it (a live UINT16 / UINT32 device tensor); where
    the multi-core program reads it (``read``), also the input's shape: that program reads index
    tile ``row * Wt + col`` for each input tile, so a narrower one would be read past its end (ttnn
    does not check; its bytes there are whatever DRAM holds, which meshnn cannot stand for)."""
    given = device_input(op, "indices_tensor", indices_tensor)
    if given.dtype not in INDEX_DTYPES:
        raise MeshnnTypeError(f"ttnn.{op}: Optional input tensor must be UINT16, or UINT32, got: {given.dtype.name}")
    if read and tuple(given.shape) != tuple(x.shape):
        raise MeshnnValueError(
            f"ttnn.{op}: indices_tensor {list(given.shape)} must have input_tensor's shape {list(x.shape)}: ttnn's "
            f"multi-core topk reads an index tile for every input tile, past the end of a smaller indices_tensor"
        )
    return given


def _moe_inputs(op, input_tensor, expert_mask_tensor, topk_mask_tensor, k) -> tuple[Tensor, Tensor, Tensor]:
    x = _tile_input(op, "input_tensor", input_tensor)
    experts = _tile_input(op, "expert_mask_tensor", expert_mask_tensor)
    top = _tile_input(op, "topk_mask_tensor", topk_mask_tensor)
    shape = tuple(x.shape)
    if len(shape) != 4:
        raise MeshnnValueError(f"ttnn.{op}: Input shape must be 4D, got {list(shape)}")
    if int_arg(op, "k", k) != 32:
        raise MeshnnValueError(f"ttnn.{op}: K must be equal to 32, pad with -infinity if necessary to get 32, got {k}")
    width = shape[-1]
    if width < 64 or width & (width - 1):
        raise MeshnnValueError(
            f"ttnn.{op}: Input shape inner dim {width} must be a power of 2 and at least 64, pad with -infinity"
        )
    if tuple(experts.shape) != (*shape[:2], 1, width):
        raise MeshnnValueError(
            f"ttnn.{op}: expert_mask_tensor must be {[*shape[:2], 1, width]}, got {list(experts.shape)}"
        )
    if tuple(top.shape) != (*shape[:2], 1, 32):
        raise MeshnnValueError(f"ttnn.{op}: topk_mask_tensor must be {[*shape[:2], 1, 32]}, got {list(top.shape)}")
    return x, experts, top


@register(kind=OpKind.REDUCTION, family=OpFamily.COPY, device_operation="MoeDeviceOperation", modelled=False)
@ttnn_keywords()
def moe(
    input_tensor: Tensor,
    expert_mask_tensor: Tensor,
    topk_mask_tensor: Tensor,
    k: int = 32,
    *,
    memory_config: MemoryConfig | None = None,
    output_tensor: Tensor | None = None,
) -> Tensor:
    """The routing weight of expert 0 per row (see the module docstring)."""
    op = "moe"
    x, experts, top = _moe_inputs(op, input_tensor, expert_mask_tensor, topk_mask_tensor, k)
    named = {"input_tensor": x, "expert_mask_tensor": experts, "topk_mask_tensor": top}
    mesh = same_mesh(op, named)
    if memory_config is not None and isinstance(memory_config, MemoryConfig) and memory_config.is_sharded():
        raise MeshnnValueError(f"ttnn.{op}: Sharded implementation not supported yet (memory_config is sharded)")
    spec = out_spec_like(x, shape=(*tuple(x.shape)[:-1], 1), memory_config=memory_config, op=op)
    into = None if output_tensor is None else [output_into(op, mesh, output_tensor, spec, x.storage.coords)]  # type: ignore[union-attr]
    specs = [t.spec for t in named.values()]

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]) -> None:
        gate, mask, top_mask = (logical_values(r, s) for r, s in zip(in_rows, specs, strict=True))
        scores = gate.astype(np.float64) + mask
        order = _order(scores, scores.ndim - 1, 32, True)
        best = np.take_along_axis(scores, order, axis=-1) + top_mask
        with np.errstate(invalid="ignore", over="ignore"):
            weights = np.exp(best - best.max(axis=-1, keepdims=True))
            weights /= weights.sum(axis=-1, keepdims=True)
        result = np.where(order == 0, weights, 0.0).sum(axis=-1, keepdims=True)
        write_values(out_rows[0], result.astype(np.float32), spec)

    attrs = {"k": 32, "memory_config": spec.memory_config}
    return launch(op, mesh, list(named.values()), [Output(spec)], kernel, into=into, rowwise=True, attrs=attrs)[0]
