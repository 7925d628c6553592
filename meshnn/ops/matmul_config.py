"""The matmul program configs, with ttnn's names, fields and defaults:
``MatmulMultiCoreReuseProgramConfig``, ``MatmulMultiCoreReuseMultiCastProgramConfig`` (the "2D"
config), ``MatmulMultiCoreReuseMultiCast1DProgramConfig``,
``MatmulMultiCoreReuseMultiCastDRAMShardedProgramConfig`` and ``MinimalMatmulConfig``; the checks
ttnn makes of a config against the device and the operands (:func:`validate_program_config`); ttnn's
``to_json`` / ``from_json`` of each program config (:mod:`meshnn.ops.config_json`); and
the shard spec ttnn gives a sharded output whose memory config has none (:func:`output_shard_spec`).

The simulator computes every product at once: a config changes no value.  It decides what is
refused (a grid larger than the device's, sub-blocks that do not fit the destination register,
``K`` not divisible by ``in0_block_w``) and how a spec-less sharded output is laid out.

Units: grids are (x, y) in cores; every block size is in tiles.

May import: :mod:`meshnn.errors`, :mod:`meshnn.device` and :mod:`meshnn.ops.config`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from meshnn.device.buffer import ShardOrientation, ShardSpec, TensorMemoryLayout
from meshnn.device.core import CoreCoord, CoreRange, CoreRangeSet, num_cores_to_corerangeset
from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.ops.activation_arg import activation_arg
from meshnn.ops.config import UnaryWithParam, _check_count, _check_flag, _ComputeKernelConfig, as_grid
from meshnn.ops.config_json import JsonConfig

_NO_CORES = CoreRangeSet()
_ONE_CORE = CoreCoord(1, 1)


def _check_activation(owner: str, config: object) -> None:
    """``config.fused_activation`` checked: None, a UnaryWithParam, or what ttnn's binding converts
    to one implicitly (a UnaryOpType, a (UnaryOpType, param) pair), then kept converted."""
    value = activation_arg(owner, "fused_activation", config.fused_activation)  # type: ignore[attr-defined]
    object.__setattr__(config, "fused_activation", value)


def _check_worker_cores(config: object) -> None:
    """``allowed_worker_cores`` (tt-metal of 2026: the cores, within the grid or the sub-device's,
    the matmul may use; no value changes) checked: None or a CoreRangeSet."""
    cores = config.allowed_worker_cores  # type: ignore[attr-defined]
    if cores is not None and not isinstance(cores, CoreRangeSet):
        raise MeshnnTypeError(
            f"{type(config).__name__}: allowed_worker_cores must be a ttnn.CoreRangeSet or None, got {cores!r}"
        )


def _check_blocks(config: object, names: tuple[str, ...]) -> None:
    owner = type(config).__name__
    for name in names:
        _check_count(owner, name, getattr(config, name))


@dataclass(frozen=True, kw_only=True)
class MatmulMultiCoreReuseProgramConfig(JsonConfig):
    """``ttnn.MatmulMultiCoreReuseProgramConfig``: a batched matmul, each core a per_core_M x
    per_core_N output block (no bias, no fused activation)."""

    compute_with_storage_grid_size: CoreCoord
    in0_block_w: int
    out_subblock_h: int
    out_subblock_w: int
    per_core_M: int
    per_core_N: int
    allowed_worker_cores: CoreRangeSet | None = None

    def __post_init__(self) -> None:
        grid = as_grid(type(self).__name__, self.compute_with_storage_grid_size)
        object.__setattr__(self, "compute_with_storage_grid_size", grid)
        _check_blocks(self, ("in0_block_w", "out_subblock_h", "out_subblock_w", "per_core_M", "per_core_N"))
        _subblocks_divide(self, self.per_core_M, self.per_core_N)
        _check_worker_cores(self)


@dataclass(frozen=True, kw_only=True)
class MatmulMultiCoreReuseMultiCastProgramConfig(JsonConfig):
    """``ttnn.MatmulMultiCoreReuseMultiCastProgramConfig``: the 2-D multicast matmul (block sharded
    or interleaved operands); ``out_block_h`` / ``out_block_w`` default to per_core_M / per_core_N."""

    compute_with_storage_grid_size: CoreCoord
    in0_block_w: int
    out_subblock_h: int
    out_subblock_w: int
    out_block_h: int | None = None
    out_block_w: int | None = None
    per_core_M: int
    per_core_N: int
    transpose_mcast: bool
    fused_activation: UnaryWithParam | None = None
    fuse_batch: bool = True
    allowed_worker_cores: CoreRangeSet | None = None

    def __post_init__(self) -> None:
        _blocked_init(self, ("transpose_mcast", "fuse_batch"))
        _check_worker_cores(self)


@dataclass(frozen=True, kw_only=True)
class MatmulMultiCoreReuseMultiCast1DProgramConfig(JsonConfig):
    """``ttnn.MatmulMultiCoreReuseMultiCast1DProgramConfig``: the 1-D multicast matmul (width or
    height sharded, or narrow interleaved operands); ``mcast_in0`` multicasts the activations."""

    compute_with_storage_grid_size: CoreCoord
    in0_block_w: int
    out_subblock_h: int
    out_subblock_w: int
    out_block_h: int | None = None
    out_block_w: int | None = None
    per_core_M: int
    per_core_N: int
    fuse_batch: bool
    fused_activation: UnaryWithParam | None = None
    mcast_in0: bool
    gather_in0: bool = False
    hop_cores: CoreRangeSet = _NO_CORES
    num_global_cb_receivers: int = 1
    untilize_out: bool = False
    allowed_worker_cores: CoreRangeSet | None = None

    def __post_init__(self) -> None:
        _blocked_init(self, ("fuse_batch", "mcast_in0", "gather_in0", "untilize_out"))
        _check_worker_cores(self)
        if not isinstance(self.hop_cores, CoreRangeSet):
            raise MeshnnTypeError(
                f"{type(self).__name__}: hop_cores must be a ttnn.CoreRangeSet, got {self.hop_cores!r}"
            )
        _check_count(type(self).__name__, "num_global_cb_receivers", self.num_global_cb_receivers)


@dataclass(frozen=True, kw_only=True)
class _DramBlocks(JsonConfig):
    """The fields of the two DRAM-sharded configs (tiles): K block, output tiles a core, activation."""

    in0_block_w: int
    per_core_M: int
    per_core_N: int
    fused_activation: UnaryWithParam | None = None

    def __post_init__(self) -> None:
        _check_blocks(self, ("in0_block_w", "per_core_M", "per_core_N"))
        _check_activation(type(self).__name__, self)


@dataclass(frozen=True, kw_only=True)
class MatmulMultiCoreReuseMultiCastDRAMShardedProgramConfig(_DramBlocks):
    """``ttnn.MatmulMultiCoreReuseMultiCastDRAMShardedProgramConfig``: weights sharded over the DRAM
    banks, activations width sharded in L1 (decode and the LM head)."""


@dataclass(frozen=True, kw_only=True)
class MatmulMultiCoreReuseMultiCastBatchedDRAMShardedProgramConfig(_DramBlocks):
    """``ttnn.MatmulMultiCoreReuseMultiCastBatchedDRAMShardedProgramConfig``: a batched product
    ``[1, B, M, K] x [1, B, K, N]`` sharded by batch, each worker a whole number of the B matrices
    (the activations and the output HEIGHT sharded in L1, the weights HEIGHT sharded over the DRAM
    banks: DeepSeek's MLA ``wkv_b1`` / ``wkv_b2``); the operands' checks are
    :func:`check_batched_dram_sharded`'s."""


def check_batched_dram_sharded(op: str, config: object, a: object, b: object, out: object, k_tiles: int) -> None:
    """tt-metal's checks of a batch-sharded DRAM product (``config`` that kind, else nothing): ``a``
    HEIGHT sharded with ROW_MAJOR shards, the output sharded like it (layout and buffer type), ``K``
    (tiles) a multiple of ``in0_block_w``, ``b`` HEIGHT sharded."""
    if not isinstance(config, MatmulMultiCoreReuseMultiCastBatchedDRAMShardedProgramConfig):
        return
    memory = a.memory_config()  # type: ignore[attr-defined]
    problems = []
    if memory.memory_layout is not TensorMemoryLayout.HEIGHT_SHARDED:
        problems.append(f"Input A memory layout must be HEIGHT_SHARDED, got: {memory.memory_layout}")
    elif memory.shard_spec.orientation is not ShardOrientation.ROW_MAJOR:
        problems.append(f"Input A shard orientation must be ROW_MAJOR, got: {memory.shard_spec.orientation}")
    if not out.is_sharded():  # type: ignore[attr-defined]
        problems.append("Output memory config must be sharded")
    elif (out.buffer_type, out.memory_layout) != (memory.buffer_type, memory.memory_layout):  # type: ignore[attr-defined]
        problems.append(
            f"Input A and output must match in buffer type and memory layout, got input: {memory.buffer_type} "
            f"{memory.memory_layout} vs output: {out.buffer_type} {out.memory_layout}"  # type: ignore[attr-defined]
        )
    if k_tiles % config.in0_block_w:
        problems.append(f"N dimension ({k_tiles}) must be divisible by in0_block_w ({config.in0_block_w})")
    b_layout = b.memory_config().memory_layout  # type: ignore[attr-defined]
    if b_layout is not TensorMemoryLayout.HEIGHT_SHARDED:
        problems.append(f"Input B memory layout must be HEIGHT_SHARDED, got: {b_layout}")
    if problems:
        raise MeshnnValueError(f"ttnn.{op}: batch-sharded DRAM matmul: {problems[0]}")


@dataclass(frozen=True, kw_only=True)
class MinimalMatmulConfig:
    """``ttnn.MinimalMatmulConfig``: the blocking of ``ttnn.experimental.minimal_matmul`` (tiles)."""

    M_block_size: int = 1
    K_block_size: int = 1
    N_block_size: int = 1
    subblock_h: int = 1
    subblock_w: int = 1
    compute_with_storage_grid_size: CoreCoord = _ONE_CORE

    def __post_init__(self) -> None:
        grid = as_grid(type(self).__name__, self.compute_with_storage_grid_size)
        object.__setattr__(self, "compute_with_storage_grid_size", grid)
        _check_blocks(self, ("M_block_size", "K_block_size", "N_block_size", "subblock_h", "subblock_w"))


def _blocked_init(config: object, flags: tuple[str, ...]) -> None:
    """The shared checks of the two multicast configs; the output blocks default to the per-core ones."""
    owner = type(config).__name__
    object.__setattr__(config, "compute_with_storage_grid_size", as_grid(owner, config.compute_with_storage_grid_size))  # type: ignore[attr-defined]
    if config.out_block_h is None:  # type: ignore[attr-defined]
        object.__setattr__(config, "out_block_h", config.per_core_M)  # type: ignore[attr-defined]
    if config.out_block_w is None:  # type: ignore[attr-defined]
        object.__setattr__(config, "out_block_w", config.per_core_N)  # type: ignore[attr-defined]
    names = ("in0_block_w", "out_subblock_h", "out_subblock_w", "out_block_h", "out_block_w", "per_core_M")
    _check_blocks(config, (*names, "per_core_N"))
    for flag in flags:
        _check_flag(owner, flag, getattr(config, flag))
    _check_activation(owner, config)
    pairs = (
        ("out_block_h", "out_subblock_h"),
        ("out_block_w", "out_subblock_w"),
        ("per_core_M", "out_block_h"),
        ("per_core_N", "out_block_w"),
    )
    for whole, part in pairs:
        if getattr(config, whole) % getattr(config, part):
            raise MeshnnValueError(
                f"{owner}: {whole} ({getattr(config, whole)}) must be divisible by {part} ({getattr(config, part)})"
            )


def _subblocks_divide(config: object, per_core_m: int, per_core_n: int) -> None:
    owner = type(config).__name__
    if per_core_m % config.out_subblock_h or per_core_n % config.out_subblock_w:  # type: ignore[attr-defined]
        raise MeshnnValueError(
            f"{owner}: per_core_M ({per_core_m}) / per_core_N ({per_core_n}) must be divisible by out_subblock_h "
            f"({config.out_subblock_h}) / out_subblock_w ({config.out_subblock_w})"  # type: ignore[attr-defined]
        )


MATMUL_PROGRAM_CONFIGS = (
    MatmulMultiCoreReuseProgramConfig,
    MatmulMultiCoreReuseMultiCastProgramConfig,
    MatmulMultiCoreReuseMultiCast1DProgramConfig,
    MatmulMultiCoreReuseMultiCastDRAMShardedProgramConfig,
    MatmulMultiCoreReuseMultiCastBatchedDRAMShardedProgramConfig,
)
_GRIDDED = MATMUL_PROGRAM_CONFIGS[:3]


def check_matmul_program_config(op: str, value: object) -> object:
    """``value`` checked to be None or a matmul program config."""
    if value is not None and not isinstance(value, MATMUL_PROGRAM_CONFIGS):
        names = ", ".join(c.__name__ for c in MATMUL_PROGRAM_CONFIGS)
        raise MeshnnTypeError(f"ttnn.{op}: program_config must be one of ttnn.{{{names}}}, got {value!r}")
    return value


def validate_program_config(
    op: str,
    config: object,
    device_grid: CoreCoord,
    k_tiles: int,
    kernel: _ComputeKernelConfig | None,
) -> None:
    """ttnn's checks of a matmul program config before it runs: its grid fits the device's compute
    grid, ``K`` (in tiles) divides into ``in0_block_w`` blocks, and one output sub-block fits the
    destination register of the compute-kernel config."""
    if config is None:
        return
    name = type(config).__name__
    if isinstance(config, _GRIDDED) and not getattr(config, "gather_in0", False):
        grid = config.compute_with_storage_grid_size
        if grid.x > device_grid.x or grid.y > device_grid.y:
            raise MeshnnValueError(
                f"ttnn.{op}: program_config {name}'s compute_with_storage_grid_size ({grid.x}, {grid.y}) must fit "
                f"within the device's compute grid ({device_grid.x}, {device_grid.y})"
            )
    if isinstance(config, _GRIDDED) and k_tiles % config.in0_block_w:
        raise MeshnnValueError(
            f"ttnn.{op}: K ({k_tiles} tiles) must be divisible by program_config.in0_block_w ({config.in0_block_w})"
        )
    if isinstance(config, _GRIDDED):
        registers = (kernel or _ComputeKernelConfig()).dest_register_count()
        if config.out_subblock_h * config.out_subblock_w > registers:
            raise MeshnnValueError(
                f"ttnn.{op}: out_subblock_w {config.out_subblock_w} times out_subblock_h {config.out_subblock_h} "
                f"needs to be at most {registers} to fit in hardware (the compute_kernel_config's destination register)"
            )


def output_shard_spec(
    op: str,
    config: object,
    m_tiles: int,
    n_tiles: int,
    tile: tuple[int, int],
    input_spec: ShardSpec | None,
) -> ShardSpec:
    """The shard spec ttnn gives a matmul's sharded output whose memory config has none: blocks of
    per_core_M x per_core_N tiles over the program config's cores (the input's grid for the DRAM
    sharded config).  ``m_tiles`` is the output's rows in tiles (batch fused), ``n_tiles`` its columns;
    ``input_spec`` the first sharded operand's shard spec, if any."""
    th, tw = tile
    if config is None or not isinstance(config, MATMUL_PROGRAM_CONFIGS):
        raise MeshnnValueError(
            f"ttnn.{op}: a sharded memory_config without a shard_spec needs a matmul program_config to derive it from "
            "(MatmulMultiCoreReuseMultiCast1DProgramConfig, ...ProgramConfig, ...DRAMShardedProgramConfig)"
        )
    shape = (config.per_core_M * th, config.per_core_N * tw)
    if isinstance(config, MatmulMultiCoreReuseMultiCastBatchedDRAMShardedProgramConfig):
        raise MeshnnValueError(
            f"ttnn.{op}: with a batch-sharded DRAM program_config, give the output memory_config its shard spec "
            "(meshnn does not derive it)"
        )
    if isinstance(config, MatmulMultiCoreReuseMultiCastDRAMShardedProgramConfig):
        if input_spec is None:
            raise MeshnnValueError(
                f"ttnn.{op}: with a DRAM-sharded program_config, input_tensor_a must be width sharded in L1 "
                "(its grid is the output's)"
            )
        return ShardSpec(input_spec.grid, shape, ShardOrientation.ROW_MAJOR)
    blocks_y = math.ceil(m_tiles / config.per_core_M)
    blocks_x = math.ceil(n_tiles / config.per_core_N)
    grid = config.compute_with_storage_grid_size
    if isinstance(config, MatmulMultiCoreReuseMultiCastProgramConfig):
        if config.transpose_mcast:
            cores = CoreRangeSet([CoreRange(CoreCoord(0, 0), CoreCoord(blocks_y - 1, blocks_x - 1))])
            return ShardSpec(cores, shape, ShardOrientation.COL_MAJOR)
        cores = CoreRangeSet([CoreRange(CoreCoord(0, 0), CoreCoord(blocks_x - 1, blocks_y - 1))])
        return ShardSpec(cores, shape, ShardOrientation.ROW_MAJOR)
    orientation = ShardOrientation.ROW_MAJOR  # 1-D: row-wise over the grid
    if isinstance(config, MatmulMultiCoreReuseProgramConfig):  # COL_MAJOR unless a sharded operand says otherwise
        orientation = ShardOrientation.COL_MAJOR if input_spec is None else input_spec.orientation
    cores = num_cores_to_corerangeset(blocks_x * blocks_y, grid, orientation is ShardOrientation.ROW_MAJOR)
    return ShardSpec(cores, shape, orientation)
