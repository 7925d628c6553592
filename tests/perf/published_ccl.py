"""Tenstorrent's CCL bandwidth report, every timed row from 4 KiB to 8 MiB and at 1 GiB.

Source: tt-metal tech_reports/CCLs/results/SUMMARY_wormhole_b0_bfloat16_6144.md and FULL_ (the lines of
8), T3000 LoudBox, 1 link; SUMMARY_blackhole_bfloat16_8192.md, Blackhole Galaxy, 2 links.  Device
kernel time of one call, traced, in us, for ``T`` bytes (all_gather's output, reduce_scatter's input,
all_reduce's input and output).  The fabric's constants (:mod:`meshnn.perf.fabric`) are fitted to
the all_gather and reduce_scatter rows at the smallest size, 64 KiB, 4 MiB and 1 GiB of each device
count, and Blackhole's line all_gather copy rate to its line of 2 at 1 MiB (:data:`FITTED_ROWS`); every other
row, and every all_reduce row, is a check.
"""

from __future__ import annotations

from meshnn.device.arch import BLACKHOLE as BH_CHIP
from meshnn.device.arch import SystemSpec
from meshnn.perf import (
    BufferType,
    CollectiveConfig,
    OpDesc,
    OpFamily,
    TensorDesc,
    Topology,
    arch_perf,
    machine,
    predict,
)
from meshnn.perf.systems import Machine, SystemPerf

WH_SRC = "tt-metal tech_reports/CCLs/results/{}_wormhole_b0_bfloat16_6144.md (T3000 LoudBox, 1 link)"
BH_SRC = "tt-metal tech_reports/CCLs/results/SUMMARY_blackhole_bfloat16_8192.md (BH Galaxy, 2 links)"
KIB = 1024
AG, RS, AR = OpFamily.ALL_GATHER, OpFamily.REDUCE_SCATTER, OpFamily.ALL_REDUCE
L, R = Topology.LINEAR, Topology.RING

BH_GALAXY = SystemPerf(
    SystemSpec("bh_galaxy", "Blackhole Galaxy, 32 chips", BH_CHIP, (8, 4), (12, 10), (11, 10), 32),
    arch_perf("blackhole"),
    links_per_hop=2,
    usable_links=2,
    ring_lengths=frozenset({8}),
    dram_scale=1.0,
    source="blackhole_galaxy.yaml: 2 links between adjacent chips; the CCL report normalises by 2 links",
)
"""Where the Blackhole CCL figures were measured; not a system meshnn simulates (tests only)."""

# (family, devices, topology): (first size in KiB, times doubling from it up to 8 MiB, time at 1 GiB)
WH_ROWS = {
    (AG, 2, L): (4, (7.09, 7.65, 8.28, 9.67, 12.20, 17.50, 27.30, 48.31, 89.16, 171.42, 336.09, 666.34), 84478.54),
    (AG, 4, L): (8, (10.50, 11.69, 12.97, 14.16, 19.30, 27.17, 44.04, 77.50, 144.63, 278.65, 546.50), 68615.88),
    (AG, 8, L): (16, (19.84, 21.79, 24.98, 29.46, 39.72, 59.46, 101.28, 176.63, 331.93, 644.66), 79947.41),
    (AG, 8, R): (16, (17.61, 19.20, 20.36, 24.08, 31.51, 44.73, 69.56, 110.08, 199.16, 374.56), 45176.14),
    (RS, 2, L): (4, (6.90, 7.67, 8.79, 10.16, 12.88, 17.53, 26.01, 43.64, 75.16, 139.76, 268.46, 509.23), 60210.95),
    (RS, 4, L): (8, (14.53, 16.47, 18.68, 22.33, 29.58, 38.15, 58.33, 101.24, 179.71, 334.89, 652.56), 76693.07),
    (RS, 8, L): (16, (30.41, 31.71, 37.89, 45.60, 61.19, 71.30, 121.22, 204.64, 372.76, 720.80), 84608.16),
    (RS, 8, R): (16, (19.61, 21.24, 24.70, 32.97, 49.75, 102.82, 80.92, 134.76, 239.75, 441.14), 57548.19),
    (AR, 2, L): (
        4,
        (12.82, 13.97, 15.96, 19.01, 24.44, 34.04, 52.30, 90.43, 162.98, 309.52, 603.63, 1174.28),
        144706.33,
    ),
    (AR, 4, L): (8, (26.98, 30.26, 33.30, 39.44, 52.05, 71.49, 111.12, 190.05, 340.18, 638.98, 1232.33), 145605.91),
    (AR, 8, L): (16, (55.16, 57.74, 65.31, 76.86, 103.75, 136.25, 232.25, 391.12, 715.62, 1390.77), 180117.64),
    (AR, 8, R): (16, (35.80, 38.82, 44.73, 55.75, 81.13, 151.45, 150.71, 249.38, 443.11, 820.94), 104509.80),
}

BH_ROWS = {
    (AG, 2, L): (4, (4.33, 4.34, 5.02, 5.17, 5.80, 7.24, 9.74, 14.04, 23.88, 30.03, 52.12, 100.06), 11266.59),
    (AG, 4, L): (8, (7.36, 7.28, 7.94, 8.89, 9.73, 11.86, 16.51, 24.90, 45.93, 84.04, 153.09), 16790.90),
    (AG, 8, R): (16, (12.19, 12.35, 13.30, 14.27, 15.21, 17.56, 23.41, 34.46, 56.67, 104.87), 10015.13),
    (RS, 2, L): (4, (4.74, 4.75, 5.05, 7.81, 7.09, 8.24, 10.57, 14.17, 22.86, 38.35, 69.89, 136.60), 14441.58),
    (RS, 4, L): (8, (12.16, 12.30, 13.56, 14.89, 16.15, 19.61, 24.56, 34.79, 59.39, 99.70, 183.72), 20621.84),
    (RS, 8, R): (16, (12.30, 12.95, 14.18, 16.65, 17.23, 27.22, 30.39, 40.87, 70.97, 116.83), 11773.53),
    (AR, 2, L): (4, (9.15, 9.49, 10.35, 13.65, 13.85, 15.99, 20.84, 28.75, 46.66, 67.94, 121.55, 240.36), 25698.97),
    (AR, 4, L): (8, (19.22, 22.70, 23.47, 26.50, 27.69, 33.82, 45.67, 64.95, 107.88, 188.24, 342.29), 37371.78),
    (AR, 8, R): (16, (23.34, 23.95, 26.08, 30.74, 30.28, 43.84, 54.54, 77.16, 131.41, 227.10), 21925.95),
}

_RS32 = (
    ".  Checked for stop 56, the workers (reduce_scatter_program_utils.cpp, reduce_scatter_default_workers, T/4 a "
    "link on this line of 2 over 2 links): 16 KiB (4,096 B a link) runs one worker and no mux, 32 KiB (8,192 B) "
    "the first row with 2 workers and a fabric mux a direction (+2.76 us over 16 KiB), 64 KiB (fitted, 7.09 us) "
    "the same 2 workers with twice the bytes yet 0.72 us faster: the mux's start-up does not single out the "
    "32 KiB row, and no figure of it is published"
)
MISSES = {
    ("BH", RS, 2, L, 32 * KIB): "slower than the 64 KiB row of the same table (not monotonic in size)" + _RS32,
    ("BH", AR, 2, L, 32 * KIB): "inherits the reduce_scatter's 32 KiB outlier" + _RS32,
}
"""Rows outside the claim, each with why: size-switched algorithms and non-monotonic measurements."""

FITTED_SIZES = (64 * KIB, 4096 * KIB, 1 << 30)
"""Besides each table's smallest size: the sizes the fabric's constants were fitted to."""
FITTED_ROWS = {("BH", AG, 2, L, 1024 * KIB)}
"""Other rows a constant was fitted to: Blackhole's ``copy_worker_bytes_per_s`` (the line all_gather's workers on
packets that carry their local copy: the line of 2's last 2-worker row)."""


def row_bytes(total_bytes: int, buffer: BufferType = BufferType.DRAM) -> TensorDesc:
    """A bfloat16 TILE tensor of exactly ``total_bytes`` (one tile row), in DRAM or L1."""
    return TensorDesc((1, 1, 32, total_bytes // 64), buffer=buffer)


def ccl_us(
    family: OpFamily, m: Machine, devices: int, topology: Topology, size: int, buffer: BufferType = BufferType.DRAM
) -> float:
    """Kernel us of one collective over ``devices`` along axis 1, ``size`` the report's T, its
    tensors in ``buffer``."""
    mesh = machine(m, (1, devices))
    return predict(ccl_desc(family, devices, topology, size, buffer), mesh, traced=True).kernel_ns / 1e3


def ccl_desc(
    family: OpFamily, devices: int, topology: Topology, size: int, buffer: BufferType = BufferType.DRAM
) -> OpDesc:
    """One collective of the report over ``devices`` along axis 1, ``size`` its T."""
    whole, part = row_bytes(size, buffer), row_bytes(size // devices, buffer)
    inputs, outputs = {AG: ((part,), (whole,)), RS: ((whole,), (part,)), AR: ((whole,), (whole,))}[family]
    return OpDesc(family, inputs, outputs, collective=CollectiveConfig(topology, cluster_axis=1))


def rows(arch: str) -> list[tuple[OpFamily, int, Topology, int, float]]:
    """Every row of one architecture's table: (family, devices, topology, T bytes, us)."""
    table = WH_ROWS if arch == "WH" else BH_ROWS
    out = []
    for (family, devices, topology), (first, times, gib) in table.items():
        sizes = [first * KIB << i for i in range(len(times))]
        out += [(family, devices, topology, s, us) for s, us in zip(sizes, times, strict=True)]
        out.append((family, devices, topology, 1 << 30, gib))
    return out


def fitted(arch: str, family: OpFamily, devices: int, topology: Topology, size: int) -> bool:
    """True for the rows the fabric's constants were fitted to (never an all_reduce row)."""
    first = (WH_ROWS if arch == "WH" else BH_ROWS)[(family, devices, topology)][0] * KIB
    named = (arch, family, devices, topology, size) in FITTED_ROWS
    return named or (family is not AR and (size == first or size in FITTED_SIZES))


def source(arch: str, devices: int, topology: Topology) -> str:
    if arch == "BH":
        return BH_SRC
    return WH_SRC.format("FULL" if (devices, topology) == (8, L) else "SUMMARY")
