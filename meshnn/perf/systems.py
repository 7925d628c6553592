"""The simulated systems as the performance model sees them: chips, harvested grids, Ethernet links.

Grids come from :mod:`meshnn.device.arch` (the same systems the simulator opens).  Links are read
from the boards' cluster descriptors (tt-umd tests/cluster_descriptor_examples/):
``wormhole_N300.yaml`` has 2 Ethernet links between its two chips; ``t3k_cluster_desc.yaml`` has 10
chip pairs with 2 links each, the edges of a 2x4 grid; ``6u_cluster_desc.yaml`` has 52 pairs with 4
links each, the edges of an 8x4 grid with no wraparound; ``blackhole_P300_both_mmio.yaml`` has one
pair with 2 links.  Usable links are fewer where remote chips are reached through an Ethernet tunnel:
one routing plane per tunneled direction is reserved for fast dispatch, and a collective gets the
minimum over its hops [tt-metal: tech_reports/CCLs/CCL_bandwidth.md; EthernetMultichip/
BasicEthernetGuide.md].
"""

from __future__ import annotations

from dataclasses import dataclass

from meshnn.device.arch import SYSTEMS, SystemSpec
from meshnn.errors import MeshnnValueError
from meshnn.perf.hardware import ArchPerf, arch_perf


@dataclass(frozen=True, slots=True)
class SystemPerf:
    """One system: its chips' figures, grids and the Ethernet links between adjacent chips."""

    spec: SystemSpec
    arch: ArchPerf
    links_per_hop: int  # physical Ethernet links between two adjacent chips
    usable_links: int  # links a collective gets per hop (after the dispatch reservation)
    ring_lengths: frozenset[int]  # device counts of a line whose two ends are also linked
    dram_scale: float  # DRAM speed relative to the arch table (Galaxy runs 14 GT/s, not 12)
    source: str

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def compute_cores(self) -> int:
        """Tensix cores an op may use: the harvested compute-with-storage grid."""
        return self.spec.compute_grid[0] * self.spec.compute_grid[1]

    @property
    def dram_sharded_bytes_per_s(self) -> float:
        return self.arch.dram_sharded_bytes_per_s * self.dram_scale

    @property
    def dram_interleaved_bytes_per_s(self) -> float:
        return self.arch.dram_interleaved_bytes_per_s * self.dram_scale

    @property
    def dram_page_write_bytes_per_s(self) -> float | None:
        """The rate DRAM-interleaved pages written one at a time land at, at this system's DRAM speed
        (None where the arch has no such figure)."""
        rate = self.arch.dram_page_write_bytes_per_s
        return None if rate is None else rate * self.dram_scale

    def closes_ring(self, devices: int) -> bool:
        """True when a line of ``devices`` chips also has the link from its last chip to its first."""
        return devices in self.ring_lengths


_T3K = (
    "t3k_cluster_desc.yaml: 2 links between adjacent chips (10 pairs = a 2x4 grid); the CCL report "
    "normalises T3000 (LoudBox) lines by 1 link: one of the 2 is reserved for dispatch on tunneled hops; "
    "the wraparound exists only across all eight devices (the perimeter of the 2x4 grid)"
)
_GALAXY = (
    "6u_cluster_desc.yaml: 4 links between adjacent chips (52 pairs = an 8x4 grid, no wraparound); every "
    "chip is PCIe-attached (chips_with_mmio lists all 32), so none is reserved; 14 GT/s DRAM "
    "(tt-mlir TTNNCollectPerfMetrics.cpp: WH Galaxy 336 GB/s vs 288)"
)

_LINKS: dict[str, tuple[int, int, frozenset[int], float, str]] = {
    "n150": (0, 0, frozenset(), 1.0, "wormhole_N150.yaml: one chip, no Ethernet connections"),
    "n300": (
        2,
        1,
        frozenset(),
        1.0,
        "wormhole_N300.yaml: 2 links between the two chips; BasicEthernetGuide.md: one is reserved "
        "for dispatch to the remote chip, leaving 100 Gb/s per direction to user kernels",
    ),
    "t3k": (2, 1, frozenset({8}), 1.0, _T3K),
    "galaxy": (4, 4, frozenset(), 336 / 288, _GALAXY),
    "p150": (0, 0, frozenset(), 1.0, "blackhole_P150.yaml: one chip, no Ethernet connections"),
    "p300": (
        2,
        2,
        frozenset(),
        1.0,
        "blackhole_P300_both_mmio.yaml: 2 links between the two chips; both chips are PCIe-attached",
    ),
}


def system_perf(name: str) -> SystemPerf:
    """The performance view of the simulated system called ``name`` (``n150`` ... ``p300``)."""
    key = name.lower() if isinstance(name, str) else name
    if key not in SYSTEMS or key not in _LINKS:
        raise MeshnnValueError(f"unknown system {name!r}; known systems: {', '.join(SYSTEMS)}")
    spec = SYSTEMS[key]
    links, usable, rings, scale, source = _LINKS[key]
    return SystemPerf(spec, arch_perf(spec.arch_spec.arch), links, usable, rings, scale, source)


@dataclass(frozen=True, slots=True)
class Machine:
    """A system with the mesh shape a program opened on it (a T3000 may be opened 2x4 or 1x8)."""

    system: SystemPerf
    mesh_shape: tuple[int, int]

    def __post_init__(self) -> None:
        rows, cols = self.mesh_shape
        if rows < 1 or cols < 1 or rows * cols > self.system.spec.num_devices:
            raise MeshnnValueError(
                f"mesh shape {self.mesh_shape} does not fit {self.system.name} ({self.system.spec.num_devices} devices)"
            )

    @property
    def num_devices(self) -> int:
        return self.mesh_shape[0] * self.mesh_shape[1]


def machine(system: str | SystemPerf | Machine, mesh_shape: tuple[int, int] | None = None) -> Machine:
    """A :class:`Machine` from a system name or view; the mesh shape defaults to the system's own."""
    if isinstance(system, Machine):
        return system if mesh_shape is None else Machine(system.system, tuple(mesh_shape))
    view = system if isinstance(system, SystemPerf) else system_perf(system)
    shape = tuple(mesh_shape) if mesh_shape is not None else view.spec.mesh_shape
    return Machine(view, (int(shape[0]), int(shape[1])))
