"""``ttnn.visualize_mesh_device`` and ``ttnn.visualize_tensor``: the mesh as a table of devices, one
cell per device, drawn as ttnn draws it with ``rich`` (a square box, lines between rows, cells 30
characters wide, a centred title) but with box-drawing characters of its own, so no dependency.

A device cell reads ``Dev. ID: <id>`` and ``(row, col)``; for a tensor, the cell of each device
holding a shard adds the shard's slice of the global tensor as inclusive ``start:end`` ranges per
dim, its shape, dtype and layout (ttnn's annotation).  ``visualize_tensor`` prints the placements
in a "Placement Configuration" panel first.  Both print to stdout and return None.

Layer: tensor.  Imports errors, mesh and the tensor modules tensor, storage and topology.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from meshnn.errors import MeshnnTypeError
from meshnn.mesh.coord import MeshCoordinate, MeshShape
from meshnn.mesh.mesh_device import MeshDevice
from meshnn.tensor.storage import DeviceStorage
from meshnn.tensor.tensor import Tensor, check_tensor
from meshnn.tensor.topology import PlacementShard

CELL = 30  # characters per cell, as ttnn's CELL_SIZE


def _grid_shape(shape: MeshShape) -> tuple[int, int]:
    return (shape[0], shape[1]) if shape.dims() == 2 else (1, shape.mesh_size())


def render_table(title: str, cells: list[list[list[str]]], width: int = CELL) -> str:
    """A square-boxed table of ``cells`` (rows of cells, each a list of lines, centred), lines
    between rows, ``title`` centred above."""
    cols = len(cells[0]) if cells else 0
    rule = {pos: left + mid.join(["─" * width] * cols) + right for pos, (left, mid, right) in _CORNERS.items()}
    out = [title.center(len(rule["top"])).rstrip(), rule["top"]]
    for i, row in enumerate(cells):
        height = max(len(cell) for cell in row)
        for line in range(height):
            parts = []
            for cell in row:
                top = (height - len(cell)) // 2  # centred vertically
                text = cell[line - top] if 0 <= line - top < len(cell) else ""
                parts.append(_fit(text, width).center(width))
            out.append("│" + "│".join(parts) + "│")
        out.append(rule["mid"] if i < len(cells) - 1 else rule["bottom"])
    return "\n".join(out)


_CORNERS = {"top": ("┌", "┬", "┐"), "mid": ("├", "┼", "┤"), "bottom": ("└", "┴", "┘")}


def _fit(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def render_panel(title: str, body: str) -> str:
    """``body`` in a box with ``title`` in its top edge (rich's Panel)."""
    width = max(len(body), len(title) + 2) + 2
    head = f" {title} "
    left = (width - len(head)) // 2
    top = "╭" + "─" * left + head + "─" * (width - left - len(head)) + "╮"
    return "\n".join([top, "│ " + body.ljust(width - 2) + " │", "╰" + "─" * width + "╯"])


def _mesh_cells(mesh: MeshDevice, annotate: Callable[[MeshCoordinate], list[str]]) -> list[list[list[str]]]:
    rows, cols = _grid_shape(mesh.shape)
    coords = list(mesh.shape.coords())
    ids = mesh.get_device_ids()
    return [
        [[f"Dev. ID: {ids[r * cols + c]}", f"({r}, {c})", *annotate(coords[r * cols + c])] for c in range(cols)]
        for r in range(rows)
    ]


def visualize_mesh_device(mesh_device: MeshDevice, tensor: Tensor | None = None) -> None:
    """Print the mesh as a table of its devices; with ``tensor``, the devices holding its shards
    show the shard shape."""
    if not isinstance(mesh_device, MeshDevice):
        raise MeshnnTypeError(f"visualize_mesh_device: mesh_device must be a MeshDevice, got {mesh_device!r}")
    mesh_device.check_open()
    mapped: set[MeshCoordinate] = set()
    if tensor is not None:
        check_tensor(tensor)
        if tensor.device() is mesh_device:
            mapped = set(tensor.device_coords())
    rows, cols = _grid_shape(mesh_device.shape)
    cells = _mesh_cells(mesh_device, lambda coord: [f"{tensor.shape}"] if coord in mapped else [])
    print(render_table(f"MeshDevice(rows={rows}, cols={cols})", cells))


def _slices(tensor: Tensor) -> dict[MeshCoordinate, str]:
    """Each populated coordinate's slice of the global tensor: ``start:end`` (inclusive) per dim."""
    topology = tensor.tensor_topology()
    shape = list(tensor.shape)
    dist = topology.distribution_shape
    out = {}
    for index, coord in enumerate(topology.mesh_coords):
        dist_coord = [index // math.prod(list(dist)[a + 1 :]) % dist[a] for a in range(dist.dims())]
        ranges = [(0, size - 1) for size in shape]
        for axis, placement in enumerate(topology.placements):
            if isinstance(placement, PlacementShard) and ranges[placement.dim] == (0, shape[placement.dim] - 1):
                start = dist_coord[axis] * shape[placement.dim]
                ranges[placement.dim] = (start, start + shape[placement.dim] - 1)
        out[coord] = "[" + ", ".join(f"{a}:{b}" for a, b in ranges) + "]"
    return out


def visualize_tensor(tensor: Tensor) -> None:
    """Print the tensor's placements, then the mesh (device tensors) or the host buffer's grid
    (host tensors) with each shard's slice of the global tensor."""
    check_tensor(tensor)
    topology = tensor.tensor_topology()
    slices = _slices(tensor)
    info = [f"Shape: {list(tensor.shape)}", f"Dtype: {tensor.dtype.name}", f"Layout: {tensor.layout.name}"]

    def annotate(coord: MeshCoordinate) -> list[str]:
        return [slices[coord], *info] if coord in slices else []

    print(render_panel("Placement Configuration", "[" + ", ".join(map(repr, topology.placements)) + "]"))
    if isinstance(tensor.storage, DeviceStorage):
        cells = _mesh_cells(tensor.device(), annotate)  # type: ignore[arg-type]
        print(render_table("Tensor(storage: StorageType.DEVICE)", cells))
        return
    grid = tensor.host_buffer().shape()
    rows, cols = _grid_shape(MeshShape(grid))
    coords = list(MeshShape(grid).coords())
    cells = [[[f"({r}, {c})", *annotate(coords[r * cols + c])] for c in range(cols)] for r in range(rows)]
    print(render_table("Tensor(storage: StorageType.HOST)", cells))
