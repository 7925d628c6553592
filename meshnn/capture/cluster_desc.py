"""The simulated system's cluster as a hardware run's report describes it: ``cluster_descriptor.yaml``
(tt-umd's cluster descriptor: each chip's arch and place, the Ethernet links between chips by
channel, the chips reached over PCIe) and ``physical_chip_mesh_coordinate_mapping.yaml`` (each
chip's mesh coordinate, as tt-metal's control plane writes it); ttnn-visualizer's Topology page
draws the chips at their mesh coordinates and the links between them.

Chips are named by meshnn's device ids: the system's devices row-major over its mesh, so device
``i`` sits at ``divmod(i, columns)`` of the system's mesh (``(row, column)``).  The links are the
boards' own, from their public cluster descriptors (tt-umd tests/cluster_descriptor_examples/),
placed on that grid:

- N300 (``wormhole_N300.yaml``): its two chips joined by channels 8, 9 of the PCIe chip and 0, 1 of
  the other;
- T3000 (``t3k_cluster_desc.yaml``): four N300 cards side by side as a 2x4 grid, every pair of
  neighbours joined by 2 channels (:data:`T3K_LINKS`; the cards' PCIe chips are the middle columns);
- Galaxy 6U (``6u_cluster_desc.yaml``): an 8x4 grid, no wraparound, every pair of neighbours joined
  by 4 channels; a chip uses channels 8-11 towards the middle rows (between rows 3 and 4) and 4-7
  away from them, 12-15 towards the middle columns and 0-3 away; every chip is on PCIe;
- P300 (``blackhole_P300_both_mmio.yaml``): channels 2, 3 of chip 0 to 9, 8 of chip 1, both on PCIe;
- N150 and P150: one chip, no links.

``chips_with_mmio`` maps each PCIe chip to its PCIe device number; the simulated host numbers them
by chip id (ttnn-visualizer marks the chips by those numbers).  Harvesting and chip unique ids are
board-specific and not written (meshnn's grids are the logical, harvested ones).

``serialize_cluster_descriptor`` (``ttnn.cluster``'s) writes the descriptor of the system in use to a file.

Layers: imports nothing of meshnn but the device layer's system specs.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from meshnn.device.arch import Arch, SystemSpec, system_spec

Place = tuple[int, int]
"""A chip's place on its system's mesh: (row, column)."""

Link = tuple[Place, tuple[int, ...], Place, tuple[int, ...]]
"""Two neighbouring chips and the Ethernet channels each uses, pairwise (channel i to channel i)."""

T3K_LINKS: tuple[Link, ...] = (
    ((0, 0), (0, 1), (0, 1), (8, 9)),  # card 1: its PCIe chip is (0, 1)
    ((0, 1), (6, 7), (0, 2), (6, 7)),
    ((0, 2), (8, 9), (0, 3), (0, 1)),  # card 3: its PCIe chip is (0, 2)
    ((1, 0), (0, 1), (1, 1), (8, 9)),  # card 2
    ((1, 1), (0, 1), (1, 2), (0, 1)),
    ((1, 2), (8, 9), (1, 3), (0, 1)),  # card 4
    ((0, 0), (6, 7), (1, 0), (6, 7)),
    ((0, 1), (14, 15), (1, 1), (14, 15)),
    ((0, 2), (14, 15), (1, 2), (14, 15)),
    ((0, 3), (6, 7), (1, 3), (6, 7)),
)
T3K_PCIE: tuple[Place, ...] = ((0, 1), (1, 1), (0, 2), (1, 2))


def galaxy_links(rows: int = 8, cols: int = 4) -> tuple[Link, ...]:
    """The 6U Galaxy's grid links (see the module docstring for the channel rule)."""

    def channels(place: int, other: int, middle: float, toward: int, away: int) -> tuple[int, ...]:
        first = toward if abs(other - middle) <= abs(place - middle) else away
        return tuple(range(first, first + 4))

    mid_row, mid_col = (rows - 1) / 2, (cols - 1) / 2
    links: list[Link] = []
    for r in range(rows):
        for c in range(cols):
            if c + 1 < cols:
                links.append(
                    ((r, c), channels(c, c + 1, mid_col, 12, 0), (r, c + 1), channels(c + 1, c, mid_col, 12, 0))
                )
            if r + 1 < rows:
                links.append(((r, c), channels(r, r + 1, mid_row, 8, 4), (r + 1, c), channels(r + 1, r, mid_row, 8, 4)))
    return tuple(links)


def system_links(spec: SystemSpec) -> tuple[Link, ...]:
    """The Ethernet links of the system's chips, by place."""
    if spec.name == "n300":
        return (((0, 0), (8, 9), (0, 1), (0, 1)),)
    if spec.name == "p300":
        return (((0, 0), (2, 3), (0, 1), (9, 8)),)
    if spec.name == "t3k":
        return T3K_LINKS
    if spec.name == "galaxy":
        return galaxy_links(*spec.mesh_shape)
    return ()


def pcie_places(spec: SystemSpec) -> tuple[Place, ...]:
    """The chips a host reaches over PCIe (the others through Ethernet)."""
    if spec.name == "t3k":
        return T3K_PCIE
    cols = spec.mesh_shape[1]
    return tuple(divmod(i, cols) for i in range(spec.pcie_devices))


def place_of(spec: SystemSpec, device_id: int) -> Place:
    return divmod(device_id, spec.mesh_shape[1])


def device_of(spec: SystemSpec, place: Place) -> int:
    return place[0] * spec.mesh_shape[1] + place[1]


_ARCH_NAMES = {Arch.WORMHOLE_B0: "wormhole_b0", Arch.BLACKHOLE: "blackhole"}
_BOARDS = {"n150": "n150", "n300": "n300", "t3k": "n300", "galaxy": "ubb", "p150": "p150", "p300": "p300"}


def cluster_descriptor(spec: SystemSpec) -> str:
    """``cluster_descriptor.yaml`` of the whole system (YAML as tt-umd writes it)."""
    ids = range(spec.num_devices)
    arch = _ARCH_NAMES.get(spec.arch_spec.arch, spec.arch_spec.arch.value)
    lines = ["arch:", *(f"  {i}: {arch}" for i in ids), "chips:"]
    lines += [f"  {i}: [{place_of(spec, i)[1]}, {place_of(spec, i)[0]}, 0, 0]" for i in ids]
    lines.append("ethernet_connections:" + ("" if system_links(spec) else " []"))
    for a, channels_a, b, channels_b in system_links(spec):
        for chan_a, chan_b in zip(channels_a, channels_b, strict=True):
            lines.append(
                f"  - [{{chip: {device_of(spec, a)}, chan: {chan_a}}}, {{chip: {device_of(spec, b)}, chan: {chan_b}}}]"
            )
    lines.append("ethernet_connections_to_remote_devices: []")
    pcie = sorted(device_of(spec, p) for p in pcie_places(spec))
    lines += ["chips_with_mmio:", *(f"  - {chip}: {chip}" for chip in pcie)]
    lines += ["boards:", *_board_lines(spec)]
    return "\n".join(lines) + "\n"


def _board_lines(spec: SystemSpec) -> list[str]:
    """One board per card: a T3000's four N300 cards are pairs of neighbours in a row."""
    ids = list(range(spec.num_devices))
    if spec.name == "t3k":
        cards = [[device_of(spec, (r, c)), device_of(spec, (r, c + 1))] for r in range(2) for c in (0, 2)]
    else:
        cards = [ids]
    board = _BOARDS.get(spec.name, spec.name)
    return [f"  - [{{board_type: {board}}}, {{chips: {card}}}]" for card in cards]


def mesh_coordinate_mapping(spec: SystemSpec) -> str:
    """``physical_chip_mesh_coordinate_mapping.yaml``: each chip's (row, column) on the system's mesh."""
    lines = ["chips:", *(f"  {i}: [{place_of(spec, i)[0]}, {place_of(spec, i)[1]}]" for i in range(spec.num_devices))]
    return "\n".join(lines) + "\n"


def serialize_cluster_descriptor() -> str:
    """``ttnn.cluster.serialize_cluster_descriptor()``: the simulated system's ``cluster_descriptor.yaml``
    written where tt-umd writes one given no path (a new ``umd_*`` folder in the temporary directory);
    returns the file's path."""
    path = Path(tempfile.mkdtemp(prefix="umd_")) / "cluster_descriptor.yaml"
    path.write_text(cluster_descriptor(system_spec()))
    return str(path)
