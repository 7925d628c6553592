"""The compute-with-storage grid a chip offers once its dispatch cores are set aside, as tt-metal's
core descriptors give it for each board and dispatch core config.

A chip's Tensix grid after harvesting (``SystemSpec.worker_grid``, ``(x, y)`` = columns, rows) loses:
- one row (``DispatchCoreAxis.ROW``) or one column (``COL``) with ``DispatchCoreType.WORKER``
  dispatch: the dispatch cores are the last row / column of Tensix cores;
- nothing with ``DispatchCoreType.ETH`` dispatch (the dispatch kernels run on idle Ethernet cores),
  except on a one-row-harvested Wormhole (N150, tt-metal's ``nebula_x1``), whose ETH core
  descriptor still keeps an 8x8 grid.
The figures (tt-metal ``tt_metal/core_descriptors/wormhole_b0_80_arch*.yaml`` and
``blackhole_140_arch*.yaml``, read by ``get_core_descriptor_config``): Wormhole galaxy (8x10 Tensix)
ROW 8x9, COL 7x10, ETH 8x10; N150 (8x9) ROW 8x8, COL 7x9, ETH 8x8; N300 / T3000 chips (8x8) ROW 8x7,
COL 7x8, ETH 8x8; Blackhole P150 / P300 (12x10 enabled) COL 11x10, ETH 12x10, ROW (with the fabric's
Tensix MUX) 12x9.  With the fabric's Tensix MUX a Wormhole loses two rows / columns (galaxy ROW 8x7,
COL 6x10).  Each system's default config gives ``SystemSpec.compute_grid``.

One L1 bank per core of this grid (tt-metal's ``L1BankingAllocator`` maps banks only to
compute-and-storage cores), so a mesh's allocator is built from the grid its config leaves.

Layers: imports :mod:`meshnn.device` (the system figures) and :mod:`meshnn.mesh.device_config`.
"""

from __future__ import annotations

from dataclasses import replace

from meshnn.device.arch import Arch, SystemSpec
from meshnn.mesh.device_config import DispatchCoreAxis, DispatchCoreConfig, DispatchCoreType, FabricTensixConfig

ETH_DISPATCH_GRIDS: dict[str, tuple[int, int]] = {"n150": (8, 8)}
"""Systems whose ETH-dispatch grid is not their whole Tensix grid (``nebula_x1``: end [7, 7])."""

MUX_ROW_GRIDS: dict[str, tuple[int, int]] = {"galaxy": (8, 7)}
"""Wormhole systems whose ROW grid under the fabric's Tensix MUX is not the Tensix grid less two
rows (``wormhole_b0_80_arch_fabric_mux.yaml``, galaxy row: end [7, 6])."""


def compute_grid_for(
    spec: SystemSpec, config: DispatchCoreConfig, fabric_tensix_config: object = None
) -> tuple[int, int]:
    """``(x, y)`` of the compute-with-storage grid of one chip of ``spec`` dispatched by ``config``.

    With ``ttnn.FabricTensixConfig.MUX`` (``set_fabric_config``) and WORKER dispatch, a Wormhole
    sets aside a second row / column for the MUX kernels; a Blackhole shares the dispatch one."""
    x, y = spec.worker_grid
    if config.type is DispatchCoreType.ETH:
        return ETH_DISPATCH_GRIDS.get(spec.name, (x, y))
    lines = 2 if fabric_tensix_config is FabricTensixConfig.MUX and spec.arch_spec.arch is Arch.WORMHOLE_B0 else 1
    if config.axis is DispatchCoreAxis.ROW:
        return MUX_ROW_GRIDS.get(spec.name, (x, y - 2)) if lines == 2 else (x, y - 1)
    return (x - lines, y)


def system_for(spec: SystemSpec, config: DispatchCoreConfig, fabric_tensix_config: object = None) -> SystemSpec:
    """``spec`` with the compute grid ``config`` leaves (``spec`` itself where that is its default)."""
    grid = compute_grid_for(spec, config, fabric_tensix_config)
    return spec if grid == spec.compute_grid else replace(spec, compute_grid=grid)
