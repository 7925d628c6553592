"""``ttnn.layer_norm`` and ``ttnn.rms_norm`` over the last dimension, computed in float32 per
device (softmax and the other normalisations are in :mod:`meshnn.ops.norm`).

May import: :mod:`meshnn.errors`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor` and the ops' launch,
checks, outputs and values modules.
"""

from __future__ import annotations

import numpy as np

from meshnn.device.buffer import BufferType, ShardOrientation, ShardSpec, TensorMemoryLayout
from meshnn.device.core import CoreRangeSet
from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.mesh.coord import MeshCoordinate
from meshnn.mesh.op_keywords import Keyword, optional, ttnn_keywords
from meshnn.ops import goldens
from meshnn.ops.checks import device_input, same_mesh
from meshnn.ops.config import (
    LayerNormShardedMultiCoreProgramConfig,
    check_compute_kernel_config,
    check_norm_program_config,
)
from meshnn.ops.eltwise.activation_goldens import get_golden_function_for_activation
from meshnn.ops.eltwise.activations import Activation, activation_steps, apply_steps
from meshnn.ops.launch import launch
from meshnn.ops.outputs import Output, out_spec_like
from meshnn.ops.registry import OpKind, register, torch_golden
from meshnn.ops.values import logical_values, write_values
from meshnn.perf.desc import OpFamily
from meshnn.tensor.interop import from_torch
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor


def _axis(op: str, dim: int, shape: tuple[int, ...]) -> int:
    rank = len(shape)
    if isinstance(dim, bool) or not isinstance(dim, int):
        raise MeshnnTypeError(f"ttnn.{op}: dim must be an int, got {dim!r}")
    axis = dim + rank if dim < 0 else dim
    if not 0 <= axis < rank:
        raise MeshnnValueError(f"ttnn.{op}: dim {dim} is out of range for input_tensor {list(shape)} (rank {rank})")
    return axis


def _float_input(op: str, input_tensor: object) -> Tensor:
    tensor = device_input(op, "input_tensor", input_tensor)
    if not tensor.dtype.is_float:
        raise MeshnnTypeError(f"ttnn.{op}: input_tensor must hold floating-point values, got {tensor.dtype}")
    return tensor


def _affine(op: str, tensor: Tensor, weight: Tensor | None, bias: Tensor | None) -> dict[str, Tensor]:
    named = {"input_tensor": tensor}
    width = tensor.shape[-1] if len(tensor.shape) else 1
    for name, value in (("weight", weight), ("bias", bias)):
        if value is None:
            continue
        checked = device_input(op, name, value)
        if checked.logical_volume() != width:
            raise MeshnnValueError(
                f"ttnn.{op}: {name} has shape {list(checked.shape)}; it needs {width} values (the last dimension "
                f"of input_tensor {list(tensor.shape)})"
            )
        named[name] = checked
    return named


def _normalise(
    op: str,
    input_tensor: Tensor,
    epsilon: float,
    weight: Tensor | None,
    bias: Tensor | None,
    residual_input_tensor: Tensor | None,
    memory_config: MemoryConfig | None,
    *,
    centred: bool,
    configs: tuple[object, object] = (None, None),
    activation: tuple[Activation, ...] = (),
) -> Tensor:
    tensor = _float_input(op, input_tensor)
    if isinstance(epsilon, bool) or not isinstance(epsilon, int | float | np.floating):
        raise MeshnnTypeError(f"ttnn.{op}: epsilon must be a number, got {epsilon!r}")
    if not epsilon >= 0:
        raise MeshnnValueError(f"ttnn.{op}: epsilon must be >= 0, got {epsilon}")
    named = _affine(op, tensor, weight, bias)
    if residual_input_tensor is not None:
        residual = device_input(op, "residual_input_tensor", residual_input_tensor)
        if tuple(residual.shape) != tuple(tensor.shape):
            raise MeshnnValueError(f"ttnn.{op}: residual_input_tensor {list(residual.shape)} != {list(tensor.shape)}")
        named["residual_input_tensor"] = residual
    mesh = same_mesh(op, named)
    attrs = norm_attrs(op, tensor, mesh, *configs)
    spec = out_spec_like(tensor, memory_config=memory_config, op=op)
    attrs["memory_config"] = spec.memory_config
    if activation:
        attrs["activation"] = activation
    names = list(named)
    specs = [t.spec for t in named.values()]

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]) -> None:
        values = {n: logical_values(r, s) for n, r, s in zip(names, in_rows, specs, strict=True)}
        x = values["input_tensor"]
        shape = x.shape  # (a rank-0 input: ttnn's width of 1, its shape's [-1])
        x = x.reshape(shape[0], 1) if x.ndim == 1 else x
        if "residual_input_tensor" in values:
            x = x + values["residual_input_tensor"].reshape(x.shape)
        if centred:
            x = x - x.mean(axis=-1, keepdims=True)
        y = np.multiply(x, x)  # (the one scratch array: each step below writes into it)
        root = np.sqrt(y.mean(axis=-1, keepdims=True) + np.float32(epsilon))
        np.divide(x, root, out=y)
        k = y.shape[0]
        if "weight" in values:
            np.multiply(y, values["weight"].reshape(k, *([1] * (y.ndim - 2)), -1), out=y)
        if "bias" in values:
            np.add(y, values["bias"].reshape(k, *([1] * (y.ndim - 2)), -1), out=y)
        write_values(out_rows[0], (apply_steps(activation, y) if activation else y).reshape(shape), spec)

    inputs = list(named.values())
    return launch(op, mesh, inputs, [Output(spec)], kernel, rowwise=True, reads_memos=True, attrs=attrs)[0]


RECIP_TENSOR = Keyword(None, optional(Tensor, what="a ttnn.Tensor"))
"""``recip_tensor=``: the reciprocals ttnn's Welford kernels read (``ttnn.create_layer_norm_reciprocals``);
meshnn's norms compute the mean exactly without them, so it is checked and recorded."""


def norm_attrs(
    op: str, tensor: Tensor, mesh: object, program_config: object, compute_kernel_config: object
) -> dict[str, object]:
    """The norm's program and compute-kernel configs, checked as ttnn checks them (a sharded program
    config needs a sharded input and a grid within the device's), as the op's ``attrs``."""
    config = check_norm_program_config(op, program_config)
    kernel = check_compute_kernel_config(op, compute_kernel_config)
    if isinstance(config, LayerNormShardedMultiCoreProgramConfig):
        grid, device = config.compute_with_storage_grid_size, mesh.compute_with_storage_grid_size()  # type: ignore[attr-defined]
        if grid.x > device.x or grid.y > device.y:
            raise MeshnnValueError(
                f"ttnn.{op}: program_config's compute_with_storage_grid_size ({grid.x}, {grid.y}) must fit within "
                f"the device's compute grid ({device.x}, {device.y})"
            )
        if not tensor.spec.memory_config.is_sharded():
            raise MeshnnValueError(
                f"ttnn.{op}: a LayerNormShardedMultiCoreProgramConfig needs a sharded input_tensor; it is "
                f"{tensor.spec.memory_config.memory_layout.name}"
            )
    return {"program_config": config, "compute_kernel_config": kernel}


@register(kind=OpKind.NORMALIZATION, family=OpFamily.NORM, golden=goldens.layer_norm)
@ttnn_keywords(recip_tensor=RECIP_TENSOR)
def layer_norm(
    input_tensor: Tensor,
    *,
    epsilon: float = 1e-12,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    residual_input_tensor: Tensor | None = None,
    memory_config: MemoryConfig | None = None,
    program_config: object = None,
    compute_kernel_config: object = None,
) -> Tensor:
    """(x - mean) / sqrt(var + epsilon) * weight + bias over the last dimension."""
    configs = (program_config, compute_kernel_config)
    return _normalise(
        "layer_norm",
        input_tensor,
        epsilon,
        weight,
        bias,
        residual_input_tensor,
        memory_config,
        centred=True,
        configs=configs,
    )


@register(kind=OpKind.NORMALIZATION, family=OpFamily.NORM, golden=goldens.rms_norm)
@ttnn_keywords()
def rms_norm(
    input_tensor: Tensor,
    *,
    epsilon: float = 1e-12,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    residual_input_tensor: Tensor | None = None,
    memory_config: MemoryConfig | None = None,
    program_config: object = None,
    compute_kernel_config: object = None,
) -> Tensor:
    """x / sqrt(mean(x^2) + epsilon) * weight + bias over the last dimension."""
    configs = (program_config, compute_kernel_config)
    return _normalise(
        "rms_norm",
        input_tensor,
        epsilon,
        weight,
        bias,
        residual_input_tensor,
        memory_config,
        centred=False,
        configs=configs,
    )


def _golden_dit_rms_norm(torch, input_tensor, epsilon=1e-5, weight=None, bias=None, residual_input_tensor=None,
                         *, activation=None, **_):  # fmt: skip
    x = input_tensor.float() if residual_input_tensor is None else input_tensor.float() + residual_input_tensor.float()
    out = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + epsilon)
    out = out if weight is None else out * weight.float().reshape(-1)
    out = out if bias is None else out + bias.float().reshape(-1)
    function = get_golden_function_for_activation(activation)
    return out if function is None else function(out)


@register(
    "experimental.dit_rms_norm_unary_fused",
    kind=OpKind.NORMALIZATION,
    family=OpFamily.NORM,
    device_operation="LayerNormDeviceOperation",
    golden=torch_golden(_golden_dit_rms_norm),
)
def dit_rms_norm_unary_fused(
    input_tensor: Tensor,
    epsilon: float = 1e-5,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    residual_input_tensor: Tensor | None = None,
    *,
    memory_config: MemoryConfig | None = None,
    program_config: object = None,
    compute_kernel_config: object = None,
    activation: object = None,
) -> Tensor:
    """``rms_norm`` then ``activation`` (a name such as ``"silu"`` or ``"gelu"``, a UnaryOpType or a
    UnaryWithParam) in one program (tt-metal 2026's DiT op: the layer-norm device operation with a
    fused activation), so the output is rounded once."""
    op = "experimental.dit_rms_norm_unary_fused"
    steps = activation_steps(op, "activation", activation)
    configs = (program_config, compute_kernel_config)
    return _normalise(
        op, input_tensor, epsilon, weight, bias, residual_input_tensor, memory_config,
        centred=False, configs=configs, activation=steps,
    )  # fmt: skip


def create_layer_norm_reciprocals(device: object, core_range_set: CoreRangeSet, width: int) -> Tensor:
    """``ttnn.create_layer_norm_reciprocals``: 1/1 ... 1/``width`` (float32, ROW_MAJOR), one row a
    core of ``core_range_set``, HEIGHT_SHARDED in L1 (a (1, width) shard each) on ``device``: the
    table ttnn's Welford layer norm reads as ``recip_tensor=`` (width: the shard width of a sharded
    input, else the input's width)."""
    if not isinstance(core_range_set, CoreRangeSet):
        raise MeshnnTypeError(
            f"create_layer_norm_reciprocals: core_range_set must be a CoreRangeSet, got {core_range_set!r}"
        )
    if isinstance(width, bool) or not isinstance(width, int) or width <= 0:
        raise MeshnnValueError(f"create_layer_norm_reciprocals: width must be a positive int, got {width!r}")
    import torch  # ttnn's helper builds its table with torch, as this one does

    cores = core_range_set.num_cores()
    table = torch.from_numpy(np.tile(1.0 / np.arange(1, width + 1, dtype=np.float32), (cores, 1)))
    shards = ShardSpec(core_range_set, (1, width), ShardOrientation.ROW_MAJOR)
    config = MemoryConfig(TensorMemoryLayout.HEIGHT_SHARDED, BufferType.L1, shards)
    return from_torch(table, dtype=DataType.FLOAT32, layout=Layout.ROW_MAJOR, device=device, memory_config=config)
