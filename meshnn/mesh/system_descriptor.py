"""``ttnn._ttnn.multi_device.SystemMeshDescriptor()`` (tt-metal 2026-06): the whole system's mesh as
this process sees it, the shape model code sizes its meshes by (tt-metal's root conftest asks it for
``shape().mesh_size()``).

``shape()`` is the simulated system's mesh shape (``$MESHNN_SYSTEM``: t3k 2x4, galaxy 8x4...);
``local_shape()`` the part this process holds: every device in one process, its rows of the system
mesh under MPI (the rows a rank owns, as a mesh of the whole system would split them);
``get_device_id(coord)`` the system's device id at a coordinate (row-major ids, as a mesh of the
whole system opens them), refused for a remote coordinate as tt-metal does; ``is_local(coord)``
and ``all_local()``.

Layers: imports :mod:`meshnn.errors`, :mod:`meshnn.device` (the system spec),
:mod:`meshnn.distributed` (the ranks) and the mesh layer's coordinates.
"""

from __future__ import annotations

from meshnn.device.arch import system_spec
from meshnn.distributed.context import get_context, rows_of_rank
from meshnn.errors import MeshnnError, MeshnnTypeError, MeshnnValueError
from meshnn.mesh.coord import MeshCoordinate, MeshShape, as_coord, to_linear_index


class SystemMeshDescriptor:
    """The system's mesh: its shape, this process's part of it, and the device id at a coordinate."""

    def __init__(self) -> None:
        spec = system_spec()
        self._shape = MeshShape(spec.mesh_shape)
        context = get_context()
        rows = range(self._shape[0])
        if context.world_size > 1:
            rows = rows_of_rank(self._shape[0], context.rank, context.world_size)
        self._rows = rows
        self._local_shape = MeshShape(len(rows), self._shape[1])

    def shape(self) -> MeshShape:
        """The whole system's mesh shape."""
        return self._shape

    def local_shape(self) -> MeshShape:
        """The shape of the part of the system this process holds."""
        return self._local_shape

    def _coord(self, coord: MeshCoordinate | tuple[int, ...], call: str) -> MeshCoordinate:
        if not isinstance(coord, MeshCoordinate | tuple | list):
            raise MeshnnTypeError(f"SystemMeshDescriptor.{call}: coord must be a ttnn.MeshCoordinate, got {coord!r}")
        checked = as_coord(coord)
        if checked.dims() != self._shape.dims() or any(
            not 0 <= c < n for c, n in zip(checked, self._shape, strict=True)
        ):
            raise MeshnnValueError(
                f"SystemMeshDescriptor.{call}: coord {checked} is outside the system mesh {self._shape}"
            )
        return checked

    def is_local(self, coord: MeshCoordinate | tuple[int, ...]) -> bool:
        """Whether this process holds the device at ``coord``."""
        return self._coord(coord, "is_local")[0] in self._rows

    def all_local(self) -> bool:
        """Whether this process holds every device of the system."""
        return self._local_shape == self._shape

    def get_device_id(self, coord: MeshCoordinate | tuple[int, ...]) -> int:
        """The system's device id at ``coord`` (row-major); a remote coordinate is refused."""
        checked = self._coord(coord, "get_device_id")
        if checked[0] not in self._rows:
            raise MeshnnError(f"Device at {checked} is remote.")
        return to_linear_index(self._shape, checked)

    def __repr__(self) -> str:
        return f"SystemMeshDescriptor(shape={self._shape!r}, local_shape={self._local_shape!r})"
