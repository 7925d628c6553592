"""``ttnn.reduce_to_root``: the tree reduction of flash-decode's partial attention over a line of
four devices, the result on the root only (DeepSeek's distributed SDPA decode).  Each device holds
``l`` (its un-normalised output), ``s`` (its row sums) and ``m`` (its row maxima), split along the
width into the chunks of the ``l`` input's shards (one chunk a core: ``l`` 128 columns a chunk on
tt-metal's layout, ``s`` and ``m`` 32).  Two partials ``(l1, s1, m1)`` and ``(l2, s2, m2)`` merge
as ``m = max(m1, m2)``, ``s = s1 * exp((m1 - m) * scale) + s2 * exp((m2 - m) * scale)`` (element
by element), ``l = l1 * exp((m1 - m0) * scale) + l2 * exp((m2 - m0) * scale)`` with ``m1 - m0``
and ``m2 - m0`` taken from each row's first column of the chunk; the tree is tt-metal's: device 0
into 1 and 3 into 2, then 2 into 1 (the root, index 1 of the line), whose ``l`` is divided by the
first column of its chunk's ``s``.  meshnn computes in float32 from the inputs' values and rounds
once to the output's format (the hardware rounds at each step: within tt-metal's tolerance).  The
other devices' outputs hold zeros (unspecified on the hardware).

tt-metal's checks, before anything is allocated: ``l`` sharded; the optional outputs of the
inputs' specs, on their mesh; ``input_mux_cores`` four cores when given; and the tree's shape:
the inputs on a line of four devices (a 1x4 or 4x1 mesh), ``root_coord`` its second device (the
root needs a neighbour on each side; the leftmost sender's forward neighbour is the root).  The
optional ``intermediate_tensor`` (the packets' staging buffer) is checked to be on the mesh and
recorded, never written.

May import: :mod:`meshnn.errors`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor`, the ops' checks,
launch, outputs, registry and values modules and the collectives' arguments.
"""

from __future__ import annotations

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError, WrongMeshError
from meshnn.mesh.coord import MeshCoordinate
from meshnn.mesh.mesh_device import MeshDevice
from meshnn.ops.ccl.arguments import Topology
from meshnn.ops.checks import device_input, same_mesh
from meshnn.ops.launch import launch
from meshnn.ops.outputs import Output
from meshnn.ops.registry import OpKind, register
from meshnn.ops.values import logical_values, write_values
from meshnn.perf.desc import OpFamily
from meshnn.tensor.tensor import Tensor

OP = "reduce_to_root"
LINE = 4
"""The devices of tt-metal's tree: 0 -> 1 and 3 -> 2, then 2 -> 1 (the root)."""


@register(OP, kind=OpKind.COLLECTIVE, family=OpFamily.POINT_TO_POINT, device_operation="ReduceToRootOp")
def reduce_to_root(
    input_tensor_l: Tensor,
    input_tensor_s: Tensor,
    input_tensor_m: Tensor,
    root_coord: MeshCoordinate,
    *,
    scale_fp32: float = 1.0,
    topology: Topology = Topology.Linear,
    output_tensor_l: Tensor | None = None,
    output_tensor_s: Tensor | None = None,
    output_tensor_m: Tensor | None = None,
    intermediate_tensor: Tensor | None = None,
    input_mux_cores: list | None = None,
) -> list[Tensor]:
    """``[l, s, m]`` of the four devices' partials merged on ``root_coord`` (zeros elsewhere)."""
    named = {"input_tensor_l": input_tensor_l, "input_tensor_s": input_tensor_s, "input_tensor_m": input_tensor_m}
    tensors = {name: device_input(OP, name, value) for name, value in named.items()}
    mesh = same_mesh(OP, tensors)
    l_in, s_in, m_in = tensors.values()
    root = _root(mesh, root_coord)
    chunks = _chunks(l_in, s_in, m_in)
    if isinstance(scale_fp32, bool) or not isinstance(scale_fp32, int | float):
        raise MeshnnTypeError(f"ttnn.{OP}: scale_fp32 must be a float, got {scale_fp32!r}")
    if not isinstance(topology, Topology):
        raise MeshnnTypeError(f"ttnn.{OP}: topology must be a ttnn.Topology, got {topology!r}")
    if input_mux_cores is not None and (not isinstance(input_mux_cores, list | tuple) or len(input_mux_cores) != 4):
        raise MeshnnValueError(f"ttnn.{OP}: Input mux cores size must be 4, got {input_mux_cores!r}")
    outs = {"output_tensor_l": output_tensor_l, "output_tensor_s": output_tensor_s, "output_tensor_m": output_tensor_m}
    into = [_output(mesh, name, value, t) for (name, value), t in zip(outs.items(), (l_in, s_in, m_in), strict=True)]
    if intermediate_tensor is not None:
        _on_mesh(mesh, "intermediate_tensor", intermediate_tensor)
    specs = (l_in.spec, s_in.spec, m_in.spec)
    scale = float(scale_fp32)

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]) -> None:
        values = [logical_values(rows, spec).astype(np.float32) for rows, spec in zip(in_rows, specs, strict=True)]
        results = [np.zeros_like(v) for v in values]
        merged = _tree(values, root, chunks, scale)
        for result, value in zip(results, merged, strict=True):
            result[root] = value
        for rows, result, spec in zip(out_rows, results, specs, strict=True):
            write_values(rows, result, spec)

    attrs = dict(root_coord=root_coord, scale_fp32=scale, topology=topology, input_mux_cores=input_mux_cores)
    attrs["intermediate_tensor"] = intermediate_tensor
    outputs = [Output(t.spec, topology=t.tensor_topology()) for t in (l_in, s_in, m_in)]
    given = None if all(t is None for t in into) else into
    if given is not None and any(t is None for t in into):
        raise MeshnnValueError(f"ttnn.{OP}: give output_tensor_l, output_tensor_s and output_tensor_m together")
    return launch(OP, mesh, [l_in, s_in, m_in], outputs, kernel, reads_memos=True, attrs=attrs, into=given)


def _root(mesh: MeshDevice, root_coord: object) -> int:
    """The root's index along the line of four: the mesh a line of four, the root its second device."""
    if not isinstance(root_coord, MeshCoordinate):
        raise MeshnnTypeError(f"ttnn.{OP}: root_coord must be a ttnn.MeshCoordinate, got {root_coord!r}")
    shape = tuple(mesh.shape)
    if sorted(shape) != [1, LINE]:
        raise MeshnnValueError(
            f"ttnn.{OP}: the tree reduction runs over a line of {LINE} devices (a 1x4 or 4x1 mesh); "
            f"input_tensor_l's mesh is {list(shape)}"
        )
    coords = tuple(root_coord.coords())
    if len(coords) != 2 or any(not 0 <= c < d for c, d in zip(coords, shape, strict=True)):
        raise MeshnnValueError(f"ttnn.{OP}: root_coord {root_coord} is not a device of the {list(shape)} mesh")
    index = coords[0] * shape[1] + coords[1]
    if index != 1:
        raise MeshnnValueError(
            f"ttnn.{OP}: root_coord {root_coord} must be the line's second device (the root needs a neighbour on "
            "each side, and the first device sends to it)"
        )
    return index


def _chunks(l_in: Tensor, s_in: Tensor, m_in: Tensor) -> int:
    """The chunks of the width (``l``'s shards along it); every input split into whole ones."""
    config = l_in.memory_config()
    if not config.is_sharded() or config.shard_spec is None:
        raise MeshnnValueError(f"ttnn.{OP}: Input tensor must be sharded (input_tensor_l is {config.memory_layout})")
    width = config.shard_spec.shape[1]
    chunks = max(1, l_in.shape[-1] // width)
    for name, t in (("input_tensor_l", l_in), ("input_tensor_s", s_in), ("input_tensor_m", m_in)):
        if t.shape[-1] % chunks or tuple(t.shape[:-1]) != tuple(l_in.shape[:-1]):
            raise MeshnnValueError(
                f"ttnn.{OP}: {name} {list(t.shape)} must have input_tensor_l's rows and a width of {chunks} chunks"
            )
    if s_in.shape != m_in.shape:
        raise MeshnnValueError(f"ttnn.{OP}: input_tensor_s {list(s_in.shape)} and input_tensor_m differ")
    return chunks


def _on_mesh(mesh: MeshDevice, name: str, value: object) -> Tensor:
    tensor = device_input(OP, name, value)
    if tensor.storage.mesh_buffer.mesh_id != mesh.mesh_id:  # type: ignore[union-attr]
        raise WrongMeshError(f"ttnn.{OP}: {name} must be allocated on the input tensors' mesh device")
    return tensor


def _output(mesh: MeshDevice, name: str, value: object, like: Tensor) -> Tensor | None:
    """An optional output: on the mesh, of its input's spec."""
    if value is None:
        return None
    tensor = _on_mesh(mesh, name, value)
    if tensor.spec != like.spec:
        raise MeshnnValueError(f"ttnn.{OP}: {name}'s spec {tensor.spec} does not match the output's {like.spec}")
    return tensor


def _merge(a: tuple, b: tuple, chunks: int, scale: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Two partials ``(l, s, m)`` merged (the module's formulas), per chunk of the width."""
    (l1, s1, m1), (l2, s2, m2) = a, b
    m = np.maximum(m1, m2)
    e1, e2 = np.exp((m1 - m) * scale), np.exp((m2 - m) * scale)
    s = s1 * e1 + s2 * e2
    return _by_first(l1, e1, chunks) + _by_first(l2, e2, chunks), s, m


def _by_first(values: np.ndarray, factor: np.ndarray, chunks: int) -> np.ndarray:
    """``values`` times, chunk by chunk of the width, the first column of ``factor``'s chunk."""
    width, fw = values.shape[-1] // chunks, factor.shape[-1] // chunks
    first = factor[..., ::fw][..., :chunks]  # (..., chunks)
    scaled = values.reshape(*values.shape[:-1], chunks, width) * first[..., None]
    return scaled.reshape(values.shape)


def _tree(values: list[np.ndarray], root: int, chunks: int, scale: float) -> tuple[np.ndarray, ...]:
    """The root's ``(l, s, m)``: 0 into 1, 3 into 2, then 2 into 1; ``l`` divided by ``s``'s first columns."""
    part = [tuple(v[d] for v in values) for d in range(LINE)]
    first = _merge(part[0], part[root], chunks, scale)
    second = _merge(part[3], part[2], chunks, scale)
    l_out, s_out, m_out = _merge(second, first, chunks, scale)
    return _by_first(l_out, 1.0 / s_out, chunks), s_out, m_out
