"""Collectives over Ethernet: all_gather, reduce_scatter, all_reduce on a line or a ring of devices.

Following Tenstorrent's CCL bandwidth report (the figures and their fit are in
:mod:`meshnn.perf.fabric`), with ``T`` the un-sharded tensor (all_gather's output, reduce_scatter's
input, all_reduce's input and output) and ``N`` the devices along the collective's axis:

- bytes through the bottleneck link: ``(N-1)/N * T``; a ring sends half of them each way;
- time: a per-call start-up, a cost per hop of the diameter (``N-1`` on a line, ``N/2`` on a ring;
  a 2D fabric adds its slower hop), those bytes over ``links x line rate x utilisation``, and the
  ramp term between start-up and asymptote (``ramp x sqrt(MB per link per direction)``), which for a
  reduce_scatter stops growing where its program reaches its most workers (:data:`RS_MOST_WORKERS_BYTES`);
  a one-shot ring reduce_scatter (up to 512 KiB a device) adds the read-back of its staging where that
  misses a worker's L1 (:func:`staging_readback_ns`);
- a line all_gather sends no faster than its workers copy their slice (:func:`local_copy_ns`, Blackhole);
- all_reduce is a reduce_scatter followed by an all_gather over the same links: the sum of the two;
  except where a program sends straight to its targets (below);
- **direct programs**: the Llama decode collectives write straight into their targets' L1 through
  the fabric, which forwards packets router to router, instead of the report's programs, whose
  workers receive and forward every slice hop by hop behind an entry barrier
  [tt-metal: ttnn/cpp/ttnn/operations/experimental/ccl/all_gather_async/device/kernels/
  minimal_default_writer.cpp: a unicast to the neighbour and a barrier multicast].  Three are
  modelled: the Llama form of ``experimental.all_reduce_async`` (given its own buffer tensor;
  marked ``("multicast", "True")`` in ``OpDesc.attributes``), whose every device multicasts its
  whole tensor along the line both ways and sums what it receives [all_reduce_async/device/kernels/
  dataflow/worker_writer.cpp, reduction.cpp]; ``experimental.all_gather_async`` on the three Llama
  shapes for which tt-metal picks its sharded program (:data:`LLAMA_SHARDED_GATHERS`, from
  composite_common.cpp's use_all_gather_async_llama_sharded), which multicasts each device's slice
  the same way [all_gather_async/device/kernels/llama_shapes_sharded_writer.cpp]; and
  ``llama_reduce_scatter`` (and its create-heads variant), whose every device unicasts each other
  device its slice the shorter way round, ties to the right [llama_reduce_scatter/device/kernels/
  dataflow/writer_llama_reduce_scatter.cpp].  One phase: an op's launch (``ArchPerf.op_launch_ns``)
  and the fabric's own latency per hop to the farthest target (``hop_latency_1d_ns``, the CCL
  report's per-hop latency; ``N/2`` hops on a ring, ``N-1`` on a line), then the busiest link's
  bytes at all_gather's utilisation and ramp, or, where longer, the packets its sender core issues
  (:func:`sender_packets`: one sender a link in the three Llama programs) at the EDM's per-packet rate
  (``FabricPerf.packet_ns``: a sender's packets go one at a time into its router's channel, and the
  EDM moves one sender's packets at 3.05 Mpps on Wormhole whatever their size up to 2 KiB): what holds a
  gather of one-tile shards, a packet a bfloat8_b tile.  The busiest link carries, one way: multicast,
  ``N/2`` whole tensors on a ring (those of the devices behind it), ``N-1`` on a line (slices of
  ``T/N`` for the all_gather); unicast, ``1 + 2 + ... + N//2`` slices of ``T/N`` on a ring (each
  distance crosses that many links), ``floor(N/2) x ceil(N/2)`` on a line (the middle link);
- ``cluster_axis`` picks the mesh axis; the lines along it run at once on their own links;
- a call whose devices are already aligned (``CollectiveConfig.aligned``: it follows another
  collective on them, set by :class:`meshnn.perf.recorder.Recorder`) does not wait out the launch
  skew a call alone does: each phase's start-up is ``launch_skew_ns`` shorter (the topology's: a ring
  fabric saves more than a line one); a direct program's start-up holds no skew wait (it has no entry
  barrier and its launch and hops are not fitted to calls alone), so it saves nothing.
A ring asked for where the axis does not close (no wraparound link) runs as a line, as
``ttnn.get_usable_topology`` would resolve it; ``num_links`` above what the system offers per hop
is clamped to it, and the prediction says so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from meshnn.device.arch import Arch
from meshnn.errors import MeshnnValueError
from meshnn.perf.dated_collectives import dated_phase, half_slices, relays
from meshnn.perf.desc import BufferType, CollectiveConfig, Fabric, Layout, MemoryLayout, OpDesc, OpFamily, Topology
from meshnn.perf.fabric import fabric_perf
from meshnn.perf.hardware import ArchPerf
from meshnn.perf.llama_rs_tail import output_writes, packet_read_ns, reduction_tail_ns, summed_tiles
from meshnn.perf.prediction import Prediction
from meshnn.perf.systems import Machine
from meshnn.perf.traffic import kernel_prediction, traffic


def group_size(desc: OpDesc, machine: Machine) -> int:
    """Devices taking part in one collective: those along ``cluster_axis``, else those it runs on
    (``CollectiveConfig.devices``: a tensor on part of the mesh), else the whole mesh."""
    config = desc.collective or CollectiveConfig()
    if config.cluster_axis is None:
        return min(config.devices or machine.num_devices, machine.num_devices)
    if config.cluster_axis not in (0, 1):
        raise MeshnnValueError(f"{desc.op_code}: cluster_axis must be 0 or 1, got {config.cluster_axis!r}")
    return machine.mesh_shape[config.cluster_axis]


def usable_topology(requested: Topology, devices: int, machine: Machine) -> Topology:
    """The topology that runs: a ring only where a line of ``devices`` closes on this system."""
    if requested is Topology.RING and devices > 2 and machine.system.closes_ring(devices):
        return Topology.RING
    return Topology.LINEAR


def bottleneck_bytes(desc: OpDesc, devices: int) -> float:
    """Bytes the busiest link carries (both directions of a ring together) for the whole op."""
    whole = desc.outputs[0].nbytes if desc.family is OpFamily.ALL_GATHER else desc.inputs[0].nbytes
    share = (devices - 1) / devices * whole
    return 2 * share if desc.family is OpFamily.ALL_REDUCE else share


def usable_links(config: CollectiveConfig, machine: Machine, op: str) -> tuple[int, tuple[str, ...]]:
    """The links a collective gets per hop, and a note when ``num_links`` asked for more than the
    system offers (tt-metal's programs clamp to the routing planes they find)."""
    usable = machine.system.usable_links
    if usable < 1:
        raise MeshnnValueError(f"{op}: {machine.system.name} has no Ethernet links between its chips")
    if not config.num_links:
        return usable, ()
    if config.num_links <= usable:
        return config.num_links, ()
    note = (
        f"num_links={config.num_links} asked, {usable} usable per hop on {machine.system.name} "
        f"({machine.system.links_per_hop} physical; the rest carry fast dispatch): timed with {usable}"
    )
    return usable, (note,)


Route = tuple[Topology, int, Fabric]
"""How a collective runs: its topology, its links per hop and its fabric."""


@dataclass(frozen=True, slots=True)
class Phase:
    """One reduce_scatter or all_gather pass: its start-up and its transfer (ns)."""

    startup_ns: float
    transfer_ns: float


ONE_SHOT_CALLERS = frozenset({"", "ttnn.reduce_scatter", "ttnn.all_reduce"})
"""The ops whose reduce_scatter may take the one-shot (direct) ring program: tt-metal picks it in ttnn::reduce_scatter
itself [ttnn/cpp/ttnn/operations/ccl/reduce_scatter/reduce_scatter.cpp, use_direct_reduce_scatter], so
``experimental.reduce_scatter_minimal_async`` and the fused programs always run the ring; ttnn.all_reduce's
reduce_scatter follows ttnn.reduce_scatter (the report's all_reduce rows dip with it at 512 KiB); an unnamed
description is ttnn.reduce_scatter's (its op_code's default)."""


def phase(
    arch: ArchPerf,
    family: OpFamily,
    whole_bytes: float,
    devices: int,
    route: Route,
    one_shot_ok: bool = True,
    tile_bytes: float = 2048.0,
) -> Phase:
    """The time of one all_gather or reduce_scatter of ``whole_bytes`` (T) over ``devices`` on
    ``route`` = (topology, links, fabric), from the report's terms; ``one_shot_ok``: the caller may take the
    one-shot ring reduce_scatter (:data:`ONE_SHOT_CALLERS`); ``tile_bytes``: a page of its tensor."""
    topology, links, kind = route
    fabric = fabric_perf(arch.arch)
    directions = 2 if topology is Topology.RING else 1
    hops = devices // 2 if topology is Topology.RING else devices - 1
    per_hop = fabric.hop_ns[(family, topology)]
    if kind is Fabric.FABRIC_2D:
        per_hop += arch.hop_latency_2d_ns - arch.hop_latency_1d_ns
    per_direction = (devices - 1) / devices * whole_bytes / directions
    one_shot = one_shot_ok and family is OpFamily.REDUCE_SCATTER and topology is Topology.RING
    one_shot = one_shot and whole_bytes <= fabric.one_shot_max_bytes
    if one_shot:
        per_direction *= fabric.one_shot_factor
    per_link = per_direction / links
    utilization = fabric.utilization_for(family, topology, devices)
    bandwidth = per_link / (arch.eth_line_rate_bytes_per_s * utilization) * 1e9
    ramp_bytes = per_link
    if family is OpFamily.REDUCE_SCATTER and not one_shot:
        ramp_bytes = min(per_link, rs_most_workers_bytes(arch, topology))
    ramp = fabric.ramp_ns[family] * math.sqrt(ramp_bytes / 1e6)
    readback = staging_readback_ns(arch, whole_bytes, devices, links, tile_bytes) if one_shot else 0.0
    transfer = bandwidth + ramp + readback
    if family is OpFamily.ALL_GATHER and topology is Topology.LINEAR:
        transfer = max(transfer, local_copy_ns(arch, whole_bytes, devices, links))
    return Phase(fabric.invocation_ns[family] + hops * per_hop, transfer)


def gather_workers(per_link_bytes: float) -> int:
    """Workers a link and direction the all_gather program runs for ``per_link_bytes`` (``T (N-1)/N / links``, halved
    on a ring) [tt-metal: all_gather_async_default_program_factory.cpp, default_workers: 4 above 256 KiB, 1 at or
    below 4 KiB (one packet), else 2]."""
    if per_link_bytes > 256 * 1024:
        return 4
    return 1 if per_link_bytes <= 4 * 1024 else 2


def local_copy_ns(arch: ArchPerf, whole_bytes: float, devices: int, links: int) -> float:
    """A line all_gather's send of a device's slice (``T/N``) by the workers that also copy it to the device's own
    output, each at ``copy_worker_bytes_per_s`` (:mod:`meshnn.perf.fabric`; ns, 0 where not modelled)."""
    rate = fabric_perf(arch.arch).copy_worker_bytes_per_s
    if not rate:
        return 0.0
    workers = gather_workers((devices - 1) / devices * whole_bytes / links)
    return whole_bytes / devices / links / workers / rate * 1e9


RS_MOST_WORKERS_BYTES = {
    (Arch.BLACKHOLE, Topology.RING): 1024 * 1024,
    (Arch.WORMHOLE_B0, Topology.RING): 50 * 1024 * 1024,
    Topology.LINEAR: 4_000_000,
}
"""Bytes a link carries (one direction) past which the ring and line reduce_scatter programs run their most
workers a link and direction, 8 [tt-metal: ttnn/cpp/ttnn/operations/experimental/ccl/reduce_scatter_common/
reduce_scatter_program_utils.cpp, reduce_scatter_default_workers: RING_HIGH_DATA_THRESHOLD (1 MiB on Blackhole,
50 MiB elsewhere), LINEAR_HIGH_DATA_THRESHOLD (4,000,000 B); the same per-link measure,
``T (N-1)/N / links``, halved on a ring]."""


def rs_most_workers_bytes(arch: ArchPerf, topology: Topology) -> float:
    """Where the reduce_scatter's ramp stops (:data:`RS_MOST_WORKERS_BYTES`): the ramp stands for the workers
    and synchronisation granularity growing with size; past the threshold the worker count is at its most (8)
    and chunks_per_sync at its cap (20 on a line, 80 on a ring, reached sooner), so the ramp holds there."""
    if topology is Topology.LINEAR:
        return RS_MOST_WORKERS_BYTES[Topology.LINEAR]
    return RS_MOST_WORKERS_BYTES[(arch.arch, Topology.RING)]


DIRECT_RS_SHARD_BUDGET_BYTES = 640 * 1024
"""The most staging one worker core of the one-shot (direct) ring reduce_scatter holds in its own L1, aliased
to its reduce buffer [tt-metal: ttnn/cpp/ttnn/operations/experimental/ccl/reduce_scatter_minimal_direct/device/
reduce_scatter_minimal_direct_op_device_operation.cpp, k_l1_shard_budget_bytes].  The shard is two parity halves
of every source device's block of every chunk of a slice: ``2 x N x chunks x chunk bytes``, a chunk
``tile_granularity`` tiles (8; 4 for float32) and a slice's tiles rounded up to whole chunks
[reduce_scatter_program_utils.cpp, reduce_scatter_ring_interm_staging_params]: about ``2T`` (T the per-device
input).  Past the budget the staging goes interleaved (L1, or DRAM past 4 MiB in all) and each worker reads its
arrivals back over the NoC after the last one lands."""


def staging_shard_bytes(whole_bytes: float, devices: int, tile_bytes: float) -> float:
    """The one-shot reduce_scatter's staging shard a worker needs for ``whole_bytes`` (T) over ``devices``
    (see :data:`DIRECT_RS_SHARD_BUDGET_BYTES`)."""
    granularity = 4 if tile_bytes >= 4096 else 8
    slice_tiles = math.ceil(whole_bytes / devices / tile_bytes)
    return 2 * devices * math.ceil(slice_tiles / granularity) * granularity * tile_bytes


def staging_readback_ns(arch: ArchPerf, whole_bytes: float, devices: int, links: int, tile_bytes: float) -> float:
    """What the one-shot ring reduce_scatter of ``whole_bytes`` (T, each device's input) adds when its staging
    does not fit a worker's L1 shard (:data:`DIRECT_RS_SHARD_BUDGET_BYTES`): each worker (one a link) reads the
    ``N-1`` arrived blocks of its chunks, ``(N-1)/N x T / links`` bytes, back from interleaved staging at one
    core's NoC rate, strictly after the last arrival [reduce_scatter_minimal_direct_op_device_operation.cpp: 'That
    readback is pure post-gate latency'] (ns; 0 where the staging is sharded)."""
    if staging_shard_bytes(whole_bytes, devices, tile_bytes) <= DIRECT_RS_SHARD_BUDGET_BYTES:
        return 0.0
    arrivals = (devices - 1) / devices * whole_bytes / links
    return arch.cycles_ns(arrivals / arch.noc_bytes_per_cycle)


DIRECT_REDUCE_SCATTERS = frozenset(
    {"LlamaReduceScatterDeviceOperation", "LlamaReduceScatterCreateHeadsDeviceOperation"}
)
"""The reduce_scatters whose program unicasts each slice straight to its device (the Llama ones)."""


LLAMA_SHARDED_GATHERS = frozenset(
    {
        ((1, 1, 32, 960), MemoryLayout.WIDTH_SHARDED),  # after FF1 x FF3 (binary mult + silu)
        ((1, 8, 32, 128), MemoryLayout.HEIGHT_SHARDED),  # after SDPA
        ((1, 1, 32, 32), MemoryLayout.WIDTH_SHARDED),  # the RMS norm's statistics
    }
)
"""(per-device input shape, memory layout of input and output, both in L1) of the all_gather_async
calls tt-metal runs with its Llama sharded (multicast) program; composite_common.cpp also checks the
shard shapes and core counts, which a :class:`TensorDesc` does not hold."""


LLAMA_SHARD_TILES = {(1, 1, 32, 960): 1, (1, 8, 32, 128): 4, (1, 1, 32, 32): 1}
"""Tiles of one core's shard in each Llama sharded gather's input (30 width shards of 32x32, 8 height shards of
32x128, one of 32x32): llama_shapes_sharded_writer.cpp sends at most one shard a packet."""

FABRIC_PACKET_BYTES = 4352
"""Payload bytes of a fabric packet, four bfloat8_b tiles [tt-metal: tt_metal/fabric/erisc_datamover_builder.hpp,
default_packet_payload_size_bytes; programs read it as get_tt_fabric_channel_buffer_size_bytes]."""


def sender_packets(desc: OpDesc, devices: int, links: int) -> int:
    """Packets one sender core of the direct program ``desc`` issues on its link, one way.

    - Llama gather [all_gather_async_llama_sharded_program_factory.cpp: one worker a link, the device's pages
      split evenly over the links; llama_shapes_sharded_writer.cpp: a packet holds the tiles left in the current
      shard, at most a packet's pages];
    - Llama reduce_scatter [llama_reduce_scatter_program_factory.cpp: one sender core a link; a packet
      ``payload / tile bytes`` pages, the payload rounded down to a power of two for bfloat16]: its share of the
      ``N-1`` slices it sends;
    - Llama all_reduce_async [all_reduce_async_program_factory.cpp: one worker a link, the pages split evenly
      over the links; worker_writer.cpp packs them as the gather does]: its share of the device's tiles in full
      packets, the fewest it can send (the shard's tiles a core, which could split them further, are not in the
      description).
    """
    source = desc.inputs[0]
    tiles = source.tiles
    tile_bytes = source.nbytes / max(tiles, 1)
    if is_llama_gather(desc):
        per_packet = max(1, min(LLAMA_SHARD_TILES[source.shape], int(FABRIC_PACKET_BYTES // tile_bytes)))
        return math.ceil(math.ceil(tiles / links) / per_packet)
    if desc.family is OpFamily.REDUCE_SCATTER and desc.op_code in DIRECT_REDUCE_SCATTERS:
        per_packet = llama_rs_pages_per_packet(desc)
        return math.ceil((devices - 1) * (tiles / devices) / links / per_packet)
    if is_multicast(desc):
        return math.ceil(math.ceil(tiles / links) / max(1, int(FABRIC_PACKET_BYTES // tile_bytes)))
    return 0


def llama_rs_pages_per_packet(desc: OpDesc) -> int:
    """Tiles a packet of the Llama reduce_scatter holds: the payload (rounded down to a power of two for bfloat16)
    over a tile's bytes [llama_reduce_scatter_program_factory.cpp: num_pages_per_packet]."""
    source = desc.inputs[0]
    tile_bytes = source.nbytes / max(source.tiles, 1)
    payload = 1 << (FABRIC_PACKET_BYTES.bit_length() - 1) if source.dtype == "BFLOAT16" else FABRIC_PACKET_BYTES
    return max(1, int(payload // tile_bytes))


def is_llama_gather(desc: OpDesc) -> bool:
    """Whether ``desc`` is an ``experimental.all_gather_async`` tt-metal runs as its Llama multicast."""
    if desc.family is not OpFamily.ALL_GATHER or desc.name != "ttnn.experimental.all_gather_async":
        return False
    source, target = desc.inputs[0], desc.outputs[0]
    in_l1 = source.buffer is BufferType.L1 and target.buffer is BufferType.L1 and source.layout is Layout.TILE
    return in_l1 and source.memory is target.memory and (source.shape, source.memory) in LLAMA_SHARDED_GATHERS


def is_multicast(desc: OpDesc) -> bool:
    """Whether ``desc`` runs as one multicast phase (the Llama ``all_reduce_async`` and all_gathers)."""
    return (desc.family is OpFamily.ALL_REDUCE and ("multicast", "True") in desc.attributes) or is_llama_gather(desc)


def is_direct(desc: OpDesc) -> bool:
    """Whether ``desc``'s program sends straight to its targets through the fabric (see the module)."""
    return is_multicast(desc) or (desc.family is OpFamily.REDUCE_SCATTER and desc.op_code in DIRECT_REDUCE_SCATTERS)


def direct_units(desc: OpDesc, devices: int, ring: bool) -> float:
    """The busiest link's load one way, in whole tensors ``T``, of the direct program ``desc``."""
    if is_multicast(desc):
        tensors = float(devices // 2 if ring else devices - 1)
        return tensors / devices if desc.family is OpFamily.ALL_GATHER else tensors
    half = devices // 2
    crossings = half * (half + 1) // 2 if ring else half * (devices - half)
    return crossings / devices


def direct_phase(arch: ArchPerf, desc: OpDesc, whole_bytes: float, devices: int, route: Route) -> Phase:
    """The one phase of a direct program ``desc`` (T = ``whole_bytes``) over ``devices`` on ``route``."""
    topology, links, kind = route
    fabric = fabric_perf(arch.arch)
    ring = topology is Topology.RING
    hops = devices // 2 if ring else devices - 1
    per_hop = arch.hop_latency_2d_ns if kind is Fabric.FABRIC_2D else arch.hop_latency_1d_ns
    per_link = direct_units(desc, devices, ring) * whole_bytes / links
    utilization = fabric.utilization_for(OpFamily.ALL_GATHER, topology, devices)
    bandwidth = per_link / (arch.eth_line_rate_bytes_per_s * utilization) * 1e9
    packet_ns, tail = fabric.packet_ns, 0.0
    if desc.op_code in DIRECT_REDUCE_SCATTERS:  # the sender core reads each packet; the sum follows the last
        tile_bytes = desc.inputs[0].nbytes / max(desc.inputs[0].tiles, 1)
        per_packet = llama_rs_pages_per_packet(desc)
        packet_ns = max(packet_ns, packet_read_ns(arch, per_packet * tile_bytes))
        pages = min(per_packet, max(1, desc.inputs[0].tiles // devices))
        writes = output_writes(desc.op_code, pages * tile_bytes, pages)
        summed = summed_tiles(desc.op_code, pages * tile_bytes, pages, desc.inputs[0].shape[-2], devices)
        tail = reduction_tail_ns(arch, tile_bytes, pages, devices, writes, summed)
    packets = sender_packets(desc, devices, links) * packet_ns
    ramp = fabric.ramp_ns[OpFamily.ALL_GATHER] * math.sqrt(per_link / 1e6)
    return Phase(arch.op_launch_ns + hops * per_hop, max(bandwidth, packets) + ramp + tail)


def predict_collective(desc: OpDesc, machine: Machine) -> Prediction:
    """The time of a collective ``desc`` (per-device input and output) on ``machine``."""
    arch = machine.system.arch
    config = desc.collective or CollectiveConfig()
    devices = group_size(desc, machine)
    memory = traffic(machine, [(t, 1.0) for t in (*desc.inputs, *desc.outputs)], machine.system.compute_cores)
    if devices < 2:
        return kernel_prediction(arch, 0.0, memory, 1)
    topology = usable_topology(config.topology, devices, machine)
    links, notes = usable_links(config, machine, desc.op_code)
    whole = desc.outputs[0].nbytes if desc.family is OpFamily.ALL_GATHER else desc.inputs[0].nbytes
    families = (OpFamily.REDUCE_SCATTER, OpFamily.ALL_GATHER) if desc.family is OpFamily.ALL_REDUCE else (desc.family,)
    route = (topology, links, config.fabric)
    one_shot_ok = desc.name in ONE_SHOT_CALLERS and not half_slices(desc, arch.arch)  # none before 2026-04
    tile_bytes = desc.inputs[0].nbytes / max(desc.inputs[0].tiles, 1)
    phases = [phase(arch, f, whole, devices, route, one_shot_ok, tile_bytes) for f in families]
    phases = [dated_phase(desc, arch, f, topology, devices, p) for f, p in zip(families, phases, strict=True)]
    notes = (f"topology {topology.value}, {devices} devices, {links} link(s)", *notes)
    if is_direct(desc):
        phases = [direct_phase(arch, desc, whole, devices, route)]
        how = "multicasts its whole tensor" if is_multicast(desc) else "unicasts each slice to its device"
        notes += (f"one direct phase: each device {how} through the fabric's routers",)
    if config.aligned and not is_direct(desc) and not relays(desc):  # no entry barrier, no skew wait
        skew = fabric_perf(arch.arch).launch_skew_ns[topology]
        phases = [Phase(max(0.0, p.startup_ns - skew), p.transfer_ns) for p in phases]
        notes += (f"right behind a collective on the same devices: no launch skew ({skew / 1e3:.2f} us a phase)",)
    if topology is not config.topology:
        notes += (f"{config.topology.value} asked: the {devices}-device axis has no wraparound link",)
    directions = 2 if topology is Topology.RING else 1
    moved = bottleneck_bytes(desc, devices)
    if is_direct(desc):
        moved = directions * direct_units(desc, devices, directions == 2) * whole
    return kernel_prediction(
        arch,
        0.0,
        memory,
        links * directions,
        fixed_ns=sum(p.startup_ns for p in phases),
        link_ns=sum(p.transfer_ns for p in phases),
        link_bytes=int(moved / directions / links),
        notes=notes,
    )
