"""The layer / RMS norm helpers tt-metal 2026 binds beside its norms: ``ttnn.LayerNormType``,
``ttnn.DistributedLayerNormStage``, ``ttnn.layernorm_default_compute_config(arch)`` /
``ttnn.rmsnorm_default_compute_config(arch)`` (the compute config a norm runs with when it is given
none) and ``ttnn.create_layernorm_program_config(shard_spec=None, tile_height=32, tile_width=32)``
(the program config a norm derives from its input's shard spec).  Plain host functions: no op runs.

May import: :mod:`meshnn.errors`, :mod:`meshnn.device` and the ops' config module.
"""

from __future__ import annotations

import enum

from meshnn.device.arch import Arch
from meshnn.device.buffer import ShardSpec
from meshnn.device.core import CoreCoord
from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.ops.config import (
    LayerNormDefaultProgramConfig,
    LayerNormShardedMultiCoreProgramConfig,
    MathFidelity,
    init_device_compute_kernel_config,
)


class LayerNormType(enum.Enum):
    """``ttnn.LayerNormType``: which norm a layer-norm program computes (tt-metal's order)."""

    LAYERNORM = 0
    RMSNORM = 1


class DistributedLayerNormStage(enum.Enum):
    """``ttnn.DistributedLayerNormStage``: a distributed norm's step (its statistics before the
    all-gather, the normalisation after it), or none."""

    NOT_DISTRIBUTED = 0
    PRE_ALL_GATHER = 1
    POST_ALL_GATHER = 2


LayerNormType.__module__ = DistributedLayerNormStage.__module__ = "meshnn"


def layernorm_default_compute_config(arch: Arch) -> object:
    """``ttnn.layernorm_default_compute_config(arch)``: HiFi4, exact math (``math_approx_mode``
    False), float32 destination accumulation: what ``ttnn.layer_norm`` runs with when given none."""
    return init_device_compute_kernel_config(arch, None, MathFidelity.HiFi4, False, True)


def rmsnorm_default_compute_config(arch: Arch) -> object:
    """``ttnn.rmsnorm_default_compute_config(arch)``: HiFi4, approximate math, bfloat16 destination
    accumulation: what ``ttnn.rms_norm`` runs with when given none."""
    return init_device_compute_kernel_config(arch, None, MathFidelity.HiFi4, True, False)


def create_layernorm_program_config(
    shard_spec: ShardSpec | None = None, tile_height: int = 32, tile_width: int = 32
) -> LayerNormDefaultProgramConfig | LayerNormShardedMultiCoreProgramConfig:
    """``ttnn.create_layernorm_program_config``: the default (interleaved) config without a shard
    spec; with one, a sharded config over the shard grid's bounding box, one tile column a subblock,
    ``block_h`` / ``block_w`` the shard's height / width in tiles of ``tile_height`` x ``tile_width``."""
    op = "create_layernorm_program_config"
    for name, value in (("tile_height", tile_height), ("tile_width", tile_width)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise MeshnnTypeError(f"ttnn.{op}: {name} must be an int, got {value!r}")
        if value <= 0:
            raise MeshnnValueError(f"ttnn.{op}: {name} must be positive, got {value}")
    if shard_spec is None:
        return LayerNormDefaultProgramConfig()
    if not isinstance(shard_spec, ShardSpec):
        raise MeshnnTypeError(f"ttnn.{op}: shard_spec must be a ttnn.ShardSpec or None, got {shard_spec!r}")
    box = shard_spec.grid.bounding_box()
    grid = CoreCoord(box.end.x - box.start.x + 1, box.end.y - box.start.y + 1)
    height, width = shard_spec.shape
    return LayerNormShardedMultiCoreProgramConfig(
        compute_with_storage_grid_size=grid,
        subblock_w=1,
        block_h=height // tile_height,
        block_w=width // tile_width,
        inplace=False,
    )
