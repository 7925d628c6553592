"""tt-metal's mesh graph descriptor (MGD 2.0, a protobuf text file), as far as a rank needs it:
the meshes (``mesh_descriptors``: name, ``device_topology`` dims, ``host_topology`` dims) and the
mesh instances of the top-level graph (``mesh_id`` -> descriptor).  A rank launched by tt-run with
``TT_MESH_ID`` opens the mesh its id names: the descriptor's device shape, split over its host
ranks (``host_topology``) as tt-metal splits a mesh over hosts.

May import: :mod:`meshnn.errors`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from meshnn.errors import MeshnnValueError

_TOKEN = re.compile(r'\s*(?:#[^\n]*\n?|([A-Za-z_][\w.]*)|("(?:[^"\\]|\\.)*")|(-?\d+)|([{}\[\]:,<>;]))')


def _tokens(text: str, where: str) -> list[str]:
    out, at = [], 0
    while at < len(text):
        found = _TOKEN.match(text, at)
        if found is None or found.end() == at:
            if text[at:].strip() == "":
                break
            raise MeshnnValueError(f"mesh graph descriptor {where}: cannot read {text[at : at + 30]!r}")
        at = found.end()
        token = next((g for g in found.groups() if g is not None), None)
        if token is not None:
            out.append(token)
    return out


def _message(tokens: list[str], at: int, where: str, close: str | None) -> tuple[dict, int]:
    """Fields up to ``close`` (a brace, or the end): name -> list of values (a str, an int, a
    message dict, or a list of those)."""
    fields: dict[str, list] = {}
    while at < len(tokens) and tokens[at] != close:
        name = tokens[at]
        at += 1
        if at < len(tokens) and tokens[at] == ":":
            at += 1
        if at >= len(tokens):
            raise MeshnnValueError(f"mesh graph descriptor {where}: {name} has no value")
        value, at = _value(tokens, at, where)
        fields.setdefault(name, []).append(value)
        if at < len(tokens) and tokens[at] in (",", ";"):
            at += 1
    if close is not None and at >= len(tokens):
        raise MeshnnValueError(f"mesh graph descriptor {where}: a '{{' is never closed")
    return fields, at + (close is not None)


def _value(tokens: list[str], at: int, where: str) -> tuple[object, int]:
    token = tokens[at]
    if token in ("{", "<"):
        return _message(tokens, at + 1, where, "}" if token == "{" else ">")
    if token == "[":
        items, at = [], at + 1
        while at < len(tokens) and tokens[at] != "]":
            item, at = _value(tokens, at, where)
            items.append(item)
            if at < len(tokens) and tokens[at] == ",":
                at += 1
        return items, at + 1
    if token.startswith('"'):
        return token[1:-1], at + 1
    if re.fullmatch(r"-?\d+", token):
        return int(token), at + 1
    return token, at + 1


@dataclass(frozen=True)
class MeshInstance:
    """One mesh of the graph: its id, descriptor name, device shape and host shape."""

    mesh_id: int
    name: str
    device_shape: tuple[int, ...]
    host_shape: tuple[int, ...]

    @property
    def host_ranks(self) -> int:
        count = 1
        for d in self.host_shape:
            count *= d
        return count

    def host_part(self, mesh_host_rank: int) -> tuple[int, ...]:
        """The device shape one host rank of this mesh opens (the mesh split over its hosts)."""
        if not 0 <= mesh_host_rank < self.host_ranks:
            raise MeshnnValueError(
                f"mesh {self.mesh_id} ({self.name}) has {self.host_ranks} host rank(s); TT_MESH_HOST_RANK="
                f"{mesh_host_rank} is not one of them"
            )
        return tuple(d // h for d, h in zip(self.device_shape, self.host_shape, strict=False))


def _dims(message: dict, name: str, where: str, default: tuple[int, ...] | None) -> tuple[int, ...]:
    topology = message.get(name)
    if not topology:
        if default is None:
            raise MeshnnValueError(f"mesh graph descriptor {where}: a mesh has no {name}")
        return default
    dims = topology[0].get("dims", [])
    flat = [d for item in dims for d in (item if isinstance(item, list) else [item])]
    if not flat or not all(isinstance(d, int) and d > 0 for d in flat):
        raise MeshnnValueError(f"mesh graph descriptor {where}: {name} dims must be positive ints, got {flat}")
    return tuple(flat)


def read_mesh_graph(path: str | Path) -> dict[int, MeshInstance]:
    """The meshes of the descriptor at ``path`` by mesh id (``MeshnnValueError`` naming the file)."""
    where = str(path)
    try:
        text = Path(path).read_text()
    except OSError as error:
        raise MeshnnValueError(f"mesh graph descriptor {where} cannot be read: {error}") from None
    root, _ = _message(_tokens(text, where), 0, where, None)
    shapes = {}
    for mesh in root.get("mesh_descriptors", []):
        name = (mesh.get("name") or ["?"])[0]
        device = _dims(mesh, "device_topology", where, None)
        shapes[name] = (device, _dims(mesh, "host_topology", where, (1,) * len(device)))
    meshes: dict[int, MeshInstance] = {}
    for graph in root.get("graph_descriptors", []):
        for instance in graph.get("instances", []):
            for ref in instance.get("mesh", []):
                name, mesh_id = (ref.get("mesh_descriptor") or [None])[0], (ref.get("mesh_id") or [None])[0]
                if name not in shapes or not isinstance(mesh_id, int):
                    raise MeshnnValueError(f"mesh graph descriptor {where}: instance {ref} names no known mesh")
                meshes[mesh_id] = MeshInstance(mesh_id, name, *shapes[name])
    if not meshes and len(shapes) == 1:  # a lone mesh, no graph: mesh 0
        name, (device, host) = next(iter(shapes.items()))
        meshes[0] = MeshInstance(0, name, device, host)
    if not meshes:
        raise MeshnnValueError(f"mesh graph descriptor {where} describes no mesh instances")
    return meshes
