"""The program and kernel config vocabulary ops accept, with ttnn's names, fields and defaults:
the compute-kernel configs (``ttnn.WormholeComputeKernelConfig`` / ``BlackholeComputeKernelConfig``,
``init_device_compute_kernel_config``, ``ttnn.MathFidelity``), the normalisation program configs
(``LayerNormDefaultProgramConfig``, ``LayerNormShardedMultiCoreProgramConfig``),
``ttnn.SDPAProgramConfig`` (chunk sizes 0: the decode form) and the fused activations
``ttnn.UnaryOpType`` / ``ttnn.UnaryWithParam``.  Each is a frozen value, checked when made; the op
that takes one validates it against its tensors and records it (``launch(attrs=)``).  The matmul
program configs are in :mod:`meshnn.ops.matmul_config`.

Units: core grids are (x, y) in Tensix cores; block sizes in tiles; chunk sizes in rows.

May import: :mod:`meshnn.errors`, :mod:`meshnn.device` (arch, cores),
:mod:`meshnn.perf.fidelity` (``MathFidelity`` is the performance model's own) and
:mod:`meshnn.mesh.op_keywords` (``COMPUTE_KERNEL_CONFIG``, the keyword's declaration).
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from meshnn.device.arch import Arch
from meshnn.device.core import CoreCoord, CoreRangeSet
from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.mesh.op_keywords import Keyword
from meshnn.ops.eltwise.unary_tables import UnaryOpType
from meshnn.perf.fidelity import MathFidelity

__all__ = ["MathFidelity"]  # re-exported: ttnn.MathFidelity is the performance model's enum

# ------------------------------------------------------------------------------ activations


@dataclass(frozen=True)
class UnaryWithParam:
    """``ttnn.UnaryWithParam``: a fused activation and its parameters (GELU: 1.0 for the fast
    tanh approximation; SOFTPLUS: beta and threshold; the others take none)."""

    op_type: UnaryOpType
    param: float | tuple[float, ...] | None = None
    second: float | None = field(default=None, repr=False)  # ttnn's (op_type, float, float): joined to param

    def __post_init__(self) -> None:
        if not isinstance(self.op_type, UnaryOpType):
            raise MeshnnTypeError(f"UnaryWithParam: op_type must be a ttnn.UnaryOpType, got {self.op_type!r}")
        param = self.param
        if self.second is not None:
            if param is None or isinstance(param, Sequence):
                raise MeshnnTypeError(f"UnaryWithParam: a second param follows a first number, got {param!r}")
            param = (param, self.second)
            object.__setattr__(self, "second", None)
        if param is not None:
            values = tuple(param) if isinstance(param, Sequence) else (param,)
            if not all(isinstance(v, int | float | np.number) for v in values):  # a bool: 0.0 / 1.0, as ttnn
                raise MeshnnTypeError(f"UnaryWithParam: param must be a number or numbers, got {param!r}")
            object.__setattr__(self, "param", tuple(float(v) for v in values))

    @property
    def params(self) -> tuple[float, ...]:
        return self.param if isinstance(self.param, tuple) else ()


# ------------------------------------------------------------------------- program configs

DEFAULT_CHUNK = 32
"""q_chunk_size and k_chunk_size without a program config (tt-metal's default)."""


@dataclass(frozen=True)
class SDPAProgramConfig:
    """``ttnn.SDPAProgramConfig``: the core grid and the Q / K chunk sizes (rows, multiples of 32)
    of the attention kernel.  The simulator computes every chunk at once; the sizes are checked as
    tt-metal checks them and decide which masks and sequence lengths are accepted."""

    compute_with_storage_grid_size: object = None
    q_chunk_size: int = DEFAULT_CHUNK
    k_chunk_size: int = DEFAULT_CHUNK
    exp_approx_mode: bool = False
    max_cores_per_head_batch: int = 16
    sub_core_grids: object = field(default=None, kw_only=True)
    """The cores the op runs on, when not the whole grid (tt-metal 2025-11's keyword: Llama-70B's
    decode SDPA on the Galaxy's sub-core grids); checked to be a CoreRangeSet and recorded."""

    def __post_init__(self) -> None:
        if self.sub_core_grids is not None and not isinstance(self.sub_core_grids, CoreRangeSet):
            raise MeshnnTypeError(
                f"SDPAProgramConfig: sub_core_grids must be a ttnn.CoreRangeSet, got {self.sub_core_grids!r}"
            )
        for name in ("q_chunk_size", "k_chunk_size"):
            size = getattr(self, name)
            if isinstance(size, bool) or not isinstance(size, int):
                raise MeshnnTypeError(f"SDPAProgramConfig: {name} must be an int, got {size!r}")
            if size < 0 or size % 32:
                raise MeshnnValueError(
                    f"SDPAProgramConfig: {name} must be 0 (decode: the op chooses) or a positive multiple of 32, "
                    f"got {size!r}"
                )
        if self.compute_with_storage_grid_size is not None:
            object.__setattr__(
                self,
                "compute_with_storage_grid_size",
                as_grid("SDPAProgramConfig", self.compute_with_storage_grid_size),
            )
        _check_flag("SDPAProgramConfig", "exp_approx_mode", self.exp_approx_mode)
        _check_count("SDPAProgramConfig", "max_cores_per_head_batch", self.max_cores_per_head_batch)

    @property
    def is_decode_form(self) -> bool:
        """Chunk sizes 0: the decode op chooses its own chunking."""
        return self.q_chunk_size == 0 or self.k_chunk_size == 0


# ------------------------------------------------------------------------------ shared checks


def as_grid(owner: str, value: object, name: str = "compute_with_storage_grid_size") -> CoreCoord:
    """A core grid (x, y) as a CoreCoord: a CoreCoord, or a pair of positive ints (as ttnn converts)."""
    if isinstance(value, CoreCoord):
        x, y = value.x, value.y
    elif isinstance(value, Sequence) and not isinstance(value, str) and len(value) == 2:
        x, y = value
    else:
        raise MeshnnTypeError(f"{owner}: {name} must be a ttnn.CoreCoord or an (x, y) pair, got {value!r}")
    if not all(isinstance(v, int | np.integer) and not isinstance(v, bool) for v in (x, y)):
        raise MeshnnTypeError(f"{owner}: {name} must hold ints, got {value!r}")
    if x <= 0 or y <= 0:
        raise MeshnnValueError(f"{owner}: {name} must be positive in x and y, got ({x}, {y})")
    return CoreCoord(int(x), int(y))


def _check_flag(owner: str, name: str, value: object) -> None:
    if not isinstance(value, bool):
        raise MeshnnTypeError(f"{owner}: {name} must be a bool, got {value!r}")


def _check_count(owner: str, name: str, value: object, *, zero: bool = False) -> None:
    """A non-negative (``zero``) or positive int; ttnn's ``noconvert`` refuses floats and bools."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise MeshnnTypeError(f"{owner}: {name} must be an int, got {value!r}")
    if value < 0 or (value == 0 and not zero):
        raise MeshnnValueError(f"{owner}: {name} must be {'>= 0' if zero else 'positive'}, got {value}")


# ------------------------------------------------------------------------ compute kernels


class ThrottleLevel(enum.Enum):
    """``ttnn.ThrottleLevel``: how far the math engine is slowed to cap di/dt (recorded only)."""

    NO_THROTTLE = 0
    LEVEL_1 = 1
    LEVEL_2 = 2
    LEVEL_3 = 3
    LEVEL_4 = 4
    LEVEL_5 = 5


@dataclass(kw_only=True, unsafe_hash=True)
class _ComputeKernelConfig:
    """The fields of ttnn's compute-kernel config.  ``math_fidelity`` None is ttnn's
    ``MathFidelity::Invalid`` (unset: the op's own default fidelity applies).  Mutable, as ttnn's
    struct is (``config.throttle_level = ...``): a field set later is checked as when made."""

    math_fidelity: MathFidelity | None = None
    math_approx_mode: bool = True
    fp32_dest_acc_en: bool = False
    packer_l1_acc: bool = False
    dst_full_sync_en: bool = False
    throttle_level: ThrottleLevel = ThrottleLevel.NO_THROTTLE

    def __post_init__(self) -> None:
        owner = type(self).__name__
        if self.math_fidelity is not None and not isinstance(self.math_fidelity, MathFidelity):
            raise MeshnnTypeError(f"{owner}: math_fidelity must be a ttnn.MathFidelity, got {self.math_fidelity!r}")
        for name in ("math_approx_mode", "fp32_dest_acc_en", "packer_l1_acc", "dst_full_sync_en"):
            _check_flag(owner, name, getattr(self, name))
        if not isinstance(self.throttle_level, ThrottleLevel):
            raise MeshnnTypeError(f"{owner}: throttle_level must be a ttnn.ThrottleLevel, got {self.throttle_level!r}")

    def __setattr__(self, name: str, value: object) -> None:
        if name not in _COMPUTE_FIELDS:
            raise MeshnnTypeError(f"{type(self).__name__} has no field {name!r}")
        before = self.__dict__.get(name, _COMPUTE_FIELDS)
        object.__setattr__(self, name, value)
        if len(self.__dict__) == len(_COMPUTE_FIELDS):  # (not while __init__ sets them one by one)
            try:
                self.__post_init__()
            except MeshnnTypeError:
                object.__setattr__(self, name, before)
                raise

    def dest_register_count(self, tile_shape: tuple[int, int] = (32, 32)) -> int:
        """Tiles the destination register holds (ttnn's ``get_dest_reg_count``): 16 tiles of 32x32,
        halved without ``dst_full_sync_en`` (double-buffered) and halved again with fp32 accumulation."""
        count = DEST_REGISTER_DATUMS // (tile_shape[0] * tile_shape[1])
        if not self.dst_full_sync_en:
            count //= 2
        if self.fp32_dest_acc_en:
            count //= 2
        return count


DEST_REGISTER_DATUMS = 64 * 16 * 16
"""Datums of the destination register (64 rows of 16 datums, 16 faces' worth): the same on every arch."""


_COMPUTE_FIELDS = (
    "math_fidelity",
    "math_approx_mode",
    "fp32_dest_acc_en",
    "packer_l1_acc",
    "dst_full_sync_en",
    "throttle_level",
)


class WormholeComputeKernelConfig(_ComputeKernelConfig):
    """``ttnn.WormholeComputeKernelConfig`` (keyword arguments only, as ttnn's)."""


class BlackholeComputeKernelConfig(_ComputeKernelConfig):
    """``ttnn.BlackholeComputeKernelConfig`` (keyword arguments only, as ttnn's)."""


class GrayskullComputeKernelConfig(_ComputeKernelConfig):
    """``ttnn.GrayskullComputeKernelConfig`` (keyword arguments only; meshnn simulates no Grayskull,
    so it is taken where ttnn takes a compute-kernel config, and names the type in annotations)."""


COMPUTE_KERNEL_CONFIGS = (WormholeComputeKernelConfig, BlackholeComputeKernelConfig)


def init_device_compute_kernel_config(
    arch: Arch,
    device_kernel_config: _ComputeKernelConfig | None = None,
    math_fidelity: MathFidelity = MathFidelity.LoFi,
    math_approx_mode: bool = True,
    fp32_dest_acc_en: bool = False,
    packer_l1_acc: bool = False,
    dst_full_sync_en: bool = False,
    throttle_level: ThrottleLevel = ThrottleLevel.NO_THROTTLE,
) -> _ComputeKernelConfig:
    """``device_kernel_config`` when given, else a config of ``arch`` with the given defaults."""
    if not isinstance(arch, Arch):
        raise MeshnnTypeError(f"init_device_compute_kernel_config: arch must be a ttnn.Arch, got {arch!r}")
    if device_kernel_config is not None:
        return check_compute_kernel_config("init_device_compute_kernel_config", device_kernel_config)  # type: ignore[return-value]
    kind = BlackholeComputeKernelConfig if arch is Arch.BLACKHOLE else WormholeComputeKernelConfig
    return kind(
        math_fidelity=math_fidelity,
        math_approx_mode=math_approx_mode,
        fp32_dest_acc_en=fp32_dest_acc_en,
        packer_l1_acc=packer_l1_acc,
        dst_full_sync_en=dst_full_sync_en,
        throttle_level=throttle_level,
    )


def check_compute_kernel_config(op: str, value: object) -> _ComputeKernelConfig | None:
    """``value`` checked to be None or a compute-kernel config."""
    if value is not None and not isinstance(value, _ComputeKernelConfig):
        raise MeshnnTypeError(
            f"ttnn.{op}: compute_kernel_config must be a ttnn.WormholeComputeKernelConfig or "
            f"BlackholeComputeKernelConfig, got {value!r}"
        )
    return value


COMPUTE_KERNEL_CONFIG = Keyword(None, lambda op, _keyword, value: check_compute_kernel_config(op, value))
"""``compute_kernel_config=`` where a function's signature does not have it: checked, then recorded."""


# ------------------------------------------------------------------------- normalisation


@dataclass(frozen=True, kw_only=True)
class LayerNormDefaultProgramConfig:
    """``ttnn.LayerNormDefaultProgramConfig``: interleaved layer / RMS norm over the device's grid."""

    legacy_reduction: bool = False
    legacy_rsqrt: bool = False
    use_welford: bool = False

    def __post_init__(self) -> None:
        for name in ("legacy_reduction", "legacy_rsqrt", "use_welford"):
            _check_flag("LayerNormDefaultProgramConfig", name, getattr(self, name))


@dataclass(frozen=True, kw_only=True)
class LayerNormShardedMultiCoreProgramConfig:
    """``ttnn.LayerNormShardedMultiCoreProgramConfig``: a sharded norm's grid (x, y) and blocks in
    tiles (``block_h`` rows, ``block_w`` columns per core, in ``subblock_w`` steps)."""

    compute_with_storage_grid_size: CoreCoord
    subblock_w: int
    block_h: int
    block_w: int
    inplace: bool
    legacy_reduction: bool = False
    legacy_rsqrt: bool = False
    use_welford: bool = False

    def __post_init__(self) -> None:
        owner = "LayerNormShardedMultiCoreProgramConfig"
        object.__setattr__(self, "compute_with_storage_grid_size", as_grid(owner, self.compute_with_storage_grid_size))
        for name in ("subblock_w", "block_h", "block_w"):
            _check_count(owner, name, getattr(self, name))
        if self.block_w % self.subblock_w:
            raise MeshnnValueError(f"{owner}: block_w {self.block_w} must be divisible by subblock_w {self.subblock_w}")
        for name in ("inplace", "legacy_reduction", "legacy_rsqrt", "use_welford"):
            _check_flag(owner, name, getattr(self, name))


NORM_PROGRAM_CONFIGS = (LayerNormDefaultProgramConfig, LayerNormShardedMultiCoreProgramConfig)


def check_norm_program_config(op: str, value: object) -> object:
    """``value`` checked to be None or a layer-norm program config."""
    if value is not None and not isinstance(value, NORM_PROGRAM_CONFIGS):
        raise MeshnnTypeError(
            f"ttnn.{op}: program_config must be a ttnn.LayerNormDefaultProgramConfig or "
            f"LayerNormShardedMultiCoreProgramConfig, got {value!r}"
        )
    return value


@dataclass(frozen=True, kw_only=True)
class LayerNormDistributedDefaultProgramConfig:
    """``ttnn.LayerNormDistributedDefaultProgramConfig``: the distributed norms' pre / post
    all-gather halves (the reduction and rsqrt variants are recorded; meshnn computes exactly)."""

    legacy_reduction: bool = False
    legacy_rsqrt: bool = False

    def __post_init__(self) -> None:
        for name in ("legacy_reduction", "legacy_rsqrt"):
            _check_flag("LayerNormDistributedDefaultProgramConfig", name, getattr(self, name))


def check_distributed_norm_config(op: str, value: object) -> LayerNormDistributedDefaultProgramConfig:
    """``distributed_program_config=``: None (the default) or a LayerNormDistributedDefaultProgramConfig."""
    if value is None:
        return LayerNormDistributedDefaultProgramConfig()
    if not isinstance(value, LayerNormDistributedDefaultProgramConfig):
        raise MeshnnTypeError(
            f"ttnn.{op}: distributed_program_config must be a ttnn.LayerNormDistributedDefaultProgramConfig, got "
            f"{value!r}"
        )
    return value


# ------------------------------------------------------------------------------- softmax


class SoftmaxProgramConfig:
    """``ttnn.SoftmaxProgramConfig``: what every softmax program config is."""


@dataclass(frozen=True)
class SoftmaxDefaultProgramConfig(SoftmaxProgramConfig):
    """``ttnn.SoftmaxDefaultProgramConfig``: interleaved softmax over the device's grid."""


@dataclass(kw_only=True)
class SoftmaxShardedMultiCoreProgramConfig(SoftmaxProgramConfig):
    """``ttnn.SoftmaxShardedMultiCoreProgramConfig``: a sharded softmax's grid (x, y) and blocks in
    tiles (``block_h`` rows, ``block_w`` columns per core, in ``subblock_w`` steps).  ``block_w``
    may be changed after creation, as ttnn's binding allows; the op checks the fields."""

    compute_with_storage_grid_size: CoreCoord
    subblock_w: int
    block_h: int
    block_w: int

    def __post_init__(self) -> None:
        owner = "SoftmaxShardedMultiCoreProgramConfig"
        self.compute_with_storage_grid_size = as_grid(owner, self.compute_with_storage_grid_size)
        for name in ("subblock_w", "block_h", "block_w"):
            _check_count(owner, name, getattr(self, name))


def check_softmax_program_config(op: str, value: object) -> SoftmaxProgramConfig:
    """``program_config=``: a softmax program config (None: the default one)."""
    if value is None:
        return SoftmaxDefaultProgramConfig()
    if not isinstance(value, SoftmaxProgramConfig):
        raise MeshnnTypeError(
            f"ttnn.{op}: program_config must be a ttnn.SoftmaxDefaultProgramConfig or "
            f"SoftmaxShardedMultiCoreProgramConfig, got {value!r}"
        )
    if isinstance(value, SoftmaxShardedMultiCoreProgramConfig):
        _check_count("SoftmaxShardedMultiCoreProgramConfig", "block_w", value.block_w)
        if value.block_w % value.subblock_w:
            raise MeshnnValueError(
                f"ttnn.{op}: block_w must be divisible by subblock_w ({value.block_w}, {value.subblock_w})"
            )
    return value
