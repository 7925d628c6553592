"""``ttnn.matmul_batched_weights``: one activation times several weights of one shape (the
prefetcher's layers of equal shape, read through one global circular buffer), a product per
weight, each as :func:`~meshnn.ops.matmul.matmul` computes it, with ttnn's check that every
weight has the first's logical and padded shapes.

May import: :mod:`meshnn.errors`, :mod:`meshnn.tensor` and the matmul op.
"""

from __future__ import annotations

from collections.abc import Sequence

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.ops import goldens
from meshnn.ops.checks import device_input
from meshnn.ops.matmul import matmul
from meshnn.ops.registry import OpKind, register
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor


def _weights(op: str, input_tensors_b: object) -> list[Tensor]:
    if isinstance(input_tensors_b, Tensor) or not isinstance(input_tensors_b, Sequence) or not input_tensors_b:
        raise MeshnnTypeError(f"ttnn.{op}: input_tensors_b must be a non-empty list of ttnn.Tensor")
    weights = [device_input(op, f"input_tensors_b[{i}]", b) for i, b in enumerate(input_tensors_b)]
    first = weights[0]
    for i, b in enumerate(weights[1:], 1):
        if tuple(b.shape) != tuple(first.shape):
            raise MeshnnValueError(
                f"ttnn.{op}: for multi-tensor matmul, all weight tensors must have the same logical_shape, "
                f"{list(first.shape)} is not equal to {list(b.shape)} (input_tensors_b[{i}])"
            )
        if tuple(b.spec.padded_shape) != tuple(first.spec.padded_shape):
            raise MeshnnValueError(
                f"ttnn.{op}: for multi-tensor matmul, all weight tensors must have the same padded_shape "
                f"(input_tensors_b[{i}])"
            )
    return weights


@register(kind=OpKind.MATMUL, family=OpFamily.MATMUL, golden=goldens.matmul)
def matmul_batched_weights(
    input_tensor_a: Tensor,
    input_tensors_b: Sequence[Tensor],
    *,
    transpose_a: bool = False,
    transpose_b: bool = False,
    memory_config: MemoryConfig | None = None,
    dtype: DataType | None = None,
    program_config: object = None,
    activation: str | None = None,
    compute_kernel_config: object = None,
    core_grid: object = None,
    output_tile: object = None,
    optional_output_tensor: object = None,
    global_cb: object = None,
    sub_device_id: object = None,
) -> list[Tensor]:
    """``[input_tensor_a @ b for b in input_tensors_b]``, each a matmul with these arguments."""
    op = "matmul_batched_weights"
    weights = _weights(op, input_tensors_b)
    if optional_output_tensor is not None and len(weights) > 1:
        raise MeshnnValueError(f"ttnn.{op}: optional_output_tensor holds one product, but {len(weights)} are made")
    return [
        matmul(
            input_tensor_a,
            b,
            transpose_a=transpose_a,
            transpose_b=transpose_b,
            memory_config=memory_config,
            dtype=dtype,
            activation=activation,
            program_config=program_config,
            compute_kernel_config=compute_kernel_config,
            core_grid=core_grid,
            output_tile=output_tile,
            optional_output_tensor=optional_output_tensor,
            global_cb=global_cb,
            sub_device_id=sub_device_id,
            op=op,
        )
        for b in weights
    ]
