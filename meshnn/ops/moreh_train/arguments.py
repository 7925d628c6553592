"""The checks moreh's training ops make of their arguments, and how they write their outputs.

moreh's ops check each tensor as moreh's ``check_tensor`` does: on the device, allocated, TILE
layout and one of the dtypes the op takes (BFLOAT16 unless the op says otherwise).  Scalars are
checked to be numbers / bools / non-negative ints (ttnn's bindings take ``float``, ``bool`` and
``uint32``).  Errors name ``ttnn.operations.moreh.<op>`` and the argument.

Outputs: an op's optional output tensors (``output``, ``param_out``, ``input_grad``...) are written
in place (the same MeshBuffer, returned); those not given are allocated together, all or none
(:func:`outputs_for`), after every check passed.  :func:`run_elementwise` then runs one program
that reads every input's values (float32 / int32), computes the outputs in float64 and rounds each
into its own tensor's dtype.

May import: every layer below the ops and the ops' checks, config, launch, outputs and values.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.mesh.coord import MeshCoordinate
from meshnn.mesh.mesh_device import MeshDevice
from meshnn.ops.checks import device_input, same_mesh
from meshnn.ops.config import check_compute_kernel_config
from meshnn.ops.launch import launch
from meshnn.ops.outputs import Output, allocate_outputs, output_tensors
from meshnn.ops.values import logical_values, write_values
from meshnn.tensor.spec import MemoryConfig, TensorSpec
from meshnn.tensor.tensor import Tensor

BF16 = (DataType.BFLOAT16,)
"""The dtype moreh's kernels take by default."""

Compute = Callable[[list[np.ndarray]], list[np.ndarray]]
"""``compute(inputs)``: each input's ``(k, *shape)`` values in, each output's float64 values out
(``(k, ...)`` of the output's size)."""


def label(op: str) -> str:
    """ttnn's path of the registry's ``moreh.<op>``, as errors name it: ``operations.moreh.<op>``."""
    return f"operations.{op}"


def moreh_tensor(op: str, name: str, tensor: object, dtypes: Sequence[DataType] = BF16) -> Tensor:
    """``tensor`` checked as moreh's ``check_tensor``: a usable device tensor, TILE, of ``dtypes``."""
    t = device_input(label(op), name, tensor)
    if t.layout is not Layout.TILE:
        raise MeshnnValueError(f"ttnn.{label(op)}: {name} only supports TILE layout, got {t.layout}")
    if dtypes and t.dtype not in dtypes:
        allowed = ", ".join(d.name for d in dtypes)
        raise MeshnnTypeError(f"ttnn.{label(op)}: {name} only supports [{allowed}], got {t.dtype.name}")
    return t


def optional_tensor(op: str, name: str, tensor: object, dtypes: Sequence[DataType] = BF16) -> Tensor | None:
    """None, or ``tensor`` checked by :func:`moreh_tensor`."""
    return None if tensor is None else moreh_tensor(op, name, tensor, dtypes)


def number(op: str, name: str, value: object) -> float:
    """``value`` checked to be a real number (an int counts; a bool does not)."""
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise MeshnnTypeError(f"ttnn.{label(op)}: {name} must be a number, got {value!r}")
    return float(value)


def flag(op: str, name: str, value: object) -> bool:
    """``value`` checked to be a bool."""
    if not isinstance(value, bool | np.bool_):
        raise MeshnnTypeError(f"ttnn.{label(op)}: {name} must be a bool, got {value!r}")
    return bool(value)


def uint(op: str, name: str, value: object) -> int:
    """``value`` checked to be a non-negative int (ttnn's binding takes a uint32)."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 0:
        raise MeshnnTypeError(f"ttnn.{label(op)}: {name} must be a non-negative int (a uint32), got {value!r}")
    return int(value)


def memory_config_arg(op: str, name: str, value: object) -> MemoryConfig | None:
    """None or a ttnn.MemoryConfig."""
    if value is not None and not isinstance(value, MemoryConfig):
        raise MeshnnTypeError(f"ttnn.{label(op)}: {name} must be a ttnn.MemoryConfig, got {value!r}")
    return value


def kernel_config(op: str, value: object) -> object:
    """``compute_kernel_config`` checked (None or a compute-kernel config)."""
    return check_compute_kernel_config(label(op), value)


def one_mesh(op: str, named: dict[str, Tensor | None]) -> MeshDevice:
    """The mesh every given tensor (inputs and outputs) is on, over the same devices."""
    return same_mesh(label(op), {n: t for n, t in named.items() if t is not None})


def given_output(op: str, name: str, tensor: Tensor | None, shape: Sequence[int]) -> Tensor | None:
    """A given output tensor checked to hold ``shape``'s elements (its own spec is the output's)."""
    if tensor is not None and int(np.prod(tensor.shape)) != int(np.prod(shape)):
        raise MeshnnValueError(f"ttnn.{label(op)}: {name} is {list(tensor.shape)}; the output is {list(shape)}")
    return tensor


def outputs_for(
    mesh: MeshDevice, like: Tensor, specs: Sequence[TensorSpec | None], given: Sequence[Tensor | None]
) -> list[Tensor | None]:
    """The op's outputs: each given tensor, else a new one of its spec (None where neither); the
    new ones are allocated together (a failure frees those made), over ``like``'s devices."""
    need = [i for i, (s, g) in enumerate(zip(specs, given, strict=True)) if g is None and s is not None]
    result = list(given)
    if need:
        buffers = allocate_outputs(mesh, [specs[i] for i in need])  # type: ignore[misc]
        outs = [Output(specs[i]) for i in need]  # type: ignore[arg-type]
        made = output_tensors(mesh, outs, buffers, like, like.storage.coords)  # type: ignore[union-attr]
        for i, tensor in zip(need, made, strict=True):
            result[i] = tensor
    return result


def run_elementwise(
    op: str, mesh: MeshDevice, inputs: Sequence[Tensor], targets: Sequence[Tensor], compute: Compute, attrs: dict
) -> None:
    """One program: ``compute`` over every input's values, each result rounded into its target
    (inputs are all read before any target is written, so a target may be an input)."""
    specs = [t.spec for t in inputs]
    out_specs = [t.spec for t in targets]

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], where: tuple[MeshCoordinate, ...]) -> None:
        values = [logical_values(r, s) for r, s in zip(in_rows, specs, strict=True)]
        results = compute(values)
        for row, spec, result in zip(out_rows, out_specs, results, strict=True):
            shaped = np.asarray(result, dtype=np.float64).reshape((row.shape[0], *spec.shape))
            write_values(row, shaped.astype(np.float32), spec)

    outputs = [Output(s) for s in out_specs]
    launch(op, mesh, list(inputs), outputs, kernel, into=list(targets), rowwise=True, attrs=attrs)
