"""Logical -> translated ("virtual") NoC coordinates of worker cores, as tt-metal's
``worker_core_from_logical_core`` answers them with NoC coordinate translation on (every Wormhole
and Blackhole system it supports runs so).

- Wormhole B0: worker ``(x, y)`` is ``(18 + x, 18 + y)``: tt-umd's translated Tensix grid starts at
  (18, 18) and is contiguous, harvested rows placed after the good ones.
- Blackhole: translated Tensix coordinates are NoC0's, columns 1 to 7 and 10 to 16 (the columns
  between hold the DRAM and the L2CPU), rows 2 to 11; a harvested column is moved to the end, so
  logical column ``x`` is the ``x``-th of those columns and logical row ``y`` is row ``y + 2``.

DRAM banks are not translated here: a tensor accessor names a DRAM bank by its logical ``(bank, 0)``.

Layer: device.  Imports errors, :mod:`meshnn.device.arch` and :mod:`meshnn.device.core`.
"""

from __future__ import annotations

from meshnn.device.arch import Arch
from meshnn.device.core import CoreCoord, as_core_coord
from meshnn.errors import MeshnnValueError

WORMHOLE_TENSIX_START = (18, 18)
"""Where tt-umd's translated Tensix grid of a Wormhole B0 starts (x, y)."""

BLACKHOLE_TENSIX_COLUMNS = (1, 2, 3, 4, 5, 6, 7, 10, 11, 12, 13, 14, 15, 16)
"""Blackhole's NoC0 Tensix columns, in logical order."""

BLACKHOLE_FIRST_TENSIX_ROW = 2


def worker_core_from_logical_core(arch: Arch, worker_grid: tuple[int, int], core: CoreCoord) -> CoreCoord:
    """The translated NoC coordinate of logical worker ``core`` on a chip of ``arch`` whose
    logical worker grid is ``worker_grid`` (x, y); a core outside that grid is refused."""
    core = as_core_coord(core, "logical_core")
    gx, gy = worker_grid
    if not (0 <= core.x < gx and 0 <= core.y < gy):
        raise MeshnnValueError(
            f"logical core {core} is outside the logical worker grid of {gx}x{gy} cores (x < {gx}, y < {gy})"
        )
    if arch is Arch.BLACKHOLE:
        return CoreCoord(BLACKHOLE_TENSIX_COLUMNS[core.x], BLACKHOLE_FIRST_TENSIX_ROW + core.y)
    x0, y0 = WORMHOLE_TENSIX_START
    return CoreCoord(x0 + core.x, y0 + core.y)
