"""The grid a DRAM (interleaved) group norm runs on, as tt-metal's ``groupnorm_grid_utils`` finds it, and
the bindings ttnn's compiled module gives its Python helpers (``ttnn._ttnn.operations.normalization``'s
``_compute_num_virtual_cols`` and ``_find_expected_dram_grid``).

Counts are in cores (columns ``x``, rows ``y``) and tile rows of 32; a virtual column holds whole
tiles of channels and whole groups.  May import: :mod:`meshnn.errors`, :mod:`meshnn.device`."""

from __future__ import annotations

from typing import Any

from meshnn.device.buffer import BufferType
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


def check_dram_call(op: str, grid: CoreGrid, padded: tuple[int, ...], groups: int, num_out_blocks: object) -> None:
    """tt-metal 2026's checks of an interleaved (not sharded) group norm's grid before it runs, in its
    words: ``grid``'s virtual rows (``grid.x // nvc`` a grid row) must divide the input's tile rows ``Ht``
    (``N * C * H`` of the padded ``[N, C, H, W]`` over 32), at most ``Ht``, and be a multiple of the
    batches ``N`` when at least ``N`` (else the error names the largest grid that fits, if any); an
    explicit ``num_out_blocks`` must be -1 (the program's choice) or in ``[1, block_h]``, the tile rows
    a core holds per batch."""
    width, batches = padded[3], padded[0]
    ht = padded[0] * padded[1] * padded[2] // TILE
    nvc = compute_num_virtual_cols(grid.x, groups, width)
    rows = (grid.x // nvc) * grid.y if nvc else 0
    if not rows or ht < rows or ht % rows or (rows >= batches and rows % batches):
        found = dram_grid(grid.x, grid.y, width, groups, ht * TILE, batches)
        where = f"(Ht={ht}, W={width}, num_groups={groups}, num_batches={batches})"
        computed = f"Computed num_virtual_rows={rows}, num_virtual_cols={nvc}"
        if found is None:
            raise MeshnnValueError(
                f"ttnn.{op}: Cannot find any valid core grid for the given configuration {where}. {computed}. "
                f"Requested grid was (x={grid.x}, y={grid.y})."
            )
        raise MeshnnValueError(
            f"ttnn.{op}: Requested core_grid (x={grid.x}, y={grid.y}) is invalid for the input dimensions {where}: "
            f"num_virtual_rows must be <= Ht, divide Ht, and be a multiple of num_batches when at least that many. "
            f"{computed}. The largest valid grid that fits is (x={found.x}, y={found.y})."
        )
    if num_out_blocks is None or num_out_blocks == -1:
        return
    _counts(f"ttnn.{op}", num_out_blocks=num_out_blocks)
    per_core = ht // rows
    block_h = per_core // (batches // rows if batches > rows else 1)
    if batches > rows and batches % rows:  # unequal batches a core: one factory holds a batch's tile rows a block
        block_h = max(block_h, ht // batches)  # (the larger bound: refused only where every program refuses)
    if not 1 <= num_out_blocks <= block_h:
        raise MeshnnValueError(
            f"ttnn.{op}: num_out_blocks ({num_out_blocks}) must be in [1, block_h ({block_h})]. Reduce num_out_blocks "
            "or increase input spatial dimensions."
        )


def check_mask_columns(op: str, grid: CoreGrid, channels: int, groups: int) -> None:
    """A DRAM input's mask is made for ``nvc`` virtual columns of ``grid``: none fitting is refused, in
    tt-metal 2026's words."""
    if compute_num_virtual_cols(grid.x, groups, channels) == 0:
        raise MeshnnValueError(
            f"ttnn.{op}: group_norm: Cannot determine num_virtual_cols for core_grid x={grid.x}, num_groups={groups}, "
            f"num_channels={channels}. num_virtual_cols must satisfy (num_channels / nvc) % TILE_SIZE == 0 and "
            "num_groups % nvc == 0."
        )


def _bounding_grid(ranges: Any) -> CoreGrid:
    """The grid of a core range set's bounding box (tt-metal's ``core_grid_from_shard_bounding_box``)."""
    box = ranges.bounding_box()
    return CoreGrid(y=box.end.y - box.start.y + 1, x=box.end.x - box.start.x + 1)


def auto_grid(op: str, x: Any, reciprocals: Any, groups: int, num_out_blocks: object) -> CoreGrid:
    """The grid tt-metal 2026's group norm picks when given no ``core_grid``: a sharded input's shards'
    bounding box; else sharded reciprocals'; else the DRAM grid :func:`dram_grid` finds on the device's
    compute grid (none: refused).  An interleaved input's ``num_out_blocks`` then is refused."""
    config = x.spec.memory_config
    if config.is_sharded() and config.shard_spec is not None:
        return _bounding_grid(config.shard_spec.grid)
    if num_out_blocks is not None and not config.is_sharded():
        raise MeshnnValueError(
            f"ttnn.{op}: num_out_blocks cannot be specified when core_grid is auto-selected. Either provide an "
            "explicit core_grid or omit num_out_blocks."
        )
    spec = None if reciprocals is None else reciprocals.spec.memory_config.shard_spec
    if spec is not None:
        return _bounding_grid(spec.grid)
    padded = tuple(x.padded_shape)
    device = x.device().compute_with_storage_grid_size()
    nhw = padded[0] * padded[1] * padded[2]
    grid = dram_grid(device.x, device.y, padded[3], groups, nhw, padded[0])
    if grid is None:
        raise MeshnnValueError(
            f"ttnn.{op}: Could not determine a valid DRAM core grid for channels={padded[3]}, num_groups={groups}, "
            f"nhw={nhw}. Specify core_grid explicitly or adjust configuration."
        )
    return grid


def resolved_grid(
    op: str, x: Any, core_grid: CoreGrid | None, groups: int, num_out_blocks: object, tensors: dict
) -> CoreGrid:
    """The grid a group norm of ``x`` runs on, checked as tt-metal 2026 checks it: ``core_grid``, or
    :func:`auto_grid`'s when None (ttnn 0.81.1 asked for one); an interleaved input's given grid and
    ``num_out_blocks`` by :func:`check_dram_call`; a DRAM input with no mask tensors in ``tensors``
    (``input_mask``, ``negative_mask``) by :func:`check_mask_columns`."""
    config, padded = x.spec.memory_config, tuple(x.padded_shape)
    if core_grid is None:
        core_grid = auto_grid(op, x, tensors.get("reciprocals"), groups, num_out_blocks)
    elif not config.is_sharded():
        check_dram_call(op, core_grid, padded, groups, num_out_blocks)
    masks = tensors.get("input_mask") is None and tensors.get("negative_mask") is None
    if masks and config.buffer_type is not BufferType.L1:
        check_mask_columns(op, core_grid, padded[-1], groups)
    return core_grid
