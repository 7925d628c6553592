"""Host <-> device buffer transfers: what a write of host bytes into a device buffer, or a read of
one back to the host, takes through the command queue (tt-metal's ``EnqueueWriteMeshBuffer`` /
``ReadShard``; ttnn's ``from_torch(device=)``, ``to_device``, ``from_device``, ``to_torch``).

A buffer moves as its pages, through the host's issue queue (writes) or the device's completion
queue (reads) in hugepages over PCIe, the dispatch cores writing or reading each page at its bank:

- **write**: the host copies a page's bytes behind its command into the issue queue while the
  prefetcher fetches the pages before it and the dispatcher writes them to their banks; the page
  stream is pipelined, so a page costs ``write_page_ns`` (the commands and NoC write of one page)
  or its bytes at ``write_bytes_per_s`` (PCIe), whichever is longer;
- **read**: the dispatcher reads each page from its bank and writes it to the completion queue, and
  the host copies it out: ``read_page_ns`` plus its bytes at ``read_bytes_per_s``, one after the
  other.

Each arch's four figures are fitted to two rows of tt-metal's benchmark of these transfers (its
32 B and 2048 B pages, 64 MiB to a DRAM buffer of a PCIe-attached chip); the other page sizes,
L1 buffers and the other goldens are checks (tests/perf/published_transfer.py).  Not modelled: a
chip reached through another's Ethernet (an N300's second chip, a T3000's remote four), pinned host
memory mapped to the NoC, sharded buffers' strided pages.  Units: ``_ns`` nanoseconds,
``_bytes_per_s`` bytes per second (decimal GB = 1e9).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields

from meshnn.device.arch import Arch
from meshnn.errors import MeshnnValueError

RW_BUFFER = "tt-metal: tests/tt_metal/tt_metal/perf_microbenchmark/dispatch/benchmark_rw_buffer"


@dataclass(frozen=True, slots=True)
class HostTransfer:
    """One architecture's host <-> device transfer figures; ``sources`` names each one's origin."""

    arch: Arch
    write_page_ns: float  # one page of a write: its command, copy into the issue queue, NoC write
    write_bytes_per_s: float  # the write stream's ceiling (PCIe host -> device)
    read_page_ns: float  # one page of a read: its bank read and completion-queue write, host copy
    read_bytes_per_s: float  # a read's bytes beyond its per-page cost (PCIe device -> host)
    sources: dict[str, str] = field(default_factory=dict, compare=False)

    def missing_sources(self) -> list[str]:
        """Figures without a source (a test keeps this empty)."""
        return [f.name for f in fields(self) if f.name not in ("arch", "sources") and f.name not in self.sources]


def _fit(arch: Arch, golden: str, write: tuple[float, float], read: tuple[float, float]) -> HostTransfer:
    """The figures of ``arch`` from its golden's GB/s at 32 B and 2048 B pages (``write``, ``read``)."""
    w32, w2048 = write
    r32, r2048 = read
    read_ns_per_byte = (2048 / r2048 - 32 / r32) / (2048 - 32)  # (GB/s = bytes per ns)
    source = f"fitted: {RW_BUFFER}{golden}.json, 64 MiB DRAM buffer of chip 0"
    return HostTransfer(
        arch=arch,
        write_page_ns=32 / w32,
        write_bytes_per_s=w2048 * 1e9,
        read_page_ns=32 / r32 - 32 * read_ns_per_byte,
        read_bytes_per_s=1e9 / read_ns_per_byte,
        sources={
            "write_page_ns": f"{source}: Write at 32 B pages, {w32} GB/s (the page cost bounds it)",
            "write_bytes_per_s": f"{source}: Write at 2048 B pages, {w2048} GB/s (the bytes bound it)",
            "read_page_ns": f"{source}: Read at 32 B and 2048 B pages, {r32} and {r2048} GB/s (a page's cost, "
            "then its bytes)",
            "read_bytes_per_s": f"{source}: Read at 32 B and 2048 B pages, {r32} and {r2048} GB/s",
        },
    )


WORMHOLE_B0 = _fit(Arch.WORMHOLE_B0, "_golden", (0.530137, 14.0174), (0.648066, 12.6425))
"""Wormhole: the 2025-12 golden of tt-metal's CI (a PCIe Gen4 host)."""
BLACKHOLE = _fit(Arch.BLACKHOLE, "_blackhole_golden", (0.915152, 22.6703), (1.099988, 14.6589))
"""Blackhole: the 2026-05 golden (a P150's PCIe Gen5 host)."""

TRANSFERS: dict[Arch, HostTransfer] = {WORMHOLE_B0.arch: WORMHOLE_B0, BLACKHOLE.arch: BLACKHOLE}


def host_transfer(arch: Arch | str) -> HostTransfer:
    """The transfer figures of ``arch`` (an :class:`Arch` or its value)."""
    return TRANSFERS[arch if isinstance(arch, Arch) else Arch(arch)]


def _pages(nbytes: int, page_bytes: int, what: str) -> int:
    if nbytes < 0 or page_bytes <= 0:
        raise MeshnnValueError(f"{what}: bytes must be >= 0 and the page size > 0, got {nbytes} and {page_bytes}")
    return math.ceil(nbytes / page_bytes)


def host_write_ns(arch: Arch | str, nbytes: int, page_bytes: int) -> float:
    """A blocking write of ``nbytes`` host bytes into one chip's buffer of ``page_bytes`` pages (ns)."""
    figures = host_transfer(arch)
    per_page = max(figures.write_page_ns, page_bytes * 1e9 / figures.write_bytes_per_s)
    return _pages(nbytes, page_bytes, "host_write_ns") * per_page


def host_read_ns(arch: Arch | str, nbytes: int, page_bytes: int) -> float:
    """A blocking read of ``nbytes`` of one chip's buffer of ``page_bytes`` pages to the host (ns)."""
    figures = host_transfer(arch)
    per_page = figures.read_page_ns + page_bytes * 1e9 / figures.read_bytes_per_s
    return _pages(nbytes, page_bytes, "host_read_ns") * per_page
