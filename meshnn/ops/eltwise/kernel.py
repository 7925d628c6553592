"""How an element-wise op runs: :func:`elementwise` checks the operands and launches the kernel
:func:`elementwise_kernel` makes.  The kernel reads operands stored like the output in storage
order (tiles and faces as stored, padding included; never untilized), decodes other operands
(broadcast ones) to their logical shape, and hands bfloat16 operands to a native kernel
(:mod:`meshnn.ops.eltwise.native`) when one computes the same bytes.

May import: :mod:`meshnn.mesh`, :mod:`meshnn.tensor` and the ops' launch, checks, outputs, memo
and values modules.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from meshnn.formats.layout import Layout
from meshnn.mesh.coord import MeshCoordinate
from meshnn.mesh.mesh_device import MeshDevice
from meshnn.ops.checks import check_queue_id, same_mesh
from meshnn.ops.launch import Kernel, launch
from meshnn.ops.memo import BOUND_ROWS, known_values, settled
from meshnn.ops.outputs import Output, output_into
from meshnn.ops.values import logical_values, store_elements, stored_elements, write_values
from meshnn.tensor.memory_config import MemoryConfig
from meshnn.tensor.spec import TensorSpec
from meshnn.tensor.tensor import Tensor


def elementwise(
    op: str,
    inputs: Sequence[Tensor],
    out_spec: TensorSpec,
    compute: Callable[..., np.ndarray],
    *,
    scalars: Sequence[float] = (),
    queue_id: int = 0,
    output_tensor: object = None,
    native: Callable[..., None] | None = None,
    mesh: MeshDevice | None = None,
    kernel: Kernel | None = None,
    program_key: tuple | None = None,
) -> Tensor:
    """An element-wise op: ``compute(*arrays, *scalars)`` on float32 (or integer) arrays.

    Inputs of the output's shape, layout and tile are read in storage order (no untilizing);
    other inputs (broadcast operands) are decoded to their logical shape and broadcast.
    ``native(*input rows, output rows)``, when given, computes the same bytes straight from the
    inputs' bytes (:mod:`meshnn.ops.native`); it is used when every operand is stored like the
    output and its rows are contiguous.

    ``mesh``: the inputs' mesh, for a caller that has already checked them with :func:`same_mesh`
    (they are not checked again).  ``kernel``: :func:`elementwise_kernel` of these same specs,
    ``compute``, ``scalars`` and ``native``, made once by a caller that runs them again and again;
    ``program_key``: :func:`~meshnn.ops.program_keys.program_key` of ``op``, the inputs' specs, ``out_spec`` and
    :func:`elementwise_attrs`, made once by such a caller too.
    """
    if mesh is None:
        names = _OPERAND_NAMES.get(len(inputs)) or tuple(f"input {i}" for i in range(len(inputs)))
        mesh = same_mesh(op, dict(zip(names, inputs, strict=True)))
    if type(queue_id) is not int or queue_id != 0:  # an int 0 names queue 0, always there: nothing to check
        queue_id = check_queue_id(op, mesh, queue_id)
    into = None
    if output_tensor is not None:
        into = [output_into(op, mesh, output_tensor, out_spec, inputs[0].storage.coords)]  # type: ignore[union-attr]
    if kernel is None:
        kernel = elementwise_kernel([t.spec for t in inputs], out_spec, compute, scalars=scalars, native=native)
    return launch(
        op,
        mesh,
        inputs,
        [Output(out_spec)],
        kernel,
        queue_id=queue_id,
        into=into,
        rowwise=True,
        reads_memos=True,
        attrs=elementwise_attrs(out_spec),
        program_key=program_key,
        torch_elements=None if native is None else out_spec.compute_packed_buffer_size_bytes() // 2,
        fills=True,  # (a new output's buffer is its packed size: every byte of it is written)
        quiets=True,  # (elementwise_kernel's kernels: the only kernels it launches)
    )[0]


def elementwise_attrs(out_spec: TensorSpec) -> dict[str, object]:
    """What an element-wise op making ``out_spec`` tells the observers and the program cache."""
    return {"memory_config": out_spec.memory_config, "dtype": out_spec.dtype}


def elementwise_kernel(
    in_specs: Sequence[TensorSpec],
    out_spec: TensorSpec,
    compute: Callable[..., np.ndarray],
    *,
    scalars: Sequence[float] = (),
    native: Callable[..., None] | None = None,
) -> Kernel:
    """The kernel :func:`elementwise` runs for inputs of ``in_specs``: it depends on nothing else
    than its arguments (no tensor, buffer or mesh), so a caller may make it once and pass it to
    every :func:`elementwise` call with the same arguments.  It keeps numpy's floating-point
    warnings off itself, around its numpy work only."""
    in_specs = tuple(in_specs)
    scalars = tuple(scalars)
    direct = stored_alike(in_specs, out_spec)
    size = out_spec.compute_packed_buffer_size_bytes()

    def kernel(
        in_rows: Sequence[np.ndarray], out_rows: Sequence[np.ndarray], coords: tuple[MeshCoordinate, ...]
    ) -> None:
        out = out_rows[0] if out_rows[0].shape[1] == size else out_rows[0][:, :size]
        fast = native is not None and direct and not BOUND_ROWS  # (no memo bound: the bytes are the values)
        if fast and out.flags.c_contiguous and _contiguous_like(in_rows, out.shape):
            native(*in_rows, out)  # torch's and integer work alone: no floating-point warning to quiet
            return
        with np.errstate(all="ignore"):  # a device computes inf and NaN without a word
            general(in_rows, out_rows, out)

    def general(in_rows: Sequence[np.ndarray], out_rows: Sequence[np.ndarray], out: np.ndarray) -> None:
        known = [known_values(r, s) for r, s in zip(in_rows, in_specs, strict=True)] if BOUND_ROWS else ()
        if direct and not (known and all(v is not None for v in known)):  # no untilizing, unless memos say
            if BOUND_ROWS:
                for r in in_rows:
                    settled(r)  # the bytes are read below
            if native is not None and out.flags.c_contiguous and _contiguous_like(in_rows, out.shape):
                native(*in_rows, out)
                return
            arrays = [stored_elements(rows, spec) for rows, spec in zip(in_rows, in_specs, strict=True)]
            store_elements(_cast(compute(*arrays, *scalars), out_spec), out_spec, out)
            return
        arrays = [
            _broadcast_to(logical_values(r, s), out_spec, r.shape[0]) for r, s in zip(in_rows, in_specs, strict=True)
        ]
        result = compute(*arrays, *scalars)
        write_values(out_rows[0], _cast(result, out_spec), out_spec)

    return kernel


def stored_alike(in_specs: Sequence[TensorSpec], out_spec: TensorSpec) -> bool:
    """Whether every input of ``in_specs`` is stored like the output (same shape, layout and tile):
    the kernel then reads them in storage order, and a native kernel may take their bytes."""
    return all(s is out_spec or _storage_compatible(s, out_spec) for s in in_specs)


def _contiguous_like(rows: Sequence[np.ndarray], shape: tuple[int, ...]) -> bool:
    """Whether every array of ``rows`` is C-contiguous and of ``shape``."""
    return not [r for r in rows if not r.flags.c_contiguous or r.shape != shape]  # a list: cheaper than all(genexpr)


_OPERAND_NAMES = {1: ("input_tensor",), 2: ("input_tensor_a", "input_tensor_b")}


def _storage_compatible(spec: TensorSpec, out: TensorSpec) -> bool:
    if tuple(spec.shape) != tuple(out.shape) or spec.layout is not out.layout:
        return False
    return spec.layout is not Layout.TILE or spec.tile == out.tile


def _broadcast_to(values: np.ndarray, out: TensorSpec, k: int) -> np.ndarray:
    target = (k, *tuple(out.shape))
    shape = values.shape[1:]
    padded = (values.shape[0], *((1,) * (len(target) - 1 - len(shape))), *shape)
    return np.broadcast_to(values.reshape(padded), target)


def _cast(result: np.ndarray, out: TensorSpec) -> np.ndarray:
    result = np.asarray(result)
    if out.dtype.is_float:
        return result.astype(np.float32, copy=False)
    if result.dtype.kind == "f":
        return result.astype(np.float32, copy=False)  # float -> integer: the host conversion rules
    return result.astype(out.dtype.numpy_dtype, copy=False)


def memory_config_of(memory_config: object, output_tensor: object) -> object:
    """The memory config an op's output takes: ``output_tensor``'s when one is given (ttnn's
    element-wise device operations take a preallocated output's spec whole, a ``memory_config``
    given beside it choosing only the worker cores), else the given one.  A given value that is no
    ``MemoryConfig`` is returned, for the op's own check to refuse."""
    given = memory_config is None or isinstance(memory_config, MemoryConfig)
    if given and isinstance(output_tensor, Tensor) and output_tensor.is_allocated():
        return output_tensor.memory_config()
    return memory_config
