"""The collective model: the fabric's figures have sources, an all_reduce is its reduce_scatter plus
its all_gather, num_links beyond the usable links is clamped and said so, and a collective right
behind another on the same devices skips the launch skew."""

from __future__ import annotations

import itertools

import pytest

from meshnn.device.arch import Arch
from meshnn.perf import CollectiveConfig, OpDesc, OpFamily, Recorder, Topology, predict
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


# --- launch skew: a collective right behind another on the same devices -------------------------


def _run(*descs, system="t3k", mesh=(1, 8), traced=True, devices=None):
    recorder = Recorder(system, mesh)
    for desc in descs:
        recorder.record(desc, devices, traced=traced)
    return recorder.records


def test_a_collective_behind_another_skips_the_launch_skew_each_phase():
    """FULL_wormhole's back-to-back rows: the second call starts with its devices aligned, and saves
    its topology's skew a phase (the ring's fabric more than a line's)."""
    skews = FABRICS[Arch.WORMHOLE_B0].launch_skew_ns
    assert skews[Topology.RING] > skews[Topology.LINEAR] > 0
    families = ((OpFamily.ALL_GATHER, 1), (OpFamily.REDUCE_SCATTER, 1), (OpFamily.ALL_REDUCE, 2))
    for (family, phases), topology in itertools.product(families, (Topology.RING, Topology.LINEAR)):
        desc = _collective(family, 16 << 10, 8, topology=topology)
        first, second = _run(desc, desc)
        saved = first.prediction.kernel_ns - second.prediction.kernel_ns
        assert saved == pytest.approx(phases * skews[topology])
        assert any("no launch skew" in note for note in second.prediction.notes)
        assert second.desc == desc  # the record keeps the op as it was run


def test_a_call_alone_or_after_other_work_waits_out_the_skew():
    """An op between the two collectives, another device set, or an eager call the host is behind on
    leaves the second call timed as a call alone."""
    ag = _collective(OpFamily.ALL_GATHER, 16 << 10, 8, topology=Topology.RING)
    alone = predict(ag, "t3k", mesh_shape=(1, 8), traced=True).kernel_ns
    add = OpDesc(OpFamily.BINARY, (row_bytes(16 << 10),) * 2, (row_bytes(16 << 10),))
    assert _run(ag, add, ag)[-1].prediction.kernel_ns == alone
    ag4 = _collective(OpFamily.ALL_GATHER, 16 << 10, 4)
    ag4_alone = predict(ag4, "t3k", mesh_shape=(1, 8), traced=True).kernel_ns
    recorder = Recorder("t3k", (1, 8))
    recorder.record(ag4, (0, 1, 2, 3), traced=True)
    assert recorder.record(ag4, (4, 5, 6, 7), traced=True).prediction.kernel_ns == ag4_alone
    small = _collective(OpFamily.ALL_GATHER, 4 << 10, 2)
    eager = _run(small, small, system="n300", mesh=(1, 2), traced=False)
    assert eager[1].prediction.gap_ns > 1000  # the host (49 us an op) is behind a 10 us kernel
    assert eager[1].prediction.kernel_ns == eager[0].prediction.kernel_ns


def test_blackhole_has_no_back_to_back_measurement_and_no_saving():
    desc = _collective(OpFamily.ALL_GATHER, 16 << 10, 2)
    first, second = _run(desc, desc, system="p300", mesh=(1, 2))
    assert set(FABRICS[Arch.BLACKHOLE].launch_skew_ns.values()) == {0.0}
    assert second.prediction.kernel_ns == first.prediction.kernel_ns
