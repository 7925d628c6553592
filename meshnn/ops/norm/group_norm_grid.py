"""The grid a DRAM (interleaved) group norm runs on, as tt-metal's ``groupnorm_grid_utils`` finds it, and
the bindings ttnn's compiled module gives its Python helpers (``ttnn._ttnn.operations.normalization``'s
``_compute_num_virtual_cols`` and ``_find_expected_dram_grid``).

Counts are in cores (columns ``x``, rows ``y``) and tile rows of 32; a virtual column holds whole
tiles of channels and whole groups.  May import: :mod:`meshnn.errors`, :mod:`meshnn.device`."""

from __future__ import annotations

from meshnn.device.core import CoreGrid
from meshnn.errors import MeshnnTypeError, MeshnnValueError

TILE = 32


def _counts(owner: str, **values: object) -> None:
    """Each value an int that is not negative (a bool is not one): the binding's unsigned ints."""
    for name, value in values.items():
        if isinstance(value, bool) or not isinstance(value, int):
            raise MeshnnTypeError(f"{owner}: {name} must be an int, got {value!r}")
        if value < 0:
            raise MeshnnValueError(f"{owner}: {name} must not be negative, got {value}")


def compute_num_virtual_cols(grid_x: int, num_groups: int, num_channels: int) -> int:
    """The most virtual columns, at most ``grid_x`` and ``num_groups``, that divide the groups and leave
    each column whole tiles of channels (0: none does)."""
    _counts("_compute_num_virtual_cols", grid_x=grid_x, num_groups=num_groups, num_channels=num_channels)
    nvc = min(grid_x, num_groups)
    while nvc > 0 and ((num_channels // nvc) % TILE or num_groups % nvc):
        nvc -= 1
    return nvc


def dram_grid(
    max_x: int, max_y: int, num_channels: int, num_groups: int, input_nhw: int, num_batches: int = 1
) -> CoreGrid | None:
    """The widest grid first, then the tallest, within ``max_x`` x ``max_y``: ``gx`` columns hold
    ``nvc`` virtual columns, each grid row ``gx // nvc`` virtual rows; those rows must divide the input's
    tile rows, and be a multiple of ``num_batches`` when at least that many.  A grid whose columns all
    work (``gx % nvc == 0``) wins; else the first that fits (None: no grid fits)."""
    owner = "find_expected_dram_grid"
    _counts(owner, max_x=max_x, max_y=max_y, num_channels=num_channels, num_groups=num_groups, input_nhw=input_nhw)
    _counts(owner, num_batches=num_batches)
    if num_batches < 1:
        raise MeshnnValueError(f"{owner}: num_batches must be >= 1, got {num_batches}")
    tile_rows = -(-input_nhw // TILE)
    fallback = None
    for gx in range(max_x, 0, -1):
        nvc = compute_num_virtual_cols(gx, num_groups, num_channels)
        per_row = gx // nvc if nvc else 0
        for gy in range(min(tile_rows // per_row, max_y) if per_row else 0, 0, -1):
            rows = per_row * gy
            if tile_rows % rows or (rows >= num_batches and rows % num_batches):
                continue
            if gx % nvc == 0:
                return CoreGrid(y=gy, x=gx)
            fallback = fallback or CoreGrid(y=gy, x=gx)
            break  # (nvc depends on gx alone: a shorter grid of these columns is no better)
    return fallback


def find_expected_dram_grid(
    max_x: int, max_y: int, num_channels: int, num_groups: int, input_nhw: int, num_batches: int = 1
) -> CoreGrid:
    """``ttnn._ttnn.operations.normalization._find_expected_dram_grid``: :func:`dram_grid`'s grid; a
    RuntimeError (a :class:`MeshnnValueError`) when none fits, in ttnn's words."""
    grid = dram_grid(max_x, max_y, num_channels, num_groups, input_nhw, num_batches)
    if grid is None:
        raise MeshnnValueError(
            f"Cannot find a valid DRAM group-norm grid for num_channels={num_channels}, num_groups={num_groups}, "
            f"input_nhw={input_nhw}, num_batches={num_batches}, max_grid=({max_x}, {max_y})"
        )
    return grid


TTNN_NAMES = {
    "_compute_num_virtual_cols": compute_num_virtual_cols,
    "_find_expected_dram_grid": find_expected_dram_grid,
}
"""The names ttnn's compiled ``operations.normalization`` module binds from here."""
