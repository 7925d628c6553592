"""What moreh's ops share: their checks of tensors (moreh's ``check_tensor``: on device, allocated,
one of the dtypes the op takes, TILE), their dims rule (``get_dim``: None or ``[]`` is every dim),
the shape of a reduction over one dim (``keepdim`` False drops a batch dim but keeps a reduced H
or W as 1), and how a kernel's destination register accumulates.

Accumulation: a moreh kernel adds its partial results (a matmul's products of one 32-wide K
block, a reduction's sums of one tile) in the destination register.  With the compute-kernel
config's ``fp32_dest_acc_en`` (default False) that register holds float32, else bfloat16: every
running sum is rounded to bfloat16 after each block.  :func:`accumulate` models that; the final
result is then rounded into the output's dtype as every op's is.

May import: every layer below the ops and the ops' checks, config, launch, outputs and values
modules.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.bfloat16 import round_to_bfloat16
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.mesh.coord import MeshCoordinate
from meshnn.ops.checks import device_input, same_mesh
from meshnn.ops.config import check_compute_kernel_config
from meshnn.ops.launch import launch
from meshnn.ops.outputs import Output, out_spec_like
from meshnn.ops.values import logical_values, write_values
from meshnn.tensor.spec import TensorSpec
from meshnn.tensor.tensor import Tensor

TILE = 32
"""A tile's edge: the K block of a matmul and the rows of a reduction's partial sums."""

BF16 = (DataType.BFLOAT16,)
BF16_BFP8 = (DataType.BFLOAT16, DataType.BFLOAT8_B)

Compute = Callable[[list[np.ndarray]], np.ndarray]
"""A kernel's arithmetic: the inputs' ``(k, *shape)`` values (:func:`values_of`) to the output's."""


def moreh_tensor(
    op: str, name: str, tensor: object, dtypes: Sequence[DataType] | None = BF16, *, tile: bool = True
) -> Tensor:
    """``tensor`` checked as moreh checks its tensors (device, allocated, dtype, TILE layout)."""
    checked = device_input(f"operations.moreh.{op}", name, tensor)
    if tile and checked.layout is not Layout.TILE:
        raise MeshnnValueError(f"ttnn.operations.moreh.{op}: moreh_{op} {name} only supports TILE layout.")
    if dtypes is not None and checked.dtype not in dtypes:
        names = ", ".join(d.name for d in dtypes)
        raise MeshnnTypeError(
            f"ttnn.operations.moreh.{op}: moreh_{op} {name} only supports specific data types. [{names}] "
            f"(got {checked.dtype.name})"
        )
    return checked


def optional_tensor(op: str, name: str, tensor: object, dtypes: Sequence[DataType] | None = BF16) -> Tensor | None:
    """None, or ``tensor`` checked by :func:`moreh_tensor`."""
    return None if tensor is None else moreh_tensor(op, name, tensor, dtypes)


def fp32_dest(op: str, config: object) -> bool:
    """Whether ``compute_kernel_config`` (checked; None: moreh's default) accumulates in float32."""
    checked = check_compute_kernel_config(f"operations.moreh.{op}", config)
    return bool(checked is not None and checked.fp32_dest_acc_en)


def flag(op: str, name: str, value: object) -> bool:
    """A bool argument, checked."""
    if not isinstance(value, bool | np.bool_):
        raise MeshnnTypeError(f"ttnn.operations.moreh.{op}: {name} must be a bool, got {value!r}")
    return bool(value)


def dims_of(op: str, dim: object, rank: int) -> list[int]:
    """moreh's ``get_dim``: None or ``[]`` is every dim; each dim checked to be in [0, rank)."""
    if dim is None:
        return list(range(rank))
    items = [dim] if isinstance(dim, int | np.integer) and not isinstance(dim, bool) else dim
    if not isinstance(items, Sequence) or isinstance(items, str):
        raise MeshnnTypeError(f"ttnn.operations.moreh.{op}: dim must be an int or a list of ints, got {dim!r}")
    dims = [int(d) for d in items if isinstance(d, int | np.integer) and not isinstance(d, bool)]
    if len(dims) != len(items):
        raise MeshnnTypeError(f"ttnn.operations.moreh.{op}: dim must hold ints, got {dim!r}")
    if not dims:
        return list(range(rank))
    for d in dims:
        if not 0 <= d < rank:
            raise MeshnnValueError(
                f"ttnn.operations.moreh.{op}: dim must be smaller than input tensor rank {rank} and not negative, "
                f"got {d}"
            )
    return sorted(set(dims))


def reduced_shape(shape: Sequence[int], dims: Sequence[int], keepdim: bool) -> tuple[int, ...]:
    """The output shape of moreh's reduction over ``dims`` (each one a device op, highest first):
    a reduced dim becomes 1, and without ``keepdim`` a reduced batch dim is dropped while a reduced
    H or W stays 1 (as moreh's tiles keep it)."""
    out = list(shape)
    for d in sorted(dims, reverse=True):
        tile_dim = d >= len(out) - 2
        if keepdim or tile_dim:
            out[d] = 1
        else:
            del out[d]
    return tuple(out)


def kept_shape(shape: Sequence[int], dims: Sequence[int]) -> tuple[int, ...]:
    """``shape`` with every dim of ``dims`` as 1 (the reduction's shape with keepdim)."""
    return tuple(1 if i in dims else s for i, s in enumerate(shape))


def bf16(values: np.ndarray) -> np.ndarray:
    """``values`` rounded to bfloat16 (float32 values of the bfloat16 value set)."""
    return round_to_bfloat16(np.ascontiguousarray(values, dtype=np.float32)).astype(np.float64)


def accumulate(parts: Iterable[np.ndarray], fp32: bool) -> np.ndarray:
    """The sum of ``parts`` (partial results, in the order a kernel adds them) as the destination
    register keeps it: float32, and with ``fp32`` False rounded to bfloat16 after every addition
    (the first part too: it is held there).  Returns float32 values."""
    total: np.ndarray | None = None
    for part in parts:
        if total is None:
            total = np.array(part, dtype=np.float32, order="C")  # a copy: the running sum is the kernel's own
        else:
            np.add(total, part, out=total, casting="unsafe")
        if not fp32:
            round_to_bfloat16(total, in_place=True)
    assert total is not None, "accumulate needs at least one part"
    return total


def reduce_axis(x: np.ndarray, axis: int, tile_dim: bool, fp32: bool) -> np.ndarray:
    """``x`` summed over ``axis`` (kept as 1) as a moreh reduction adds it: a batch dim one tile
    at a time, an H or W dim one tile's 32 rows at a time."""
    block = TILE if tile_dim else 1
    size = x.shape[axis]
    if fp32 or size <= block:
        return x.sum(axis=axis, keepdims=True, dtype=np.float64)
    parts = (
        np.take(x, range(start, min(start + block, size)), axis=axis).sum(axis=axis, keepdims=True, dtype=np.float64)
        for start in range(0, size, block)
    )
    return accumulate(parts, fp32)


def values_of(rows: np.ndarray, spec: TensorSpec) -> np.ndarray:
    """A kernel input's ``(k, *shape)`` values: float32 (every value of a float dtype is one),
    int64 for an integer dtype; the arithmetic widens them where it sums."""
    values = logical_values(rows, spec)
    return values.astype(np.int64 if values.dtype.kind in "iu" else np.float32)


def output_spec(op: str, like: Tensor, shape: Sequence[int], memory_config: object, dtype=None) -> TensorSpec:
    """A new output's spec: ``like``'s dtype and layout, ``shape``, the memory config given."""
    return out_spec_like(
        like, shape=tuple(shape), dtype=dtype, memory_config=memory_config, op=f"operations.moreh.{op}"
    )


def into_tensor(op: str, name: str, output: object, shape: Sequence[int], dtypes=BF16) -> Tensor | None:
    """A preallocated ``output`` checked to hold ``shape`` (None: the op allocates one)."""
    if output is None:
        return None
    tensor = moreh_tensor(op, name, output, dtypes)
    if tuple(tensor.shape) != tuple(shape):
        raise MeshnnValueError(
            f"ttnn.operations.moreh.{op}: {name} has shape {list(tensor.shape)}; the op's output is {list(shape)}"
        )
    return tensor


def run(
    op: str,
    inputs: Sequence[Tensor],
    spec: TensorSpec | None,
    into: Tensor | None,
    compute: Compute,
    attrs: dict[str, object],
    names: Sequence[str] = (),
    launched_as: str = "",
) -> Tensor:
    """One device op ``moreh.<op>``: ``compute`` of the inputs' values, rounded into the output
    (``into``, written in place, else a new tensor of ``spec``); ``names``: the inputs' argument
    names (for errors); ``launched_as``: the moreh op whose device op this is when it is not
    ``op``'s own (the perf model's family and the program cache follow it)."""
    named = {(names[i] if i < len(names) else f"input {i}"): t for i, t in enumerate(inputs)}
    if into is not None:
        named["output"] = into
    mesh = same_mesh(f"operations.moreh.{op}", named)
    out_spec = into.spec if into is not None else spec
    assert out_spec is not None

    in_specs = [t.spec for t in inputs]  # (the kernel holds no tensor: a trace must not keep it allocated)

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]) -> None:
        values = [values_of(rows, s) for rows, s in zip(in_rows, in_specs, strict=True)]
        result = np.asarray(compute(values))
        if not out_spec.dtype.is_float:
            result = np.rint(result).astype(np.int64)
        write_values(out_rows[0], np.reshape(result, (result.shape[0], *out_spec.shape)), out_spec)

    recorded = {"memory_config": out_spec.memory_config, **attrs}
    outputs = [Output(out_spec)]
    into_list = [into] if into is not None else None
    name = f"moreh.{launched_as or op}"
    return launch(name, mesh, list(inputs), outputs, kernel, into=into_list, rowwise=True, attrs=recorded)[0]
