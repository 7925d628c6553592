"""``ttnn.experimental.deepseek_prefill.per_token_cast_to_fp8`` and ``per_token_cast_back``: DeepEP's
per-token float8 quantization, one float32 scale per 128-element block of each token (row).

``per_token_cast_to_fp8(x)`` with ``x`` ``[..., M, H]`` (bfloat16 or float32, ROW_MAJOR) gives an
fp8_e4m3 tensor of ``x``'s shape and a float32 scale tensor ``[..., M, H / 128]``, computed as the
kernel computes them in float32: ``amax`` of ``|x|`` over the block, ``scale = clamp(amax, 1e-4,
3e38) * f32(1 / 448)`` (a multiply by the float32 reciprocal, as the kernel's scalar multiply), then
``x * (1 / scale)`` (the reciprocal rounded to float32) packed into e4m3 by truncation toward zero,
as the Blackhole packer writes an e4m3 buffer (:func:`meshnn.formats.fp8_pack.truncated_e4m3`).
The device's reciprocal and product are modelled as correctly rounded float32 operations.

``per_token_cast_back(e4m3, scale)`` gives ``decode(e4m3) * scale`` (the block's scale) in float32,
rounded into ``output_dtype`` (bfloat16 by default, or float32).

Both run on Blackhole only (tt-metal refuses other archs); the checks are tt-metal's (2026-06), with
its messages.

May import: :mod:`meshnn.errors`, :mod:`meshnn.formats`, :mod:`meshnn.device`, :mod:`meshnn.tensor`
and the ops' checks, launch, outputs, values and registry.
"""

from __future__ import annotations

import math

import numpy as np

from meshnn.device.arch import Arch
from meshnn.device.buffer import BufferType, TensorMemoryLayout
from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.formats.fp8_pack import truncated_e4m3
from meshnn.formats.layout import Layout
from meshnn.ops.checks import device_input, same_mesh
from meshnn.ops.deepseek_experts.expert_slices import NAMESPACE, dram_interleaved
from meshnn.ops.launch import launch
from meshnn.ops.outputs import Output, out_spec_like
from meshnn.ops.registry import OpKind, register
from meshnn.ops.values import logical_values, write_values
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor

BLOCK_W = 128
"""Elements of a token that share one scale."""
E4M3_MAX = 448.0
SCALE_CLAMP = (np.float32(1e-4), np.float32(3.0e38))
"""The clamp of a block's amax before it becomes a scale (the kernel's float32 bounds)."""
ROW_MAJOR_TILE_ELEMS = 1024
UINT32_MAX = 2**32 - 1


def _device_tensor(op: str, name: str, tensor: object) -> Tensor:
    """On device, DRAM interleaved, ROW_MAJOR."""
    t = device_input(op, name, tensor)
    if not dram_interleaved(t):
        raise MeshnnValueError(f"ttnn.{op}: {name} must be DRAM interleaved")
    if t.layout is not Layout.ROW_MAJOR:
        raise MeshnnValueError(f"ttnn.{op}: {name} must be ROW_MAJOR layout")
    return t


def _output_config(op: str, memory_config: object, like: Tensor) -> MemoryConfig:
    config = like.spec.memory_config if memory_config is None else memory_config
    if not isinstance(config, MemoryConfig):
        raise MeshnnTypeError(f"ttnn.{op}: memory_config must be a ttnn.MemoryConfig, got {memory_config!r}")
    if config.buffer_type is not BufferType.DRAM or config.memory_layout is not TensorMemoryLayout.INTERLEAVED:
        raise MeshnnValueError(f"ttnn.{op}: output memory config must be DRAM interleaved")
    return config


def _blackhole(op: str, t: Tensor) -> None:
    arch = t.storage.mesh_buffer.device().arch()  # type: ignore[union-attr]
    if arch is not Arch.BLACKHOLE:
        raise MeshnnValueError(f"ttnn.{op}: FP8_E4M3 path requires Blackhole hardware, got arch {arch.name}")


def _tile_and_rows(op: str, name: str, t: Tensor) -> None:
    """The tile checks (a row-major page of one tile, the block a whole number of tile widths) and
    the folded row count's range."""
    tile_h, tile_w = t.spec.tile.tile_shape
    if tile_h * tile_w != ROW_MAJOR_TILE_ELEMS:
        raise MeshnnValueError(
            f"ttnn.{op}: tile_h * tile_w must equal ROW_MAJOR_TILE_ELEMS={ROW_MAJOR_TILE_ELEMS} for row-major block "
            f"tilization, got {tile_h}x{tile_w}"
        )
    if BLOCK_W % tile_w:
        raise MeshnnValueError(f"ttnn.{op}: tile width {tile_w} must divide BLOCK_W={BLOCK_W}")
    shape = tuple(t.shape)
    if len(shape) < 2:
        raise MeshnnValueError(f"ttnn.{op}: {name} rank must be >= 2, got {len(shape)}")


def _folded(op: str, shape: tuple[int, ...]) -> None:
    rows = math.prod(shape[:-1])
    if rows > UINT32_MAX:
        raise MeshnnValueError(f"ttnn.{op}: folded row count M={rows} exceeds uint32_t range")
    if shape[-1] > UINT32_MAX:
        raise MeshnnValueError(f"ttnn.{op}: hidden dim H={shape[-1]} exceeds uint32_t range")


def quantize(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(e4m3 values, scales)`` of float32 ``x`` ``(..., H)``: the kernel's float32 steps (see the
    module's text); the e4m3 values are float32 on the e4m3 grid."""
    blocks = x.reshape(*x.shape[:-1], x.shape[-1] // BLOCK_W, BLOCK_W)
    amax = np.clip(np.abs(blocks).max(axis=-1), *SCALE_CLAMP)
    scale = amax * np.float32(1.0 / E4M3_MAX)
    inverse = np.float32(1.0) / scale
    return truncated_e4m3(blocks * inverse[..., None]).reshape(x.shape), scale


@register(
    f"{NAMESPACE}.per_token_cast_to_fp8",
    kind=OpKind.UNARY,
    family=OpFamily.TYPECAST,
    device_operation="PerTokenCastToFp8DeviceOperation",
)
def per_token_cast_to_fp8(input_tensor: Tensor, memory_config: MemoryConfig | None = None) -> tuple[Tensor, Tensor]:
    """``(e4m3, scale)`` of ``input_tensor`` ``[..., M, H]``: its fp8_e4m3 quantization and the
    float32 scale of each 128-element block ``[..., M, H / 128]`` (see the module's text)."""
    op = f"{NAMESPACE}.per_token_cast_to_fp8"
    x = _device_tensor(op, "input_tensor", input_tensor)
    config = _output_config(op, memory_config, x)
    _blackhole(op, x)
    if x.dtype not in (DataType.BFLOAT16, DataType.FLOAT32):
        raise MeshnnValueError(f"ttnn.{op}: input dtype must be BFLOAT16 or FLOAT32, got {x.dtype}")
    _tile_and_rows(op, "input", x)
    shape = tuple(x.shape)
    _folded(op, shape)
    if shape[-1] % BLOCK_W:
        raise MeshnnValueError(f"ttnn.{op}: hidden dim H={shape[-1]} must be a multiple of BLOCK_W={BLOCK_W}")
    if math.prod(shape[:-1]) == 0:
        raise MeshnnValueError(f"ttnn.{op}: M must be > 0")
    mesh = same_mesh(op, {"input_tensor": x})
    e4m3 = out_spec_like(x, dtype=DataType.FP8_E4M3, memory_config=config, op=op)
    scales = out_spec_like(x, shape=(*shape[:-1], shape[-1] // BLOCK_W), dtype=DataType.FLOAT32,
                           memory_config=config, op=op)  # fmt: skip

    x_spec = x.spec  # (the kernel holds no tensor: a trace must not keep it allocated)

    def kernel(in_rows, out_rows, coords) -> None:
        values, scale = quantize(np.asarray(logical_values(in_rows[0], x_spec), np.float32))
        write_values(out_rows[0], values, e4m3, exact=True)
        write_values(out_rows[1], scale, scales, exact=True)

    outs = launch(op, mesh, [x], [Output(e4m3), Output(scales)], kernel, rowwise=True, reads_memos=True,
                  attrs={"memory_config": config})  # fmt: skip
    return outs[0], outs[1]


@register(
    f"{NAMESPACE}.per_token_cast_back",
    kind=OpKind.UNARY,
    family=OpFamily.TYPECAST,
    device_operation="PerTokenCastBackDeviceOperation",
)
def per_token_cast_back(
    input_e4m3: Tensor,
    input_scale: Tensor,
    output_dtype: DataType | None = None,
    memory_config: MemoryConfig | None = None,
) -> Tensor:
    """``decode(input_e4m3) * scale`` of each 128-element block, in ``output_dtype`` (bfloat16
    when None) and ROW_MAJOR (see the module's text)."""
    op = f"{NAMESPACE}.per_token_cast_back"
    q = _device_tensor(op, "input_e4m3", input_e4m3)
    s = _device_tensor(op, "input_scale", input_scale)
    dtype = DataType.BFLOAT16 if output_dtype is None else output_dtype
    if not isinstance(dtype, DataType):
        raise MeshnnTypeError(f"ttnn.{op}: output_dtype must be a ttnn DataType, got {output_dtype!r}")
    config = _output_config(op, memory_config, q)
    mesh = same_mesh(op, {"input_e4m3": q, "input_scale": s})
    _blackhole(op, q)
    if q.dtype is not DataType.FP8_E4M3:
        raise MeshnnValueError(f"ttnn.{op}: input_e4m3 dtype must be FP8_E4M3")
    if s.dtype is not DataType.FLOAT32:
        raise MeshnnValueError(f"ttnn.{op}: input_scale dtype must be FLOAT32")
    _tile_and_rows(op, "input_e4m3", q)
    if dtype not in (DataType.BFLOAT16, DataType.FLOAT32):
        raise MeshnnValueError(f"ttnn.{op}: output_dtype must be BFLOAT16 or FLOAT32")
    qs, ss = tuple(q.shape), tuple(s.shape)
    if len(qs) != len(ss):
        raise MeshnnValueError(
            f"ttnn.{op}: input_e4m3 ({len(qs)}D) and input_scale ({len(ss)}D) must have the same rank"
        )
    for i, (a, b) in enumerate(zip(qs[:-1], ss[:-1], strict=True)):
        if a != b:
            raise MeshnnValueError(f"ttnn.{op}: leading dim {i} mismatch ({a} vs {b})")
    if qs[-1] != ss[-1] * BLOCK_W:
        raise MeshnnValueError(
            f"ttnn.{op}: e4m3 last dim ({qs[-1]}) must equal scale last dim ({ss[-1]}) * BLOCK_W ({BLOCK_W})"
        )
    _folded(op, qs)
    if math.prod(qs[:-1]) == 0:
        raise MeshnnValueError(f"ttnn.{op}: row count M must be > 0")
    spec = out_spec_like(q, dtype=dtype, memory_config=config, op=op)

    q_spec = q.spec  # (the kernel holds no tensor: a trace must not keep it allocated)
    s_spec = s.spec

    def kernel(in_rows, out_rows, coords) -> None:
        values = logical_values(in_rows[0], q_spec)
        scale = logical_values(in_rows[1], s_spec)
        blocks = values.reshape(*values.shape[:-1], -1, BLOCK_W) * scale[..., None]
        write_values(out_rows[0], blocks.reshape(values.shape), spec)

    attrs = {"output_dtype": dtype, "memory_config": config}
    return launch(op, mesh, [q, s], [Output(spec)], kernel, rowwise=True, reads_memos=True, attrs=attrs)[0]
