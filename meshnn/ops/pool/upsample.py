"""``ttnn.upsample``: an NHWC image ``[N, H, W, C]`` scaled up by whole factors, by nearest
neighbour (exact copies) or bilinearly (torch's ``align_corners=False`` rule: output pixel ``o``
samples input coordinate ``(o + 0.5) / scale - 0.5``), written as ``[N, H*sh, W*sw, C]`` in the
input's layout.  Without ``memory_config`` a sharded input gives an output sharded the same way
(shards ``sh*sw`` times taller); an interleaved one keeps its memory config.

May import: :mod:`meshnn.errors`, :mod:`meshnn.formats`, :mod:`meshnn.tensor`, the ops' registry
and config, the conv geometry and the pool package.
"""

from __future__ import annotations

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


@register(kind=OpKind.POOL, family=OpFamily.COPY, device_operation="UpSample", modelled=False, golden=golden_upsample)
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
    if isinstance(scale_factor, float) and scale_factor.is_integer():
        scale_factor = int(scale_factor)
    sh, sw = pair(op, "scale_factor", scale_factor)
    tensor = pool_input(op, input_tensor)
    if len(tensor.shape) != 4:
        raise MeshnnValueError(f"ttnn.{op}: input_tensor must be [N, H, W, C], got {list(tensor.shape)}")
    if memory_config is not None and not isinstance(memory_config, MemoryConfig):
        raise MeshnnTypeError(f"ttnn.{op}: memory_config must be a ttnn.MemoryConfig, got {memory_config!r}")
    n, h, w, c = tensor.shape
    memory = memory_config or _memory(tensor, sh * sw)
    spec = out_spec_like(tensor, shape=(n, h * sh, w * sw, c), memory_config=memory, op=op)

    def compute(x: np.ndarray) -> list[np.ndarray]:
        if mode == "nearest":
            return [np.repeat(np.repeat(x, sh, axis=1), sw, axis=2)]
        torch = torch_module()
        xt = torch.from_numpy(np.ascontiguousarray(x.transpose(0, 3, 1, 2), dtype=np.float32))
        out = torch.nn.functional.interpolate(xt, scale_factor=(sh, sw), mode="bilinear", align_corners=False)
        return [out.numpy().transpose(0, 2, 3, 1)]

    return run_pool(op, [tensor], [spec], compute, {"mode": mode, "memory_config": memory})[0]
