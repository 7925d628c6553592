"""llama_reduce_scatter's packet reads and its sum after the last arrival (meshnn.perf.llama_rs_tail)."""

from __future__ import annotations

import pytest

from meshnn.perf.hardware import arch_perf
from meshnn.perf.latency import op_latency
from meshnn.perf.llama_rs_tail import (
    CREATE_HEADS,
    FITTED_WRITE_BYTES,
    output_writes,
    packet_read_ns,
    reduction_tail_ns,
    summed_tiles,
)
from meshnn.perf.traffic import operand_cycles
from meshnn.perf.transpose_hc import FACE_ROW_WRITE, WRITE_BARRIER

WH = arch_perf("wormhole_b0")


def test_a_packet_read_is_the_far_end_latency_and_its_bytes():
    far = op_latency("wormhole_b0").read_trip_cycles(in_dram=False)
    assert packet_read_ns(WH, 0) == WH.cycles_ns(far)
    assert packet_read_ns(WH, 4352) - packet_read_ns(WH, 0) == WH.cycles_ns(4352 / WH.noc_bytes_per_cycle)


def test_the_sum_grows_with_devices_and_pages():
    one = reduction_tail_ns(WH, 1088, 1, 4)
    assert reduction_tail_ns(WH, 1088, 1, 8) > one  # 4 adds a page instead of 2
    assert reduction_tail_ns(WH, 1088, 4, 4) > one
    # with nothing to add or write, the writes' barrier is left
    assert reduction_tail_ns(WH, 0, 0, 4) == WH.cycles_ns(WRITE_BARRIER.cycles())


def test_the_create_heads_write_out_is_a_write_a_half_row():
    # 4 KiB packet: 16 head rows of 256 B, each data-movement core writing half of every one; the plain writer a page
    assert output_writes(CREATE_HEADS, 4096, 2) == 16
    assert output_writes("LlamaReduceScatterDeviceOperation", 4352, 4) == 4


def test_each_write_adds_its_command_beyond_its_bytes():
    issue = FACE_ROW_WRITE.issue_cycles - FITTED_WRITE_BYTES / WH.noc_bytes_per_cycle
    plain = reduction_tail_ns(WH, 2048, 2, 4)
    assert reduction_tail_ns(WH, 2048, 2, 4, writes=2) == plain
    assert reduction_tail_ns(WH, 2048, 2, 4, writes=16) - plain == pytest.approx(WH.cycles_ns(14 * issue), rel=1e-12)


def test_the_create_heads_sum_adds_a_whole_tile_a_block():
    # the 70B's QKV: 32 users over 4 devices, 8x64 blocks of 1 KiB, 4 a 4 KiB packet (2 tiles' bytes)
    assert summed_tiles(CREATE_HEADS, 4096, 2, 32, 4) == 4
    assert summed_tiles("LlamaReduceScatterDeviceOperation", 4352, 4, 32, 4) == 4
    two = reduction_tail_ns(WH, 2048, 2, 4, writes=16)
    four = reduction_tail_ns(WH, 2048, 2, 4, writes=16, summed=4)
    adds = 2 * 2 * (WH.fpu_eltwise_cycles_per_tile + operand_cycles(WH, 2 * 2048))
    assert four - two == pytest.approx(WH.cycles_ns(adds + 2 * 2048 / WH.packer_bytes_per_cycle), rel=1e-12)
