"""``$TT_VISIBLE_DEVICES``: the PCIe devices a process may use, and the system it then sees.

As in tt-metal (tt-umd), ``TT_VISIBLE_DEVICES`` is a comma-separated list of PCIe device numbers
(``/dev/tenstorrent/<n>``); the process sees those chips and the chips reached over Ethernet from
them on the same card, and nothing else.  tt-run sets it per rank from a rank binding's
``env_overrides`` to split one host's chips between ranks.  meshnn's simulated host numbers its
PCIe chips by chip id (the system's devices row-major over its mesh):

- T3000: the four N300 cards' PCIe chips are devices 1, 2, 5 and 6; PCIe device 0 is card 1
  (devices 0, 1), 1 is card 3 (devices 2, 3), 2 is card 2 (devices 4, 5), 3 is card 4 (devices 6, 7);
- Galaxy: every chip is a PCIe device; PCIe device n sits where tt-metal's Wormhole Galaxy puts
  chip n (``_GALAXY_PCIE``: each row of the 8x4 mesh, left to right).  That layout is the one
  tt-metal's own rank bindings cut into boxes (``tests/tt_metal/distributed/config/
  dual_4x4_rank_bindings.yaml``: rows 0-3 and 4-7; ``dual_8x2_rank_bindings.yaml``: columns 0-1
  and 2-3), and each of its 52 neighbouring pairs is an Ethernet link of tt-metal's 6U cluster
  descriptor (``custom_mock_cluster_descriptors/6u_cluster_desc.yaml``).  A box that needs the
  torus's wrap-around links (tt-metal's ``wh_galaxy_2x4_rank_bindings.yaml``) is not a box here;
- P300: both chips are PCIe devices, numbered as the chip;
- N150, N300, P150: PCIe device 0 is the whole card.

The chips seen must make a box of the system's mesh (rows x columns, as a mesh of tt-metal's
must); the process's system is then that box: ``get_num_devices()`` its chips, ids 0, 1, ...
row-major over it (device 0 is the box's first chip, as tt-metal numbers the visible chips from
0), ``open_mesh_device()`` its shape.  A number that is not a PCIe device of the system, a repeat,
text that is not a list of numbers, or chips that make no box, raise naming the variable.

Layers: imports errors only (the systems are given by the caller).
"""

from __future__ import annotations

from collections.abc import Sequence

from meshnn.errors import MeshnnValueError

VISIBLE_ENV = "TT_VISIBLE_DEVICES"

_T3K_CARDS = ((0, 1), (2, 3), (4, 5), (6, 7))  # by PCIe device number: the card's two chips
_GALAXY_PCIE = (
    (0, 16, 19, 3),
    (4, 20, 23, 7),
    (8, 24, 27, 11),
    (12, 28, 31, 15),
    (14, 30, 29, 13),
    (10, 26, 25, 9),
    (6, 22, 21, 5),
    (2, 18, 17, 1),
)
"""The Wormhole Galaxy's PCIe device numbers by place in its 8x4 mesh (row by row)."""
_GALAXY_CHIP = {device: row * 4 + col for row, line in enumerate(_GALAXY_PCIE) for col, device in enumerate(line)}


def card_chips(system: str, pcie_devices: int, num_devices: int, device: int) -> tuple[int, ...]:
    """The chips (system device ids) that PCIe device ``device`` of ``system`` reaches."""
    if not 0 <= device < pcie_devices:
        raise MeshnnValueError(
            f"{VISIBLE_ENV}: PCIe device {device} is not one of {system}'s {pcie_devices} PCIe devices "
            f"(0..{pcie_devices - 1})"
        )
    if system == "t3k":
        return _T3K_CARDS[device]
    if system == "galaxy":
        return (_GALAXY_CHIP[device],)
    if pcie_devices == num_devices:
        return (device,)
    return tuple(range(num_devices))  # one card: its PCIe chip and its remote one


def parse_visible(text: str) -> tuple[int, ...]:
    """The PCIe device numbers of ``TT_VISIBLE_DEVICES`` text, in the order given."""
    try:
        devices = tuple(int(part) for part in text.replace(" ", "").split(",") if part != "")
    except ValueError:
        raise MeshnnValueError(f"{VISIBLE_ENV}={text!r}: expected PCIe device numbers separated by commas") from None
    if not devices:
        raise MeshnnValueError(f"{VISIBLE_ENV}={text!r}: names no PCIe device")
    if len(set(devices)) != len(devices):
        raise MeshnnValueError(f"{VISIBLE_ENV}={text!r}: a PCIe device is named twice")
    return devices


def visible_box(
    system: str, mesh_shape: Sequence[int], pcie_devices: int, text: str
) -> tuple[tuple[int, int], tuple[int, int]]:
    """((first row, first column), (rows, columns)) of the box of chips ``text`` makes visible."""
    rows, cols = mesh_shape
    chips = sorted({c for d in parse_visible(text) for c in card_chips(system, pcie_devices, rows * cols, d)})
    places = [divmod(c, cols) for c in chips]
    top, left = min(r for r, _ in places), min(c for _, c in places)
    height, width = max(r for r, _ in places) - top + 1, max(c for _, c in places) - left + 1
    if height * width != len(places):
        raise MeshnnValueError(
            f"{VISIBLE_ENV}={text!r}: the chips it makes visible ({chips} of {system}'s {rows}x{cols} mesh) "
            "are not a box of the system's mesh"
        )
    return (top, left), (height, width)
