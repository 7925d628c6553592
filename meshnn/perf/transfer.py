"""Host <-> device buffer transfers: what a write of host bytes into a device buffer, or a read of
one back to the host, takes through the command queue (tt-metal's ``EnqueueWriteMeshBuffer`` /
``ReadShard``; ttnn's ``from_torch(device=)``, ``to_device``, ``from_device``, ``to_torch``).

A buffer moves as its pages through up to three stages that run side by side on a long transfer, so
a page costs the longest of them (tt-metal: tt_metal/impl/buffers/dispatch.cpp builds one
command per write chunk or one paged relay per read; the kernels in tt_metal/impl/dispatch/kernels):

- **the device** (:class:`HostTransfer`, per architecture): a write's pages are fetched by the
  prefetcher over PCIe from the host's issue queue and written to their banks by the dispatcher,
  pipelined: the longer of ``write_page_ns`` (a page's commands and NoC write) and its bytes at
  ``write_bytes_per_s``; a read's pages are read from their banks and written over PCIe into the
  completion queue one after the other: ``read_page_ns`` plus the bytes at ``read_bytes_per_s``;
- **the host** (:class:`HostCopy`, per host machine): the host's CPU copies a write's bytes from the
  caller's buffer into the issue queue and a read's bytes out of the completion queue, at its own
  memory-copy rate (``None``: never the bound in that host's figures).  With pinned host memory
  mapped to the NoC (``pinned=True``, tt-metal's ``PinnedMemory``) the device reads or writes the
  caller's buffer itself and this stage is gone (benchmark_rw_buffer.cpp's ``*PinnedMemory`` rows);
- **the tunnel** (``remote=True``): a chip with no PCIe link of its own (an N300's second chip, a
  T3000's remote four) gets its commands through its PCIe neighbour: prefetch_h there relays them
  over the Ethernet fabric to prefetch_d on the remote chip, and a read's pages come back from
  dispatch_d over the fabric to dispatch_h, which writes the completion queue
  (cq_prefetch.cpp, cq_dispatch.cpp ``relay_to_next_cb``).  The relay moves 4 KiB dispatch pages,
  one fabric packet each (relay_mux.cpp: the mux's payload is the fabric's 4352 B rounded down to a
  power of two), whatever the buffer's page size: its rate is a ceiling per direction, the same
  from 512 B or 1 KiB pages up.

The figures are fitted to rows of tt-metal's benchmark of these transfers
(tests/tt_metal/tt_metal/perf_microbenchmark/dispatch/benchmark_rw_buffer*_golden.json, 64 MiB
blocking transfers): each figure's source names its rows; every other row of the three goldens
(DRAM and L1 buffers, both chips, pinned and not) is a check (tests/perf/published_transfer.py).
Not modelled: sharded buffers' strided pages, more than one Ethernet hop of tunnel.  Units: ``_ns``
nanoseconds, ``_bytes_per_s`` bytes per second (decimal GB = 1e9).
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, field, fields

from meshnn.device.arch import Arch
from meshnn.errors import MeshnnValueError

RW_BUFFER = "tt-metal: tests/tt_metal/tt_metal/perf_microbenchmark/dispatch/benchmark_rw_buffer"
_CI, _IOMMU, _P150 = (RW_BUFFER + g + ".json" for g in ("_golden", "_n300_iommu_golden", "_blackhole_golden"))


class TransferHost(enum.Enum):
    """The host machines whose copy rates were measured (one golden of the benchmark each)."""

    WORMHOLE_CI = "wormhole_ci"  # tt-metal's CI host of the 2025-12 Wormhole golden (N300, hugepages)
    N300_IOMMU = "n300_iommu"  # an N300 host with the IOMMU on (2026-05 golden)
    P150 = "p150"  # a P150 Blackhole host (2026-05 golden)


@dataclass(frozen=True, slots=True)
class HostTransfer:
    """One architecture's device-side transfer figures; ``sources`` names each one's origin.

    ``tunnel_*`` are ``None`` where no remote chip of the architecture was measured."""

    arch: Arch
    write_page_ns: float  # one page of a write: its command, PCIe fetch and NoC write
    write_bytes_per_s: float | None  # the device's write stream ceiling (None: not the bound where measured)
    read_page_ns: float  # one page of a read: its bank read and completion-queue write
    read_bytes_per_s: float  # a read's bytes beyond its per-page cost (PCIe device -> host)
    tunnel_write_bytes_per_s: float | None  # a remote chip's writes through its neighbour's Ethernet
    tunnel_read_bytes_per_s: float | None  # a remote chip's reads back through it
    default_host: TransferHost = TransferHost.WORMHOLE_CI
    sources: dict[str, str] = field(default_factory=dict, compare=False)

    def missing_sources(self) -> list[str]:
        """Figures without a source (a test keeps this empty)."""
        skip = ("arch", "sources", "default_host")
        return [f.name for f in fields(self) if f.name not in skip and f.name not in self.sources]


@dataclass(frozen=True, slots=True)
class HostCopy:
    """One host's memory-copy rates between the caller's buffer and the command queues (bytes/s;
    ``None``: that copy never bounds the host's measured transfers)."""

    host: TransferHost
    write_bytes_per_s: float | None  # caller's buffer -> issue queue
    read_bytes_per_s: float | None  # completion queue -> caller's buffer
    sources: dict[str, str] = field(default_factory=dict, compare=False)

    def missing_sources(self) -> list[str]:
        """Figures without a source (a test keeps this empty)."""
        return [f.name for f in fields(self) if f.name not in ("host", "sources") and f.name not in self.sources]


def _gbps(value: float) -> float:
    return value * 1e9


def _sequential(small: tuple[int, float], large: tuple[int, float]) -> tuple[float, float]:
    """A per-page cost (ns) and a byte rate (bytes/s) through two (page bytes, GB/s) rows where a
    page costs both in turn (GB/s = bytes per ns)."""
    (p0, g0), (p1, g1) = small, large
    ns_per_byte = (p1 / g1 - p0 / g0) / (p1 - p0)
    return p0 / g0 - p0 * ns_per_byte, 1e9 / ns_per_byte


# Wormhole: chip 0 of tt-metal's CI golden, its reads a page then its bytes at 32 B and 2 KiB pages.
_WH_READ = _sequential((32, 0.648066), (2048, 12.6425))
WORMHOLE_B0 = HostTransfer(
    arch=Arch.WORMHOLE_B0,
    write_page_ns=32 / 0.530137,
    write_bytes_per_s=_gbps(18.7933),
    read_page_ns=_WH_READ[0],
    read_bytes_per_s=_WH_READ[1],
    tunnel_write_bytes_per_s=_gbps(9.40734),
    tunnel_read_bytes_per_s=_gbps(4.79601),
    default_host=TransferHost.WORMHOLE_CI,
    sources={
        "write_page_ns": f"fitted: {_CI}, Write, 32 B pages, DRAM, chip 0: 0.530 GB/s (the page cost bounds it)",
        "write_bytes_per_s": f"fitted: {_IOMMU}, WritePinnedMemory, 2 KiB pages, DRAM, chip 0: 18.79 GB/s (pinned: "
        "no host copy, the device's stream bounds it; 19.16 at 4 KiB)",
        "read_page_ns": f"fitted: {_CI}, Read, 32 B and 2 KiB pages, DRAM, chip 0: 0.648 and 12.64 GB/s (a page's "
        "cost, then its bytes; the N300 IOMMU golden's pinned reads, device only, are within 4% of these rows)",
        "read_bytes_per_s": f"fitted: the same two rows ({_CI})",
        "tunnel_write_bytes_per_s": f"fitted: {_CI}, Write, 2 KiB pages, DRAM, chip 1 (through chip 0's Ethernet): "
        "9.41 GB/s, 435 ns a 4 KiB relay packet (the link's 12.5 GB/s would carry one in 331 ns)",
        "tunnel_read_bytes_per_s": f"fitted: {_CI}, Read, 2 KiB pages, DRAM, chip 1: 4.80 GB/s, 854 ns a 4 KiB "
        "packet, twice a write's: dispatch_h (cq_dispatch.cpp process_write_host_h) takes what has arrived, here one "
        "relayed page at a time, writes it and the completion queue's pointer to the host and waits for both to "
        "flush before the next, where a local chip's dispatcher moves many pages a flush (the split of the 854 ns "
        "is not measured); the N300 IOMMU golden's remote reads, 5.2-5.3 GB/s, pinned or not, check it",
    },
)

# Blackhole: the P150 golden; its reads are a page then its bytes (32 B and 512 B pages) until the
# host's copy out of the completion queue bounds them (2 KiB pages).
_BH_READ = _sequential((32, 1.099988), (512, 13.4913))
BLACKHOLE = HostTransfer(
    arch=Arch.BLACKHOLE,
    write_page_ns=32 / 0.915152,
    write_bytes_per_s=None,
    read_page_ns=_BH_READ[0],
    read_bytes_per_s=_BH_READ[1],
    tunnel_write_bytes_per_s=None,
    tunnel_read_bytes_per_s=None,
    default_host=TransferHost.P150,
    sources={
        "write_page_ns": f"fitted: {_P150}, Write, 32 B pages, DRAM, chip 0: 0.915 GB/s",
        "write_bytes_per_s": f"{_P150} has no pinned rows to split the device's write stream from the host's copy: "
        "its 2 KiB writes (22.67 GB/s) are taken as the host's copy (HostCopy P150), the device's as not binding",
        "read_page_ns": f"fitted: {_P150}, Read, 32 B and 512 B pages, DRAM, chip 0: 1.100 and 13.49 GB/s",
        "read_bytes_per_s": f"fitted: the same two rows ({_P150}): 54 GB/s, a PCIe Gen5 link's device -> host "
        "writes; from 1 KiB pages on the host's copy (14.66 GB/s) bounds the reads instead",
        "tunnel_write_bytes_per_s": "no remote Blackhole chip in the goldens (a P150 is one chip): not modelled",
        "tunnel_read_bytes_per_s": "as tunnel_write_bytes_per_s",
    },
)

TRANSFERS: dict[Arch, HostTransfer] = {WORMHOLE_B0.arch: WORMHOLE_B0, BLACKHOLE.arch: BLACKHOLE}

HOSTS: dict[TransferHost, HostCopy] = {
    TransferHost.WORMHOLE_CI: HostCopy(
        TransferHost.WORMHOLE_CI,
        write_bytes_per_s=_gbps(14.0174),
        read_bytes_per_s=None,
        sources={
            "write_bytes_per_s": f"fitted: {_CI}, Write, 2 KiB pages, DRAM, chip 0: 14.02 GB/s, under the device's "
            "18.79 (pinned, no copy): the host's copy into the issue queue bounds it",
            "read_bytes_per_s": f"{_CI}: every chip 0 read row is met by the device's stage alone (None)",
        },
    ),
    TransferHost.N300_IOMMU: HostCopy(
        TransferHost.N300_IOMMU,
        write_bytes_per_s=_gbps(12.3445),
        read_bytes_per_s=_gbps(9.42077),
        sources={
            "write_bytes_per_s": f"fitted: {_IOMMU}, Write, 2 KiB pages, DRAM, chip 0: 12.34 GB/s where the same "
            "host's pinned writes (no copy) reach 18.79",
            "read_bytes_per_s": f"fitted: {_IOMMU}, Read, 2 KiB pages, DRAM, chip 0: 9.42 GB/s where its pinned "
            "reads reach 12.26",
        },
    ),
    TransferHost.P150: HostCopy(
        TransferHost.P150,
        write_bytes_per_s=_gbps(22.6703),
        read_bytes_per_s=_gbps(14.6589),
        sources={
            "write_bytes_per_s": f"fitted: {_P150}, Write, 2 KiB pages, DRAM, chip 0: 22.67 GB/s (with the device's "
            "write stream: not split, see BLACKHOLE.write_bytes_per_s)",
            "read_bytes_per_s": f"fitted: {_P150}, Read, 2 KiB pages, DRAM, chip 0: 14.66 GB/s (140 ns a page, where "
            "the device's page plus bytes take 66): the host's copy out of the completion queue bounds it",
        },
    ),
}


def host_transfer(arch: Arch | str) -> HostTransfer:
    """The device-side transfer figures of ``arch`` (an :class:`Arch` or its value)."""
    return TRANSFERS[arch if isinstance(arch, Arch) else Arch(arch)]


def host_copy(host: TransferHost | str) -> HostCopy:
    """The copy rates of ``host`` (a :class:`TransferHost` or its value)."""
    if isinstance(host, TransferHost):
        return HOSTS[host]
    known = {h.value: h for h in TransferHost}
    if host not in known:
        raise MeshnnValueError(f"no measured transfer host {host!r}: one of {sorted(known)}")
    return HOSTS[known[host]]


def _pages(nbytes: int, page_bytes: int, what: str) -> int:
    if nbytes < 0 or page_bytes <= 0:
        raise MeshnnValueError(f"{what}: bytes must be >= 0 and the page size > 0, got {nbytes} and {page_bytes}")
    return math.ceil(nbytes / page_bytes)


def _ns(page_bytes: int, bytes_per_s: float | None) -> float:
    return 0.0 if bytes_per_s is None else page_bytes * 1e9 / bytes_per_s


def _stages(
    what: str, figures: HostTransfer, host: TransferHost | str | None, remote: bool, pinned: bool
) -> tuple[HostCopy | None, float | None]:
    """The host stage (None when pinned) and the tunnel's rate (None when local) of one transfer."""
    copy = None if pinned else host_copy(figures.default_host if host is None else host)
    tunnel = None
    if remote:
        tunnel = figures.tunnel_write_bytes_per_s if what == "host_write_ns" else figures.tunnel_read_bytes_per_s
        if tunnel is None:
            raise MeshnnValueError(f"{what}: no remote {figures.arch.value} chip was measured (no tunnel figures)")
    return copy, tunnel


def host_write_ns(
    arch: Arch | str,
    nbytes: int,
    page_bytes: int,
    *,
    remote: bool = False,
    host: TransferHost | str | None = None,
    pinned: bool = False,
) -> float:
    """A blocking write of ``nbytes`` host bytes into one chip's buffer of ``page_bytes`` pages (ns):
    the longest of the device's page stream, the host's copy (unless ``pinned``) and, on a
    ``remote`` chip, the Ethernet tunnel.  ``host`` defaults to the architecture's measured host."""
    figures = host_transfer(arch)
    pages = _pages(nbytes, page_bytes, "host_write_ns")
    copy, tunnel = _stages("host_write_ns", figures, host, remote, pinned)
    per_page = max(
        figures.write_page_ns,
        _ns(page_bytes, figures.write_bytes_per_s),
        _ns(page_bytes, copy.write_bytes_per_s if copy else None),
        _ns(page_bytes, tunnel),
    )
    return pages * per_page


def host_read_ns(
    arch: Arch | str,
    nbytes: int,
    page_bytes: int,
    *,
    remote: bool = False,
    host: TransferHost | str | None = None,
    pinned: bool = False,
) -> float:
    """A blocking read of ``nbytes`` of one chip's buffer of ``page_bytes`` pages to the host (ns):
    the longest of the device's pages (each a page's cost, then its bytes), the host's copy (unless
    ``pinned``) and, on a ``remote`` chip, the Ethernet tunnel back."""
    figures = host_transfer(arch)
    pages = _pages(nbytes, page_bytes, "host_read_ns")
    copy, tunnel = _stages("host_read_ns", figures, host, remote, pinned)
    per_page = max(
        figures.read_page_ns + _ns(page_bytes, figures.read_bytes_per_s),
        _ns(page_bytes, copy.read_bytes_per_s if copy else None),
        _ns(page_bytes, tunnel),
    )
    return pages * per_page
