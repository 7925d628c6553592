"""The device operation tt-metal runs for one call of an op whose program depends on its
arguments: the op code a profile of that call shows (``OP CODE``), where the registry's one name
(the op's usual program) would be wrong.

Facts from tt-metal's 2026-06 host code: ``ttnn.permute`` of a tensor of rank 4 or less whose
(4-d) dims only swap W and H, H and C, or C and N runs ``ttnn.transpose``, and a sharded tensor's
other orders of N, C, H, W with N first run a chain of transposes (data_movement/permute/permute.cpp);
``ttnn.prod`` over every dim runs ``ProdAllDeviceOperation``, over one dim ``ProdNcDeviceOperation``
(after a permute when the dim is not N or C; reduction/prod/prod.cpp).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from meshnn.device.buffer import TensorMemoryLayout

TRANSPOSE = "TransposeDeviceOperation"
_ONE_TRANSPOSE = frozenset({(0, 1, 3, 2), (0, 2, 1, 3), (1, 0, 2, 3)})
"""4-d permute orders tt-metal runs as one transpose (WH, HC, CN), interleaved or sharded."""
_SHARDED_CHAINS = frozenset({(0, 2, 3, 1), (0, 3, 1, 2), (0, 3, 2, 1)})
"""4-d orders a sharded input runs as a chain of two or three transposes."""


def _dims_4d(dims: Sequence[int]) -> tuple[int, ...] | None:
    """``dims`` of a rank <= 4 tensor as the order of its 4-d form (leading 1s kept in place);
    None above rank 4."""
    lead = 4 - len(dims)
    if lead < 0:
        return None
    return (*range(lead), *(int(d) + lead for d in dims))


def permute_code(dims: object, sharded: bool) -> str | None:
    """``TransposeDeviceOperation`` where ``ttnn.permute(dims)`` runs transposes, else None."""
    if not isinstance(dims, Sequence):
        return None
    order = _dims_4d(dims)
    if order is None:
        return None
    if order in _ONE_TRANSPOSE or (sharded and order in _SHARDED_CHAINS):
        return TRANSPOSE
    return None


def run_op_code(name: str, attrs: Mapping[str, object], inputs: Sequence[object], code: str) -> str:
    """The op code of one run of the op ``name`` (without its namespace) with ``attrs`` on
    ``inputs`` (tensors): ``code`` (the registry's) unless the arguments pick another program."""
    if name == "permute" and inputs:
        memory = getattr(getattr(inputs[0], "spec", None), "memory_config", None)
        sharded = getattr(memory, "memory_layout", TensorMemoryLayout.INTERLEAVED) is not TensorMemoryLayout.INTERLEAVED
        return permute_code(attrs.get("dims"), sharded) or code
    if name == "prod" and "dim" in attrs:
        return "ProdAllDeviceOperation" if attrs["dim"] is None else "ProdNcDeviceOperation"
    return code
