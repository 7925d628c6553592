"""``ttnn.upsample``: an NHWC image ``[N, H, W, C]`` scaled up by whole factors, by nearest
neighbour (exact copies) or bilinearly (torch's ``align_corners=False`` rule: output pixel ``o``
samples input coordinate ``(o + 0.5) / scale - 0.5``), written as ``[N, H*sh, W*sw, C]`` in the
input's layout.  Without ``memory_config`` a sharded input gives an output sharded the same way
(shards ``sh*sw`` times taller); an interleaved one keeps its memory config.

May import: :mod:`meshnn.errors`, :mod:`meshnn.formats`, :mod:`meshnn.tensor`, the ops' registry
and config, the conv geometry and the pool package.
"""

from __future__ import annotations

import math

import numpy as np

from meshnn.device.buffer import ShardSpec
from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.mesh.op_keywords import choice
from meshnn.ops.config import check_compute_kernel_config
from meshnn.ops.conv.geometry import pair, torch_module
from meshnn.ops.outputs import out_spec_like
from meshnn.ops.pool.common import pool_input, run_pool
from meshnn.ops.pool.goldens import golden_upsample
from meshnn.ops.registry import OpKind, register
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor


def _memory(tensor: Tensor, scale: int) -> MemoryConfig:
    """A sharded input's memory config with shards ``scale`` times taller."""
    config = tensor.memory_config()
    spec = config.shard_spec
    if not config.is_sharded() or spec is None:
        return config
    height, width = spec.shape
    return MemoryConfig(
        config.memory_layout, config.buffer_type, ShardSpec(spec.grid, (height * scale, width), spec.orientation)
    )


def _scales(op: str, scale_factor: object, mode: str) -> tuple[int | float, int | float]:
    """(height, width) factors: ints when whole (any mode), else positive floats (nearest only:
    tt-metal of 2026's float path; the output is ``floor(H * scale)`` by ``floor(W * scale)``)."""
    pairs = scale_factor if isinstance(scale_factor, list | tuple) else (scale_factor, scale_factor)
    if len(pairs) != 2 or any(isinstance(f, bool) or not isinstance(f, int | float) for f in pairs):
        raise MeshnnTypeError(
            f"ttnn.{op}: scale_factor must be a number or (height, width) numbers, got {scale_factor!r}"
        )
    if all(float(f).is_integer() for f in pairs):
        whole = tuple(int(f) for f in pairs)
        return pair(op, "scale_factor", whole)
    if any(f <= 0 for f in pairs):
        raise MeshnnValueError(f"ttnn.{op}: scale_factor must be positive, got {scale_factor!r}")
    if mode != "nearest":
        raise MeshnnValueError(f"ttnn.{op}: a non-integer scale_factor {scale_factor!r} is for mode 'nearest' only")
    return float(pairs[0]), float(pairs[1])


@register(kind=OpKind.POOL, family=OpFamily.COPY, device_operation="UpSample", golden=golden_upsample)
def upsample(
    input_tensor: Tensor,
    scale_factor: int | tuple[int, int],
    *,
    mode: str = "nearest",
    memory_config: MemoryConfig | None = None,
    compute_kernel_config: object = None,
) -> Tensor:
    """The image scaled up by ``scale_factor`` (an int, or (height, width) factors)."""
    op = "upsample"
    choice("nearest", "bilinear")(op, "mode", mode)
    check_compute_kernel_config(op, compute_kernel_config)
    sh, sw = _scales(op, scale_factor, mode)
    tensor = pool_input(op, input_tensor)
    if len(tensor.shape) != 4:
        raise MeshnnValueError(f"ttnn.{op}: input_tensor must be [N, H, W, C], got {list(tensor.shape)}")
    if memory_config is not None and not isinstance(memory_config, MemoryConfig):
        raise MeshnnTypeError(f"ttnn.{op}: memory_config must be a ttnn.MemoryConfig, got {memory_config!r}")
    n, h, w, c = tensor.shape
    whole = isinstance(sh, int) and isinstance(sw, int)
    if not whole and memory_config is None and tensor.memory_config().is_sharded():
        raise MeshnnValueError(f"ttnn.{op}: a non-integer scale_factor takes an interleaved input (or a memory_config)")
    memory = memory_config or (_memory(tensor, sh * sw) if whole else tensor.memory_config())
    spec = out_spec_like(tensor, shape=(n, math.floor(h * sh), math.floor(w * sw), c), memory_config=memory, op=op)

    def compute(x: np.ndarray) -> list[np.ndarray]:
        if mode == "nearest" and whole:
            return [np.repeat(np.repeat(x, sh, axis=1), sw, axis=2)]
        if mode == "nearest":  # torch's rule: output pixel o copies input pixel floor(o / scale)
            rows = np.minimum(np.floor(np.arange(spec.shape[1]) * (1.0 / sh)).astype(np.int64), h - 1)
            cols = np.minimum(np.floor(np.arange(spec.shape[2]) * (1.0 / sw)).astype(np.int64), w - 1)
            return [x[:, rows][:, :, cols]]
        torch = torch_module()
        xt = torch.from_numpy(np.ascontiguousarray(x.transpose(0, 3, 1, 2), dtype=np.float32))
        out = torch.nn.functional.interpolate(xt, scale_factor=(sh, sw), mode="bilinear", align_corners=False)
        return [out.numpy().transpose(0, 2, 3, 1)]

    return run_pool(op, [tensor], [spec], compute, {"mode": mode, "memory_config": memory})[0]
