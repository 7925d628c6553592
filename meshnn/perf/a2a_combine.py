"""What ``all_to_all_combine`` (AllToAllCombineDeviceOperation) costs, given the pages its program sends.

The program [tt-metal: ttnn/cpp/ttnn/operations/ccl/all_to_all_combine/device/all_to_all_combine_program_factory.cpp,
kernels/dataflow/reader_all_to_all_combine.cpp and writer_all_to_all_combine.cpp, as at the perf targets' date,
tt-metal cf2ed83aff, 2025-08-07] runs one sender core a link; the group's ``B x S`` tokens are split over them in
blocks.  On each core:

- the reader first reads the expert mapping, one page an expert, each read waited (the device's local experts);
- then, token by token, the reader reads the token's metadata page (its top-k) and waits for it; for each local
  expert among the top-k (the first only, with ``local_reduce``) it reads that expert's output page from DRAM and
  waits for it; the writer sends the page to the token's device: through the fabric, in packets of the channel's
  buffer (rounded down to a power of two for bfloat16), or, to itself, with a NoC write and its barrier;
- the metadata's circular buffer holds one page, and the writer pops it only when it is done with the token, so the
  reader cannot read the next token's metadata before the writer has sent this token's page: per token the chain
  runs in series, whatever the data buffer's depth;
- at the end each core sends a semaphore to every device of the group and waits for them all.

So the busiest core's time: ``experts`` + ``tokens`` waited DRAM reads (each a round trip,
:meth:`OpLatency.read_trip_cycles`), each sent page's read (a round trip and its bytes at one core's DRAM rate,
``ArchPerf.dram_activation_bytes_per_cycle``), and each page's send: its packets at the EDM's rate for one sender
(``FabricPerf.packet_ns``, or the packet's bytes at the line rate where longer), or a local page's bytes at the
NoC's rate and a write's latency.  Fixed: an op's launch and the semaphores' crossing of the group's diameter.
:class:`CombineLoad` carries each core's counts (from the routing, :func:`combine_load`) in an
:class:`~meshnn.perf.desc.OpDesc`'s attributes.  Units: ``_ns`` nanoseconds, bytes, cycles.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from meshnn.perf.collectives import FABRIC_PACKET_BYTES, group_size, usable_links
from meshnn.perf.desc import CollectiveConfig, OpDesc, Topology
from meshnn.perf.fabric import fabric_perf
from meshnn.perf.latency import op_latency
from meshnn.perf.prediction import Prediction
from meshnn.perf.sparse_a2a import COMBINE_CODE
from meshnn.perf.systems import Machine
from meshnn.perf.traffic import kernel_prediction, traffic

__all__ = ["COMBINE_CODE", "CombineLoad", "combine_attributes", "combine_load", "combine_load_of", "predict_combine"]


@dataclass(frozen=True, slots=True)
class CombineLoad:
    """The sender cores of one all_to_all_combine (over the group's devices; each distinct count once):
    ``cores`` holds (tokens it walks, pages it sends to any device, its own included, of them through the
    fabric); ``experts``: the mapping's pages each reader reads first."""

    cores: tuple[tuple[int, int, int], ...]
    experts: int

    def merged(self, other: CombineLoad) -> CombineLoad:
        """Both loads' cores (a scenario's iterations and rows), the larger mapping."""
        return CombineLoad(tuple(sorted(set(self.cores) | set(other.cores))), max(self.experts, other.experts))


_CORES, _EXPERTS = "combine_cores", "combine_experts"


def combine_attributes(load: CombineLoad) -> tuple[tuple[str, str], ...]:
    """``load`` as :attr:`OpDesc.attributes` pairs (cores as ``tokens:pages:remote`` joined by commas)."""
    cores = ",".join(f"{t}:{p}:{r}" for t, p, r in load.cores)
    return ((_CORES, cores), (_EXPERTS, str(load.experts)))


def combine_load_of(desc: OpDesc) -> CombineLoad | None:
    """The counts ``desc`` carries, else None (the routing was not known)."""
    found = dict(desc.attributes)
    if _CORES not in found or _EXPERTS not in found or not found[_CORES]:
        return None
    cores = tuple(tuple(int(v) for v in core.split(":")) for core in found[_CORES].split(","))
    return CombineLoad(cores, int(found[_EXPERTS]))  # type: ignore[arg-type]


def combine_load(
    owner: np.ndarray, ids: np.ndarray, group: tuple[int, ...], links: int, *, local_reduce: bool
) -> CombineLoad:
    """The sender cores of one group: ``owner[e]`` the mesh index of the device holding expert ``e``, ``ids``
    the ``(len(group), tokens, k)`` top-k of each group device's tokens, ``group`` the mesh indices along the
    axis, ``links`` the sender cores (the ``len(group) x tokens`` tokens split over them in blocks)."""
    size, tokens = ids.shape[0], ids.shape[1]
    per_core = math.ceil(size * tokens / links)
    source = np.repeat(np.arange(size), tokens)
    cores = set()
    for d, device in enumerate(group):
        sends = (owner[ids] == device).sum(axis=2).reshape(-1)  # pages a token, in the walk's (source-major) order
        if local_reduce:
            sends = np.minimum(sends, 1)
        for c in range(links):
            block = slice(c * per_core, min((c + 1) * per_core, size * tokens))
            walked = len(range(size * tokens)[block])
            cores.add((walked, int(sends[block].sum()), int(sends[block][source[block] != d].sum())))
    return CombineLoad(tuple(sorted(cores)), int(owner.shape[0]))


def predict_combine(desc: OpDesc, machine: Machine, load: CombineLoad) -> Prediction:
    """all_to_all_combine ``desc`` (inputs: the expert outputs, row-major, a page a token) with its sender
    cores' ``load`` known (see the module): the slowest core's chain."""
    arch = machine.system.arch
    latency = op_latency(arch.arch)
    fabric = fabric_perf(arch.arch)
    config = desc.collective or CollectiveConfig()
    devices = group_size(desc, machine)
    links, notes = usable_links(config, machine, desc.op_code)
    ring = config.topology is Topology.RING and devices > 2 and machine.system.closes_ring(devices)
    hops = devices // 2 if ring else devices - 1
    source = desc.inputs[0]
    page = source.nbytes / max(1, math.prod(source.shape[:-1]))
    payload = FABRIC_PACKET_BYTES
    if source.dtype == "BFLOAT16":
        payload = 1 << (payload.bit_length() - 1)  # the factory's bit_floor for bfloat16
    packet_ns = max(fabric.packet_ns, payload / (arch.eth_line_rate_bytes_per_s * arch.eth_payload_efficiency) * 1e9)
    trip = latency.read_trip_cycles(in_dram=True)
    local_cycles = page / arch.noc_bytes_per_cycle + latency.noc_write_latency_cycles
    fabric_ns = math.ceil(page / payload) * packet_ns

    def chain_ns(core: tuple[int, int, int]) -> float:
        tokens, pages, remote = core
        reads = (load.experts + tokens + pages) * trip + pages * page / arch.dram_activation_bytes_per_cycle
        return arch.cycles_ns(reads + (pages - remote) * local_cycles) + remote * fabric_ns

    busiest = max(load.cores, key=chain_ns)
    tokens, pages, remote = busiest
    walked = max(1, math.prod(source.shape[:-1]))
    memory = traffic(machine, [(source, min(1.0, pages * links / walked))], links)
    notes = (
        f"all_to_all_combine: {devices} devices, {links} sender core(s); the busiest walks {tokens} tokens and "
        f"sends {pages} pages of {page:.0f} B ({remote} through the fabric), each token's reads and send in "
        "series (one metadata page in flight)",
        *notes,
    )
    return kernel_prediction(
        arch, 0.0, memory, links, fixed_ns=arch.op_launch_ns + hops * arch.hop_latency_1d_ns,
        link_ns=chain_ns(busiest), link_bytes=int(remote * page), notes=notes,
    )  # fmt: skip
