"""An op's outputs: their specs (:func:`out_spec_like`), a preallocated ``output_tensor`` checked
to fit (:func:`output_into`), their MeshBuffers allocated through the mesh allocator, all or none
(:func:`output_buffers`), and the device tensors an op returns (:func:`output_tensors`).

May import: :mod:`meshnn.errors`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor`,
:mod:`meshnn.ops.checks` and :mod:`meshnn.ops.shard_specs`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from meshnn.errors import MeshnnError, MeshnnTypeError, MeshnnValueError, WrongMeshError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.mesh.coord import MeshCoordinate
from meshnn.mesh.mesh_buffer import MeshBuffer
from meshnn.mesh.mesh_device import MeshDevice
from meshnn.ops.checks import device_input
from meshnn.ops.shard_specs import derive_shard_spec, needs_shard_spec
from meshnn.tensor.lifetime import allocate_mesh_buffer, device_tensor
from meshnn.tensor.memory_config import DRAM_MEMORY_CONFIG
from meshnn.tensor.spec import MemoryConfig, TensorSpec
from meshnn.tensor.tensor import Tensor
from meshnn.tensor.topology import TensorTopology


class Output(NamedTuple):
    """An output the op will write: its spec, and (by default) the first input's coordinates and
    topology.  (Immutable; a named tuple because every op call makes one.)"""

    spec: TensorSpec
    coords: tuple[MeshCoordinate, ...] | None = None
    topology: TensorTopology | None = None


def out_spec_like(
    tensor: Tensor,
    *,
    shape: Sequence[int] | None = None,
    dtype: DataType | None = None,
    layout: Layout | None = None,
    memory_config: object = None,
    op: str = "op",
) -> TensorSpec:
    """The output spec: ``tensor``'s, with the given changes (memory config checked to be one).  A
    sharded memory config without a shard spec gets the one ttnn derives
    (:func:`~meshnn.ops.shard_specs.derive_shard_spec`)."""
    if memory_config is not None and not isinstance(memory_config, MemoryConfig):
        raise MeshnnTypeError(f"ttnn.{op}: memory_config must be a ttnn.MemoryConfig, got {memory_config!r}")
    if dtype is not None and not isinstance(dtype, DataType):
        raise MeshnnTypeError(f"ttnn.{op}: dtype must be a ttnn DataType, got {dtype!r}")
    key = (tensor.spec, None if shape is None else tuple(shape), dtype, layout, memory_config)
    grid = None
    if memory_config is not None and needs_shard_spec(memory_config):  # derived from the device's grid
        grid = tensor.storage.mesh_buffer.device().compute_with_storage_grid_size()  # type: ignore[union-attr]
        key = (*key, grid)
    cached = _OUT_SPECS.get(key)
    if cached is not None:
        return cached
    if len(_OUT_SPECS) > 4096:
        _OUT_SPECS.clear()
    if grid is not None:
        plain = _make_out_spec(
            tensor.spec, shape, dtype, layout, MemoryConfig(buffer_type=memory_config.buffer_type), op
        )
        same = tensor.spec.memory_config.memory_layout is memory_config.memory_layout
        like = tensor.spec.memory_config.shard_spec if same else None
        memory_config = derive_shard_spec(memory_config, plain, grid, like)
    _OUT_SPECS[key] = made = _make_out_spec(tensor.spec, shape, dtype, layout, memory_config, op)
    return made


_OUT_SPECS: dict[tuple, TensorSpec] = {}  # equal requests get the same spec, whose sizes are computed once


def _make_out_spec(spec: TensorSpec, shape, dtype, layout, memory_config, op: str) -> TensorSpec:
    target_layout = layout or spec.layout
    target_dtype = dtype or spec.dtype
    if target_dtype.is_block_float and target_layout is not Layout.TILE:
        raise MeshnnValueError(
            f"ttnn.{op}: a {target_dtype} output needs TILE layout; the input of shape {list(spec.shape)} is "
            f"{spec.layout}"
        )
    config = memory_config if memory_config is not None else spec.memory_config
    unchanged = (shape is None or tuple(shape) == tuple(spec.shape)) and config == spec.memory_config
    if unchanged and target_layout is spec.layout and target_dtype is spec.dtype:
        return spec  # specs are immutable: the output shares the input's (and its derived figures)
    if config.is_sharded() and tuple(shape or spec.shape) != tuple(spec.shape) and memory_config is None:
        config = DRAM_MEMORY_CONFIG  # a sharded input's spec does not fit a new shape
    return TensorSpec(
        shape if shape is not None else spec.shape, target_dtype, target_layout, tile=spec.tile, memory_config=config
    )


def output_into(op: str, mesh: MeshDevice, output_tensor: object, spec: TensorSpec, where) -> Tensor:
    """``output_tensor`` checked to be a live device tensor on ``mesh`` that an output of ``spec``
    over the devices ``where`` can be written into (same shape, dtype, layout, tile, memory config)."""
    if not isinstance(output_tensor, Tensor):
        raise MeshnnTypeError(f"ttnn.{op}: output_tensor must be a ttnn.Tensor, got {type(output_tensor).__name__}")
    tensor = device_input(op, "output_tensor", output_tensor)
    if tensor.storage.mesh_buffer.mesh_id != mesh.mesh_id:  # type: ignore[union-attr]
        raise WrongMeshError(f"ttnn.{op}: output_tensor is on another mesh device than the inputs")
    if not tensor.storage.mesh_buffer.writable():  # type: ignore[union-attr]
        raise MeshnnValueError(
            f"ttnn.{op}: output_tensor is a narrowed tensor whose bytes are strided through its input's buffer: "
            "meshnn can read it but not write it (write the input tensor, or a copy)"
        )
    if tensor.spec != spec or set(tensor.storage.coords) != set(where):  # type: ignore[union-attr]
        raise MeshnnValueError(
            f"ttnn.{op}: output_tensor is {list(tensor.shape)} {tensor.dtype} {tensor.layout} "
            f"{tensor.memory_config().buffer_type}; the output is {list(spec.shape)} {spec.dtype} {spec.layout} "
            f"{spec.memory_config.buffer_type}"
        )
    return tensor


def allocate_outputs(mesh: MeshDevice, specs: Sequence[TensorSpec]) -> list[MeshBuffer]:
    """One MeshBuffer per spec, or none at all (a failure frees the ones already made)."""
    made: list[MeshBuffer] = []
    try:
        for spec in specs:
            made.append(allocate_mesh_buffer(spec, mesh))
    except MeshnnError:
        for buffer in made:
            buffer.deallocate()
        raise
    return made


def output_buffers(mesh: MeshDevice, outputs: Sequence[Output], into: Sequence[Tensor] | None) -> list[MeshBuffer]:
    """The MeshBuffers an op writes: those of ``into`` (preallocated output tensors, checked by
    :func:`output_into`), else one allocated per output."""
    if into is not None:
        return [t.storage.mesh_buffer for t in into]  # type: ignore[union-attr]
    if len(outputs) == 1:  # nothing to free if it fails
        return [allocate_mesh_buffer(outputs[0].spec, mesh)]
    return allocate_outputs(mesh, [o.spec for o in outputs])


def output_tensors(
    mesh: MeshDevice,
    outputs: Sequence[Output],
    buffers: Sequence[MeshBuffer],
    first: Tensor | None,
    where: tuple[MeshCoordinate, ...],
) -> list[Tensor]:
    """The device tensors of new ``buffers``: over ``where`` with the first input's topology
    (replicated without inputs), unless an :class:`Output` says otherwise."""
    topology = first.tensor_topology() if first is not None else TensorTopology.replicated(mesh.shape)
    if len(outputs) == 1:
        o = outputs[0]
        return [device_tensor(o.spec, buffers[0], o.coords or where, o.topology or topology)]
    return [
        device_tensor(o.spec, b, o.coords or where, o.topology or topology)
        for o, b in zip(outputs, buffers, strict=True)
    ]
