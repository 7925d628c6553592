"""Collectives over Ethernet: all_gather, reduce_scatter, all_reduce on a line or a ring of devices.

Following Tenstorrent's CCL bandwidth report [tt-metal: tech_reports/CCLs/CCL_bandwidth.md], with
``T`` the un-sharded tensor (all_gather's output, reduce_scatter's input, all_reduce's input and
output) and ``N`` the devices along the collective's axis:

- bytes through the bottleneck link: ``(N-1)/N * T`` (all_gather, reduce_scatter), twice that for
  all_reduce; a ring sends half of them each way;
- time on the links: those bytes over ``links x directions x line rate x utilisation``, where the
  utilisation is the asymptote the report measured for that collective and topology (and, for a
  line of two devices, for two devices);
- start-up: a per-call cost plus, per hop of the diameter (``N-1`` on a line, ``N/2`` on a ring),
  the measured per-hop cost (the report's fit; a 2D fabric adds its slower hop);
- ``cluster_axis`` picks the mesh axis; the lines along it run at once on their own links.
A ring asked for where the axis does not close (no wraparound link) runs as a line, as
``ttnn.get_usable_topology`` would resolve it.
"""

from __future__ import annotations

from meshnn.errors import MeshnnValueError
from meshnn.perf.desc import CollectiveConfig, Fabric, OpDesc, OpFamily, Topology
from meshnn.perf.prediction import Prediction
from meshnn.perf.systems import Machine
from meshnn.perf.traffic import kernel_prediction, traffic


def group_size(desc: OpDesc, machine: Machine) -> int:
    """Devices taking part in one collective: those along ``cluster_axis``, else the whole mesh."""
    config = desc.collective or CollectiveConfig()
    if config.cluster_axis is None:
        return machine.num_devices
    if config.cluster_axis not in (0, 1):
        raise MeshnnValueError(f"{desc.op_code}: cluster_axis must be 0 or 1, got {config.cluster_axis!r}")
    return machine.mesh_shape[config.cluster_axis]


def usable_topology(requested: Topology, devices: int, machine: Machine) -> Topology:
    """The topology that runs: a ring only where a line of ``devices`` closes on this system."""
    if requested is Topology.RING and devices > 2 and machine.system.closes_ring(devices):
        return Topology.RING
    return Topology.LINEAR


def bottleneck_bytes(desc: OpDesc, devices: int) -> float:
    """Bytes the busiest link carries (both directions of a ring together)."""
    whole = desc.outputs[0].nbytes if desc.family is OpFamily.ALL_GATHER else desc.inputs[0].nbytes
    share = (devices - 1) / devices * whole
    return 2 * share if desc.family is OpFamily.ALL_REDUCE else share


def _links(config: CollectiveConfig, machine: Machine, op: str) -> int:
    usable = machine.system.usable_links
    if usable < 1:
        raise MeshnnValueError(f"{op}: {machine.system.name} has no Ethernet links between its chips")
    return min(config.num_links, usable) if config.num_links else usable


def predict_collective(desc: OpDesc, machine: Machine) -> Prediction:
    """The time of a collective ``desc`` (per-device input and output) on ``machine``."""
    arch = machine.system.arch
    config = desc.collective or CollectiveConfig()
    devices = group_size(desc, machine)
    memory = traffic(machine, [(t, 1.0) for t in (*desc.inputs, *desc.outputs)], machine.system.compute_cores)
    if devices < 2:
        return kernel_prediction(arch, 0.0, memory, 1)
    topology = usable_topology(config.topology, devices, machine)
    links = _links(config, machine, desc.op_code)
    directions = 2 if topology is Topology.RING else 1
    key = (desc.family, topology)
    utilization = arch.ccl_link_utilization[key]
    if devices == 2:  # two-device lines keep their links less busy (the report's N=2 asymptotes)
        utilization = arch.ccl_two_device_utilization[desc.family]
    rate = links * directions * arch.eth_line_rate_bytes_per_s * utilization
    moved = bottleneck_bytes(desc, devices)
    hops = devices // 2 if topology is Topology.RING else devices - 1
    per_hop = arch.ccl_hop_startup_ns[key]
    if config.fabric is Fabric.FABRIC_2D:
        per_hop += arch.hop_latency_2d_ns - arch.hop_latency_1d_ns
    notes = (f"topology {topology.value}, {devices} devices, {links} link(s)",)
    if topology is not config.topology:
        notes += (f"{config.topology.value} asked: the {devices}-device axis has no wraparound link",)
    fixed = arch.ccl_invocation_ns[desc.family] + hops * per_hop
    link_ns = moved / rate * 1e9
    cores = links * directions
    return kernel_prediction(
        arch, 0.0, memory, cores, fixed_ns=fixed, link_ns=link_ns, link_bytes=int(moved / directions), notes=notes
    )
