"""Architectures and systems as data: the figures tt-metal's allocator is built from.

Every figure is bytes unless its name says otherwise.  The figures are those of the soc and core
descriptors that ttnn 0.81.1 ships, as its mock devices report them (see the golden allocator
data): a Wormhole B0 DRAM bank is one 1 GiB DRAM view of which the first ``dram_unreserved_base``
bytes are reserved; an L1 bank is one Tensix core's L1 above ``l1_unreserved_base``.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import os
from dataclasses import dataclass

from meshnn.device.visible import VISIBLE_ENV, parse_visible, visible_box
from meshnn.errors import MeshnnTypeError, MeshnnValueError

GiB = 1 << 30


class Arch(enum.Enum):
    """Chip architectures (``ttnn.Arch``)."""

    WORMHOLE_B0 = "wormhole_b0"
    BLACKHOLE = "blackhole"

    def __str__(self) -> str:
        return f"Arch.{self.name}"


@dataclass(frozen=True, slots=True)
class ArchSpec:
    """The memory figures of one chip architecture."""

    arch: Arch
    num_dram_banks: int
    dram_view_size: int  # bytes of one DRAM view (= one DRAM bank)
    dram_bank_offsets: tuple[int, ...]  # offset of each bank inside its channel
    dram_unreserved_base: int  # first allocatable DRAM address in every bank
    dram_alignment: int
    l1_alignment: int
    worker_l1_size: int  # L1 bytes per Tensix core
    l1_unreserved_base: int  # first allocatable L1 address (aligned to the DRAM alignment)
    max_worker_l1_unreserved: int  # ``get_max_worker_l1_unreserved_size``

    @property
    def l1_bank_size(self) -> int:
        """Allocatable L1 bytes per bank when no L1_SMALL region is carved out."""
        return self.worker_l1_size - self.l1_unreserved_base

    @property
    def dram_bank_size(self) -> int:
        """Allocatable DRAM bytes per bank when no TRACE region is carved out."""
        return self.dram_view_size - self.dram_unreserved_base


WORMHOLE_B0 = ArchSpec(
    arch=Arch.WORMHOLE_B0,
    num_dram_banks=12,  # 6 channels x 2 views
    dram_view_size=GiB,
    dram_bank_offsets=tuple((bank % 2) * GiB for bank in range(12)),
    dram_unreserved_base=1_048_640,
    dram_alignment=32,
    l1_alignment=16,
    worker_l1_size=1_499_136,
    l1_unreserved_base=105_824,
    max_worker_l1_unreserved=1_463_968,
)

BLACKHOLE = ArchSpec(
    arch=Arch.BLACKHOLE,
    num_dram_banks=8,
    dram_view_size=4_278_190_080,
    dram_bank_offsets=(0,) * 8,
    dram_unreserved_base=1_048_704,
    dram_alignment=64,
    l1_alignment=16,
    worker_l1_size=1_572_864,
    l1_unreserved_base=111_744,
    max_worker_l1_unreserved=1_531_776,
)


@dataclass(frozen=True, slots=True)
class SystemSpec:
    """A simulated system: which chips, how many, and each chip's Tensix grids.

    ``worker_grid`` is the logical Tensix grid after harvesting; ``compute_grid`` is the
    compute-with-storage grid (dispatch cores excluded), one L1 bank per core.  Grids are (x, y).
    """

    name: str
    description: str
    arch_spec: ArchSpec
    mesh_shape: tuple[int, int]
    worker_grid: tuple[int, int]
    compute_grid: tuple[int, int]
    pcie_devices: int = 1  # chips reached over PCIe (MMIO); the others are reached over Ethernet

    @property
    def num_devices(self) -> int:
        return self.mesh_shape[0] * self.mesh_shape[1]

    @property
    def num_l1_banks(self) -> int:
        return self.compute_grid[0] * self.compute_grid[1]


SYSTEMS: dict[str, SystemSpec] = {
    spec.name: spec
    for spec in (
        SystemSpec("n150", "Wormhole N150 card, one chip", WORMHOLE_B0, (1, 1), (8, 9), (8, 8), 1),
        SystemSpec("n300", "Wormhole N300 card, two chips", WORMHOLE_B0, (1, 2), (8, 8), (8, 8), 1),
        SystemSpec("t3k", "T3000: four N300 cards", WORMHOLE_B0, (2, 4), (8, 8), (8, 8), 4),
        SystemSpec("galaxy", "Wormhole Galaxy (6U)", WORMHOLE_B0, (8, 4), (8, 10), (8, 9), 32),
        SystemSpec("p150", "Blackhole P150 card, one chip", BLACKHOLE, (1, 1), (12, 10), (11, 10), 1),
        SystemSpec("p300", "Blackhole P300 card, two chips", BLACKHOLE, (1, 2), (12, 10), (11, 10), 2),
    )
}

DEFAULT_SYSTEM = "t3k"
SYSTEM_ENV = "MESHNN_SYSTEM"


def system_spec(name: str | None = None) -> SystemSpec:
    """The system called ``name``; without a name, ``$MESHNN_SYSTEM`` or ``t3k``; with
    ``$TT_VISIBLE_DEVICES``, the part of it those PCIe devices reach (:func:`visible_part`)."""
    whole = _named_system(name)
    text = os.environ.get(VISIBLE_ENV, "").strip()
    return visible_part(whole, text) if text else whole


@functools.lru_cache(maxsize=64)
def visible_part(spec: SystemSpec, text: str) -> SystemSpec:
    """``spec`` seen through ``TT_VISIBLE_DEVICES=text`` (:mod:`meshnn.device.visible`): the box of
    chips those PCIe devices reach, its own system of that shape (the same name and chips)."""
    _, shape = visible_box(spec.name, spec.mesh_shape, spec.pcie_devices, text)
    pcie = len(parse_visible(text))
    if shape == spec.mesh_shape:
        return spec
    described = f"{spec.description}; {shape[0]}x{shape[1]} of it visible ({VISIBLE_ENV}={text})"
    return dataclasses.replace(spec, description=described, mesh_shape=shape, pcie_devices=pcie)


def _named_system(name: str | None) -> SystemSpec:
    if name is not None and not isinstance(name, str):
        raise MeshnnTypeError(f"system must be a system name (str), got {name!r}")
    chosen = name if name is not None else os.environ.get(SYSTEM_ENV, DEFAULT_SYSTEM)
    try:
        return SYSTEMS[chosen.lower()]
    except (KeyError, AttributeError):
        known = ", ".join(SYSTEMS)
        origin = "system=" if name is not None else f"${SYSTEM_ENV}="
        raise MeshnnValueError(f"unknown system {origin}{chosen!r}; known systems: {known}") from None
