"""Memory traffic: how long an op's reads and writes take in DRAM or L1, per-tile core costs, and the
prediction of a kernel made of the two.

DRAM: a tensor sharded over the DRAM banks streams at the bank-adjacent rate; an interleaved one at
the interleaved rate, slowed further by small pages (tt-npe's per-transfer bandwidth: a 2 KB tile
moves at full rate, a 1088 B bfloat8_b tile or a short row-major row slower).  Readers that keep
blocks of reads in flight get the interleaved rate whatever the page; where that figure is one
reader a bank's, more readers than banks get the banks' own rate at the page's transfer efficiency
where that is higher (:func:`interleaved_rate`).  L1: bytes cross the
NoC, one link per core.  Either way the op's cores cannot move more than their NoC links carry, so a
one-core op reads DRAM no faster than one link.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable
from dataclasses import dataclass

from meshnn.perf.desc import ROW_MAJOR_ELEMENT_BYTES, Layout, TensorDesc
from meshnn.perf.hardware import ArchPerf
from meshnn.perf.prediction import Bound, Prediction
from meshnn.perf.systems import Machine

SILU_SLOTS = 45
"""SFPU issue slots of tt-llk's ``_calculate_silu_`` for one 32-lane datum (Wormhole; tt-llk at tt-metal's
submodule of 7f36e28e80 and eb1e2e59a7, 2025-07, and tt-metal's own ``calculate_silu`` of d554814e39, 2025-12, the
same code with other coefficients): a load, an absolute value, the piecewise sigmoid of |x| -- ``v_if (x <= 1)``
a line, ``v_elseif (x < 5)`` a degree-4 polynomial (four dependent multiply-adds, five fp32 coefficients loaded two
halves each), else 1 -- every branch issued for every lane (SIMT predication), its condition pushes, compares and
pops, ``1 - s`` for negative x, the product ``x * s``, a store and the destination increment; a multiply-add's
result waits one slot before its use (tt-isa-documentation WormholeB0 VectorUnit.md: SFPMAD 2 cycles' latency,
one instruction issued a cycle).  Counted by hand from the source, not from a compiled kernel: about 45 (40-52).
A tile is 32 such data: about 32 cycles a slot (tt-llk's perf suite in tt-metal PR #54317: bodies of 4 and 3 slots
a datum take 160 and 126-157 cycles a tile, on Blackhole).  tt-metal issue #24787 shows silu's work is of this
size: the Galaxy unit test's one-tile mul + silu went 2.92 -> 4.4 us (+1.5 us) when tt-metal #24285 (2025-07)
took a silu whose ``v_if (x < 0)`` called the piecewise sigmoid in both branches (both run on every lane)."""

SFPU_PASSES: dict[str, int] = {
    "identity": 1,
    "copy": 1,
    "relu": 1,
    "neg": 1,
    "abs": 1,
    "typecast": 1,
    "square": 1,
    "relu6": 2,
    "clamp": 2,
    "where": 2,
    "mul_scalar": 1,
    "add_scalar": 1,
    "exp": 4,
    "sigmoid": 6,
    "reciprocal": 6,
    "sqrt": 6,
    "rsqrt": 6,
    "silu": SILU_SLOTS,
    "gelu": 8,
    "tanh": 8,
    "log": 8,
    "erf": 8,
    "softplus": 10,
}
"""SFPU passes over a tile per unary op: an estimate (no published per-op figure) but silu's, counted
(:data:`SILU_SLOTS`); each pass is 1024 elements at the SFPU's 32 elements a cycle."""

DEFAULT_SFPU_PASSES = 4


def sfpu_cycles_per_tile(arch: ArchPerf, ops: Iterable[str]) -> float:
    """Cycles the SFPU spends on one tile for a chain of unary ops (names as ttnn's, any case)."""
    per_pass = 1024 / arch.sfpu_elements_per_cycle
    return sum(SFPU_PASSES.get(op.lower(), DEFAULT_SFPU_PASSES) for op in ops) * per_pass


def operand_cycles(arch: ArchPerf, tile_bytes: float) -> float:
    """Cycles to feed one operand tile of ``tile_bytes`` to the math engine (unpack from L1)."""
    return tile_bytes / arch.operand_bytes_per_cycle


def page_bytes(tensor: TensorDesc) -> int:
    """The size of one page: a tile, or one row of a row-major tensor."""
    if tensor.layout is Layout.TILE:
        return tensor.tile_bytes
    return tensor.shape[-1] * ROW_MAJOR_ELEMENT_BYTES[tensor.dtype]


def transfer_efficiency(arch: ArchPerf, size: int) -> float:
    """Fraction of the full NoC rate a transfer of ``size`` bytes reaches (log-linear between
    tt-npe's points, the first point's fraction below it, 1 above the last)."""
    points = arch.noc_transfer_efficiency
    if size <= points[0][0]:
        return points[0][1] * size / points[0][0]
    for (s0, f0), (s1, f1) in itertools.pairwise(points):
        if size <= s1:
            t = (math.log2(size) - math.log2(s0)) / (math.log2(s1) - math.log2(s0))
            return f0 + t * (f1 - f0)
    return 1.0


def interleaved_rate(machine: Machine, page: int, readers: int) -> float:
    """Bytes/s the DRAM serves an interleaved tensor of ``page``-byte pages to ``readers`` cores that
    keep blocks of reads in flight: the interleaved figure, or, where that figure is one reader a bank
    (``dram_interleaved_readers`` up to ``num_dram_banks``: Blackhole's eight, whose overlapping routes
    cap them at 67%) and more cores than banks read, the banks' own rate (the bank-adjacent figure) at
    the page's transfer efficiency where higher (a 2 KB tile at 95% of it on Blackhole; a 1088 B
    bfloat8_b tile keeps the interleaved figure).  Wormhole's figure is 64 readers' already: kept."""
    system = machine.system
    arch = system.arch
    rate = system.dram_interleaved_bytes_per_s
    if arch.dram_interleaved_readers <= arch.num_dram_banks < readers:
        rate = max(rate, system.dram_sharded_bytes_per_s * transfer_efficiency(arch, page))
    return rate


@dataclass(frozen=True, slots=True)
class Traffic:
    """The memory side of an op: DRAM and L1 bytes and the time each takes (ns)."""

    dram_bytes: int
    dram_ns: float
    l1_bytes: int
    l1_ns: float

    @property
    def ns(self) -> float:
        return max(self.dram_ns, self.l1_ns)

    @property
    def kind(self) -> Bound:
        return Bound.DRAM if self.dram_ns >= self.l1_ns else Bound.L1


def traffic(
    machine: Machine,
    moves: Iterable[tuple[TensorDesc, float]],
    cores: int,
    *,
    dram_sharded: bool = False,
    local_shards: bool = False,
    blocks_in_flight: bool = False,
    readers: int = 0,
    page_writes: Iterable[TensorDesc] = (),
) -> Traffic:
    """Time of reading or writing each ``(tensor, times)`` in ``moves`` (``times`` may be a fraction
    or a re-read count).  ``dram_sharded``: the op streams its DRAM tensors bank by bank (a
    DRAM-sharded matmul) whatever their layout says.  ``local_shards``: the op computes where its
    L1-sharded tensors live (an eltwise op on its shards): their bytes cross no NoC link (the unpack
    and pack of each tile are in the op's compute) and count in ``l1_bytes`` only.
    ``blocks_in_flight``: the op's readers issue a block of tile reads before they wait (a matmul's
    senders), so the banks serve the grid at their interleaved rate whatever the page size (or faster:
    :func:`interleaved_rate`); otherwise
    the rate is derated by the per-transfer efficiency of the page (tt-npe's single-transfer rate).
    ``readers``: the cores that read with blocks in flight (:func:`interleaved_rate`; 0: as few as
    the interleaved figure's).  ``page_writes``: outputs written once, a page at a time, each flushed
    before the next (the unary writer, ``writer_unary_interleaved_start_id.cpp``): they share the DRAM
    as any move does, and their DRAM-interleaved bytes take at least their time at the system's
    page-write rate (:func:`page_write_ns`)."""
    system = machine.system
    dram_bytes = l1_bytes = moved = 0
    dram_ns = 0.0
    for tensor, times in [*moves, *((t, 1.0) for t in page_writes)]:
        size = int(tensor.nbytes * times)
        if not tensor.in_dram:
            l1_bytes += size
            moved += 0 if (local_shards and tensor.sharded) else size
            continue
        dram_bytes += size
        if dram_sharded or tensor.sharded:
            dram_ns += size / system.dram_sharded_bytes_per_s * 1e9
        else:
            if blocks_in_flight:
                rate = interleaved_rate(machine, page_bytes(tensor), readers)
            else:
                rate = system.dram_interleaved_bytes_per_s * transfer_efficiency(system.arch, page_bytes(tensor))
            dram_ns += size / rate * 1e9
    noc_rate = max(cores, 1) * system.arch.noc_bytes_per_cycle * system.arch.clock_hz  # the cores' NoC links
    dram_ns = max(dram_ns, dram_bytes / noc_rate * 1e9, page_write_ns(machine, page_writes))
    return Traffic(dram_bytes, dram_ns, l1_bytes, moved / noc_rate * 1e9)


def page_write_ns(machine: Machine, tensors: Iterable[TensorDesc]) -> float:
    """The least time the DRAM-interleaved ``tensors`` take, written a page at a time with each page
    flushed before the next: their bytes at the system's page-write rate, whatever the page size (0
    where the arch has no such figure)."""
    rate = machine.system.dram_page_write_bytes_per_s
    written = sum(t.nbytes for t in tensors if t.in_dram and not t.sharded)
    return 0.0 if rate is None else written / rate * 1e9


def grid_cores(machine: Machine, grid: tuple[int, int] | None) -> int:
    """Cores of ``grid`` (x, y), or of the system's harvested compute grid when none is given."""
    if grid is None:
        return machine.system.compute_cores
    return max(1, int(grid[0]) * int(grid[1]))


def kernel_prediction(
    arch: ArchPerf,
    cycles: float,
    memory: Traffic,
    cores: int,
    *,
    fixed_ns: float | None = None,
    link_ns: float = 0.0,
    **extra: object,
) -> Prediction:
    """The prediction of a kernel that spends ``cycles`` on its busiest core and moves ``memory``
    over ``cores`` cores; its fixed cost is the launch unless ``fixed_ns`` says otherwise.  ``extra``:
    the other :class:`Prediction` fields (fidelity, flops, link_bytes, notes)."""
    return Prediction(
        compute_ns=arch.cycles_ns(cycles),
        memory_ns=memory.ns,
        link_ns=link_ns,
        fixed_ns=arch.op_launch_ns if fixed_ns is None else fixed_ns,
        memory=memory.kind,
        cores=cores,
        dram_bytes=memory.dram_bytes,
        l1_bytes=memory.l1_bytes,
        **extra,  # type: ignore[arg-type]
    )
