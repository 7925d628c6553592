"""The transfer rates and tilize costs tt-metal's conv2d program factory measured for its own data
movement, as the conv model (:mod:`meshnn.perf.conv`) uses them.  Source: tt-metal
ttnn/cpp/ttnn/operations/conv/conv2d/conv2d_op_program_factory_common.cpp (2026-06):
``get_local_l1_noc_transfer_rate`` (a core's NoC reads from its own L1, the activation reader's),
``get_all_dram_noc_transfer_rate`` (a read from DRAM, the weights reader's),
``get_mcast_many_l1_linked_noc_transfer_rate`` (a linked multicast from L1 to many cores) and
``get_tilize_cycles_per_tile``; each rate a clamped line from 16 B (the L1 alignment) to its
threshold, in GB/s at the clock the tables were measured at (1 GHz Wormhole, 1.35 GHz Blackhole),
which is each arch's clock, so bytes / rate (GB/s) x clock (GHz) is cycles.  Not fitted here.

One exception: Blackhole's local-L1 reads are taken at tt-npe's per-transfer bandwidth table
(tenstorrent/tt-npe tt_npe/cpp/include/device_models/blackhole.hpp, ``tbt``: bytes a cycle by transfer
size, measured at 128 B, 256 B, ... 16 KB), :data:`NPE_BLACKHOLE_TRANSFER`.  tt-metal's Blackhole line
(:data:`CONV_BLACKHOLE_LOCAL_L1`, two points: 1.124 GB/s at 16 B, 80.48 at 4 KB) gives the small reads
conv2d's readers make a rate per cycle below Wormhole's (a 192 B read 3.4 B a cycle against Wormhole's 5.6)
on a NoC twice as wide (64 B flits against 32: tt-metal tech_reports/Saturating_DRAM_bandwidth), where tt-npe
has Blackhole at or above Wormhole at every size (192 B: 9.1 B a cycle).  Checked, not fitted, by the four
P150 rows of tt-metal's conv2d device perf test (tests/perf/published_conv.py: +5.3%, +84.3%, +10.4%,
+14.8% with tt-metal's line; -3.3%, +5.3%, +0.8%, +1.4% with tt-npe's).  Wormhole keeps tt-metal's own line,
which its rows meet (tt-npe's Wormhole table, 7.8 B a cycle at 192 B, takes unet_hs on the N150 from 87.0 to
71.0 us, -18%).
"""

from __future__ import annotations

from dataclasses import dataclass

from meshnn.device.arch import Arch

SOURCE = "tt-metal: ttnn/cpp/ttnn/operations/conv/conv2d/conv2d_op_program_factory_common.cpp"
MIN_TRANSFER_BYTES = 16
"""The smallest transfer the tables were measured at (the L1 alignment, 16 B)."""


@dataclass(frozen=True, slots=True)
class LinearRate:
    """A transfer rate in GB/s rising linearly from ``min_gbps`` at 16 B to ``peak_gbps`` at
    ``threshold_bytes`` and flat beyond (sizes clamped to that range)."""

    threshold_bytes: int
    min_gbps: float
    peak_gbps: float

    def gbps(self, size: int) -> float:
        size = min(max(size, MIN_TRANSFER_BYTES), self.threshold_bytes)
        slope = (self.peak_gbps - self.min_gbps) / (self.threshold_bytes - MIN_TRANSFER_BYTES)
        return self.min_gbps + slope * (size - MIN_TRANSFER_BYTES)

    def cycles(self, total_bytes: float, size: int, clock_hz: float) -> float:
        """Cycles to move ``total_bytes`` in transfers of ``size`` bytes each."""
        return total_bytes / (self.gbps(size) * 1e9) * clock_hz


@dataclass(frozen=True, slots=True)
class TableRate:
    """A transfer rate from a table of (transfer bytes, bytes a cycle) points, linear between them and flat
    beyond the last (tt-npe's ``interpolateBW`` for one transfer)."""

    points: tuple[tuple[int, float], ...]

    def bytes_per_cycle(self, size: int) -> float:
        for (a, x), (b, y) in zip(self.points, self.points[1:], strict=False):
            if size <= b:
                return x + (y - x) * (max(size, a) - a) / (b - a)
        return self.points[-1][1]

    def cycles(self, total_bytes: float, size: int, clock_hz: float) -> float:
        """Cycles to move ``total_bytes`` in transfers of ``size`` bytes each (the clock unused: the table is
        in cycles)."""
        return total_bytes / self.bytes_per_cycle(max(size, 1))


NPE_BLACKHOLE_TRANSFER = TableRate(
    ((0, 0.0), (128, 6.0), (256, 12.1), (512, 24.2), (1024, 48.0), (2048, 57.7), (4096, 58.7), (8192, 60.4),
     (16384, 60.9))
)  # fmt: skip
"""tt-npe's Blackhole per-transfer bandwidth (blackhole.hpp ``tbt``), bytes a cycle at 1.35 GHz."""


@dataclass(frozen=True, slots=True)
class ConvRates:
    """One arch's table: ``local_l1``, ``dram``, ``multicast``; ``tilize_cycles`` by (input is
    float32, output dtype name, fp32 accumulation) -> cycles a tile."""

    local_l1: LinearRate | TableRate
    dram: LinearRate
    multicast: LinearRate
    tilize_cycles: dict[tuple[bool, str, bool], int]

    def tilize(self, float32_input: bool, output: str, fp32_acc: bool) -> int:
        """Cycles to tilize one activation tile into ``output`` (a float32 or bfloat16 halo;
        bfloat4_b taken as bfloat8_b, which the table lists, other dtypes as bfloat16)."""
        name = {"BFLOAT4_B": "BFLOAT8_B"}.get(output, output)
        name = name if name in ("FLOAT32", "BFLOAT16", "BFLOAT8_B") else "BFLOAT16"
        return self.tilize_cycles[(float32_input, name, fp32_acc)]


def _tilize(table: dict[tuple[bool, str], tuple[int, int]]) -> dict[tuple[bool, str, bool], int]:
    return {(f32, out, acc): pair[acc] for (f32, out), pair in table.items() for acc in (False, True)}


CONV_BLACKHOLE_LOCAL_L1 = LinearRate(4096, 1.124, 80.48)
"""tt-metal's Blackhole local-L1 line (get_local_l1_noc_transfer_rate), kept for the record: not used."""

RATES: dict[Arch, ConvRates] = {
    Arch.WORMHOLE_B0: ConvRates(
        LinearRate(1024, 0.868, 27.84),
        LinearRate(2048, 0.436, 28.411),
        LinearRate(65536, 0.318, 25.345),
        _tilize(
            {
                (True, "FLOAT32"): (107, 128),
                (True, "BFLOAT16"): (74, 74),
                (True, "BFLOAT8_B"): (74, 70),
                (False, "FLOAT32"): (92, 117),
                (False, "BFLOAT16"): (61, 68),
                (False, "BFLOAT8_B"): (40, 43),
            }
        ),
    ),
    Arch.BLACKHOLE: ConvRates(
        NPE_BLACKHOLE_TRANSFER,  # not CONV_BLACKHOLE_LOCAL_L1: the module's text
        LinearRate(2048, 0.671, 80.885),
        LinearRate(65536, 0.182, 57.677),
        _tilize(
            {
                (True, "FLOAT32"): (132, 132),
                (True, "BFLOAT16"): (132, 80),
                (True, "BFLOAT8_B"): (132, 77),
                (False, "FLOAT32"): (105, 128),
                (False, "BFLOAT16"): (72, 72),
                (False, "BFLOAT8_B"): (60, 60),
            }
        ),
    ),
}
