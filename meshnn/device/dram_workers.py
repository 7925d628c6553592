"""The Tensix worker next to each DRAM bank (``get_optimal_dram_bank_to_logical_worker_assignment``).

tt-metal places one worker per DRAM bank (bank = DRAM view): the core one column right of the
bank's preferred worker-side NOC endpoint, moved off rows that hold no Tensix cores.  The figures
are the soc descriptors' (``tt_metal/soc_descriptors/wormhole_b0_80_arch.yaml``,
``blackhole_140_arch.yaml``): DRAM channels' NOC0 endpoints, each view's channel and preferred
subchannel per NOC, the Tensix rows and columns; the placement rules are tt-metal's
``core_assignment.cpp`` (Wormhole: rows harvested or outside the compute grid move the worker to
the nearest free row and 3, 2, 1 columns right; Blackhole: a harvested column moves it right).

meshnn's chips are harvested deterministically: a Wormhole drops Tensix rows in UMD's harvesting
mask order (NOC0 rows 11, 1, 10, ...), a Blackhole its rightmost Tensix columns.  tt-metal keeps
a device's first answer whichever NOC later calls name; meshnn answers each NOC (on Wormhole both
NOCs' endpoints are the same subchannel, so the answers agree).

Layers: imports :mod:`meshnn.errors` and :mod:`meshnn.device`.
"""

from __future__ import annotations

import enum

from meshnn.device.arch import Arch, SystemSpec
from meshnn.device.core import CoreCoord
from meshnn.errors import MeshnnTypeError, MeshnnValueError


class NOC(enum.IntEnum):
    """``ttnn.NOC``: the two networks on chip (``RISCV_0_default`` / ``RISCV_1_default`` alias them)."""

    NOC_0 = 0
    NOC_1 = 1
    RISCV_0_default = 0
    RISCV_1_default = 1


_WH_DRAM_NOC0 = ((0, 0, 0, 1, 0, 11), (0, 5, 0, 6, 0, 7), (5, 0, 5, 1, 5, 11), (5, 2, 5, 9, 5, 10))
_WH_DRAM_NOC0 += ((5, 3, 5, 4, 5, 8), (5, 5, 5, 6, 5, 7))
_BH_DRAM_NOC0 = ((0, 0, 0, 1, 0, 11), (0, 2, 0, 10, 0, 3), (0, 9, 0, 4, 0, 8), (0, 5, 0, 7, 0, 6))
_BH_DRAM_NOC0 += ((9, 0, 9, 1, 9, 11), (9, 2, 9, 10, 9, 3), (9, 9, 9, 4, 9, 8), (9, 5, 9, 7, 9, 6))
"""Each DRAM channel's three subchannel endpoints, NOC0 ``x, y`` pairs flattened."""

_WH_VIEWS = ((0, 2, 2), (0, 1, 1), (1, 0, 0), (1, 2, 2), (2, 1, 1), (2, 2, 2))
_WH_VIEWS += ((3, 0, 0), (3, 1, 1), (4, 2, 2), (4, 0, 0), (5, 0, 0), (5, 2, 2))
_BH_VIEWS = tuple((channel, 2 if channel in (0, 4, 5, 6, 7) else 0, 1) for channel in range(8))
"""Each DRAM view (bank): its channel and its preferred worker subchannel for NOC0, NOC1."""

_GRID = {Arch.WORMHOLE_B0: (10, 12), Arch.BLACKHOLE: (17, 12)}
_TENSIX_X = {Arch.WORMHOLE_B0: (1, 2, 3, 4, 6, 7, 8, 9), Arch.BLACKHOLE: (*range(1, 8), *range(10, 17))}
_TENSIX_Y = {Arch.WORMHOLE_B0: (1, 2, 3, 4, 5, 7, 8, 9, 10, 11), Arch.BLACKHOLE: tuple(range(2, 12))}
_WH_HARVEST_ORDER = (11, 1, 10, 2, 9, 3, 8, 4, 7, 5)


def checked_noc(noc: object) -> NOC:
    """``noc`` as a :class:`NOC`: a member, or 0 / 1 (ttnn's binding converts an int)."""
    if isinstance(noc, bool) or not isinstance(noc, int):
        raise MeshnnTypeError(f"noc must be a ttnn.NOC (or 0 / 1), got {noc!r}")
    if noc not in (0, 1):
        raise MeshnnValueError(f"noc must be NOC_0 (0) or NOC_1 (1), got {noc!r}")
    return NOC(int(noc))


def enabled_tensix(spec: SystemSpec) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """NOC0 columns and rows of the chip's enabled Tensix cores, in logical order."""
    arch = spec.arch_spec.arch
    xs, ys = _TENSIX_X[arch], _TENSIX_Y[arch]
    columns, rows = spec.worker_grid
    if arch is Arch.WORMHOLE_B0:
        harvested = set(_WH_HARVEST_ORDER[: len(ys) - rows])
        return xs[:columns], tuple(y for y in ys if y not in harvested)
    return xs[:columns], ys[:rows]


def _dram_workers_noc0(spec: SystemSpec, noc: NOC) -> list[list[int]]:
    """Each bank's worker before harvesting moves it: right of the endpoint, off rows 0 / 6 (WH)."""
    arch = spec.arch_spec.arch
    dram, views = (_WH_DRAM_NOC0, _WH_VIEWS) if arch is Arch.WORMHOLE_B0 else (_BH_DRAM_NOC0, _BH_VIEWS)
    workers = []
    for channel, *subchannels in views:
        sub = subchannels[noc]
        x, y = dram[channel][2 * sub], dram[channel][2 * sub + 1]
        if arch is Arch.BLACKHOLE:
            y = max(y, 2)
        elif y in (0, 6):
            y += 1
        workers.append([x + 1, y])
    return workers


def _shift_group(group: list[list[int]], non_worker_rows: set[int], last_bank: int, rows: int) -> None:
    """Move a Wormhole group's workers off non-Tensix or doubled rows (tt-metal's order and steps)."""
    group_y = [y for _, y in group]
    x_step = 3
    for core in group:
        y = core[1]
        if y not in non_worker_rows and group_y.count(y) < 2:
            continue
        scan = range(rows - 1, -1, -1) if y >= last_bank else range(rows)
        free = [j for j in scan if j not in non_worker_rows]
        unused = [j for j in free if j not in group_y]
        if unused or free:
            core[1] = (unused or free)[0]
            core[0] += x_step
            x_step -= 1


def _reassign_wormhole(workers: list[list[int]], non_worker_rows: set[int], rows: int) -> list[list[int]]:
    """Both DRAM columns' groups, each sorted by row with its bottom worker first, shifted, in bank order."""
    groups: list[list[int]] = [[], []]
    for bank, (x, _) in enumerate(workers):
        groups[0 if x == workers[0][0] else 1].append(bank)
    ordered = []
    for banks in groups:
        banks = sorted(banks, key=lambda b: workers[b][1])
        banks = banks[-1:] + banks[:-1]
        _shift_group([workers[b] for b in banks], non_worker_rows, len(workers) - 1, rows)
        ordered.extend(sorted(banks))
    return [workers[b] for b in ordered]


def optimal_dram_bank_workers(spec: SystemSpec, noc: object) -> list[CoreCoord]:
    """The logical worker of each DRAM bank (bank id order) on one chip of ``spec`` for ``noc``.

    Only the compute-with-storage grid's rows and columns count as worker rows / columns, as in
    tt-metal (a dispatch row is moved off like a harvested one)."""
    which = checked_noc(noc)
    arch = spec.arch_spec.arch
    xs, ys = enabled_tensix(spec)
    compute_x, compute_y = spec.compute_grid
    full_x, full_y = _GRID[arch]
    workers = _dram_workers_noc0(spec, which)
    if arch is Arch.WORMHOLE_B0:
        non_worker_rows = set(range(full_y)) - set(ys[:compute_y])
        workers = _reassign_wormhole(workers, non_worker_rows, full_y)
    else:
        non_worker_cols = set(range(full_x)) - set(xs[:compute_x])
        for core in workers:
            while core[0] in non_worker_cols and core[0] < full_x - 1:
                core[0] += 1
    return [CoreCoord(xs.index(x), ys.index(y)) for x, y in workers]
