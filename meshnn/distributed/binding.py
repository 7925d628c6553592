"""The mesh a rank launched by tt-run opens: its rank binding, read from the environment tt-run
gives each rank (``TT_MESH_ID``, ``TT_MESH_HOST_RANK``, ``TT_MESH_GRAPH_DESC_PATH``).

With a binding every rank opens its own mesh (the descriptor's mesh ``TT_MESH_ID``) and owns all of
its devices; ranks talk through sockets and the distributed context.  A descriptor whose only mesh
spans several host ranks along its rows (``host_topology [N, 1]``: tt-metal's big mesh over N
hosts) is opened as the shared mesh of plain ``mpiexec``: host rank ``h`` (MPI rank ``h``) owns the
``h``-th block of rows.  Without one (plain ``mpiexec``) the ranks share one mesh, rows dealt to ranks
(:mod:`meshnn.distributed.context`).

May import: :mod:`meshnn.errors` and :mod:`meshnn.distributed.mesh_graph`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from meshnn.distributed.mesh_graph import read_mesh_graph
from meshnn.errors import MeshnnValueError, NotImplementedByMeshnn

MESH_ID_ENV = "TT_MESH_ID"
HOST_RANK_ENV = "TT_MESH_HOST_RANK"
DESCRIPTOR_ENV = "TT_MESH_GRAPH_DESC_PATH"


@dataclass(frozen=True)
class MeshBinding:
    """This rank's mesh: its id, its host rank in it, and the device shape it opens (None: no
    descriptor given, the shape asked for is opened)."""

    mesh_id: int
    mesh_host_rank: int
    shape: tuple[int, ...] | None
    descriptor: Path | None
    shared: bool = False
    """True: the mesh spans several host ranks, every rank of the run one block of its rows (the
    shared mesh of plain ``mpiexec``, of the descriptor's whole shape)."""


def _count(name: str) -> int | None:
    value = os.environ.get(name)
    if value is None or value == "":
        return None
    if not value.strip().isdecimal():
        raise MeshnnValueError(f"${name} must be a non-negative integer (tt-run's rank binding), got {value!r}")
    return int(value)


def rank_binding() -> MeshBinding | None:
    """This process's binding, or None when tt-run gave it none (no ``TT_MESH_ID``)."""
    mesh_id = _count(MESH_ID_ENV)
    if mesh_id is None:
        return None
    host_rank = _count(HOST_RANK_ENV) or 0
    path = os.environ.get(DESCRIPTOR_ENV) or None
    if path is None:
        return MeshBinding(mesh_id, host_rank, None, None)
    meshes = read_mesh_graph(path)
    if mesh_id not in meshes:
        raise MeshnnValueError(
            f"${MESH_ID_ENV}={mesh_id} names no mesh of the mesh graph descriptor {path} (its meshes: {sorted(meshes)})"
        )
    mesh = meshes[mesh_id]
    mesh.host_part(host_rank)  # (checks the host rank)
    if mesh.host_ranks == 1:
        return MeshBinding(mesh_id, host_rank, mesh.device_shape, Path(path))
    if len(meshes) > 1 or any(h != 1 for h in mesh.host_shape[1:]):
        raise NotImplementedByMeshnn(
            f"open_mesh_device under tt-run of mesh {mesh_id} split over host_topology {list(mesh.host_shape)} "
            f"beside other meshes or along columns ({path}): meshnn shares a mesh between ranks by rows, when it is "
            "the descriptor's only mesh"
        )
    return MeshBinding(mesh_id, host_rank, mesh.device_shape, Path(path), shared=True)
