"""The ring reduce_scatter of before tt-metal #41522 (meshnn.perf.ring_rs_dated): N-1 steps where today's program
takes N/2 hops, no one-shot program, only where marked, and the whole-model rows of before that date marked."""

from __future__ import annotations

import dataclasses

import pytest

from meshnn.device.arch import Arch
from meshnn.perf import CollectiveConfig, OpDesc, OpFamily, TensorDesc, Topology, machine, predict
from meshnn.perf.fabric import fabric_perf
from meshnn.perf.recorder import Recorder
from meshnn.perf.ring_rs_dated import (
    HALF_SLICE_STEP_NS,
    RING_RS_PROGRAM_ATTRIBUTE,
    RingReduceScatterProgram,
    half_slices,
    marked,
)

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
