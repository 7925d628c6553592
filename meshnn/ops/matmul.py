"""``ttnn.matmul`` and ``ttnn.linear``: per-device matrix products, batched and broadcast.

Each device multiplies its own shards (data or tensor parallelism is the caller's sharding); the
product of every device is one stacked ``np.matmul`` in float32.
"""

from __future__ import annotations

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.mesh.coord import MeshCoordinate
from meshnn.ops.eltwise import UNARY
from meshnn.ops.execution import (
    Output,
    check_queue_id,
    device_input,
    launch,
    logical_values,
    out_spec_like,
    output_into,
    relaid_memo,
    same_mesh,
    same_values_on_every_device,
    write_values,
)
from meshnn.tensor import device_hooks
from meshnn.tensor.dtypes import DataType
from meshnn.tensor.layout import Layout
from meshnn.tensor.memory_config import DRAM_MEMORY_CONFIG, MemoryConfig
from meshnn.tensor.spec import TensorSpec
from meshnn.tensor.tensor import Tensor


def _matmul_shape(a: tuple[int, ...], b: tuple[int, ...], op: str) -> tuple[int, ...]:
    if len(a) < 1 or len(b) < 1:
        raise MeshnnValueError(f"ttnn.{op}: operands need rank >= 1, got {list(a)} and {list(b)}")
    a2 = a if len(a) > 1 else (1, *a)
    b2 = b if len(b) > 1 else (*b, 1)
    if a2[-1] != b2[-2]:
        raise MeshnnValueError(
            f"ttnn.{op}: the inner dimensions must match: input_tensor_a {list(a)} x input_tensor_b {list(b)} "
            f"({a2[-1]} != {b2[-2]})"
        )
    try:
        batch = np.broadcast_shapes(a2[:-2], b2[:-2])
    except ValueError:
        raise MeshnnValueError(f"ttnn.{op}: batch dimensions of {list(a)} and {list(b)} do not broadcast") from None
    out = (*batch, a2[-2], b2[-1])
    if len(a) == 1:
        out = (*out[:-2], out[-1])
    if len(b) == 1:
        out = out[:-1]
    return tuple(out)


def _transposed(shape: tuple[int, ...], flag: bool) -> tuple[int, ...]:
    return (*shape[:-2], shape[-1], shape[-2]) if flag and len(shape) >= 2 else shape


def _activation(name: object, op: str) -> object:
    if name is None:
        return None
    if isinstance(name, str) and name.lower() in UNARY:
        return UNARY[name.lower()]
    raise MeshnnValueError(f"ttnn.{op}: activation {name!r} is not one of {sorted(UNARY)}")


def matmul(
    input_tensor_a: Tensor,
    input_tensor_b: Tensor,
    *,
    transpose_a: bool = False,
    transpose_b: bool = False,
    memory_config: MemoryConfig | None = None,
    dtype: DataType | None = None,
    bias: Tensor | None = None,
    activation: str | None = None,
    program_config: object = None,
    compute_kernel_config: object = None,
    core_grid: object = None,
    output_tile: object = None,
    optional_output_tensor: object = None,
    queue_id: int = 0,
    op: str = "matmul",
) -> Tensor:
    """``a @ b`` on every device (with ``bias`` added and ``activation`` applied for linear), on
    command queue ``queue_id``, into ``optional_output_tensor`` when given (its spec must be the
    output's)."""
    a = device_input(op, "input_tensor_a", input_tensor_a)
    b = device_input(op, "input_tensor_b", input_tensor_b)
    named = {"input_tensor_a": a, "input_tensor_b": b}
    if bias is not None:
        named["bias"] = device_input(op, "bias", bias)
    mesh = same_mesh(op, named)
    if not isinstance(transpose_a, bool) or not isinstance(transpose_b, bool):
        raise MeshnnTypeError(f"ttnn.{op}: transpose_a / transpose_b must be bools")
    a_shape, b_shape = _transposed(tuple(a.shape), transpose_a), _transposed(tuple(b.shape), transpose_b)
    shape = _matmul_shape(a_shape, b_shape, op)
    if bias is not None:
        try:
            np.broadcast_shapes(tuple(bias.shape), shape)
        except ValueError:
            raise MeshnnValueError(f"ttnn.{op}: bias {list(bias.shape)} does not broadcast to {list(shape)}") from None
    queue_id = check_queue_id(op, mesh, queue_id)
    act = _activation(activation, op)
    config = memory_config if memory_config is not None else DRAM_MEMORY_CONFIG
    spec = out_spec_like(a, shape=shape, dtype=dtype, memory_config=config, op=op)
    inputs = list(named.values())
    specs = [t.spec for t in inputs]
    direct = spec.dtype is DataType.FLOAT32 and spec.layout is Layout.ROW_MAJOR and spec.explicit_padded_shape is None
    # x @ a weight matrix sharded by columns (column-parallel linear): one product when x is the same
    # on every device, of x with the shards side by side (see _one_product)
    columns = not transpose_a and not transpose_b and len(a.shape) >= 2 and len(b.shape) == 2 and not direct

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]) -> None:
        x = logical_values(in_rows[0], specs[0])
        w = logical_values(in_rows[1], specs[1])  # weights: decoded once
        if columns and x.shape[0] > 1 and x.dtype == w.dtype == np.float32 and same_values_on_every_device(x):
            result = _one_product(x, w, in_rows[1], specs[1]).reshape((x.shape[0], *shape))
            _finish(result, in_rows, out_rows, owned=True)  # a transposed view of the product, ours alone
            return
        if transpose_a:
            x = np.swapaxes(x, -1, -2)
        if transpose_b:
            w = np.swapaxes(w, -1, -2)
        if x.ndim == 2:  # rank-1 operands: the stacked device axis is the batch
            x = x[:, None, :]
        if w.ndim == 2:
            w = w[:, :, None]
        x, w = _align_batch(x, w)
        x, w = x.astype(np.float32, copy=False), w.astype(np.float32, copy=False)
        if direct and bias is None and act is None:  # float32 row-major: multiply into the slab
            natural = (*np.broadcast_shapes(x.shape[:-2], w.shape[:-2]), x.shape[-2], w.shape[-1])
            target = out_rows[0][:, : spec.compute_packed_buffer_size_bytes()].view(np.float32)
            if target.size == int(np.prod(natural)) and target.flags.c_contiguous:
                np.matmul(x, w, out=target.reshape(natural))
                return
        result = np.matmul(x, w)
        _finish(result.reshape((result.shape[0], *shape)), in_rows, out_rows)

    def _finish(
        result: np.ndarray, in_rows: list[np.ndarray], out_rows: list[np.ndarray], *, owned: bool = False
    ) -> None:
        if bias is not None:
            result = result + _expand(logical_values(in_rows[2], specs[2]), result.ndim)
            owned = False
        if act is not None:
            result = act(result)
            owned = False
        write_values(out_rows[0], result, spec, owned=owned)

    into = None
    if optional_output_tensor is not None:
        into = [output_into(op, mesh, optional_output_tensor, spec, a.storage.coords)]  # type: ignore[union-attr]
    return launch(
        op, mesh, inputs, [Output(spec)], kernel, queue_id=queue_id, into=into, rowwise=True, reads_memos=True
    )[0]


def _one_product(x: np.ndarray, w: np.ndarray, w_rows: np.ndarray, w_spec: TensorSpec) -> np.ndarray:
    """``x @ w`` of every device as one matrix product, for x ``(k, ..., K)`` the same on every
    device and ``w`` ``(k, K, N)``: ``x[0] @ [w_0 | w_1 | ... | w_k-1]`` is each device's product
    side by side, for one call of BLAS on the whole width instead of k narrower ones.  The shards
    side by side are ``w`` transposed to ``(K, k, N)``; that copy is made once, when ``w`` comes
    from its buffer's memo, whose values then stay in that layout (:func:`relaid_memo`)."""
    k, big_k, n = w.shape
    side_by_side = w.transpose(1, 0, 2)
    if not side_by_side.flags.c_contiguous:
        side_by_side = np.ascontiguousarray(side_by_side)
        side_by_side.flags.writeable = False
        relaid_memo(w_rows, w_spec, side_by_side.transpose(1, 0, 2))
    rows = x[0].reshape(-1, big_k)
    product = rows @ side_by_side.reshape(big_k, k * n)
    return product.reshape(rows.shape[0], k, n).transpose(1, 0, 2)


def _align_batch(x: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Give both stacked operands the same rank, device axis first."""
    while x.ndim < w.ndim:
        x = x[:, None]
    while w.ndim < x.ndim:
        w = w[:, None]
    return x, w


def _expand(values: np.ndarray, ndim: int) -> np.ndarray:
    while values.ndim < ndim:
        values = values.reshape(values.shape[0], 1, *values.shape[1:])
    return values


def linear(
    input_tensor_a: Tensor,
    input_tensor_b: Tensor,
    *,
    bias: Tensor | None = None,
    transpose_a: bool = False,
    transpose_b: bool = False,
    memory_config: MemoryConfig | None = None,
    dtype: DataType | None = None,
    activation: str | None = None,
    program_config: object = None,
    compute_kernel_config: object = None,
    core_grid: object = None,
    output_tile: object = None,
    optional_output_tensor: object = None,
    queue_id: int = 0,
) -> Tensor:
    """``input @ weight + bias`` (``weight`` is (in, out), as ttnn stores it), then ``activation``."""
    return matmul(
        input_tensor_a,
        input_tensor_b,
        transpose_a=transpose_a,
        transpose_b=transpose_b,
        memory_config=memory_config,
        dtype=dtype,
        bias=bias,
        activation=activation,
        optional_output_tensor=optional_output_tensor,
        queue_id=queue_id,
        op="linear",
    )


device_hooks.register("matmul", matmul)  # a @ b
