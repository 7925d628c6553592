"""The program and kernel config types that ops accept: ``ttnn.SDPAProgramConfig`` and the fused
activations ``ttnn.UnaryOpType`` / ``ttnn.UnaryWithParam`` (binary ops' ``activations``, and the
fused activation of matmul program configs).  Each is plain vocabulary, checked when made; the op
that takes one decides what it changes.  One room for all of them: the compute kernel, matmul,
normalisation and dispatch configs belong here too.

May import: :mod:`meshnn.errors` (nothing else of meshnn).
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError

# ------------------------------------------------------------------------------ activations


class UnaryOpType(enum.Enum):
    """``ttnn.UnaryOpType``: the unary ops a binary op can fuse as an activation (each named by
    its ttnn op)."""

    RELU = "relu"
    GELU = "gelu"
    SILU = "silu"
    SIGMOID = "sigmoid"
    TANH = "tanh"
    EXP = "exp"
    LOG = "log"
    SQRT = "sqrt"
    RSQRT = "rsqrt"
    RECIP = "reciprocal"
    NEG = "neg"
    ABS = "abs"
    SQUARE = "square"
    SOFTPLUS = "softplus"


@dataclass(frozen=True)
class UnaryWithParam:
    """``ttnn.UnaryWithParam``: a fused activation and its parameters (GELU: 1.0 for the fast
    tanh approximation; SOFTPLUS: beta and threshold; the others take none)."""

    op_type: UnaryOpType
    param: float | tuple[float, ...] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.op_type, UnaryOpType):
            raise MeshnnTypeError(f"UnaryWithParam: op_type must be a ttnn.UnaryOpType, got {self.op_type!r}")
        param = self.param
        if param is not None:
            values = tuple(param) if isinstance(param, Sequence) else (param,)
            if not all(isinstance(v, int | float | np.number) and not isinstance(v, bool) for v in values):
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

    def __post_init__(self) -> None:
        for name in ("q_chunk_size", "k_chunk_size"):
            size = getattr(self, name)
            if isinstance(size, bool) or not isinstance(size, int) or size <= 0 or size % 32:
                raise MeshnnValueError(f"SDPAProgramConfig: {name} must be a positive multiple of 32, got {size!r}")
