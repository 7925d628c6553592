"""A direct collective's sender core issues its packets one at a time at the EDM's per-packet rate
(meshnn.perf.collectives.sender_packets, FabricPerf.packet_ns from tt-metal's EDM bandwidth goldens): the
link's time is its bytes at the line rate or its sender's packets at that rate, whichever is longer."""

from __future__ import annotations

import pytest

from meshnn.perf import (
    BufferType,
    CollectiveConfig,
    Fabric,
    MemoryLayout,
    OpDesc,
    OpFamily,
    TensorDesc,
    Topology,
    predict,
)
from meshnn.perf.collectives import FABRIC_PACKET_BYTES, direct_phase, is_llama_gather, sender_packets
from meshnn.perf.fabric import FABRICS, fabric_perf
from meshnn.perf.systems import Machine

from .published_ccl_ci import GALAXY_6U

GATHER = "ttnn.experimental.all_gather_async"
RS_CODE = "LlamaReduceScatterDeviceOperation"
L1 = BufferType.L1


def _gather(shape, dtype, memory, devices=4):
    part = TensorDesc(shape, dtype, buffer=L1, memory=memory)
    whole = TensorDesc((*shape[:-1], shape[-1] * devices), dtype, buffer=L1, memory=memory)
    config = CollectiveConfig(Topology.RING, cluster_axis=1, num_links=4)
    return OpDesc(OpFamily.ALL_GATHER, (part,), (whole,), name=GATHER, collective=config)


def _scatter(shape, dtype):
    whole = TensorDesc(shape, dtype, buffer=L1, memory=MemoryLayout.WIDTH_SHARDED)
    part = TensorDesc((*shape[:-1], shape[-1] // 4), dtype, buffer=L1, memory=MemoryLayout.WIDTH_SHARDED)
    config = CollectiveConfig(Topology.RING, cluster_axis=1, num_links=4)
    return OpDesc(OpFamily.REDUCE_SCATTER, (whole,), (part,), op_code=RS_CODE, collective=config)


def test_the_packet_rate_is_sourced_per_arch():
    """Wormhole 3.05 Mpps and Blackhole 4.211 Mpps of one sender (16-byte packets), each with its source."""
    assert fabric_perf("wormhole_b0").packet_ns == pytest.approx(1e9 / 3.05e6)
    assert fabric_perf("blackhole").packet_ns == pytest.approx(1e9 / 4.211e6)
    for perf in FABRICS.values():
        assert perf.missing_sources() == []
        assert "fabric_edm_bandwidth_golden" in perf.sources["packet_ns"]


def test_a_one_tile_shard_is_a_packet():
    """The binary-mult gather (30 one-tile width shards of bfloat8_b, 4 links): 8 tiles a link's worker, a
    packet each; the SDPA gather (8 height shards of 4 bfloat16 tiles): 2 tiles a packet (4,352 B hold 2)."""
    mult = _gather((1, 1, 32, 960), "BFLOAT8_B", MemoryLayout.WIDTH_SHARDED)
    sdpa = _gather((1, 8, 32, 128), "BFLOAT16", MemoryLayout.HEIGHT_SHARDED)
    assert is_llama_gather(mult) and is_llama_gather(sdpa)
    assert sender_packets(mult, 4, 4) == 8
    assert sender_packets(sdpa, 4, 4) == 4
    assert FABRIC_PACKET_BYTES // 2048 == 2


def test_the_llama_reduce_scatter_packs_a_payload_of_tiles():
    """bfloat8_b: 4 tiles a 4,352-B packet; bfloat16: the payload rounded down to 4 KiB, 2 tiles."""
    assert sender_packets(_scatter((1, 1, 32, 3840), "BFLOAT8_B"), 4, 4) == 6  # 90 tiles / 4 links / 4
    assert sender_packets(_scatter((1, 1, 32, 1280), "BFLOAT16"), 4, 4) == 4  # 30 tiles / 4 links / 2


def test_the_report_programs_count_no_packets():
    """An all_gather that is not a Llama shape runs the report's program: no packet count."""
    plain = _gather((1, 1, 32, 4096), "BFLOAT16", MemoryLayout.INTERLEAVED)
    assert not is_llama_gather(plain)
    assert sender_packets(plain, 4, 4) == 0


def test_the_link_takes_the_longer_of_its_bytes_and_its_packets():
    """The binary-mult gather's 8 packets at 328 ns outlast its 16 KiB a link at the line rate; the phase's
    transfer is at least the packets' time, and the prediction grows by it over the bytes alone."""
    mult = _gather((1, 1, 32, 960), "BFLOAT8_B", MemoryLayout.WIDTH_SHARDED)
    m = Machine(GALAXY_6U, (8, 4))
    arch = m.system.arch
    packets = 8 * fabric_perf(arch.arch).packet_ns
    phase = direct_phase(arch, mult, float(mult.outputs[0].nbytes), 4, (Topology.RING, 4, Fabric.FABRIC_1D))
    assert phase.transfer_ns >= packets
    assert predict(mult, m, traced=True).kernel_ns > phase.startup_ns + packets


def test_the_llama_all_reduce_sends_its_share_in_full_packets():
    """The Llama all_reduce_async (one worker a link): FF2's 64 bfloat8_b tiles over 4 links, 4 a packet."""
    x = TensorDesc((1, 1, 32, 2048), "BFLOAT8_B", buffer=L1, memory=MemoryLayout.WIDTH_SHARDED)
    config = CollectiveConfig(Topology.RING, cluster_axis=0, num_links=4)
    desc = OpDesc(OpFamily.ALL_REDUCE, (x,), (x,), collective=config, attributes=(("multicast", "True"),))
    assert sender_packets(desc, 8, 4) == 4
