"""meshnn.perf.gather_concat: AllGatherConcat as its program runs, the Llama multicast gather of the input heads,
then the concat's reads of the other devices' users' rows, its tilize and write."""

from __future__ import annotations

import dataclasses

import pytest

from meshnn.perf import (
    BufferType,
    CollectiveConfig,
    MemoryLayout,
    OpDesc,
    OpFamily,
    TensorDesc,
    Topology,
    machine,
    predict,
)
from meshnn.perf.collectives import predict_collective
from meshnn.perf.conv_rates import RATES
from meshnn.perf.gather_concat import CONCAT_CORES, OP_CODE, concat_tail_ns, gather, is_all_gather_concat
from meshnn.perf.latency import op_latency
from meshnn.perf.traffic import transfer_efficiency

M = machine("galaxy", (8, 4))
WH = M.system.arch


def _desc(heads_width: int = 1024) -> OpDesc:
    part = TensorDesc((1, 8, 32, 128), "BFLOAT16", buffer=BufferType.L1, memory=MemoryLayout.HEIGHT_SHARDED)
    out = TensorDesc((1, 1, 32, heads_width), "BFLOAT16", buffer=BufferType.L1, memory=MemoryLayout.WIDTH_SHARDED)
    config = CollectiveConfig(Topology.LINEAR, cluster_axis=1, num_links=4)
    return OpDesc(OpFamily.ALL_GATHER, (part,), (out,), op_code=OP_CODE, collective=config)


def test_the_concat_reads_the_other_devices_rows_then_tilizes_its_two_tiles():
    lat = op_latency(WH.arch)
    row = 1024 // CONCAT_CORES * 2  # a [32, 64] bfloat16 shard's row: 128 B
    reads = 24 * row / (WH.noc_bytes_per_cycle * transfer_efficiency(WH, row))  # 3 devices x 8 users
    tilize = 2 * RATES[WH.arch].tilize(False, "BFLOAT16", False)
    cycles = lat.dram_read_latency_cycles + reads + tilize + lat.noc_write_latency_cycles
    assert concat_tail_ns(_desc(), M, 4) == pytest.approx(cycles * 1e9 / WH.clock_hz)
    assert concat_tail_ns(_desc(), M, 2) < concat_tail_ns(_desc(), M, 4)  # 16 rows from one other device


def test_the_op_is_its_gather_then_the_concat():
    desc = _desc()
    assert is_all_gather_concat(desc) and not is_all_gather_concat(dataclasses.replace(desc, collective=None))
    stage = gather(desc, 4)
    assert stage.outputs[0].shape == (1, 32, 32, 128) and stage.name == "ttnn.experimental.all_gather_async"
    expected = predict_collective(stage, M).kernel_ns + concat_tail_ns(desc, M, 4)
    assert predict(desc, M, traced=True).kernel_ns == pytest.approx(expected)
