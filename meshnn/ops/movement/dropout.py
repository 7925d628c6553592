"""``ttnn.experimental.dropout``: each element zeroed with ``probability``, the others multiplied
by ``scale`` (usually ``1 / (1 - probability)``), from a random stream fixed by ``seed``.

The stream is numpy's PCG64 seeded with ``seed``, one per call: a seed gives the same mask on
every run and on every device of a mesh (ttnn's device RNG draws its own; the masks differ from
ttnn's but have the same law).

May import: :mod:`meshnn.errors`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor` and the ops' checks,
outputs, registry and rearrange modules.
"""

from __future__ import annotations

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.ops.checks import device_input, int_arg, same_mesh
from meshnn.ops.movement.rearrange import rearranged
from meshnn.ops.outputs import out_spec_like, output_into
from meshnn.ops.registry import OpKind, register
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor


def _real(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | np.number):
        raise MeshnnTypeError(f"ttnn.experimental.dropout: {name} must be a number, got {value!r}")
    return float(value)


@register(
    "experimental.dropout",
    kind=OpKind.RANDOM,
    family=OpFamily.COPY,
    device_operation="DropoutDeviceOperation",
    modelled=False,
)
def dropout(
    input_tensor: Tensor,
    probability: float,
    scale: float,
    seed: int,
    *,
    memory_config: MemoryConfig | None = None,
    output_tensor: Tensor | None = None,
) -> Tensor:
    """``input_tensor`` with each element dropped (0) with ``probability`` and the rest scaled;
    written into ``output_tensor`` when given (of the output's spec; the input itself for an
    in-place dropout), which is returned."""
    op = "experimental.dropout"
    tensor = device_input(op, "input_tensor", input_tensor)
    chance = _real("probability", probability)
    factor = _real("scale", scale)
    stream = int_arg(op, "seed", seed)
    if not 0.0 <= chance <= 1.0:
        raise MeshnnValueError(f"ttnn.{op}: probability must lie in [0, 1], got {chance}")
    if not 0 <= stream < 2**32:
        raise MeshnnValueError(f"ttnn.{op}: seed must be a uint32, got {stream}")
    config = memory_config if memory_config is not None else tensor.memory_config()
    if config.memory_layout is not tensor.memory_config().memory_layout:
        raise MeshnnValueError(f"ttnn.{op}: Dropout operation requires Input and Output memory layout to match")
    spec = out_spec_like(tensor, memory_config=memory_config, op=op)
    into = None
    if output_tensor is not None:
        mesh = same_mesh(op, {"input_tensor": tensor})
        into = output_into(op, mesh, output_tensor, spec, tensor.storage.coords)  # type: ignore[union-attr]

    def drop(x: np.ndarray) -> np.ndarray:
        keep = np.random.Generator(np.random.PCG64(stream)).random(x.shape[1:], dtype=np.float32) >= chance
        return np.where(keep, x.astype(np.float32) * np.float32(factor), np.float32(0))

    return rearranged(op, tensor, spec, drop, new_values=True, into=into)
