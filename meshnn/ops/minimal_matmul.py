"""``ttnn.experimental.minimal_matmul``: ``input @ weight [+ bias]`` then ``fused_activation``, the
prefill matmul of long sequences, with its own checks (TILE operands of bfloat16, bfloat8_b,
bfloat4_b or float32; an unbatched weight; a row bias of N; a ``MinimalMatmulConfig`` whose grid
fits the device and whose blocks divide into sub-blocks).  The product is ``ttnn.matmul``'s
(the config changes no value); the output takes the input's memory config unless one is given.

May import: :mod:`meshnn.errors`, :mod:`meshnn.formats`, :mod:`meshnn.tensor` and the ops' checks,
config and matmul modules.
"""

from __future__ import annotations

import math

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.ops.activation_arg import activation_arg
from meshnn.ops.checks import device_input
from meshnn.ops.config import UnaryWithParam
from meshnn.ops.matmul import matmul
from meshnn.ops.matmul_config import MinimalMatmulConfig
from meshnn.ops.registry import OpKind, register
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor

OP = "experimental.minimal_matmul"
DTYPES = (DataType.BFLOAT16, DataType.BFLOAT8_B, DataType.BFLOAT4_B, DataType.FLOAT32)


def _operand(op: str, name: str, value: object) -> Tensor:
    tensor = device_input(op, name, value)
    if tensor.layout is not Layout.TILE:
        raise MeshnnValueError(f"ttnn.{op}: {name} must be TILE, it is {tensor.layout}")
    if tensor.dtype not in DTYPES:
        raise MeshnnTypeError(
            f"ttnn.{op}: {name} must be bfloat16, bfloat8_b, bfloat4_b or float32, got {tensor.dtype}"
        )
    return tensor


def _check_config(op: str, config: object, grid: object) -> None:
    if config is None:
        return
    if not isinstance(config, MinimalMatmulConfig):
        raise MeshnnTypeError(f"ttnn.{op}: config must be a ttnn.MinimalMatmulConfig, got {config!r}")
    if config.M_block_size % config.subblock_h or config.N_block_size % config.subblock_w:
        raise MeshnnValueError(
            f"ttnn.{op}: config's M_block_size / N_block_size ({config.M_block_size} / {config.N_block_size}) must be "
            f"divisible by subblock_h / subblock_w ({config.subblock_h} / {config.subblock_w})"
        )
    mine = config.compute_with_storage_grid_size
    if mine.x > grid.x or mine.y > grid.y:  # type: ignore[attr-defined]
        raise MeshnnValueError(
            f"ttnn.{op}: config's compute_with_storage_grid_size ({mine.x}, {mine.y}) must fit within the device's "
            f"compute grid ({grid.x}, {grid.y})"  # type: ignore[attr-defined]
        )


@register(
    "experimental.minimal_matmul",
    kind=OpKind.MATMUL,
    family=OpFamily.MATMUL,
    device_operation="MinimalMatmulDeviceOperation",
)
def minimal_matmul(
    input_tensor: Tensor,
    weight_tensor: Tensor,
    *,
    bias_tensor: Tensor | None = None,
    fused_activation: UnaryWithParam | None = None,
    config: MinimalMatmulConfig | None = None,
    memory_config: MemoryConfig | None = None,
    dtype: DataType | None = None,
    compute_kernel_config: object = None,
) -> Tensor:
    """``input_tensor @ weight_tensor [+ bias_tensor]``, then ``fused_activation``."""
    x, w = _checked(OP, input_tensor, weight_tensor, bias_tensor, config)
    fused_activation = activation_arg(f"ttnn.{OP}", "fused_activation", fused_activation)
    out_config = memory_config if memory_config is not None else x.memory_config()
    return matmul(
        x, w, bias=bias_tensor, activation=fused_activation, memory_config=out_config, dtype=dtype,
        compute_kernel_config=compute_kernel_config, op=OP, recorded={"config": config},
    )  # fmt: skip


def _checked(op: str, input_tensor: object, weight_tensor: object, bias_tensor: object, config: object):
    """The operands and config of the minimal matmul family, checked as tt-metal's device
    operation checks them; the input and weight tensors."""
    x = _operand(op, "input_tensor", input_tensor)
    w = _operand(op, "weight_tensor", weight_tensor)
    if len(w.shape) < 2 or math.prod(w.shape[:-2]) != 1:
        raise MeshnnValueError(f"ttnn.{op}: weight_tensor {list(w.shape)} must have 1 in every leading dim (no batch)")
    if bias_tensor is not None:
        bias = _operand(op, "bias_tensor", bias_tensor)
        if math.prod(bias.shape[:-1]) != 1 or bias.shape[-1] != w.shape[-1]:
            raise MeshnnValueError(
                f"ttnn.{op}: bias_tensor {list(bias.shape)} must be [..., {w.shape[-1]}] with 1s before"
            )
    _check_config(op, config, x.storage.mesh_buffer.device().compute_with_storage_grid_size())  # type: ignore[union-attr]
    return x, w
