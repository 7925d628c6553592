"""A predicted op time, split the way a roofline splits it, and what bounds it.

All times are nanoseconds on one device.  The device kernel runs compute, memory traffic and link
traffic overlapped, so its time is the largest of the three plus the op's fixed cost (kernel
launch, pipeline fill, collective start-up) and what it writes to DRAM only after its compute (a
2-D matmul's output drain); the op-to-op gap before it (dispatch) comes on top.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from meshnn.perf.fidelity import MathFidelity


class Bound(enum.Enum):
    """What an op's predicted time is spent on."""

    COMPUTE = "compute"
    DRAM = "DRAM"
    L1 = "L1"
    LINK = "link"
    DISPATCH = "dispatch"


@dataclass(frozen=True, slots=True)
class Prediction:
    """One op on one device: the parts of its time (ns) and the work behind them.

    ``memory`` says which memory ``memory_ns`` is the time of (``Bound.DRAM`` or ``Bound.L1``);
    ``drain_ns`` is DRAM writing that follows the compute rather than overlapping it;
    ``link_bytes`` are the bytes through the busiest Ethernet link; ``flops`` are 2*M*K*N for a
    matmul (padded), the tile multiplies' worth for attention, 0 for ops that do no FPU math.
    """

    compute_ns: float
    memory_ns: float
    link_ns: float
    fixed_ns: float
    gap_ns: float = 0.0
    drain_ns: float = 0.0
    memory: Bound = Bound.DRAM
    cores: int = 1
    fidelity: MathFidelity | None = None
    flops: float = 0.0
    dram_bytes: int = 0
    l1_bytes: int = 0
    link_bytes: int = 0
    traced: bool = False
    notes: tuple[str, ...] = ()

    @property
    def kernel_ns(self) -> float:
        """The device kernel duration: the slowest overlapped part plus the fixed cost and the drain."""
        return max(self.compute_ns, self.memory_ns, self.link_ns) + self.fixed_ns + self.drain_ns

    @property
    def total_ns(self) -> float:
        """Kernel plus the op-to-op gap before it."""
        return self.kernel_ns + self.gap_ns

    @property
    def bound(self) -> Bound:
        """The largest part; ``DISPATCH`` when fixed cost and gap outweigh the rest, ``DRAM`` when the
        drain outlasts the overlapped parts."""
        top = max(self.compute_ns, self.memory_ns, self.link_ns)
        if self.fixed_ns + self.gap_ns > top + self.drain_ns:
            return Bound.DISPATCH
        if self.drain_ns > top:
            return Bound.DRAM
        if top == self.link_ns:
            return Bound.LINK
        if top == self.memory_ns:
            return self.memory
        return Bound.COMPUTE

    @property
    def dram_bytes_per_s(self) -> float:
        """DRAM bytes over the kernel time (what tt-perf-report calls the achieved DRAM rate)."""
        return self.dram_bytes / self.kernel_ns * 1e9 if self.kernel_ns else 0.0

    @property
    def flops_per_s(self) -> float:
        return self.flops / self.kernel_ns * 1e9 if self.kernel_ns else 0.0
