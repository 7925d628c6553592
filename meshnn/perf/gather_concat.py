"""``experimental.all_gather_concat`` (tt-metal's ``AllGatherConcat``): the Llama Galaxy decode attention's all-gather
of SDPA's output heads over the ``cluster_axis`` group, then its heads concatenated into a width-sharded row, in
one program.

What the program does (tt-metal ttnn/cpp/ttnn/operations/experimental/ccl/all_gather_concat_heads_fused/device/
all_gather_concat_program_factory.cpp and its kernels, 2026-06; the same program at 7f36e28e80, 2025-07):

1. the gather: llama_all_gather_concat_writer.cpp multicasts each device's shards both ways round the group
   (``to_chip_multicast``, as the Llama sharded ``all_gather_async`` of the same [1, 8, 32, 128] tensor does,
   :data:`meshnn.perf.collectives.LLAMA_SHARDED_GATHERS`) into a gathered buffer, then raises the concat cores'
   semaphore;
2. the concat, on :data:`CONCAT_CORES` cores (``concat_num_cores``): llama_concat_reader.cpp first copies this
   device's users' rows (before the wait), then waits for the semaphore and reads the other devices' users' rows
   of its output shard, one NoC read of the shard's row width each (``output_row_size``), and one read barrier;
   tilize_compute.cpp tilizes the shard's tiles and tilize_writer.cpp writes them to the output.

So the model times the gather as :func:`~meshnn.perf.collectives.predict_collective` times that ``all_gather_async``
(its launch is the op's), then the concat's tail after the last packet: the far-end latency of a read from another
core's L1 (:attr:`~meshnn.perf.latency.OpLatency.dram_read_latency_cycles`), the rows' reads back to back at the
NoC's rate for their size (:func:`~meshnn.perf.traffic.transfer_efficiency`), the shard's tiles tilized
(conv2d's measured tilize cycles, :mod:`meshnn.perf.conv_rates`) and their write's latency.  The local rows' copy
runs during the gather: not timed.

The capture (:func:`meshnn.ops.costs.op_desc`) records the op as family ALL_GATHER, op code ``AllGatherConcat``,
its input (one device's heads) and output (the concatenated row), with the call's collective config.

May import: :mod:`meshnn.perf` modules below :mod:`meshnn.perf.model` (desc, collectives, latency, traffic,
conv_rates).
"""

from __future__ import annotations

import math
from dataclasses import replace

from meshnn.perf.collectives import group_size, predict_collective
from meshnn.perf.conv_rates import RATES
from meshnn.perf.desc import TILE, OpDesc, OpFamily
from meshnn.perf.latency import op_latency
from meshnn.perf.prediction import Prediction
from meshnn.perf.systems import Machine
from meshnn.perf.traffic import transfer_efficiency

OP_CODE = "AllGatherConcat"
GATHER_NAME = "ttnn.experimental.all_gather_async"
CONCAT_CORES = 16
"""The program's concat cores (all_gather_concat_program_factory.cpp: ``concat_num_cores = 16``)."""


def is_all_gather_concat(desc: OpDesc) -> bool:
    """Whether ``desc`` is a captured AllGatherConcat (an ALL_GATHER with op code AllGatherConcat and its config)."""
    return desc.family is OpFamily.ALL_GATHER and desc.op_code == OP_CODE and desc.collective is not None


def gather(desc: OpDesc, devices: int) -> OpDesc:
    """The gather stage of ``desc``: its input's heads gathered on dim 1 over ``devices``, as ``all_gather_async``."""
    x = desc.inputs[0]
    whole = replace(x, shape=(x.shape[0], x.shape[1] * devices, *x.shape[2:]), logical_shape=None)
    return OpDesc(OpFamily.ALL_GATHER, (x,), (whole,), name=GATHER_NAME, collective=desc.collective)


def concat_tail_ns(desc: OpDesc, machine: Machine, devices: int) -> float:
    """The concat after the gather on one concat core (ns): the other devices' users' rows of its shard read (one
    far-end latency, then each row at the NoC's rate for its bytes), its tiles tilized and written."""
    out = desc.outputs[0]
    arch = machine.system.arch
    latency = op_latency(arch.arch)
    shard_width = max(TILE, out.shape[-1] // CONCAT_CORES)
    row_bytes = shard_width * out.nbytes // max(1, math.prod(out.shape))
    rows = out.shape[-2] - out.shape[-2] // max(1, devices)  # this device's users are copied before the wait
    per_row = row_bytes / (arch.noc_bytes_per_cycle * transfer_efficiency(arch, row_bytes))
    tiles = math.ceil(out.shape[-2] / TILE) * (shard_width // TILE)
    tilize = tiles * RATES[arch.arch].tilize(False, out.dtype.upper(), False)
    cycles = latency.dram_read_latency_cycles + rows * per_row + tilize + latency.noc_write_latency_cycles
    return latency.cycles_ns(cycles, arch.clock_hz)


def predict_all_gather_concat(desc: OpDesc, machine: Machine) -> Prediction:
    """The time of a captured AllGatherConcat ``desc``: the gather, then the concat's tail (the module)."""
    devices = max(1, group_size(desc, machine))
    gathered = predict_collective(gather(desc, devices), machine)
    tail = concat_tail_ns(desc, machine, devices) if devices > 1 else 0.0
    note = f"AllGatherConcat: the concat after the last packet {tail:.0f} ns on {CONCAT_CORES} cores"
    return replace(gathered, fixed_ns=gathered.fixed_ns + tail, notes=(*gathered.notes, note))
