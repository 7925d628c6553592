"""The exchanges over Ethernet that are not gathers or reductions: point_to_point, broadcast,
all_broadcast, barrier, all_to_all_dispatch, all_to_all_combine and all_to_all_async_generic.

Each is a one-directional line transfer on the 1-D fabric, timed with all_gather's fitted terms
(:mod:`meshnn.perf.fabric`: the per-call start-up, the cost per hop, the link utilisation of a line
of ``N`` devices), with ``S`` the bytes of one device's shard (the op's first input):

- point_to_point: ``S`` over its route's hops (``CollectiveConfig.hops``; else the line's ``N-1``);
- broadcast: the sender's ``S`` forwarded along the line, each link carrying it once: ``S`` over
  the hops to the farther end (``CollectiveConfig.hops``; else ``N-1``);
- all_broadcast: every device's shard to every other, an all_gather's traffic: ``(N-1) x S``
  through the busiest link over ``N-1`` hops;
- barrier: the hops alone (semaphore packets, no payload);
- all_to_all_dispatch: each local token to the devices of its top-k experts, at most ``N-1``
  others: ``min(k, N-1) x S`` (``CollectiveConfig.peers`` = k; None: every other device); where the
  routing is known (:mod:`meshnn.perf.sparse_a2a`: the pages each link lane really carries, in the
  op's attributes), ttnn's AllToAllDispatchDeviceOperation is timed from it instead;
- all_to_all_combine: the expert outputs back to their tokens' devices, ``(N-1)/N`` of the op's
  output bytes (the tokens this device does not hold itself); where the routing is known
  (:mod:`meshnn.perf.a2a_combine`: the busiest sender core's tokens and pages, in the op's
  attributes), ttnn's AllToAllCombineDeviceOperation is timed from its program's serial chain instead;
- all_to_all_async_generic: every device's ``N`` chunks of ``S/N`` to the ``N`` members, the link
  in the middle of the line carrying the most, ``floor(N/2) x ceil(N/2)`` chunks one way;
- neighbor_pad_async: each device's edge rows to its neighbours, one hop: the halos' bytes (the
  output's less the input's, both halos counted on the one link as an upper bound);
- slice_reshard_async: a device's new piece from itself and its next neighbours, one hop: at most
  the output shard's bytes.

``num_links`` splits the bytes (clamped to the system's usable links, as the other collectives'
are); the hops cost is paid once.

May import: :mod:`meshnn.perf.desc`, :mod:`meshnn.perf.fabric`, :mod:`meshnn.perf.hardware`,
:mod:`meshnn.perf.systems`, :mod:`meshnn.perf.traffic`, :mod:`meshnn.perf.collectives`,
:mod:`meshnn.perf.sparse_a2a`, :mod:`meshnn.perf.a2a_combine`.
"""

from __future__ import annotations

import math

from meshnn.perf.a2a_combine import COMBINE_CODE, combine_load_of, predict_combine
from meshnn.perf.collectives import group_size, usable_links
from meshnn.perf.desc import CollectiveConfig, Fabric, OpDesc, OpFamily, Topology
from meshnn.perf.fabric import fabric_perf
from meshnn.perf.prediction import Prediction
from meshnn.perf.sparse_a2a import DISPATCH_CODE, predict_dispatch, routing_of
from meshnn.perf.systems import Machine
from meshnn.perf.traffic import kernel_prediction, traffic


def route(desc: OpDesc, devices: int) -> tuple[float, int]:
    """(bytes through the busiest link, hops of the longest path) of the exchange ``desc`` over a
    line of ``devices``."""
    config = desc.collective or CollectiveConfig()
    shard = float(desc.inputs[0].nbytes)
    line = devices - 1
    family = desc.family
    if family is OpFamily.POINT_TO_POINT:
        return shard, config.hops or line
    if family is OpFamily.BROADCAST:
        return shard, config.hops or line
    if family is OpFamily.ALL_BROADCAST:
        return line * shard, line
    if family is OpFamily.ALL_TO_ALL_DISPATCH:
        peers = line if config.peers is None else min(config.peers, line)
        return peers * shard, line
    if family is OpFamily.ALL_TO_ALL_COMBINE:
        return line / devices * float(desc.outputs[0].nbytes if desc.outputs else shard), line
    if family is OpFamily.ALL_TO_ALL:
        return (devices // 2) * (devices - devices // 2) * shard / devices, line
    if family is OpFamily.NEIGHBOR_PAD:
        out = float(desc.outputs[0].nbytes) if desc.outputs else shard
        return max(out - shard, 0.0), config.hops or 1
    if family is OpFamily.SLICE_RESHARD:
        return float(desc.outputs[0].nbytes) if desc.outputs else shard, config.hops or 1
    return 0.0, line  # a barrier: hops only


def predict_exchange(desc: OpDesc, machine: Machine) -> Prediction:
    """The time of the exchange ``desc`` (per-device input and output) on ``machine``."""
    arch = machine.system.arch
    config = desc.collective or CollectiveConfig()
    devices = group_size(desc, machine)
    memory = traffic(machine, [(t, 1.0) for t in (*desc.inputs, *desc.outputs)], machine.system.compute_cores)
    if devices < 2:
        return kernel_prediction(arch, 0.0, memory, 1)
    routing = routing_of(desc)
    if routing is not None and desc.family is OpFamily.ALL_TO_ALL_DISPATCH and desc.op_code == DISPATCH_CODE:
        return predict_dispatch(desc, machine, routing)
    load = combine_load_of(desc)
    if load is not None and desc.family is OpFamily.ALL_TO_ALL_COMBINE and desc.op_code == COMBINE_CODE:
        return predict_combine(desc, machine, load)
    links, notes = usable_links(config, machine, desc.op_code)
    moved, hops = route(desc, devices)
    fabric = fabric_perf(arch.arch)
    ag = OpFamily.ALL_GATHER
    per_hop = fabric.hop_ns[(ag, Topology.LINEAR)]
    if config.fabric is Fabric.FABRIC_2D:
        per_hop += arch.hop_latency_2d_ns - arch.hop_latency_1d_ns
    per_link = moved / links
    utilization = fabric.utilization_for(ag, Topology.LINEAR, max(devices, 2))
    transfer = per_link / (arch.eth_line_rate_bytes_per_s * utilization) * 1e9
    ramp = fabric.ramp_ns[ag] * math.sqrt(per_link / 1e6)
    return kernel_prediction(
        arch,
        0.0,
        memory,
        links,
        fixed_ns=fabric.invocation_ns[ag] + hops * per_hop,
        link_ns=transfer + ramp,
        link_bytes=int(per_link),
        notes=(f"{desc.family.value}: {devices} devices, {hops} hop(s), {links} link(s)", *notes),
    )
