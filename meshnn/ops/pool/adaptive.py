"""``ttnn.adaptive_avg_pool2d`` / ``adaptive_max_pool2d``: the mean / max over torch's adaptive
windows (output cell ``i`` of ``O`` covers input rows ``floor(i*H/O)`` to ``ceil((i+1)*H/O)``)
of an input in ttnn's flattened NHWC layout, written as ``[1, 1, N*OH*OW, C]``, and
``ttnn.global_avg_pool2d``: the mean over the height and width of ``[N, H, W, C]``, written as
``[N, 1, 1, C]``.

May import: :mod:`meshnn.errors`, :mod:`meshnn.formats`, :mod:`meshnn.tensor`, the ops' registry
and config, the conv geometry and the pool package.
"""

from __future__ import annotations

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.mesh.op_keywords import flag
from meshnn.ops.config import check_compute_kernel_config
from meshnn.ops.conv.geometry import Window, flat_input, flat_output, pair, positive, torch_module
from meshnn.ops.outputs import out_spec_like
from meshnn.ops.pool import goldens
from meshnn.ops.pool.common import check_slice_config, nchw_tensor, pool_input, pool_spec, run_pool
from meshnn.ops.registry import OpKind, register
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor


def _adaptive(op: str, function: str, args: dict) -> Tensor:
    size = pair(op, "output_size", args["output_size"])
    window = Window(
        positive(op, "batch_size", args["batch_size"]),
        positive(op, "input_h", args["input_h"]),
        positive(op, "input_w", args["input_w"]),
        (1, 1),
        (1, 1),
        (0, 0, 0, 0),
    )
    c = positive(op, "channels", args["channels"])
    if size[0] > window.height or size[1] > window.width:
        raise MeshnnValueError(
            f"ttnn.{op}: output_size {list(size)} is larger than the input {window.height}x{window.width}"
        )
    flag(op, "deallocate_input", args["deallocate_input"])
    flag(op, "reallocate_output", args["reallocate_output"])
    check_compute_kernel_config(op, args["compute_kernel_config"])
    slices = check_slice_config(op, args["dram_slice_config"])
    tensor = pool_input(op, args["input_tensor"])
    flat_input(op, tuple(tensor.shape), window, c)
    spec = pool_spec(
        op,
        tensor,
        (1, 1, window.batch * size[0] * size[1], c),
        DataType.BFLOAT16,
        Layout.ROW_MAJOR,
        args["memory_config"],
    )

    def compute(x: np.ndarray) -> list[np.ndarray]:
        torch = torch_module()
        xt = nchw_tensor(x, window.batch, window.height, window.width, c)
        return [flat_output(getattr(torch.nn.functional, function)(xt, size).numpy())]

    attrs = {"applied_shard_scheme": args["applied_shard_scheme"], "memory_config": spec.memory_config}
    attrs["dram_slice_config"] = slices
    attrs["kernel_size"] = (-(-window.height // size[0]), -(-window.width // size[1]))  # the widest window
    out = run_pool(op, [tensor], [spec], compute, attrs)[0]
    if args["deallocate_input"]:
        tensor.deallocate()
    return out


@register(
    kind=OpKind.POOL,
    family=OpFamily.REDUCTION,
    device_operation="Pool2D",
    golden=goldens.golden_adaptive_avg_pool2d,
)
def adaptive_avg_pool2d(
    input_tensor: Tensor,
    batch_size: int,
    input_h: int,
    input_w: int,
    channels: int,
    output_size: tuple[int, int],
    *,
    memory_config: MemoryConfig | None = None,
    dram_slice_config: object = None,
    applied_shard_scheme: object = None,
    compute_kernel_config: object = None,
    deallocate_input: bool = False,
    reallocate_output: bool = True,
) -> Tensor:
    """The mean over each adaptive window (bfloat16, ROW_MAJOR)."""
    return _adaptive("adaptive_avg_pool2d", "adaptive_avg_pool2d", dict(locals()))


@register(
    kind=OpKind.POOL,
    family=OpFamily.REDUCTION,
    device_operation="Pool2D",
    golden=goldens.golden_adaptive_max_pool2d,
)
def adaptive_max_pool2d(
    input_tensor: Tensor,
    batch_size: int,
    input_h: int,
    input_w: int,
    channels: int,
    output_size: tuple[int, int],
    *,
    memory_config: MemoryConfig | None = None,
    dram_slice_config: object = None,
    applied_shard_scheme: object = None,
    compute_kernel_config: object = None,
    deallocate_input: bool = False,
    reallocate_output: bool = True,
) -> Tensor:
    """The max over each adaptive window (bfloat16, ROW_MAJOR)."""
    return _adaptive("adaptive_max_pool2d", "adaptive_max_pool2d", dict(locals()))


@register(
    kind=OpKind.POOL,
    family=OpFamily.REDUCTION,
    device_operation="ReduceDeviceOperation",
    golden=goldens.golden_global_avg_pool2d,
)
def global_avg_pool2d(
    input_tensor: Tensor, *, memory_config: MemoryConfig | None = None, dtype: DataType | None = None
) -> Tensor:
    """The mean over the height and width of ``[N, H, W, C]``: ``[N, 1, 1, C]`` in the input's layout
    and ``dtype`` (None: the input's)."""
    op = "global_avg_pool2d"
    tensor = pool_input(op, input_tensor)
    if len(tensor.shape) != 4:
        raise MeshnnValueError(f"ttnn.{op}: input_tensor must be [N, H, W, C], got {list(tensor.shape)}")
    if dtype is not None and not isinstance(dtype, DataType):
        raise MeshnnTypeError(f"ttnn.{op}: dtype must be a ttnn DataType, got {dtype!r}")
    n, _, _, c = tensor.shape
    spec = out_spec_like(tensor, shape=(n, 1, 1, c), dtype=dtype, memory_config=memory_config, op=op)

    def compute(x: np.ndarray) -> list[np.ndarray]:
        return [x.astype(np.float32).mean(axis=(1, 2), keepdims=True)]

    return run_pool(op, [tensor], [spec], compute, {"memory_config": spec.memory_config})[0]
