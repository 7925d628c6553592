"""Other views of a mesh's devices: submeshes (a box of the mesh as a mesh of its own, sharing
the parent's allocator, so a parent and its submeshes never hand out the same memory) and
reshaping a mesh that holds nothing.

:class:`Submeshes` is a base of :class:`~meshnn.mesh.mesh_device.MeshDevice`, which sets the
attributes it declares.

Layers: imports :mod:`meshnn.errors` and the mesh layer's coordinates (:mod:`meshnn.device` and
:mod:`meshnn.distributed` for types).
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.mesh.coord import MeshCoordinate, MeshCoordinateRange, MeshShape, as_coord

if TYPE_CHECKING:
    from meshnn.device.arch import SystemSpec
    from meshnn.device.bank import DeviceAllocator
    from meshnn.distributed.context import DistributedContext
    from meshnn.mesh.mesh_device import MeshDevice


class Submeshes:
    """Submeshes and reshape of a mesh (a base of MeshDevice: it reads the state declared here,
    which MeshDevice sets, and calls MeshDevice's ``check_open``, ``get_device_id``,
    ``live_buffers`` and ``_local_coords_of``)."""

    system: SystemSpec
    allocator: DeviceAllocator
    context: DistributedContext
    _shape: MeshShape
    _parent: MeshDevice | None
    _submeshes: list[weakref.ref[MeshDevice]]
    _local: tuple[MeshCoordinate, ...]
    _rows: dict[MeshCoordinate, int]
    _queues: list
    executes: bool
    settings: object
    fabric_config: object

    def create_submesh(self, submesh_shape: MeshShape, offset: MeshCoordinate | None = None) -> MeshDevice:
        """The devices of the box at ``offset`` (default origin) of ``submesh_shape``, as a mesh."""
        self.check_open()
        shape = submesh_shape if isinstance(submesh_shape, MeshShape) else MeshShape(submesh_shape)
        if shape.dims() != self._shape.dims():
            raise MeshnnValueError(f"submesh shape {shape!r} must have the rank of the mesh {self._shape!r}")
        start = MeshCoordinate.zero_coordinate(shape.dims()) if offset is None else as_coord(offset)
        end = [s + d - 1 for s, d in zip(start, shape, strict=True)]
        if any(e >= d for e, d in zip(end, self._shape, strict=True)) or 0 in shape:
            raise MeshnnValueError(f"submesh {shape!r} at offset {start!r} does not fit in mesh {self._shape!r}")
        box = MeshCoordinateRange(start, MeshCoordinate(end))
        ids = tuple(self.get_device_id(c) for c in box)
        sub = type(self)(
            shape,
            system=self.system,
            allocator=self.allocator,
            device_ids=ids,
            num_command_queues=len(self._queues),
            parent=self,
            context=self.context,
            execute=self.executes,
        )
        sub._local = tuple(
            MeshCoordinate([a - s for a, s in zip(c, start, strict=True)]) for c in box if c in self._rows
        )
        sub._rows = {coord: i for i, coord in enumerate(sub._local)}
        sub.settings, sub.fabric_config = self.settings, self.fabric_config
        self._submeshes.append(weakref.ref(sub))
        return sub

    def create_overlapped_submeshes(self, coordinate_ranges: list[MeshCoordinateRange]) -> list[MeshDevice]:
        """A submesh per range (``ttnn``'s ``create_overlapped_submeshes``); ranges may overlap: the
        submeshes share this mesh's allocator, so overlapping ones never hand out the same memory."""
        self.check_open()
        if isinstance(coordinate_ranges, MeshCoordinateRange) or not isinstance(coordinate_ranges, list | tuple):
            raise MeshnnTypeError(
                f"create_overlapped_submeshes: coordinate_ranges must be a list of MeshCoordinateRange, "
                f"got {type(coordinate_ranges).__name__}"
            )
        for i, box in enumerate(coordinate_ranges):
            if not isinstance(box, MeshCoordinateRange):
                raise MeshnnTypeError(
                    f"create_overlapped_submeshes: coordinate_ranges[{i}] must be a MeshCoordinateRange, got {box!r}"
                )
            if not MeshCoordinateRange(self._shape).contains(box):
                raise MeshnnValueError(
                    f"create_overlapped_submeshes: coordinate_ranges[{i}] {box!r} is not inside the mesh "
                    f"{self._shape!r}"
                )
        return [self.create_submesh(box.shape(), box.start_coord()) for box in coordinate_ranges]

    def create_submeshes(self, submesh_shape: MeshShape) -> list[MeshDevice]:
        shape = submesh_shape if isinstance(submesh_shape, MeshShape) else MeshShape(submesh_shape)
        if shape.dims() != self._shape.dims():
            raise MeshnnValueError(f"submesh shape {shape!r} must have the rank of the mesh {self._shape!r}")
        for dim, (whole, part) in enumerate(zip(self._shape, shape, strict=True)):
            if part == 0 or whole % part:
                raise MeshnnValueError(
                    f"Shape {self._shape!r} is not divisible by submesh shape {shape!r} along dimension {dim}"
                )
        steps = MeshShape([w // p for w, p in zip(self._shape, shape, strict=True)])
        return [
            self.create_submesh(shape, MeshCoordinate([c * p for c, p in zip(step, shape, strict=True)]))
            for step in steps.coords()
        ]

    def get_submeshes(self) -> list[MeshDevice]:
        return [s for s in (ref() for ref in self._submeshes) if s is not None and s.is_open()]

    def is_parent_mesh(self) -> bool:
        return self._parent is None

    def reshape(self, new_shape: MeshShape) -> None:
        """Give the same devices a new shape of equal size (row-major order kept)."""
        self.check_open()
        shape = new_shape if isinstance(new_shape, MeshShape) else MeshShape(new_shape)
        if shape.mesh_size() != self._shape.mesh_size():
            raise MeshnnValueError(f"cannot reshape a {self._shape!r} mesh to {shape!r}: sizes differ")
        if shape.dims() > 2:
            raise MeshnnValueError(f"meshnn meshes are 1-D or 2-D, got {shape!r}")
        if self.live_buffers() or self.get_submeshes():
            raise MeshnnValueError(
                "reshape needs a mesh with no live buffers and no submeshes: deallocate its tensors first"
            )
        self._shape = shape
        self._local = tuple(self._local_coords_of(shape))
        self._rows = {coord: i for i, coord in enumerate(self._local)}
