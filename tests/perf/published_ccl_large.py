"""The CCL report's rows above 8 MiB other than 1 GiB: checks of the fabric's asymptote.

Sources: tt-metal tech_reports/CCLs/results/SUMMARY_wormhole_b0_bfloat16_6144.md (T3000 LoudBox, 1
link, runs 20260928) and SUMMARY_blackhole_bfloat16_8192.md (Blackhole Galaxy, 2 links, runs
20260923): device kernel time of one call, traced, in us, for ``T`` bytes as in
:mod:`tests.perf.published_ccl` (which holds each table's rows from its smallest size to 8 MiB and at
1 GiB).  Here: the rows from 16 MiB to 512 MiB, and from 2 GiB up to the largest the table timed
(the Wormhole all_gather to 4 or 8 GiB, reduce_scatter and all_reduce to 2 or 4 GiB; Blackhole to 8 or
16 GiB); and the same sizes of the lines of 8, which only the FULL tables hold ("line, DRAM":
FULL_wormhole_b0_bfloat16_6144.md and FULL_blackhole_bfloat16_8192.md, the same runs).  The fabric's
utilisation was fitted at 1 GiB and its ramp at 64 KiB and 4 MiB (:mod:`meshnn.perf.fabric`); none of
these rows set a constant.  The tables' all_to_all rows are not used: the model has no all_to_all.
"""

from __future__ import annotations

from meshnn.perf import OpFamily, Topology, machine
from meshnn.perf.systems import Machine

from .figure import Figure
from .published_ccl import BH_GALAXY, ccl_us

KIB = 1024
MIB = 1024 * KIB
GIB = 1024 * MIB
AG, RS, AR = OpFamily.ALL_GATHER, OpFamily.REDUCE_SCATTER, OpFamily.ALL_REDUCE
L, R = Topology.LINEAR, Topology.RING
SOURCE = "tt-metal tech_reports/CCLs/results/SUMMARY_{}.md ({})"
SOURCES = {
    "WH": SOURCE.format("wormhole_b0_bfloat16_6144", "T3000 LoudBox, 1 link"),
    "BH": SOURCE.format("blackhole_bfloat16_8192", "BH Galaxy, 2 links"),
    "WH FULL": "tt-metal tech_reports/CCLs/results/FULL_wormhole_b0_bfloat16_6144.md (T3000 LoudBox, 1 link)",
    "BH FULL": "tt-metal tech_reports/CCLs/results/FULL_blackhole_bfloat16_8192.md (BH Galaxy, 2 links)",
}

# (family, devices, topology): (us at 16, 32, 64, 128, 256, 512 MiB; us at 2 GiB, 4 GiB, ... as timed)
WH_ROWS = {
    (AG, 2, L): ((1326.64, 2646.21, 5285.95, 10565.11, 21124.23, 42242.05), (168951.44, 337895.63)),
    (AG, 4, L): ((1081.98, 2154.39, 4298.77, 8584.73, 17158.09, 34306.09), (137195.83, 274468.05, 548937.39)),
    (AG, 8, R): ((727.02, 1432.40, 2843.17, 5665.92, 11310.31, 22597.51), (90339.70, 180665.77, 361268.15)),
    (RS, 2, L): ((958.92, 1905.26, 3798.40, 7552.95, 15057.83, 30107.68), (120351.67,)),
    (RS, 4, L): ((1272.37, 2453.96, 4833.48, 9633.29, 19205.85, 38364.91), (153377.66,)),
    (RS, 8, R): ((882.38, 1781.40, 3572.99, 7038.84, 14137.43, 28633.28), (115113.75, 229925.57)),
    (AR, 2, L): ((2283.72, 4550.12, 9083.53, 18117.68, 36184.58, 72352.57), (289320.01,)),
    (AR, 4, L): ((2416.04, 4654.26, 9168.96, 18298.21, 36474.06, 72814.72), (291078.89,)),
    (AR, 8, R): ((1617.50, 3233.07, 6454.59, 12776.73, 25694.01, 51562.01), (209810.48, 418371.10)),
}

WH_FULL_ROWS = {  # the lines of 8, in the FULL table only ("line, DRAM")
    (AG, 8, L): ((1268.25, 2516.23, 5015.35, 10008.71, 19996.94, 39980.59), (159896.62, 319746.77, 639456.21)),
    (RS, 8, L): ((1391.62, 2722.10, 5355.65, 10623.75, 21211.41, 42340.48), (169206.93,)),
    (AR, 8, L): ((2722.29, 5378.04, 10930.15, 22170.72, 44756.05, 89874.94), (360663.21,)),
}

BH_ROWS = {
    (AG, 2, L): (
        (187.28, 362.96, 717.78, 1426.84, 2827.76, 5646.42),
        (22525.46, 45024.41, 90032.11, 180056.01),
    ),
    (AG, 4, L): (
        (285.53, 546.49, 1077.76, 2122.26, 4237.97, 8403.50),
        (33727.43, 67091.25, 134617.25, 268334.53),
    ),
    (AG, 8, R): (
        (183.09, 339.03, 670.35, 1294.28, 2531.89, 5017.17),
        (20012.16, 39965.05, 79930.80, 159027.16),
    ),
    (RS, 2, L): ((264.16, 480.97, 926.07, 1842.08, 3633.33, 7233.75), (28823.34, 57661.88, 115352.00)),
    (RS, 4, L): ((353.05, 687.46, 1321.56, 2602.53, 5162.60, 10292.31), (41172.22, 82356.20, 164850.13)),
    (RS, 8, R): ((189.13, 360.32, 721.86, 1467.01, 2935.70, 5920.95), (23611.67, 47039.15, 94191.26)),
    (AR, 2, L): ((458.56, 849.46, 1653.70, 3270.44, 6462.29, 12884.20), (51406.89, 102677.87, 205446.37)),
    (AR, 4, L): ((649.63, 1261.13, 2412.04, 4721.94, 9408.47, 18748.33), (74875.36, 149392.58, 299358.34)),
    (AR, 8, R): ((373.21, 700.47, 1398.86, 2774.25, 5521.17, 11022.18), (43800.77, 87044.78, 174329.22)),
}

BH_FULL_ROWS = {  # the lines of 8, in the FULL table only ("line, DRAM")
    (AG, 8, L): (
        (335.36, 640.45, 1260.13, 2485.68, 4943.50, 9854.44),
        (39256.28, 78138.04, 156241.21, 312433.33),
    ),
    (RS, 8, L): ((409.46, 779.06, 1511.78, 2979.26, 5935.17, 11843.63), (47419.88, 94350.85, 188723.82)),
    (AR, 8, L): ((745.53, 1424.17, 2797.29, 5478.57, 10838.08, 21679.61), (86486.52, 173019.84, 345825.38)),
}

MISSES = {}
"""Rows outside the claim, each with why."""


def rows(arch: str) -> list[tuple[OpFamily, int, Topology, int, float]]:
    """Every row of one table ("WH", "BH", "WH FULL", "BH FULL"): (family, devices, topology, T bytes, us)."""
    out = []
    table = {"WH": WH_ROWS, "WH FULL": WH_FULL_ROWS, "BH": BH_ROWS, "BH FULL": BH_FULL_ROWS}[arch]
    for (family, devices, topology), (mid, giant) in table.items():
        sizes = [16 * MIB << i for i in range(len(mid))] + [2 * GIB << i for i in range(len(giant))]
        out += [(family, devices, topology, s, us) for s, us in zip(sizes, (*mid, *giant), strict=True)]
    return out


def figures() -> list[Figure]:
    """Every row as a figure in the ``collectives`` group: all checks, the misses with why."""
    machines = {"WH": machine("t3k", (1, 8)), "BH": Machine(BH_GALAXY, (1, 8))}
    out = []
    for table in ("WH", "WH FULL", "BH", "BH FULL"):
        arch, kind = (*table.split(), "SUMMARY")[:2]
        for family, n, topology, size, us in rows(table):

            def model(f=family, m=machines[arch], n=n, t=topology, s=size):
                return ccl_us(f, m, n, t, s)

            name = f"{arch} {family.name.lower()} N={n} {topology.value} T={size} B ({kind}, large)"
            why = MISSES.get((arch, family, n, topology, size), "")
            fig = Figure(name, SOURCES[table], us, us, "us", model, covered=not why, why_not=why, group="collectives")
            out.append(fig)
    return out
