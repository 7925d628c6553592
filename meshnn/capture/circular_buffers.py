"""The circular buffers (CBs) an op's program would allocate: an estimate, because meshnn runs no
kernels and so has no programs with CBs of their own.

The rule (what graph capture emits for every op, and nothing else):

- every device operand of the op (its inputs, then its outputs) gets one CB on every core of the
  op's grid (the device's compute grid, or a matmul program config's
  ``compute_with_storage_grid_size``);
- an operand in L1 and sharded gets a **globally allocated** CB: it lives inside the tensor's own
  buffer (at its address, on the shard grid, one shard big) and costs no L1 of its own; that is
  how ttnn's programs read and write sharded tensors;
- any other operand gets a **streaming** CB of 2 of its pages (double buffering: one page is
  moved while the other is computed on), the minimum of ttnn's reader -> compute -> writer
  programs, and what its eltwise programs use;
- a matmul (``matmul``/``linear``) whose ``program_config`` gives ``per_core_M``, ``per_core_N``
  and ``in0_block_w`` gets tt-metal's block CBs instead: in0 ``2 * per_core_M * in0_block_w``
  tiles, in1 ``2 * per_core_N * in0_block_w`` tiles, bias ``per_core_N`` tiles, output
  ``per_core_M * per_core_N`` tiles.

So the figure is a lower bound for programs with larger CBs (normalizations, softmax, attention,
collectives keep whole rows or chunks).  Streaming CBs are placed one after another from the
device's ``address_at_first_l1_cb_buffer`` (address 0 under ``RunMode.NO_DISPATCH``, as ttnn
reports them there).  Sizes are bytes per core.

Layers: imports the device layer's cores and the capture layer's own tensor helpers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from meshnn.capture.graph_builder import CircularBuffer
from meshnn.capture.tensors import mesh_buffer_of
from meshnn.device.buffer import BufferType
from meshnn.device.core import CoreRangeSet

MATMULS = frozenset({"matmul", "linear"})
STREAMING_PAGES = 2


def core_range_set_text(ranges: Sequence[tuple[int, int, int, int]]) -> str:
    """ttnn's ``CoreRangeSet::str()``: ``{[(x=0,y=0) - (x=7,y=7)]}`` for (x0, y0, x1, y1) ranges."""
    parts = [f"[(x={x0},y={y0}) - (x={x1},y={y1})]" for x0, y0, x1, y1 in ranges]
    return "{" + ", ".join(parts) + "}"


def _grid_text(grid: CoreRangeSet) -> str:
    return core_range_set_text([(r.start.x, r.start.y, r.end.x, r.end.y) for r in grid.ranges()])


def _op_grid(mesh: Any, config: object) -> tuple[int, int]:
    size = getattr(config, "compute_with_storage_grid_size", None)
    if size is not None:
        x, y = (size.x, size.y) if hasattr(size, "x") else tuple(size)
        return int(x), int(y)
    return tuple(mesh.system.compute_grid)  # type: ignore[return-value]


def _block_pages(op: str, config: object, slot: int, n_inputs: int) -> int | None:
    """Pages of a matmul operand's block CB, or None where the streaming rule applies."""
    if op not in MATMULS:
        return None
    try:
        m, n, k = (int(getattr(config, name)) for name in ("per_core_M", "per_core_N", "in0_block_w"))
    except (AttributeError, TypeError, ValueError):
        return None
    if slot >= n_inputs:
        return m * n
    return (2 * m * k, 2 * n * k, n)[min(slot, 2)]


def estimate(
    op: str,
    mesh: Any,
    inputs: Sequence[Any],
    outputs: Sequence[Any],
    attrs: Mapping[str, object],
    *,
    no_dispatch: bool = False,
) -> list[CircularBuffer]:
    """The CBs of one op's program, by the rule of the module docstring."""
    config = attrs.get("program_config")
    x, y = _op_grid(mesh, config)
    grid = core_range_set_text([(0, 0, x - 1, y - 1)])
    address = 0 if no_dispatch else mesh.allocator.device_info()["address_at_first_l1_cb_buffer"]
    found: list[CircularBuffer] = []
    for slot, tensor in enumerate([*inputs, *outputs]):
        buffer = mesh_buffer_of(tensor)
        if buffer is None:
            continue
        layout = buffer.layout
        if layout.shard is not None and layout.buffer_type in (BufferType.L1, BufferType.L1_SMALL):
            size = layout.shard.pages_per_core * layout.page_size
            found.append(CircularBuffer(size, buffer.address(), _grid_text(layout.shard.spec.grid), True))
            continue
        pages = _block_pages(op, config, slot, len(inputs)) or STREAMING_PAGES
        size = pages * layout.page_size
        found.append(CircularBuffer(size, address, grid, False))
        if not no_dispatch:
            address += size
    return found
