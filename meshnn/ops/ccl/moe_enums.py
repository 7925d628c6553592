"""The enums of tt-metal's fused MoE collectives (``ttnn.operations.ccl``, also under
``ttnn._ttnn.operations.experimental.ccl_experimental`` and ``ttnn.experimental``).

Values are ttnn's enumerator values (its nanobind binding converts an int equal to one).  On the
simulated mesh none of them changes a result: the dispatch algorithm and worker mode choose
routes and workers on hardware; the activation is the one the MoE compute kernels apply.

May import: nothing of meshnn's.
"""

from __future__ import annotations

import enum


class MoEActivationFunction(enum.Enum):
    """``ttnn.operations.ccl.MoEActivationFunction``: the activation between the MoE compute op's
    gate and down matmuls."""

    SILU = 0
    SWIGLU = 1
    GELU = 2


class DispatchAlgorithm(enum.Enum):
    """``ttnn.operations.ccl.DispatchAlgorithm``: how ``all_to_all_dispatch_metadata`` routes tokens
    over the fabric (hardware only; recorded)."""

    BROADCAST = 0
    SPARSE_UNICAST = 1
    SPARSE_MCAST_LINEAR = 2
    SPARSE_MCAST_SHORTEST_PATH = 3
    SPARSE_MCAST_SPLIT_BW = 4


class WorkerMode(enum.Enum):
    """``ttnn.operations.ccl.WorkerMode``: how ``all_to_all_dispatch_metadata`` spreads its workers
    over the links (hardware only; recorded)."""

    DIRECT = 0
    MUX_TOKEN_SPLIT = 1
    MUX_PAYLOAD_SPLIT = 2


CCL_ENUMS = {
    "MoEActivationFunction": MoEActivationFunction,
    "DispatchAlgorithm": DispatchAlgorithm,
    "WorkerMode": WorkerMode,
}
"""ttnn's names of these enums in ``ttnn.operations.ccl`` and the experimental namespaces."""
