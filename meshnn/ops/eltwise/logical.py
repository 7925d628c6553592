"""How an element-wise op that needs its input's logical layout runs: the input decoded to its
logical values on every device (``(k, *shape)``), a function of them, the result written in the
output's format.  The ops whose output shape differs from the input's (``glu``, ``var_hw``,
``outer``) or whose result at one place depends on its place or on other places (``tril``,
``normalize_hw``, ``prelu`` per channel) run this way.

May import: :mod:`meshnn.mesh`, :mod:`meshnn.tensor` and the ops' launch, checks, outputs and
values modules.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from meshnn.formats.dtypes import DataType
from meshnn.mesh.coord import MeshCoordinate
from meshnn.ops.checks import check_queue_id, same_mesh
from meshnn.ops.eltwise.kernel import memory_config_of
from meshnn.ops.launch import launch
from meshnn.ops.outputs import Output, out_spec_like, output_into
from meshnn.ops.values import logical_values, write_values
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor

LogicalFunction = Callable[..., np.ndarray]
"""``function(*values)``: each input's ``(k, *shape)`` values (float32, or its integer type) ->
the ``(k, *output shape)`` result."""


def on_values(
    op: str,
    inputs: dict[str, Tensor],
    function: LogicalFunction,
    *,
    shape: Sequence[int] | None = None,
    dtype: DataType | None = None,
    memory_config: MemoryConfig | None = None,
    output_tensor: object = None,
    queue_id: int = 0,
    attrs: dict[str, object] | None = None,
) -> Tensor:
    """Run ``function`` over the logical values of ``inputs`` (checked device tensors, on one
    mesh; the first gives the output's layout) into an output of ``shape`` and ``dtype`` (the
    first input's by default), or into ``output_tensor``."""
    mesh = same_mesh(op, inputs)
    first = next(iter(inputs.values()))
    if type(queue_id) is not int or queue_id != 0:
        queue_id = check_queue_id(op, mesh, queue_id)
    memory_config = memory_config_of(memory_config, output_tensor)  # type: ignore[assignment]
    spec = out_spec_like(first, shape=shape, dtype=dtype, memory_config=memory_config, op=op)
    into = None
    if output_tensor is not None:
        into = [output_into(op, mesh, output_tensor, spec, first.storage.coords)]  # type: ignore[union-attr]
    specs = [t.spec for t in inputs.values()]

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]) -> None:
        values = [logical_values(rows, s) for rows, s in zip(in_rows, specs, strict=True)]
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            result = np.asarray(function(*values))
        k = values[0].shape[0]
        result = np.broadcast_to(result, (k, *spec.shape))
        if spec.dtype.is_float or result.dtype.kind == "f":
            result = result.astype(np.float32, copy=False)
        else:
            result = result.astype(spec.dtype.numpy_dtype, copy=False)
        write_values(out_rows[0], np.ascontiguousarray(result), spec)

    run = {"memory_config": spec.memory_config, "dtype": spec.dtype, **(attrs or {})}
    outputs = [Output(spec)]
    return launch(op, mesh, list(inputs.values()), outputs, kernel, queue_id=queue_id, into=into, rowwise=True,
                  attrs=run)[0]  # fmt: skip
