"""An async all-gather into a persistent output narrower than the gather along its dim, as
tt-metal's ``all_gather_async`` accepts it (its check: ``output_shape[dim] <= input_shape[dim] x
ring_size``, every other dim equal): the output holds the first ``output_shape[dim]`` of the
gathered dim.  Llama-70B's decode MLP gathers its padded reduce-scatter slices (4 x 960 wide, the
last 256 columns the scatter's zero padding) into the 3584-wide ``BINARY_MUL`` buffer this way.

The gather runs whole into a fresh tensor, then its leading part is copied into the buffer and the
fresh tensor freed: one program (the copy adds no program-cache entry of its own).

May import: :mod:`meshnn.errors`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor`, the ops' checks,
launch, outputs and values modules.
"""

from __future__ import annotations

import numpy as np

from meshnn.errors import MeshnnValueError, WrongMeshError
from meshnn.mesh.coord import MeshCoordinate
from meshnn.ops.checks import device_input
from meshnn.ops.launch import launch
from meshnn.ops.outputs import Output
from meshnn.ops.values import logical_values, write_values
from meshnn.tensor.spec import TensorSpec
from meshnn.tensor.tensor import Tensor


def narrower_buffer(op: str, value: object, source: Tensor, spec: TensorSpec, dim: int) -> Tensor | None:
    """``value`` when it is a persistent output narrower than ``spec`` along ``dim`` only (checked
    as tt-metal checks it: the layout, dtype, memory config and every other padded dim the
    output's; and not the input ``source`` itself, which the gather reads while it writes); None
    when it is not narrower there (the exact check is the caller's)."""
    name = "persistent_output_buffer"
    buffer = device_input(op, name, value)
    have, want = tuple(buffer.spec.padded_shape), tuple(spec.padded_shape)
    if len(have) != len(want) or have[dim] >= want[dim]:
        return None
    if buffer.storage.mesh_buffer.mesh_id != source.storage.mesh_buffer.mesh_id:  # type: ignore[union-attr]
        raise WrongMeshError(f"ttnn.{op}: {name} is on another mesh device than input_tensor")
    if buffer.storage.mesh_buffer.shares_bytes(source.storage.mesh_buffer):  # type: ignore[union-attr]
        raise MeshnnValueError(f"ttnn.{op}: {name} is input_tensor's own buffer (the gather reads it as it writes)")
    for what, mine, theirs in (
        ("layout", buffer.layout, spec.layout),
        ("dtype", buffer.dtype, spec.dtype),
        ("memory config", buffer.spec.memory_config, spec.memory_config),
    ):
        if mine != theirs:
            raise MeshnnValueError(f"ttnn.{op}: {name}'s {what} should be the output's {theirs}, but has {mine}")
    for i, (mine, theirs) in enumerate(zip(have, want, strict=True)):
        if i != dim and mine != theirs:
            raise MeshnnValueError(
                f"ttnn.{op}: Error, Output tensor shape at dimension {i} should be {theirs} but has {mine}"
            )
    return buffer


def copy_leading(op: str, gathered: Tensor, buffer: Tensor, dim: int) -> Tensor:
    """``buffer`` written with the leading part of ``gathered`` along ``dim`` (then ``gathered`` freed)."""
    mesh = gathered.device()
    in_spec, spec = gathered.spec, buffer.spec
    width = spec.shape[dim]

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]) -> None:
        values = logical_values(in_rows[0], in_spec, as_float=False)
        part = np.take(values, np.arange(width), axis=dim + 1)
        write_values(out_rows[0], np.ascontiguousarray(part), spec, exact=True)

    out = Output(spec, topology=gathered.tensor_topology())
    with mesh.parts_of_one_program():
        (result,) = launch(op, mesh, [gathered], [out], kernel, reads_memos=True, into=[buffer])
    gathered.deallocate()
    return result
