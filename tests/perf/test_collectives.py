"""The collective model: the fabric's figures have sources, an all_reduce is its reduce_scatter plus
its all_gather, and num_links beyond the usable links is clamped and said so."""

from __future__ import annotations

import pytest

from meshnn.perf import CollectiveConfig, OpDesc, OpFamily, Topology, predict
from meshnn.perf.fabric import FABRICS

from .published_ccl import row_bytes


@pytest.mark.parametrize("arch", list(FABRICS))
def test_every_fabric_figure_has_a_source(arch):
    table = FABRICS[arch]
    assert table.missing_sources() == []
    assert all(text.strip() for text in table.sources.values())


def _collective(family, size, devices, **config):
    whole, part = row_bytes(size), row_bytes(size // devices)
    ins, outs = {
        OpFamily.ALL_GATHER: ((part,), (whole,)),
        OpFamily.REDUCE_SCATTER: ((whole,), (part,)),
        OpFamily.ALL_REDUCE: ((whole,), (whole,)),
    }[family]
    return OpDesc(family, ins, outs, collective=CollectiveConfig(cluster_axis=1, **config))


@pytest.mark.parametrize("size", [16 << 10, 256 << 10, 4 << 20])
@pytest.mark.parametrize("topology", [Topology.LINEAR, Topology.RING])
def test_all_reduce_is_its_reduce_scatter_then_its_all_gather(size, topology):
    """The CCL report: all_reduce "is a reduce-scatter followed by an all-gather over the same links"."""
    parts = [
        predict(_collective(f, size, 8, topology=topology), "t3k", mesh_shape=(1, 8))
        for f in (OpFamily.REDUCE_SCATTER, OpFamily.ALL_GATHER)
    ]
    whole = predict(_collective(OpFamily.ALL_REDUCE, size, 8, topology=topology), "t3k", mesh_shape=(1, 8))
    assert whole.fixed_ns == pytest.approx(sum(p.fixed_ns for p in parts))
    assert whole.link_ns == pytest.approx(sum(p.link_ns for p in parts))


def test_num_links_beyond_the_usable_ones_is_clamped_and_said():
    """A T3000 has 2 links between neighbours, one of them carrying fast dispatch: num_links=2 runs as 1."""
    asked = predict(_collective(OpFamily.ALL_GATHER, 4 << 20, 8, num_links=2), "t3k", mesh_shape=(1, 8))
    one = predict(_collective(OpFamily.ALL_GATHER, 4 << 20, 8, num_links=1), "t3k", mesh_shape=(1, 8))
    assert asked.kernel_ns == one.kernel_ns
    assert any("num_links=2 asked, 1 usable" in note for note in asked.notes)
    assert not any("num_links" in note for note in one.notes)


def test_more_links_where_the_system_has_them_move_the_bytes_faster():
    """A Galaxy offers 4 links per hop: 4 MiB over 4 links beats 1 link, start-up unchanged."""
    one = predict(_collective(OpFamily.ALL_GATHER, 4 << 20, 4, num_links=1), "galaxy", mesh_shape=(1, 4))
    four = predict(_collective(OpFamily.ALL_GATHER, 4 << 20, 4, num_links=4), "galaxy", mesh_shape=(1, 4))
    assert four.fixed_ns == one.fixed_ns and four.link_ns < one.link_ns / 2
