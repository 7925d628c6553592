"""The simulated systems' cluster descriptors: the boards' chips and Ethernet links (facts of the
public tt-umd descriptors, placed on meshnn's device ids), as the report folder writes them."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from meshnn.capture.cluster_desc import (
    cluster_descriptor,
    device_of,
    mesh_coordinate_mapping,
    place_of,
    system_links,
)
from meshnn.device.arch import SYSTEMS

CONNECTION = re.compile(r"  - \[\{chip: (\d+), chan: (\d+)\}, \{chip: (\d+), chan: (\d+)\}\]")
# (system, chip pairs, channels per pair)
BOARDS = [("n150", 0, 0), ("n300", 1, 2), ("t3k", 10, 2), ("galaxy", 52, 4), ("p150", 0, 0), ("p300", 1, 2)]


def connections(text: str) -> list[tuple[int, int, int, int]]:
    return [tuple(int(v) for v in m.groups()) for m in CONNECTION.finditer(text)]


@pytest.mark.parametrize(("name", "pairs", "channels"), BOARDS)
def test_every_link_joins_grid_neighbours_on_channels_of_their_own(name, pairs, channels):
    spec = SYSTEMS[name]
    text = cluster_descriptor(spec)
    found = connections(text)
    assert len(found) == pairs * channels
    per_pair = Counter(tuple(sorted((a, b))) for a, _, b, _ in found)
    assert len(per_pair) == pairs and set(per_pair.values()) <= {channels}
    for a, b in per_pair:
        (ra, ca), (rb, cb) = place_of(spec, a), place_of(spec, b)
        assert abs(ra - rb) + abs(ca - cb) == 1, (a, b)
    used = [(a, chan_a) for a, chan_a, _, _ in found] + [(b, chan_b) for _, _, b, chan_b in found]
    assert len(used) == len(set(used))  # no chip uses a channel twice
    arch = "wormhole_b0" if name in ("n150", "n300", "t3k", "galaxy") else "blackhole"
    assert text.count(f": {arch}\n") == spec.num_devices


def test_the_galaxy_is_an_8x4_grid_with_4_channels_a_link_by_the_boards_rule():
    spec = SYSTEMS["galaxy"]
    links = {(a, b): (ca, cb) for a, ca, b, cb in system_links(spec)}
    assert links[(0, 0), (0, 1)] == ((12, 13, 14, 15), (0, 1, 2, 3))  # towards the middle columns: 12-15
    assert links[(0, 1), (0, 2)] == ((12, 13, 14, 15), (12, 13, 14, 15))
    assert links[(0, 0), (1, 0)] == ((8, 9, 10, 11), (4, 5, 6, 7))  # towards the middle rows: 8-11
    assert links[(3, 2), (4, 2)] == ((8, 9, 10, 11), (8, 9, 10, 11))
    assert links[(6, 3), (7, 3)] == ((4, 5, 6, 7), (8, 9, 10, 11))
    assert "chips_with_mmio:\n" + "".join(f"  - {i}: {i}\n" for i in range(32)) in cluster_descriptor(spec)


def test_the_t3000_is_four_n300_cards_side_by_side():
    spec = SYSTEMS["t3k"]
    text = cluster_descriptor(spec)
    assert (0, 0, 1, 8) in connections(text) and (1, 6, 2, 6) in connections(text)  # a card; between cards
    assert "chips_with_mmio:\n  - 1: 1\n  - 2: 2\n  - 5: 5\n  - 6: 6\n" in text  # each card's PCIe chip
    assert "  - [{board_type: n300}, {chips: [0, 1]}]" in text and "  - [{board_type: n300}, {chips: [6, 7]}]" in text
    assert "  5: [1, 1, 0, 0]" in text  # chip 5 at x 1, y 1
    assert device_of(spec, (1, 2)) == 6


def test_the_mesh_coordinate_mapping_gives_each_chip_its_row_and_column():
    text = mesh_coordinate_mapping(SYSTEMS["galaxy"])
    assert text.splitlines()[0] == "chips:" and "  0: [0, 0]" in text and "  31: [7, 3]" in text
    assert len(text.splitlines()) == 33


@pytest.mark.parametrize("name", ["n300", "t3k"])
def test_serialize_cluster_descriptor_writes_the_system_in_use(monkeypatch, name):
    import meshnn as ttnn

    monkeypatch.setenv("MESHNN_SYSTEM", name)
    path = ttnn.cluster.serialize_cluster_descriptor()
    assert isinstance(path, str) and path.endswith("cluster_descriptor.yaml")
    with open(path) as f:
        assert f.read() == cluster_descriptor(SYSTEMS[name])
    assert ttnn.cluster.serialize_cluster_descriptor() != path  # a new folder each call, as tt-umd's
