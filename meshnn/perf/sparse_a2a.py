"""Where ``all_to_all_dispatch`` and ``all_to_all_combine`` (AllToAllDispatchDeviceOperation,
AllToAllCombineDeviceOperation) actually send their pages, and what the dispatch costs given that.

Both programs run one sender core a link (``num_links`` cores, each with its own link lane and a
fabric connection each way), each walking its share of the tokens in order, and send whole row-major
pages (a token's ``hidden`` values) straight to the target device's buffer through the fabric, packet
by packet [tt-metal: ttnn/cpp/ttnn/operations/ccl/all_to_all_dispatch/device/
all_to_all_dispatch_program_factory.cpp (tokens_per_core = tokens / num_links, one core a link),
kernels/dataflow/writer_all_to_all_dispatch.cpp; all_to_all_combine/device/kernels/dataflow/
writer_all_to_all_combine.cpp]:

- **dispatch**: each of a device's tokens goes once to every device of its group (the devices along
  ``cluster_axis``) that holds at least one of its top-k experts (the writer's send_preparation_buffer
  dedups the devices); an expert held outside the group is not sent to at all;
- **combine** (the sender is the expert's device): every token of the group is walked; for each local
  expert among its top-k one page (the expert's output) goes back to the token's device; with
  ``local_reduce`` at most one page a token (the writer breaks after the first);
- **route**: on a line, straight to the target; on a ring, the shorter way round, a tie (the antipode
  of an even ring) alternating direction per core (moe_utils.hpp: get_route / polar_compare_stateful,
  its state starting NEGATIVE; the init semaphore each core first sends every group device takes the
  antipode's first tie, send_init_semaphore_to_configured_targets, so the first page's tie goes positive).

So the bytes the busiest link carries depend on the routing (the experts' placement and each token's
top-k), not on the top-k bound: :func:`routing_loads` counts them from the mapping and the ids, and
:class:`Routing` carries the counts in an :class:`~meshnn.perf.desc.OpDesc`'s attributes
(:func:`routing_attributes`).

**Dispatch time** (:func:`predict_dispatch`), a direct program as the Llama ones in
:mod:`meshnn.perf.collectives`: an op's launch and two one-way crossings of the group's diameter at
the fabric's per-hop latency (the init semaphore every device sends every other before it sends,
and the metadata with its semaphore after), then the busiest lane's pages, one way, at the line rate
times all_gather's measured utilisation for the topology (the ring's lower one on a ring fabric).
Beside it, the DRAM: each sender core reads its tokens (over its own NoC link), and the pages that
land are written by the receiving fabric routers (the received pages, not the whole output buffer).
Units: ``_ns`` nanoseconds, bytes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from meshnn.perf.collectives import group_size, usable_links
from meshnn.perf.desc import CollectiveConfig, OpDesc, OpFamily, Topology
from meshnn.perf.fabric import fabric_perf
from meshnn.perf.prediction import Prediction
from meshnn.perf.systems import Machine
from meshnn.perf.traffic import Traffic, kernel_prediction, traffic

DISPATCH_CODE = "AllToAllDispatchDeviceOperation"
COMBINE_CODE = "AllToAllCombineDeviceOperation"


@dataclass(frozen=True, slots=True)
class Routing:
    """Page counts of one all_to_all_dispatch or combine over its group (max over the groups):
    ``lane_pages`` through the busiest directed link of one link lane, ``core_pages`` sent (to any
    device, its own included) by the busiest sender core, ``core_tokens`` walked by the busiest core."""

    lane_pages: int
    core_pages: int
    core_tokens: int


_KEYS = ("a2a_lane_pages", "a2a_core_pages", "a2a_core_tokens")


def routing_attributes(routing: Routing) -> tuple[tuple[str, str], ...]:
    """``routing`` as :attr:`OpDesc.attributes` pairs."""
    return tuple(zip(_KEYS, (str(routing.lane_pages), str(routing.core_pages), str(routing.core_tokens)), strict=True))


def routing_of(desc: OpDesc) -> Routing | None:
    """The routing counts ``desc`` carries, else None (the routing was not known)."""
    found = dict(desc.attributes)
    if not all(k in found for k in _KEYS):
        return None
    return Routing(*(int(found[k]) for k in _KEYS))


def _directions(src: np.ndarray, dst: np.ndarray, core: np.ndarray, size: int, ring: bool) -> tuple[np.ndarray, ...]:
    """(+1 / -1 direction, hops) of each send ``src`` -> ``dst`` (positions in a group of ``size``),
    ties on a ring alternating per ``(src, core)`` in send order, the first one positive (the core's
    init semaphore to the antipode, sent first, took the negative way)."""
    if not ring:
        return np.where(dst > src, 1, -1), np.abs(dst - src)
    east, west = (dst - src) % size, (src - dst) % size
    tie = east == west
    order = np.zeros(len(src), dtype=np.int64)  # each tie's rank among its (src, core)'s ties, in send order
    ties = np.flatnonzero(tie)
    if len(ties):
        key = (src * (core.max() + 1) + core)[ties]
        by_key = np.argsort(key, kind="stable")
        sorted_key = key[by_key]
        first = np.searchsorted(sorted_key, sorted_key, side="left")
        order[ties[by_key]] = np.arange(len(ties)) - first
    go = np.where(east < west, 1, -1)
    go = np.where(tie, np.where(order % 2 == 0, 1, -1), go)  # the init semaphore took the first tie (negative)
    return go, np.minimum(east, west)


def _lane_max(src, go, hops, core, size: int, links: int) -> int:
    """The most sends that cross one directed link of one lane."""
    if len(src) == 0:
        return 0
    load = np.zeros((links, size, 2), dtype=np.int64)
    for step in range(int(hops.max())):
        live = hops > step
        at = (src[live] + go[live] * step) % size
        np.add.at(load, (core[live], at, (go[live] < 0).astype(np.int64)), 1)
    return int(load.max())


def routing_loads(
    family: OpFamily,
    owner: np.ndarray,
    ids: np.ndarray,
    group: tuple[int, ...],
    links: int,
    *,
    ring: bool,
    local_reduce: bool = False,
) -> Routing:
    """The page counts of one group: ``owner[e]`` the device (its index in the mesh) holding expert
    ``e``, ``ids`` the ``(len(group), tokens, k)`` top-k of each group device's tokens, ``group`` the
    mesh indices of the devices along the axis in order, ``links`` the lanes (one sender core each)."""
    size, tokens = ids.shape[0], ids.shape[1]
    position = np.full(max(int(owner.max()), *group) + 1, -1, dtype=np.int64)
    position[list(group)] = np.arange(size)
    where = position[owner[ids]]  # (size, tokens, k): each chosen expert's group position, -1 outside
    if family is OpFamily.ALL_TO_ALL_DISPATCH:
        per_core = math.ceil(tokens / links)
        hit = np.stack([(where == j).any(axis=2) for j in range(size)], axis=2)  # (sender, token, target)
        sender, token, target = np.nonzero(hit)
        core = token // per_core
        walked = per_core
    else:
        per_core = math.ceil(size * tokens / links)
        counts = np.stack([(where == j).sum(axis=2) for j in range(size)], axis=0)  # (holder, source, token)
        if local_reduce:
            counts = np.minimum(counts, 1)
        holder, source, token = np.nonzero(counts)
        repeat = counts[holder, source, token]
        sender, target = np.repeat(holder, repeat), np.repeat(source, repeat)
        core = np.repeat((source * tokens + token) // per_core, repeat)
        walked = per_core
    sent = np.zeros((size, links), dtype=np.int64)
    np.add.at(sent, (sender, core), 1)
    remote = sender != target
    src, dst, lane = sender[remote], target[remote], core[remote]
    go, hops = _directions(src, dst, lane, size, ring)
    return Routing(_lane_max(src, go, hops, lane, size, links), int(sent.max()), walked)


def predict_dispatch(desc: OpDesc, machine: Machine, routing: Routing) -> Prediction:
    """all_to_all_dispatch ``desc`` (inputs: tokens, ids, mapping; outputs: tokens, metadata) with its
    ``routing`` known (see the module)."""
    arch = machine.system.arch
    config = desc.collective or CollectiveConfig()
    devices = group_size(desc, machine)
    links, notes = usable_links(config, machine, desc.op_code)
    ring = config.topology is Topology.RING and devices > 2 and machine.system.closes_ring(devices)
    topology = Topology.RING if ring else Topology.LINEAR
    hops = devices // 2 if ring else devices - 1
    tokens, out = desc.inputs[0], desc.outputs[0]
    page = tokens.nbytes / max(1, math.prod(tokens.shape[:-1]))
    utilization = fabric_perf(arch.arch).utilization_for(OpFamily.ALL_GATHER, topology, devices)
    link_ns = routing.lane_pages * page / (arch.eth_line_rate_bytes_per_s * utilization) * 1e9
    out_pages = max(1, math.prod(out.shape[:-1]))
    written = min(1.0, routing.core_pages * links / out_pages)  # the received pages, not the whole buffer
    read = traffic(machine, [(desc.inputs[0], 1.0)], links)  # each sender core reads its tokens
    landed = traffic(machine, [(out, written)], machine.system.compute_cores)  # written by the fabric's routers
    memory = Traffic(read.dram_bytes + landed.dram_bytes, max(read.dram_ns, landed.dram_ns), 0, 0.0)
    fixed = arch.op_launch_ns + 2 * hops * arch.hop_latency_1d_ns
    notes = (
        f"all_to_all_dispatch: {devices} devices ({topology.value}), {links} lane(s); the busiest lane carries "
        f"{routing.lane_pages} pages of {page:.0f} B one way (the routing's, not the top-k bound)",
        *notes,
    )
    return kernel_prediction(
        arch, 0.0, memory, links, fixed_ns=fixed, link_ns=link_ns,
        link_bytes=int(routing.lane_pages * page), notes=notes,
    )  # fmt: skip
