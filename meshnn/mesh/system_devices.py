"""Which of the simulated system's devices a new mesh gets: the requested shape checked against the
system (:func:`shape_on`), and the system's device ids of the mesh's devices, row-major
(:func:`device_ids_on`): ``physical_device_ids`` when given, else the box of the system at
``offset`` (a 1-D mesh: the run of ids from there), else ids 0, 1, ...

Layers: imports :mod:`meshnn.errors`, :mod:`meshnn.device` (the system spec) and the mesh layer's
coordinates; the shape a rank bound by tt-run opens (:func:`bound_shape`).
"""

from __future__ import annotations

from meshnn.device.arch import SystemSpec
from meshnn.distributed.binding import MeshBinding
from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.mesh.coord import MeshCoordinate, MeshCoordinateRange, MeshShape, as_coord, to_linear_index


def shape_on(spec: SystemSpec, mesh_shape: MeshShape | tuple[int, ...] | None) -> MeshShape:
    """``mesh_shape`` as a MeshShape (None: the whole system), checked to fit the system."""
    if mesh_shape is None:
        mesh_shape = MeshShape(spec.mesh_shape)
    elif not isinstance(mesh_shape, MeshShape):
        if isinstance(mesh_shape, int | str):
            raise MeshnnTypeError(f"mesh_shape must be a MeshShape, got {mesh_shape!r}")
        mesh_shape = MeshShape(mesh_shape)
    if mesh_shape.mesh_size() == 0:
        raise MeshnnValueError(f"mesh_shape {mesh_shape!r} has no devices")
    if mesh_shape.mesh_size() > spec.num_devices:
        rows, cols = spec.mesh_shape
        raise MeshnnValueError(
            f"a {mesh_shape} mesh needs {mesh_shape.mesh_size()} devices but the simulated system "
            f"{spec.name!r} ({spec.description}) has {spec.num_devices} ({rows}x{cols}); choose a larger "
            "system with system= or $MESHNN_SYSTEM (galaxy has 32)"
        )
    return mesh_shape


def device_ids_on(
    spec: SystemSpec, mesh_shape: MeshShape, offset: MeshCoordinate | None, physical_device_ids: list[int] | None
) -> tuple[int, ...]:
    """The system's device ids of the mesh's devices, row-major: ``physical_device_ids``, else the
    box of the system at ``offset`` (a 1-D mesh: the run of ids from there), else ids 0, 1, ..."""
    system, first = MeshShape(spec.mesh_shape), MeshCoordinate(0, 0) if offset is None else as_coord(offset)
    end = [s + d - 1 for s, d in zip(first, mesh_shape, strict=False)]
    if physical_device_ids:
        ids = tuple(physical_device_ids)
    elif offset is not None and mesh_shape.dims() == first.dims() == 2:
        if any(e >= n for e, n in zip(end, system, strict=True)):
            raise MeshnnValueError(f"offset {first}: a {mesh_shape} mesh there does not fit in {spec.name}'s {system}")
        ids = tuple(to_linear_index(system, c) for c in MeshCoordinateRange(first, MeshCoordinate(end)))
    else:
        start = to_linear_index(system, first)
        ids = tuple(range(start, start + mesh_shape.mesh_size()))
    if len(ids) != mesh_shape.mesh_size() or max(ids) >= spec.num_devices:
        where = f"offset {first}" if offset is not None and not physical_device_ids else "physical_device_ids"
        raise MeshnnValueError(
            f"{where}: devices {list(ids)} do not fit a {mesh_shape} mesh on {spec.name} ({spec.num_devices} devices)"
        )
    return ids


def bound_shape(binding: MeshBinding | None, mesh_shape: MeshShape | tuple[int, ...] | None) -> object:
    """The shape a rank opens under tt-run's ``binding``: the bound mesh's when none is asked for;
    one asked for must fit in it (as a mesh of tt-metal's fits in its system mesh)."""
    if binding is None or binding.shape is None:
        return mesh_shape
    if mesh_shape is None:
        return MeshShape(binding.shape)
    asked = mesh_shape if isinstance(mesh_shape, MeshShape) else MeshShape(mesh_shape)
    if asked.mesh_size() > MeshShape(binding.shape).mesh_size():
        raise MeshnnValueError(
            f"open_mesh_device: a {asked} mesh does not fit in this rank's mesh {binding.mesh_id} "
            f"({list(binding.shape)}, host rank {binding.mesh_host_rank} of {binding.descriptor}, from tt-run's "
            "rank binding)"
        )
    return asked
