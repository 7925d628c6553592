"""The ring reduce_scatter of before tt-metal #41522 (meshnn.perf.dated_collectives): N-1 steps where today's program
takes N/2 hops, no one-shot program, only where marked, and the whole-model rows of before that date marked."""

from __future__ import annotations

import dataclasses

import pytest

from meshnn.device.arch import Arch
from meshnn.perf import CollectiveConfig, OpDesc, OpFamily, TensorDesc, Topology, machine, predict
from meshnn.perf.dated_collectives import (
    GATHER_PROGRAM_ATTRIBUTE,
    HALF_SLICE_STEP_NS,
    RING_RS_PROGRAM_ATTRIBUTE,
    GatherProgram,
    RingReduceScatterProgram,
    half_slices,
    marked,
    relay_crossing_ns,
)
from meshnn.perf.fabric import fabric_perf
from meshnn.perf.hardware import arch_perf
from meshnn.perf.recorder import Recorder

from . import published_ccl_ci as ccl
from .published_ccl import BH_GALAXY
from .published_ccl_dated import half_slice_desc
from .test_tt_llama_settings import load

T3K = machine("t3k", (1, 8))
OLD = RingReduceScatterProgram.HALF_SLICES


def kernel_us(desc: OpDesc, m=T3K) -> float:
    return predict(desc, m, traced=True).kernel_ns / 1e3


def unmarked(desc: OpDesc) -> OpDesc:
    return dataclasses.replace(desc, attributes=())


@pytest.mark.parametrize("width", [256, 3584])
def test_the_old_ring_takes_n_minus_1_steps_where_today_takes_n_over_2_hops(width):
    """Against today's ring program without its one-shot path (reduce_scatter_minimal_async): the same transfer, the
    start-up 7 steps of the fitted step instead of 4 of the report's ring hop."""
    old = half_slice_desc((1, 1, 32, width))
    today = unmarked(half_slice_desc((1, 1, 32, width), name="ttnn.experimental.reduce_scatter_minimal_async"))
    fabric = fabric_perf(Arch.WORMHOLE_B0)
    added = 7 * HALF_SLICE_STEP_NS[Arch.WORMHOLE_B0] - 4 * fabric.hop_ns[(OpFamily.REDUCE_SCATTER, Topology.RING)]
    assert kernel_us(old) - kernel_us(today) == pytest.approx(added / 1e3, rel=1e-9)


def test_the_old_ring_never_takes_the_one_shot_program():
    """ttnn.reduce_scatter today takes the one-shot program up to 512 KiB a device (2.3x the bytes); the program of
    before 2026-04 had none: marked, ttnn.reduce_scatter and reduce_scatter_minimal_async time the same."""
    shape = (1, 1, 32, 3584)
    by_name = kernel_us(half_slice_desc(shape))
    minimal = kernel_us(half_slice_desc(shape, name="ttnn.experimental.reduce_scatter_minimal_async"))
    assert by_name == minimal


def test_a_line_a_blackhole_ring_and_an_unmarked_op_run_as_today():
    ring = half_slice_desc((1, 1, 32, 1024))
    line = dataclasses.replace(ring, collective=CollectiveConfig(Topology.LINEAR, cluster_axis=1))
    assert kernel_us(line) == kernel_us(unmarked(line))
    bh = machine(BH_GALAXY, (1, 8))
    assert not half_slices(ring, Arch.BLACKHOLE)
    assert kernel_us(ring, bh) == kernel_us(unmarked(ring), bh)
    assert kernel_us(ring) > kernel_us(unmarked(ring))


def test_only_reduce_scatters_without_a_program_of_their_own_are_marked():
    rs = half_slice_desc((1, 1, 32, 256))
    assert (RING_RS_PROGRAM_ATTRIBUTE, OLD.value) in rs.attributes
    assert marked(rs, OLD).attributes == rs.attributes  # marked once
    llama = dataclasses.replace(unmarked(rs), op_code="LlamaReduceScatterDeviceOperation")
    assert marked(llama, OLD) is llama
    gather = OpDesc(OpFamily.ALL_GATHER, (TensorDesc((1, 1, 32, 32)),), (TensorDesc((1, 1, 32, 256)),))
    assert marked(gather, OLD) is gather


def test_perf_model_times_its_dated_rows_ring_reduce_scatters_by_the_old_program():
    """benchmarks/perf_model.py's rows (PERF.md, README: all before 2026-04-09) re-time a T3000 ring reduce_scatter
    by the program of their date; the rest of a step is as it was."""
    perf_model = load("perf_model")
    recorder = Recorder(T3K)
    rs = unmarked(half_slice_desc((1, 1, 32, 3072)))
    add = OpDesc(OpFamily.BINARY, (TensorDesc((1, 1, 32, 384)),) * 2, (TensorDesc((1, 1, 32, 384)),))
    recorder.record(add)
    recorder.record(rs)
    again = perf_model.dated(recorder, None, traced=True)
    assert [dict(r.desc.attributes).get(RING_RS_PROGRAM_ATTRIBUTE) for r in again.records] == [None, OLD.value]
    today = recorder.retimed(traced=True)
    assert again.records[0].prediction.kernel_ns == today.records[0].prediction.kernel_ns
    assert again.records[1].prediction.kernel_ns > today.records[1].prediction.kernel_ns


def relay_gather(topology: Topology, relay: bool = True, aligned: bool = False) -> OpDesc:
    """The Galaxy tail's top-32 gather: one bfloat16 tile a device over the 8 devices of axis 0, into DRAM."""
    part, whole = ccl._tensor((1, 1, 32, 32)), ccl._tensor((1, 1, 32, 256))
    config = CollectiveConfig(topology, cluster_axis=0, num_links=1, aligned=aligned)
    marks = ((GATHER_PROGRAM_ATTRIBUTE, GatherProgram.RELAY.value),) if relay else ()
    return OpDesc(OpFamily.ALL_GATHER, (part,), (whole,), collective=config, attributes=marks)


@pytest.mark.parametrize(("topology", "crossings"), [(Topology.RING, 4), (Topology.LINEAR, 7)])
def test_the_relay_gather_starts_with_a_launch_and_its_farthest_slices_crossings(topology, crossings):
    """Against today's program of the same bytes: the same transfer, the start-up the op's launch and N/2 (ring) or
    N-1 (line) crossings, each a tile's waited read, its packet's write, the hop, its landing and the semaphore."""
    wh, g6 = arch_perf("wormhole_b0"), ccl._g6()
    fabric = fabric_perf(Arch.WORMHOLE_B0)
    family = OpFamily.ALL_GATHER
    hops = 4 if topology is Topology.RING else 7
    today_startup = fabric.invocation_ns[family] + hops * fabric.hop_ns[(family, topology)]
    relay_startup = wh.op_launch_ns + crossings * relay_crossing_ns(wh, relay_gather(topology))
    delta = kernel_us(relay_gather(topology), g6) - kernel_us(relay_gather(topology, relay=False), g6)
    assert delta == pytest.approx((relay_startup - today_startup) / 1e3, rel=1e-9)


def test_a_relay_crossing_is_its_parts():
    """One crossing of a 2 KiB tile into DRAM on Wormhole: 445 + 68.3 cycles of waited read, 140 + 68.3 of the packet's
    write, 275.5 of the DRAM write's acknowledgement (at 1 GHz), the 711 ns hop and a 1 / 3.05 Mpps packet."""
    crossing = relay_crossing_ns(arch_perf("wormhole_b0"), relay_gather(Topology.RING))
    parts = 445 + 2048 / 30 + 140 + 2048 / 30 + 275.5 + 711 + 1e9 / 3.05e6
    assert crossing == pytest.approx(parts, rel=1e-9)


def test_a_relay_gather_right_behind_another_collective_saves_no_skew():
    """The relay program has no entry barrier: aligned or alone it costs the same; today's saves the ring's skew."""
    g6 = ccl._g6()
    assert kernel_us(relay_gather(Topology.RING, aligned=True), g6) == kernel_us(relay_gather(Topology.RING), g6)
    today_alone = kernel_us(relay_gather(Topology.RING, relay=False), g6)
    assert kernel_us(relay_gather(Topology.RING, relay=False, aligned=True), g6) < today_alone
