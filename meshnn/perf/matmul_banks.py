"""How fast the DRAM banks serve a matmul's one-tile reads on Blackhole.

Every reader kernel of ttnn's matmul programs (the 2-D program's in0 and in1 senders, the 1-D program's
readers, the plain program's reader) reads an interleaved operand one NoC read a page, a page being a
tile: 2048 B in bfloat16, 1088 B in bfloat8_b, 576 B in bfloat4_b.  A bank serves such reads at its own
rate (the bank-adjacent figure, ``dram_sharded_bytes_per_s``) times the per-transfer efficiency of the
tile's size.  :func:`meshnn.perf.traffic.interleaved_rate` already gives a bfloat16 tile that rate where
it beats the interleaved figure (Blackhole's 344 GB/s, eight readers of 16 KB packets); this module
takes the same rate where it falls below the interleaved figure, which its 16 KB packets do not show.

The per-transfer figures are tt-npe's Blackhole table (``tt_npe/cpp/include/device_models/blackhole.hpp``,
``tbt``: 512 B -> 24.2, 1 KB -> 48.0, 2 KB -> 57.7, 4 KB -> 58.7, 8 KB -> 60.4, 16 KB -> 60.9 B/cycle),
read log-linearly between its points: a bfloat4_b tile reaches 46% of the banks' rate (232 GB/s on a
P150), a bfloat8_b tile 80% (401 GB/s: above the interleaved figure, so unchanged), a bfloat16 tile 95%.
:data:`meshnn.perf.hardware.BLACKHOLE`'s ``noc_transfer_efficiency`` takes Wormhole's figures below
2 KB instead: those scale one sender core's own stream (``dram_activation_bytes_per_cycle``, fitted on
bfloat16 tiles), and are left as they are: taking tt-npe's points there too moves 13 P150 bfloat8_b and
bfloat4_b figures out of the claim (their senders' streams, and a bfloat8_b tile's bank rate, quicken).
Wormhole's interleaved figure is 64 readers' on 12 banks already, more readers than banks: no Wormhole figure
changes.  No constant is fitted here.
"""

from __future__ import annotations

import itertools
import math

from meshnn.device.arch import Arch
from meshnn.perf.desc import OpDesc
from meshnn.perf.systems import Machine
from meshnn.perf.traffic import interleaved_rate, page_bytes

BANK_TRANSFER_BYTES_PER_CYCLE: dict[Arch, tuple[tuple[int, float], ...]] = {
    Arch.BLACKHOLE: ((512, 24.2), (1024, 48.0), (2048, 57.7), (4096, 58.7), (8192, 60.4), (16384, 60.9)),
}
"""(transfer bytes, bytes a cycle) of one NoC transfer from a DRAM bank, by arch: tt-npe's Blackhole
transfer-bandwidth table (its last point, 60.9, is the NoC link's rate)."""


def bank_transfer_efficiency(arch: Arch, size: int) -> float | None:
    """Fraction of the NoC link's rate one transfer of ``size`` bytes reaches on ``arch`` (log-linear between
    the table's points, proportional below the first, 1 above the last); None for an arch without a table."""
    points = BANK_TRANSFER_BYTES_PER_CYCLE.get(arch)
    if points is None:
        return None
    peak = points[-1][1]
    if size <= points[0][0]:
        return points[0][1] / peak * size / points[0][0]
    for (s0, f0), (s1, f1) in itertools.pairwise(points):
        if size <= s1:
            t = (math.log2(size) - math.log2(s0)) / (math.log2(s1) - math.log2(s0))
            return (f0 + t * (f1 - f0)) / peak
    return 1.0


def tile_reads_extra_ns(desc: OpDesc, machine: Machine, readers: int) -> float:
    """Nanoseconds the banks add to ``desc``'s DRAM-interleaved input reads beyond the rate the op's traffic
    gave them (:func:`meshnn.perf.traffic.interleaved_rate`), where more cores than banks read (``readers``)
    on an arch whose interleaved figure is one reader a bank's (``dram_interleaved_readers`` up to
    ``num_dram_banks``): each input at the banks' rate times its tile's transfer efficiency
    (:func:`bank_transfer_efficiency`) where that is slower.  0 elsewhere (Wormhole; sharded or L1 inputs;
    an arch without a table)."""
    system = machine.system
    arch = system.arch
    if not arch.dram_interleaved_readers <= arch.num_dram_banks < readers:
        return 0.0
    extra = 0.0
    for tensor in desc.inputs:
        if not tensor.in_dram or tensor.sharded:
            continue
        page = page_bytes(tensor)
        efficiency = bank_transfer_efficiency(arch.arch, page)
        if efficiency is None:
            continue
        tile_s = tensor.nbytes / (system.dram_sharded_bytes_per_s * efficiency)
        given_s = tensor.nbytes / interleaved_rate(machine, page, readers)
        extra += max(0.0, tile_s - given_s) * 1e9
    return extra
