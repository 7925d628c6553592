"""How a backward op runs: one element-wise program per gradient it returns (ttnn's backward ops are
composites of element-wise ops; each gradient is one result), each computing the derivative from
the decoded operands in float32 and rounding once into the output's dtype.

A gradient has the shape of the input it belongs to and the incoming gradient's dtype and layout
(ttnn's composites start from ``grad_tensor``); ``memory_config`` (else the incoming gradient's)
places it.  A preallocated output (``input_grad``, ``other_grad``...) of that shape is written in
place and returned; a gradient not required (``are_required_outputs``) is None.  Every argument is
checked before anything is allocated or run.

Gradients whose shape is not the element-wise one (``concat_bw``, ``repeat_bw``, ``prod_bw``...)
run through :func:`shaped`, whose compute gets every operand's logical values.

May import: :mod:`meshnn.errors`, :mod:`meshnn.tensor` and the ops' checks, outputs, launch,
values and element-wise kernel modules.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.mesh.mesh_device import MeshDevice
from meshnn.ops.checks import check_queue_id, device_input, same_mesh
from meshnn.ops.eltwise.kernel import elementwise
from meshnn.ops.launch import launch
from meshnn.ops.outputs import Output, out_spec_like, output_into
from meshnn.ops.values import logical_values, write_values
from meshnn.tensor.spec import MemoryConfig, TensorSpec
from meshnn.tensor.tensor import Tensor

Compute = Callable[..., np.ndarray]
"""``compute(grad, *inputs)``: one gradient over float32 arrays (broadcast to its shape)."""


@dataclass(frozen=True)
class Result:
    """One result an op returns (a gradient, or a part of a complex result): its ``compute`` and
    the name of the operand whose shape it has (``compute`` None: the op returns None there)."""

    compute: Compute | None
    like: str


def checked_inputs(op: str, tensors: Mapping[str, object]) -> tuple[dict[str, Tensor], MeshDevice]:
    """The named operands checked to be usable device tensors on one mesh, and that mesh."""
    checked = {name: device_input(op, name, t) for name, t in tensors.items()}
    return checked, same_mesh(op, checked)


def results(
    op: str,
    tensors: Mapping[str, object],
    grads: Sequence[Result],
    *,
    memory_config: MemoryConfig | None = None,
    queue_id: int = 0,
    required: Sequence[bool] | None = None,
    into: Sequence[object] = (),
) -> list[Tensor | None]:
    """The results ``grads`` of the op ``op`` from its operands ``tensors`` (the incoming
    gradient first, by ttnn's argument names), each into the matching ``into`` tensor when one is
    given; ``required[k]`` False (or ``grads[k].compute`` None) leaves result ``k`` None."""
    checked, mesh = checked_inputs(op, tensors)
    if type(queue_id) is not int or queue_id != 0:
        check_queue_id(op, mesh, queue_id)
    required = required_flags(op, required, len(grads))
    into = list(into) + [None] * (len(grads) - len(into))
    grad = next(iter(checked.values()))
    plans: list[tuple[int, TensorSpec, Tensor | None]] = []
    for index, (g, wanted, target) in enumerate(zip(grads, required, into, strict=True)):
        if g.compute is None or not wanted:
            continue
        like = checked[g.like]
        spec = output_spec(op, grad, like, memory_config, target, mesh, index)
        _check_broadcast(op, checked, spec)
        plans.append((index, spec, target))  # type: ignore[arg-type]
    results: list[Tensor | None] = [None] * len(grads)
    inputs = list(checked.values())
    for index, spec, target in plans:
        compute = _as_float(grads[index].compute)  # type: ignore[arg-type]
        results[index] = elementwise(op, inputs, spec, compute, queue_id=queue_id, output_tensor=target, mesh=mesh)
    return results


def required_flags(op: str, required: Sequence[bool] | None, count: int) -> list[bool]:
    """``are_required_outputs`` checked (``count`` bools, at least one True); None: all True."""
    if required is None:
        return [True] * count
    flags = list(required)
    if len(flags) != count or not all(isinstance(f, bool) for f in flags):
        raise MeshnnValueError(f"ttnn.{op}: are_required_outputs must be {count} bools, got {flags!r}")
    if not any(flags):
        raise MeshnnValueError(f"ttnn.{op}: are_required_outputs asks for no gradient; at least one is expected")
    return flags


def output_spec(
    op: str,
    grad: Tensor,
    like: Tensor,
    memory_config: MemoryConfig | None,
    target: object,
    mesh: MeshDevice,
    index: int,
) -> TensorSpec:
    """The spec of one gradient: the preallocated output's (checked to fit), else the incoming
    gradient's with ``like``'s shape."""
    if target is None:
        return out_spec_like(grad, shape=tuple(like.shape), memory_config=memory_config, op=op)
    if not isinstance(target, Tensor):
        raise MeshnnTypeError(f"ttnn.{op}: output {index} must be a ttnn.Tensor, got {type(target).__name__}")
    tensor = device_input(op, f"output {index}", target)
    if tuple(tensor.shape) != tuple(like.shape):
        raise MeshnnValueError(
            f"ttnn.{op}: the preallocated gradient {index} is {list(tensor.shape)}; the gradient is {list(like.shape)}"
        )
    return output_into(op, mesh, tensor, tensor.spec, grad.storage.coords).spec  # type: ignore[union-attr]


def _check_broadcast(op: str, tensors: Mapping[str, Tensor], spec: TensorSpec) -> None:
    """Every operand broadcasts to the gradient's shape (what the element-wise kernel reads)."""
    shape = tuple(spec.shape)
    for name, t in tensors.items():
        try:
            grown = np.broadcast_shapes(tuple(t.shape), shape)
        except ValueError:
            grown = None
        if grown != shape:
            raise MeshnnValueError(
                f"ttnn.{op}: {name} {list(t.shape)} does not broadcast to the gradient's shape {list(shape)}"
            )


def _as_float(compute: Compute) -> Compute:
    """``compute`` over float32 operands (integer ones converted), inf and NaN computed silently."""

    def run(*arrays: np.ndarray) -> np.ndarray:
        floats = [x if x.dtype == np.float32 else x.astype(np.float32) for x in arrays]
        with np.errstate(all="ignore"):
            return np.asarray(compute(*floats), dtype=np.float32)

    return run


def shaped(
    op: str,
    tensors: Mapping[str, Tensor],
    mesh: MeshDevice,
    spec: TensorSpec,
    compute: Callable[..., np.ndarray],
    *,
    queue_id: int = 0,
    into: Tensor | None = None,
) -> Tensor:
    """One output of ``spec`` from checked operands ``tensors``: ``compute(*values)`` gets each
    operand's logical values (float32, a leading device axis) and returns ``(k, *spec.shape)``."""
    inputs = list(tensors.values())
    specs = [t.spec for t in inputs]

    def kernel(in_rows, out_rows, coords) -> None:
        values = [logical_values(r, s) for r, s in zip(in_rows, specs, strict=True)]
        with np.errstate(all="ignore"):
            result = np.asarray(compute(*values), dtype=np.float32)
        write_values(out_rows[0], result, spec)

    targets = None if into is None else [output_into(op, mesh, into, spec, inputs[0].storage.coords)]
    attrs = {"memory_config": spec.memory_config, "dtype": spec.dtype}
    return launch(
        op,
        mesh,
        inputs,
        [Output(spec)],
        kernel,
        queue_id=queue_id,
        into=targets,
        rowwise=True,
        reads_memos=True,
        attrs=attrs,
    )[0]
