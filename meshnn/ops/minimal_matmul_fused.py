"""The minimal matmul's fused forms of tt-metal 2026 (``ttnn.experimental``), each one program of
``MinimalMatmulDeviceOperation`` there:

- ``minimal_matmul_split``: ``input @ weight [+ bias]`` then ``fused_activation``, returned as
  ``chunks`` tensors of ``N / chunks`` columns each (a fused Q / K / V projection). tt-metal's rules:
  ``chunks >= 1``, ``dim == -1`` only, ``N`` divisible by ``chunks`` and each chunk a whole number of
  tiles (a multiple of 32 columns).
- ``dit_minimal_matmul_addcmul_fused``: ``addcmul_input_tensor1 + scalar * (input @ weight [+ bias])
  * addcmul_input_tensor2`` (a DiT block's gated residual): tensor1 of the output's ``[M, N]``,
  tensor2 ``[1, N]`` (a row broadcast) or ``[M, N]``, both TILE on the same device.  The product is
  kept in float32 and the whole expression rounded once into the output dtype, as the fused kernel
  packs it once.

Operands, bias and config are checked as ``ttnn.experimental.minimal_matmul`` checks them; outputs
take the input's memory config and dtype unless ``memory_config`` / ``dtype`` are given.

May import: :mod:`meshnn.errors`, :mod:`meshnn.formats`, :mod:`meshnn.tensor` and the ops' checks,
registry, matmul, split, ternary and minimal matmul modules.
"""

from __future__ import annotations

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.ops.activation_arg import activation_arg
from meshnn.ops.checks import int_arg, same_mesh
from meshnn.ops.config import UnaryWithParam
from meshnn.ops.data_movement import typecast
from meshnn.ops.eltwise.ternary_ops import addcmul
from meshnn.ops.matmul import matmul
from meshnn.ops.matmul_config import MinimalMatmulConfig
from meshnn.ops.minimal_matmul import _checked, _operand
from meshnn.ops.registry import OpKind, register, torch_golden
from meshnn.ops.split import split
from meshnn.perf.desc import OpFamily
from meshnn.tensor.lifetime import deallocate
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor

SPLIT = "experimental.minimal_matmul_split"
ADDCMUL = "experimental.dit_minimal_matmul_addcmul_fused"


def _golden_split(torch, input_tensor, weight_tensor, *, chunks=3, dim=-1, bias_tensor=None, **_):
    out = torch.matmul(input_tensor, weight_tensor)
    return list(torch.chunk(out if bias_tensor is None else out + bias_tensor, chunks, dim=dim))


@register(
    SPLIT,
    kind=OpKind.MATMUL,
    family=OpFamily.MATMUL,
    device_operation="MinimalMatmulSplitDeviceOperation",
    golden=torch_golden(_golden_split),
)
def minimal_matmul_split(
    input_tensor: Tensor,
    weight_tensor: Tensor,
    *,
    chunks: int = 3,
    dim: int = -1,
    bias_tensor: Tensor | None = None,
    fused_activation: UnaryWithParam | None = None,
    config: MinimalMatmulConfig | None = None,
    memory_config: MemoryConfig | None = None,
    dtype: DataType | None = None,
    compute_kernel_config: object = None,
) -> list[Tensor]:
    """``input_tensor @ weight_tensor [+ bias_tensor]`` then ``fused_activation``, as ``chunks``
    tensors of ``N / chunks`` columns."""
    x, w = _checked(SPLIT, input_tensor, weight_tensor, bias_tensor, config)
    count, axis = int_arg(SPLIT, "chunks", chunks), int_arg(SPLIT, "dim", dim)
    if count < 1:
        raise MeshnnValueError(f"ttnn.{SPLIT}: chunks must be >= 1, got {count}")
    if axis != -1:
        raise MeshnnValueError(f"ttnn.{SPLIT}: only dim=-1 is supported, got dim={axis}")
    width = w.shape[-1]
    if width % count or (width // count) % 32:
        raise MeshnnValueError(
            f"ttnn.{SPLIT}: the output width N={width} must divide into {count} chunks of a multiple of 32 columns"
        )
    activation = activation_arg(f"ttnn.{SPLIT}", "fused_activation", fused_activation)
    out_config = memory_config if memory_config is not None else x.memory_config()
    whole = matmul(
        x, w, bias=bias_tensor, activation=activation, memory_config=out_config, dtype=dtype,
        compute_kernel_config=compute_kernel_config, op=SPLIT, recorded={"config": config},
    )  # fmt: skip
    if count == 1:
        return [whole]
    try:
        return split(whole, width // count, -1, memory_config=out_config)
    finally:
        deallocate(whole)


def _golden_addcmul(torch, matmul_input_tensor, matmul_weight_tensor, scalar, addcmul_input_tensor1,
                    addcmul_input_tensor2, bias_tensor=None, **_):  # fmt: skip
    out = torch.matmul(matmul_input_tensor.float(), matmul_weight_tensor.float())
    out = out if bias_tensor is None else out + bias_tensor.float()
    return addcmul_input_tensor1 + scalar * out * addcmul_input_tensor2


def _ternary(name: str, value: object, rows: tuple[int, ...], width: int) -> Tensor:
    """An addcmul operand checked: TILE, a supported dtype, ``[..., r, width]`` with ``r`` in ``rows``."""
    tensor = _operand(ADDCMUL, name, value)
    shape = list(tensor.shape)
    if len(shape) < 2 or shape[-2] not in rows or shape[-1] != width:
        wanted = " or ".join(f"[{r}, {width}]" for r in rows)
        raise MeshnnValueError(f"ttnn.{ADDCMUL}: {name} {shape} must end in {wanted}")
    return tensor


@register(
    ADDCMUL,
    kind=OpKind.MATMUL,
    family=OpFamily.MATMUL,
    device_operation="MinimalMatmulDeviceOperation",
    golden=torch_golden(_golden_addcmul),
)
def dit_minimal_matmul_addcmul_fused(
    matmul_input_tensor: Tensor,
    matmul_weight_tensor: Tensor,
    scalar: float,
    addcmul_input_tensor1: Tensor,
    addcmul_input_tensor2: Tensor,
    bias_tensor: Tensor | None = None,
    *,
    config: MinimalMatmulConfig | None = None,
    memory_config: MemoryConfig | None = None,
    dtype: DataType | None = None,
    compute_kernel_config: object = None,
) -> Tensor:
    """``addcmul_input_tensor1 + scalar * (matmul_input_tensor @ matmul_weight_tensor [+ bias_tensor])
    * addcmul_input_tensor2``, rounded once."""
    x, w = _checked(ADDCMUL, matmul_input_tensor, matmul_weight_tensor, bias_tensor, config)
    if isinstance(scalar, bool) or not isinstance(scalar, int | float | np.number):
        raise MeshnnTypeError(f"ttnn.{ADDCMUL}: scalar must be a number, got {scalar!r}")
    if dtype is not None and not isinstance(dtype, DataType):
        raise MeshnnTypeError(f"ttnn.{ADDCMUL}: dtype must be a ttnn DataType or None, got {dtype!r}")
    rows, width = x.shape[-2], w.shape[-1]
    base = _ternary("addcmul_input_tensor1", addcmul_input_tensor1, (rows,), width)
    gate = _ternary("addcmul_input_tensor2", addcmul_input_tensor2, (1, rows), width)
    same_mesh(ADDCMUL, {"matmul_input_tensor": x, "addcmul_input_tensor1": base, "addcmul_input_tensor2": gate})
    out_config = memory_config if memory_config is not None else x.memory_config()
    product = matmul(
        x, w, bias=bias_tensor, memory_config=out_config, dtype=DataType.FLOAT32,
        compute_kernel_config=compute_kernel_config, op=ADDCMUL, recorded={"config": config},
    )  # fmt: skip
    try:
        out = addcmul(base, product, gate, value=float(scalar), memory_config=out_config)
    finally:
        deallocate(product)
    wanted = dtype if dtype is not None else x.dtype
    if out.dtype is wanted:
        return out
    try:
        return typecast(out, wanted, memory_config=out_config)
    finally:
        deallocate(out)
