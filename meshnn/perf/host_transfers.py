"""The host <-> device transfers of a captured program, each timed with :mod:`meshnn.perf.transfer`
and kept apart from the devices' time: a write of a host tensor to a mesh (``ttnn.from_torch(device=)``,
``ttnn.to_device``) and a read back (``ttnn.to_torch`` of a device tensor).

Each device's shard is one blocking transfer of its pages (a TILE tensor's page is a tile, a
ROW_MAJOR one's a row), timed on the architecture's measured host; the host moves the shards one
device after another (the sum over devices).  A chip with no PCIe link of its own (an N300's second
chip, a T3000's four remote ones: :data:`PCIE_CHIPS`) is timed through the Ethernet tunnel.  A
device of a mesh smaller than its system is taken at the same row and column of the system's mesh.
The figures are streams (the benchmark's 64 MiB calls): a small transfer's fixed cost (its commands,
the host's wait for the completion) is not in them.

Why apart: a whole model's per-step host work (:mod:`meshnn.perf.host`, fitted as published time less
the predicted device time) already holds its token and logits copies, so these times are what a
script's transfers take, not a term added to a step (that would count them twice).  Units: ``_ns``
nanoseconds, bytes.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass

from meshnn.errors import MeshnnValueError
from meshnn.perf.desc import ROW_MAJOR_ELEMENT_BYTES, Layout, TensorDesc
from meshnn.perf.systems import Machine
from meshnn.perf.transfer import host_read_ns, host_write_ns


class Direction(enum.Enum):
    """Host -> device (a write) or device -> host (a read)."""

    WRITE = "write"
    READ = "read"


PCIE_CHIPS: dict[str, frozenset[int]] = {
    "n300": frozenset({0}),  # the card's left chip; chip 1 is reached over Ethernet
    "t3k": frozenset({1, 2, 5, 6}),  # each N300 card's PCIe chip (meshnn.device.visible's layout)
}
"""The PCIe-attached chips (row-major ids over the system's mesh) of the systems that have remote
ones; every chip of the others (N150, P150, P300, Galaxy) has its own PCIe link."""


@dataclass(frozen=True, slots=True)
class HostTransferRecord:
    """One host <-> mesh transfer: ``op`` (from_torch, to_device, to_torch), its ``direction``, the
    ``devices`` it touched (row-major ids of the mesh), each one's bytes and page size, how many
    of them are remote, and the host's time for all of them (``ns``)."""

    op: str
    direction: Direction
    devices: tuple[int, ...]
    bytes_per_device: int
    page_bytes: int
    remote_devices: int
    ns: float

    @property
    def nbytes(self) -> int:
        return self.bytes_per_device * len(self.devices)


def page_bytes(tensor: TensorDesc) -> int:
    """The page size of ``tensor``'s buffer: a tile (TILE), a row of its last dim (ROW_MAJOR)."""
    if tensor.layout is Layout.TILE:
        return tensor.tile_bytes
    return max(1, tensor.shape[-1] * ROW_MAJOR_ELEMENT_BYTES[tensor.dtype])


def is_remote(machine: Machine, device: int) -> bool:
    """Whether ``device`` (a row-major id of ``machine``'s mesh) is reached through another chip."""
    pcie = PCIE_CHIPS.get(machine.system.name)
    if pcie is None:
        return False
    _, cols = machine.mesh_shape
    row, col = divmod(device, cols)
    return row * machine.system.spec.mesh_shape[1] + col not in pcie


def time_transfer(
    machine: Machine, op: str, direction: Direction, tensor: TensorDesc, devices: Sequence[int]
) -> HostTransferRecord:
    """The host's time to move ``tensor``'s shard (one device's share) to or from each of ``devices``."""
    if not isinstance(direction, Direction):
        raise MeshnnValueError(f"time_transfer: direction must be a Direction, got {direction!r}")
    ids = tuple(int(d) for d in devices)
    if not ids:
        raise MeshnnValueError(f"time_transfer: {op} touched no device")
    arch = machine.system.arch.arch
    page, nbytes = page_bytes(tensor), tensor.nbytes
    timer = host_write_ns if direction is Direction.WRITE else host_read_ns
    remote = [is_remote(machine, d) for d in ids]
    ns = sum(timer(arch, nbytes, page, remote=r) for r in remote)
    return HostTransferRecord(op, direction, ids, nbytes, page, sum(remote), ns)


def _size(nbytes: int) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if nbytes >= scale:
            return f"{nbytes / scale:.1f} {unit}"
    return f"{nbytes} B"


def transfers_line(records: Sequence[HostTransferRecord]) -> str:
    """One line of what ``records`` moved and took, saying it is not in the devices' totals ('' if none)."""
    if not records:
        return ""
    parts = []
    for direction, noun in ((Direction.WRITE, "write"), (Direction.READ, "read")):
        chosen = [r for r in records if r.direction is direction]
        if chosen:
            count = f"{len(chosen)} {noun}{'' if len(chosen) == 1 else 's'}"
            parts.append(f"{count} ({_size(sum(r.nbytes for r in chosen))})")
    total = sum(r.ns for r in records)
    remote = sum(r.remote_devices for r in records)
    via = f", {remote} of their device shards through the Ethernet tunnel" if remote else ""
    return (
        f"  host transfers: {', '.join(parts)}: {total / 1e3:,.1f} us on the host{via} (meshnn.perf.transfer; not "
        "in the device totals above)"
    )
