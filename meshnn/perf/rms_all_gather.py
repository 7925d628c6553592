"""RMSAllGather (``ttnn.fused_rms_minimal``): a distributed RMS norm whose statistics cross the devices inside
one program.

tt-metal's program (ttnn/cpp/ttnn/operations/experimental/ccl/rms_allgather/device/rms_allgather_program_factory.cpp
and its kernels, 2026-06; the same stages as rms_allgather_pf.cpp of 2025-07: rms_compute.cpp, rms_sender_reader.cpp,
rms_writer.cpp, reshard_writer.hpp) runs, on the cores of its width-sharded input, in order and with one launch:

1. the pre-add (``FUSE_PRE_ADD``, with a residual): the compute adds the residual to the input, tile by tile, into
   the residual's own buffer (the circular buffer is placed on it), which the next steps read;
2. the pre stage: each core's sum of squares, gathered and combined on the sender core into the device's one
   statistics tile (the work of ``rms_norm_pre_all_gather``'s sharded program);
3. the statistics' all-gather: one writer core multicasts that tile both ways round the ``cluster_axis`` ring
   through the fabric (``to_chip_multicast``, the data and the semaphore increment in one packet), waits for the
   other devices' tiles, then releases the local cores with a semaphore multicast (the Llama sharded all-gather
   of a [1, 1, 32, 32] tile: a direct fabric phase);
4. the post stage: the combined statistics multicast to the cores and the normalisation (the work of
   ``rms_norm_post_all_gather``'s sharded program), written to the output's shards.  Gamma (row-major, in DRAM
   in the Llama models) is read only once the cores are released (rms_writer.cpp: after the stats semaphore),
   a tile at a time, each read waited for before the next (a read barrier between the two face-lines' reads):
   ``block_w`` DRAM round trips (:attr:`~meshnn.perf.latency.OpLatency.tile_round_trip_cycles`) on each core,
   beside the sender's combine and multicast of the statistics; whatever of them that multicast does not cover
   comes before the normalisation's multiply by gamma.  The separate post program reads its gamma at its start,
   beside its wait for the statistics, so its own model has no such term.

So the model times it as the stages the model already has, one after another on the same cores, with one launch
(:attr:`~meshnn.perf.hardware.ArchPerf.op_launch_ns`) where separate programs hold one each: the pre-add by
:func:`~meshnn.perf.tile_ops.predict_tile_op` as a binary add of the shards, the pre and post stages by the same
function (op codes ``LayerNormPre/PostAllGather``), the gather by :func:`~meshnn.perf.collectives.predict_collective`
(the stats tile, bfloat16, L1 width-sharded: the Llama multicast gather), plus gamma's serial reads beyond the
statistics' multicast, plus the peers' arrival skew (:func:`arrival_skew_ns`).

**Arrival skew.**  The gathering core waits for every peer's statistics tile (rms_writer.cpp: ``noc_semaphore_wait``
on ``out_ready_sem`` for the ``N-1`` peers' increments) before it releases the cores, so each device's call holds
the lag of its latest peer (the Galaxy decoder's figures average a call's kernel duration over the 32 chips:
test_decoder_device_perf.py's merge_device_rows, whose collective test ``... or "AllReduce" or ...`` is always
true, so every op's 32 rows are averaged, and RMSAllGather's name holds "AllGather" in any case).  A
standalone Llama gather (the direct programs of :mod:`meshnn.perf.collectives`) follows a collective on its own
devices in the decoder (the create-heads reduce_scatter before AllGatherConcat, the FF1/FF3 reduce_scatter before
the binary_mult gather, both ``cluster_axis=1``), which leaves them aligned; the Llama decoder's norms follow an
all_reduce on the *other* axis (llama_attention.py and llama_mlp.py at 7f36e28e80: ``line_all_reduce(...,
cluster_axis=0)`` right before the MLP norm and the next layer's attention norm; the final norm behind the last one
and a residual add), so the four devices of a norm's ``cluster_axis=1`` group come from four separate axis-0
collectives and start it as calls alone do.  That wait is the ring's ``launch_skew_ns`` (:mod:`meshnn.perf.fabric`:
what a collective alone on the report's ring waits for cross-device launch skew that one right behind another on the
same devices does not; fitted to the CCL report's calls alone and back to back, no constant here), taken once,
whatever the gather's topology, unless the call's config says its devices are aligned (``CollectiveConfig.aligned``).
The skew is the devices' start, not the gather's fabric: the 4U Galaxy (no wraparound: a line of 4, where the
report's line calls save only 0.63 us back to back) runs the 70B's three RMSAllGather calls 2.1-2.5 us longer than
the 6U (decoder_perf_targets_4u.json: 19.19, 18.84, 16.77 against 16.72, 16.35, 14.48), as it does its standalone
gathers (the binary_mult gather +2.30, AllGatherConcat +1.67), so the wait does not shrink on the line.

Not timed: the fabric connection.  The gathering core opens it at the kernel's start (``open_start`` and
``open_finish`` before it waits for its own statistics tile: beside the pre stage) and starts its close right after
its one packet (``close_start``, before the wait for its peers), so the EDM's acknowledgement, which
``close_finish`` waits for after the release, comes back during the wait for the peers (two hops and the skew) and
adds nothing.  Nor the output's reshard writes onto other cores (``block_w`` tile writes a core, then one barrier;
their bytes are the output's, already counted by the post stage).

The capture (:func:`meshnn.ops.costs.op_desc`) gives the op family NORM, op code ``RMSAllGather`` and the
collective config (``cluster_axis``, ``num_links``, ``topology``) of the call; without a collective config (a
description built by hand) it is timed as the plain sharded norm it was before.
"""

from __future__ import annotations

import math
from dataclasses import replace

from meshnn.perf.collectives import group_size, predict_collective
from meshnn.perf.desc import (
    TILE,
    BufferType,
    CollectiveConfig,
    Layout,
    MemoryLayout,
    OpDesc,
    OpFamily,
    TensorDesc,
    Topology,
)
from meshnn.perf.fabric import fabric_perf
from meshnn.perf.latency import op_latency
from meshnn.perf.norm_stats import POST, PRE, sharded_stats_ns
from meshnn.perf.prediction import Prediction
from meshnn.perf.systems import Machine
from meshnn.perf.tile_ops import predict_tile_op, tile_op_launch_ns
from meshnn.perf.traffic import grid_cores

OP_CODE = "RMSAllGather"
GATHER_NAME = "ttnn.experimental.all_gather_async"
"""The gather stage is timed as this call's Llama sharded (multicast) program on the stats tile."""
_STATS_DTYPE = "BFLOAT16"
"""The statistics tile's format (the stats tensor the Llama models pass: bfloat16, one tile a device)."""


def is_rms_all_gather(desc: OpDesc) -> bool:
    """Whether ``desc`` is a captured RMSAllGather (a NORM with its collective config)."""
    return desc.family is OpFamily.NORM and desc.op_code == OP_CODE and desc.collective is not None


def parts(desc: OpDesc) -> tuple[TensorDesc, TensorDesc | None, TensorDesc | None]:
    """``desc``'s input x, its residual (the input of x's shape after it) and gamma (the last input of another
    shape), each None where the call had none (the capture records x, the residual, gamma, leaving out absent ones)."""
    x, rest = desc.inputs[0], desc.inputs[1:]
    residual = rest[0] if rest and rest[0].shape == x.shape else None
    weight = rest[-1] if rest and rest[-1] is not residual else None
    return x, residual, weight


def pre_add(desc: OpDesc) -> OpDesc | None:
    """The pre-add of ``desc`` (x plus the residual, written over the residual's shards), or None without one."""
    x, residual, _ = parts(desc)
    if residual is None:
        return None
    return OpDesc(OpFamily.BINARY, (x, residual), (residual,), name=desc.name, core_grid=desc.core_grid)


def stages(desc: OpDesc, devices: int) -> tuple[OpDesc, OpDesc, OpDesc]:
    """The pre stage, the statistics' gather over ``devices`` and the post stage of ``desc`` (outputs: the normed
    x first).  The stages read the pre-added sum where there is a residual (the residual's buffer,
    :func:`pre_add`), else x."""
    x, residual, weight = parts(desc)
    source = residual if residual is not None else x
    lead = x.shape[:-1]
    stats = TensorDesc((*lead, 32), _STATS_DTYPE, Layout.TILE, BufferType.L1, MemoryLayout.WIDTH_SHARDED)
    gathered = replace(stats, shape=(*lead, 32 * devices), logical_shape=None)
    common = dict(fidelity=desc.fidelity, core_grid=desc.core_grid, attributes=desc.attributes)
    pre = OpDesc(OpFamily.NORM, (source,), (stats,), op_code=PRE, name=desc.name, **common)  # type: ignore[arg-type]
    gather = OpDesc(OpFamily.ALL_GATHER, (stats,), (gathered,), name=GATHER_NAME, collective=desc.collective)
    post_in = (source, weight, gathered) if weight is not None else (source, gathered)
    post = OpDesc(OpFamily.NORM, post_in, desc.outputs[:1], op_code=POST, name=desc.name, **common)  # type: ignore[arg-type]
    return pre, gather, post


def gamma_wait_ns(desc: OpDesc, machine: Machine) -> float:
    """Gamma's serial reads on a core after the release (ns): ``block_w`` (the input's width tiles over the cores)
    DRAM round trips, less the statistics' multicast they run beside; 0 with gamma in L1 or none."""
    x, _, weight = parts(desc)
    if weight is None or weight.buffer is not BufferType.DRAM:
        return 0.0
    block_w = math.ceil(math.ceil(x.shape[-1] / TILE) / grid_cores(machine, desc.core_grid))
    arch = machine.system.arch
    trips = op_latency(arch.arch).cycles_ns(block_w * op_latency(arch.arch).tile_round_trip_cycles, arch.clock_hz)
    _, _, post = stages(desc, 1)
    return max(0.0, trips - sharded_stats_ns(post, machine))


def arrival_skew_ns(desc: OpDesc, machine: Machine, devices: int) -> float:
    """The gathering core's wait for its latest peer beyond the gather's own latency (ns): the ring's
    ``launch_skew_ns`` on every topology (the module's "Arrival skew"); 0 for a group of one or a call whose devices
    are aligned (``CollectiveConfig.aligned``)."""
    config = desc.collective or CollectiveConfig()
    if devices < 2 or config.aligned:
        return 0.0
    return fabric_perf(machine.system.arch.arch).launch_skew_ns[Topology.RING]


def predict_rms_all_gather(desc: OpDesc, machine: Machine) -> Prediction:
    """The time of a captured RMSAllGather ``desc``: its stages in sequence, one launch (the module docstring)."""
    probe = OpDesc(OpFamily.ALL_GATHER, desc.inputs[:1], desc.outputs[:1], collective=desc.collective)
    devices = max(1, group_size(probe, machine))
    pre_desc, gather_desc, post_desc = stages(desc, devices)
    add_desc = pre_add(desc)
    pre, post = predict_tile_op(pre_desc, machine), predict_tile_op(post_desc, machine)
    add = predict_tile_op(add_desc, machine) if add_desc is not None else None
    gather = predict_collective(gather_desc, machine) if devices > 1 else None
    launch = machine.system.arch.op_launch_ns
    add_ns = add.kernel_ns - tile_op_launch_ns(add_desc, machine, add.cores) if add is not None else 0.0
    gather_ns = gather.kernel_ns - launch if gather is not None else 0.0
    gamma_ns = gamma_wait_ns(desc, machine)
    skew_ns = arrival_skew_ns(desc, machine, devices)
    before = add_ns + pre.kernel_ns - launch + gather_ns + skew_ns + gamma_ns
    note = (
        f"RMSAllGather: pre-add {add_ns:.0f} ns, pre {pre.kernel_ns - launch:.0f} ns, stats gather over {devices} "
        f"devices {gather_ns:.0f} ns and its peers' arrival skew {skew_ns:.0f} ns, gamma's serial reads "
        f"{gamma_ns:.0f} ns, post {post.kernel_ns - launch:.0f} ns, one launch"
    )
    dram = pre.dram_bytes + post.dram_bytes + (add.dram_bytes if add is not None else 0)
    l1 = pre.l1_bytes + post.l1_bytes + (add.l1_bytes if add is not None else 0)
    return replace(
        post,
        fixed_ns=post.fixed_ns + max(0.0, before),
        dram_bytes=dram,
        l1_bytes=l1,
        link_bytes=gather.link_bytes if gather is not None else 0,
        notes=(*post.notes, note),
    )
