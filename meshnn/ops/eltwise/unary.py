"""The unary element-wise ops (``ttnn.relu``, ``ttnn.exp`` ... ``ttnn.softplus``, ``ttnn.mish``): float32 compute
of :data:`~meshnn.ops.eltwise.functions.UNARY` (integer tensors widened to int64), rounded once
into the output dtype exactly as the host conversion does.

May import: :mod:`meshnn.tensor` and the ops' checks, outputs and element-wise modules.
"""

from __future__ import annotations

import numpy as np

from meshnn.mesh.op_keywords import SUB_CORE_GRIDS, Keyword, flag, ttnn_keywords
from meshnn.ops.checks import device_input
from meshnn.ops.eltwise.functions import UNARY, wide
from meshnn.ops.eltwise.kernel import elementwise, memory_config_of
from meshnn.ops.outputs import out_spec_like
from meshnn.tensor import device_hooks
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor


def unary(
    name: str,
    input_tensor: Tensor,
    *,
    memory_config: MemoryConfig | None = None,
    queue_id: int = 0,
    output_tensor: object = None,
    **params: object,
) -> Tensor:
    """``ttnn.<name>(input_tensor)`` on command queue ``queue_id``, into ``output_tensor`` when given
    (its spec must be the output's)."""
    tensor = device_input(name, "input_tensor", input_tensor)
    function = UNARY[name]
    spec = out_spec_like(tensor, memory_config=memory_config_of(memory_config, output_tensor), op=name)

    def compute(x: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return function(wide(x).astype(np.float32) if x.dtype.kind in "iu" else x, **params)

    return elementwise(name, [tensor], spec, compute, queue_id=queue_id, output_tensor=output_tensor)


_PARAMS: dict[str, dict[str, object]] = {
    "gelu": {"fast_and_approximate_mode": False},  # the tanh approximation: computed as asked
    "softplus": {"beta": 1.0, "threshold": 20.0},
}
"""The parameters of a unary op beyond its input, with ttnn's defaults (the others take none)."""
_APPROXIMATE = {"fast_and_approximate_mode": Keyword(False, flag)}
_HARDWARE: dict[str, dict[str, Keyword]] = {"exp": _APPROXIMATE, "rsqrt": _APPROXIMATE}
"""Hardware-only keywords of a unary op (its SFPU's approximation: meshnn computes in float32)."""


def _make_unary(name: str):
    @ttnn_keywords(name, takes=_PARAMS.get(name, {}), sub_core_grids=SUB_CORE_GRIDS, **_HARDWARE.get(name, {}))
    def op(
        input_tensor: Tensor,
        *,
        memory_config: MemoryConfig | None = None,
        output_tensor: object = None,
        queue_id: int = 0,
        **params: object,
    ) -> Tensor:
        return unary(
            name,
            input_tensor,
            memory_config=memory_config,
            queue_id=queue_id,
            output_tensor=output_tensor,
            **_unary_params(name, params),
        )

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"``ttnn.{name}``: element-wise {name} of a device tensor."
    return op


def _unary_params(name: str, params: dict[str, object]) -> dict[str, object]:
    if name == "gelu":
        return {"approximate": bool(params.get("fast_and_approximate_mode", False))}
    if name == "softplus":
        return {"beta": float(params.get("beta", 1.0)), "threshold": float(params.get("threshold", 20.0))}
    return {}


relu, gelu, silu, sigmoid, tanh, exp, log, sqrt, rsqrt, reciprocal, neg, abs, square, softplus, mish = (
    _make_unary(n) for n in UNARY
)

device_hooks.register("neg", neg)  # the Tensor operator -a
