"""ttnn's binary ops with rules of their own: ``pow`` (its own parameter names; a number for either
operand, a scalar exponent not negative), ``prelu`` (a number, a one-number list, or one weight
per channel of dimension 1), ``outer`` (the outer product of two vectors held in rank-4
tensors) and the primitive ``ttnn.prim.binary`` (a binary op named by ``ttnn.BinaryOpType``).

May import: :mod:`meshnn.errors`, :mod:`meshnn.tensor`, ttnn's default device, the ops' registry, checks and the
element-wise modules.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.mesh.entry_points import GetDefaultDevice
from meshnn.mesh.op_keywords import SUB_CORE_GRIDS, Keyword, flag, number, ttnn_keywords
from meshnn.ops.checks import device_input
from meshnn.ops.eltwise.binary import binary
from meshnn.ops.eltwise.logical import on_values
from meshnn.ops.registry import OpKind, register, torch_golden
from meshnn.perf.desc import OpFamily
from meshnn.tensor.conversions import to_layout
from meshnn.tensor.placement import to_device
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.storage import HostStorage
from meshnn.tensor.tensor import Tensor

_BINARY = {"kind": OpKind.BINARY, "family": OpFamily.BINARY, "device_operation": "BinaryNgDeviceOperation"}


_NG_TAIL = ("dtype", "memory_config", "output_tensor", "activations", "input_tensor_a_activations",
            "input_tensor_b_activations", "queue_id")  # fmt: skip


@register(**_BINARY, golden=torch_golden(lambda t, x, exponent, *a, **k: t.pow(x, exponent)), operator="pow")
@ttnn_keywords(use_legacy=Keyword(None, flag), sub_core_grids=SUB_CORE_GRIDS)
def pow(
    input_tensor: Tensor | float,
    exponent: Tensor | float,
    *,
    dtype: DataType | None = None,
    memory_config: MemoryConfig | None = None,
    output_tensor: Tensor | None = None,
    activations: object = None,
    input_tensor_a_activations: object = None,
    input_tensor_b_activations: object = None,
    queue_id: int = 0,
) -> Tensor:
    """``ttnn.pow``: ``input_tensor ** exponent`` (either a number; a number exponent must not be
    negative, as ttnn's)."""
    if not isinstance(exponent, Tensor) and isinstance(input_tensor, Tensor):
        number("pow", "exponent", exponent)
        if exponent < 0:  # type: ignore[operator]
            raise MeshnnValueError(f"ttnn.pow: a number exponent must be >= 0, got {exponent}")
    kwargs = dict(zip(_NG_TAIL, (dtype, memory_config, output_tensor, activations, input_tensor_a_activations,
                                 input_tensor_b_activations, queue_id), strict=True))  # fmt: skip
    return binary("pow", input_tensor, exponent, **kwargs)  # type: ignore[arg-type]


def _golden_prelu(t, a, weight, *args, **kwargs):
    if not t.is_tensor(weight):
        weight = t.tensor(weight, dtype=a.dtype)
    return t.nn.functional.prelu(a, weight=weight)


@register(**_BINARY, golden=torch_golden(_golden_prelu))
@ttnn_keywords()
def prelu(
    input_tensor_a: Tensor, weight: Tensor | float | Sequence[float], *, memory_config: MemoryConfig | None = None
) -> Tensor:
    """``ttnn.prelu``: ``x`` where ``x >= 0``, else ``weight * x``; a tensor ``weight`` holds one
    weight per channel (dimension 1 of ``input_tensor_a``) or a single one."""
    tensor = device_input("prelu", "input_tensor_a", input_tensor_a)
    if isinstance(weight, Tensor):
        w = device_input("prelu", "weight", weight)
        shape = tuple(tensor.shape)
        channels = shape[1] if len(shape) > 1 else 1
        volume = int(np.prod(tuple(w.shape)))
        if volume not in (channels, 1):
            raise MeshnnValueError(
                f"ttnn.prelu: weight {list(w.shape)} holds {volume} weights; input_tensor_a {list(shape)} has "
                f"{channels} channels (dimension 1)"
            )
        layout = [1] * len(shape)  # the weights along dimension 1, broadcast over the others
        if volume > 1:
            layout[1] = channels

        def compute(x: np.ndarray, v: np.ndarray) -> np.ndarray:
            weights = v.astype(np.float32).reshape((v.shape[0], *layout))
            return np.where(x < 0, x * weights, x)

        return on_values("prelu", {"input_tensor_a": tensor, "weight": w}, compute, memory_config=memory_config)
    if isinstance(weight, list | tuple):
        if len(weight) != 1:
            raise MeshnnValueError(f"ttnn.prelu: a list weight holds one number, got {list(weight)}")
        weight = weight[0]
    number("prelu", "weight", weight)
    slope = np.float32(weight)
    return on_values(
        "prelu", {"input_tensor_a": tensor}, lambda x: np.where(x < 0, x * slope, x), memory_config=memory_config
    )


def _vector(op: str, name: str, tensor: Tensor) -> int:
    """The length of the vector a tensor holds: at least three of its four dimensions are 1."""
    shape = tuple(tensor.shape)
    if len(shape) != 4 or sum(d == 1 for d in shape) < 3:
        raise MeshnnValueError(
            f"ttnn.{op}: {name} {list(shape)} must be rank 4 with 3 dimensions of 1 (a vector) for an outer product"
        )
    return int(np.prod(shape))


def _outer_operand(name: str, tensor: object) -> Tensor:
    """An operand of ``ttnn.outer`` on a device: a host vector is tilized and moved to ttnn's default
    device (``ttnn.SetDefaultDevice``) when one is set and open, as ttnn's composite moves it before its
    matmul; with none, a host operand is refused by name."""
    if isinstance(tensor, Tensor) and isinstance(tensor.storage, HostStorage):
        _vector("outer", name, tensor)  # (ttnn checks the shapes first)
        device = GetDefaultDevice()
        if device is not None and device.is_open():
            tiled = tensor if tensor.dtype.is_block_float else to_layout(tensor, Layout.TILE)
            tensor = to_device(tiled, device)
    return device_input("outer", name, tensor)


@register(**_BINARY, golden=torch_golden(lambda t, a, b, *x, **k: t.outer(a.squeeze(), b.squeeze())))
@ttnn_keywords()
def outer(input_tensor_a: Tensor, input_tensor_b: Tensor, *, memory_config: MemoryConfig | None = None) -> Tensor:
    """``ttnn.outer``: the outer product ``[1, 1, N, M]`` of the N-vector ``input_tensor_a`` and the
    M-vector ``input_tensor_b`` (each rank 4, three dimensions of size 1)."""
    a, b = _outer_operand("input_tensor_a", input_tensor_a), _outer_operand("input_tensor_b", input_tensor_b)
    n, m = _vector("outer", "input_tensor_a", a), _vector("outer", "input_tensor_b", b)

    def compute(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        k = x.shape[0]
        left = x.reshape(k, n, 1).astype(np.float32)
        right = y.reshape(k, 1, m).astype(np.float32)
        return (left * right).reshape(k, 1, 1, n, m)

    return on_values(
        "outer", {"input_tensor_a": a, "input_tensor_b": b}, compute, shape=(1, 1, n, m), memory_config=memory_config
    )


class BinaryOpType(enum.Enum):
    """``ttnn.BinaryOpType``: the binary ops of ``ttnn.prim.binary`` (ttnn's members, in its
    order); each value names the meshnn op that computes it (its own name in lower case where
    ``prim.binary`` has no computation for it: the quantization ops)."""

    ADD = "add"
    SUB = "subtract"
    MUL = "multiply"
    GT = "gt"
    LT = "lt"
    LE = "le"
    GE = "ge"
    EQ = "eq"
    NE = "ne"
    SQUARED_DIFFERENCE = "squared_difference"
    BIAS_GELU = "bias_gelu"
    LOGADDEXP = "logaddexp"
    LOGICAL_AND = "logical_and"
    LOGICAL_OR = "logical_or"
    LOGICAL_XOR = "logical_xor"
    LDEXP = "ldexp"
    LOGADDEXP2 = "logaddexp2"
    DIV = "divide"
    RSUB = "rsub"
    POWER = "pow"
    BITWISE_XOR = "bitwise_xor"
    BITWISE_AND = "bitwise_and"
    BITWISE_OR = "bitwise_or"
    LEFT_SHIFT = "bitwise_left_shift"
    RIGHT_SHIFT = "bitwise_right_shift"
    LOGICAL_RIGHT_SHIFT = "logical_right_shift"
    QUANT = "quant"
    REQUANT = "requant"
    DEQUANT = "dequant"
    MAXIMUM = "maximum"
    MINIMUM = "minimum"
    GCD = "gcd"
    LCM = "lcm"
    ADDALPHA = "addalpha"
    SUBALPHA = "subalpha"
    XLOGY = "xlogy"
    HYPOT = "hypot"


BinaryOpType.__module__ = "meshnn"
_NO_PRIM = {BinaryOpType.QUANT, BinaryOpType.REQUANT, BinaryOpType.DEQUANT}


@register("prim.binary", **_BINARY)
@ttnn_keywords("prim.binary")
def prim_binary(
    input_tensor_a: Tensor,
    input_tensor_b: Tensor | float,
    binary_op_type: BinaryOpType,
    *,
    dtype: DataType | None = None,
    memory_config: MemoryConfig | None = None,
    output_tensor: Tensor | None = None,
    activations: object = None,
    input_tensor_a_activation: object = None,
) -> Tensor:
    """``ttnn.prim.binary``: the binary op ``binary_op_type`` of two tensors (or a tensor and a
    number), with an output dtype, output tensor and fused activations."""
    if not isinstance(binary_op_type, BinaryOpType):
        raise MeshnnTypeError(f"ttnn.prim.binary: binary_op_type must be a ttnn.BinaryOpType, got {binary_op_type!r}")
    if binary_op_type in _NO_PRIM:
        raise MeshnnValueError(f"ttnn.prim.binary: {binary_op_type} needs its scale and zero point: use ttnn.quantize")
    a_activations = None if input_tensor_a_activation is None else [input_tensor_a_activation]
    return binary(
        binary_op_type.value,
        input_tensor_a,
        input_tensor_b,
        dtype=dtype,
        memory_config=memory_config,
        output_tensor=output_tensor,
        activations=activations,
        input_tensor_a_activations=a_activations,
    )
