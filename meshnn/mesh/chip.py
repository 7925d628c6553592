"""``Device``: one chip of a mesh, as ``mesh_device.get_devices()`` lists it (its id, its place in
the mesh and the figures of its arch that device queries answer).

Layer: mesh.  Imports :mod:`meshnn.device` and the mesh's coordinates.
"""

from __future__ import annotations

from dataclasses import dataclass

from meshnn.device.arch import Arch
from meshnn.device.core import CoreCoord
from meshnn.device.virtual_coords import worker_core_from_logical_core
from meshnn.mesh.coord import MeshCoordinate


@dataclass(frozen=True, slots=True)
class Device:
    """One chip of a mesh, as ``mesh_device.get_devices()`` lists it."""

    device_id: int
    coord: MeshCoordinate
    arch_: Arch
    compute_grid: tuple[int, int]
    num_dram_banks: int
    worker_grid: tuple[int, int]

    def id(self) -> int:
        return self.device_id

    def worker_core_from_logical_core(self, logical_core: CoreCoord) -> CoreCoord:
        """The translated NoC coordinate of a logical worker core (:mod:`meshnn.device.virtual_coords`)."""
        return worker_core_from_logical_core(self.arch_, self.worker_grid, logical_core)

    def arch(self) -> Arch:
        return self.arch_

    def compute_with_storage_grid_size(self) -> CoreCoord:
        return CoreCoord(*self.compute_grid)

    def dram_grid_size(self) -> CoreCoord:
        return CoreCoord(self.num_dram_banks, 1)

    def __repr__(self) -> str:
        return f"Device(id={self.device_id}, coord={self.coord})"
