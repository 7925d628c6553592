"""The cross-core statistics of a norm whose rows are split across cores (its input width- or block-sharded),
by the stage of tt-metal's sharded layer-norm program that runs it.

tt-metal (2026-06) runs a sharded ``layer_norm`` / ``rms_norm`` and both halves of a sharded distributed norm
with ttnn/cpp/ttnn/operations/normalization/layernorm/device/layernorm_op_multi_core_sharded.cpp, whose
reader kernels (layernorm/device/kernels/dataflow) decide what crosses the cores:

- the plain norm (reader_mcast_sender_unary_sharded_ln.cpp): every core signals its partial to the sender,
  the partial tiles are gathered, combined and multicast back before the normalise pass
  (:attr:`~meshnn.perf.latency.OpLatency.sharded_norm_stats_ns`, fitted on DeepSeek MLA's q_norm);
- ``*_pre_all_gather`` (reader_mcast_sender_unary_sharded_ln_pre_allgather.cpp): the same signal and gather
  and the combine, whose result is the op's output (the stats tensor, written from the gathering cores): no
  multicast back, so the plain norm's exchange less one multicast of the combined tile;
- ``*_post_all_gather`` (reader_mcast_sender_unary_sharded_ln_post_allgather.cpp): no gather (the stats come
  all-gathered, on the sender); the sender's compute adds the devices' stats into one tile a tile row (two
  for a layer norm: E[x], E[x^2]), multicasts those to every core with a semaphore, and the cores
  normalise: one multicast of the combined tiles.

A multicast of ``n`` bytes is timed at the linked-multicast rate tt-metal's conv2d program factory measured
(:mod:`meshnn.perf.conv_rates`: ``get_mcast_many_l1_linked_noc_transfer_rate``), not fitted here.
"""

from __future__ import annotations

import math

from meshnn.perf.conv_rates import RATES
from meshnn.perf.desc import TILE, MemoryLayout, OpDesc, OpFamily
from meshnn.perf.latency import op_latency
from meshnn.perf.systems import Machine

PRE, POST = "LayerNormPreAllGatherDeviceOperation", "LayerNormPostAllGatherDeviceOperation"


def multicast_ns(machine: Machine, nbytes: int) -> float:
    """One linked multicast of ``nbytes`` from a core's L1 to the others, at conv2d's measured rate."""
    arch = machine.system.arch
    return RATES[arch.arch].multicast.cycles(nbytes, nbytes, arch.clock_hz) * 1e9 / arch.clock_hz


def _split(desc: OpDesc) -> bool:
    tensor = max(desc.inputs, key=lambda t: t.tiles)
    return tensor.memory in (MemoryLayout.WIDTH_SHARDED, MemoryLayout.BLOCK_SHARDED)


def _tile_rows(desc: OpDesc) -> int:
    x = desc.inputs[0]
    return max(1, x.tiles // max(1, math.ceil(x.shape[-1] / TILE)))


def sharded_stats_ns(desc: OpDesc, machine: Machine) -> float:
    """The cross-core statistics of a norm ``desc`` whose rows are split across cores, by its stage (the
    module docstring); 0 for other ops and for a norm that keeps its rows on one core."""
    if desc.family is not OpFamily.NORM or not _split(desc):
        return 0.0
    full = op_latency(machine.system.arch.arch).sharded_norm_stats_ns
    x = desc.inputs[0]
    if desc.op_code == PRE:  # gathered and combined into the output: no multicast back
        return max(0.0, full - multicast_ns(machine, _tile_rows(desc) * x.tile_bytes))  # one combined tile a row
    if desc.op_code == POST:  # the combined stats multicast from the sender, nothing gathered
        per_row = 2 if "layer_norm" in desc.name else 1  # E[x] and E[x^2], or E[x^2] alone (rms_norm)
        return multicast_ns(machine, per_row * _tile_rows(desc) * x.tile_bytes)
    return full
