"""``ttnn.experimental.deepseek_prefill.extract`` and ``insert``: one expert's tokens moved between
the dispatch buffer and a buffer of its own, as whole tiles.

Each device looks up ``g = global_expert_idx_table[local_expert_id]`` in its own copy of the table,
then ``start[g]`` and ``counts[g]`` (all three uint32, read when the kernel runs, so a replayed
trace moves what the tensors say then).  The slice is ``ceil(counts[g] / 32)`` tile rows beginning at
tile row ``start[g] // 32`` of the 2-D ``global_tensor``: ``extract`` copies them into the first
tile rows of a new ``[max_dispatched_tokens_per_expert, hidden]`` tensor (its later rows are left
as allocated: ttnn leaves them uninitialized), ``insert`` copies the first tile rows of
``local_tensor`` there in place.  The copy is of the tiles' bytes (bfloat8_b's shared exponents
with them), so values move bit for bit.

Checks are tt-metal's (2026-06), with its messages; the data-dependent bounds its kernels assert
(the slice inside ``global_tensor``, inside the extract's output or the insert's source, the table's
entry inside ``start``) are checked by meshnn's kernel and raised as errors naming the device.

May import: :mod:`meshnn.errors`, :mod:`meshnn.formats`, :mod:`meshnn.device`, :mod:`meshnn.tensor`
and the ops' checks, launch, outputs, values and registry.
"""

from __future__ import annotations

import numpy as np

from meshnn.device.buffer import BufferType, TensorMemoryLayout
from meshnn.errors import MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.ops.checks import device_input, int_arg, same_mesh
from meshnn.ops.launch import launch
from meshnn.ops.outputs import Output, out_spec_like
from meshnn.ops.registry import OpKind, register
from meshnn.ops.values import logical_values
from meshnn.perf.desc import OpFamily
from meshnn.tensor.memory_config import DRAM_MEMORY_CONFIG
from meshnn.tensor.tensor import Tensor

TILE = 32
"""tt-metal's TILE_HEIGHT / TILE_WIDTH: the slice's unit of rows and the hidden dim's of columns."""

NAMESPACE = "experimental.deepseek_prefill"
DATA_DTYPES = (DataType.BFLOAT8_B, DataType.BFLOAT16)
"""What the data tensors may be: the kernels copy tiles' bytes, so either tile format works."""


def dram_interleaved(tensor: Tensor) -> bool:
    """True when ``tensor`` is interleaved in DRAM."""
    config = tensor.spec.memory_config
    return config.buffer_type is BufferType.DRAM and config.memory_layout is TensorMemoryLayout.INTERLEAVED


def index_table(op: str, name: str, tensor: object) -> Tensor:
    """A per-expert table (``start``, ``counts``, ``global_expert_idx_table``): on device, uint32,
    ROW_MAJOR, DRAM interleaved, 1-D or 2-D with a first dim of 1 (one page, which the kernels read)."""
    t = device_input(op, name, tensor)
    if t.dtype is not DataType.UINT32:
        raise MeshnnValueError(f"ttnn.{op}: {name} must be UINT32, got {t.dtype}")
    if t.layout is not Layout.ROW_MAJOR:
        raise MeshnnValueError(f"ttnn.{op}: {name} must be ROW_MAJOR layout, got {t.layout}")
    if not dram_interleaved(t):
        raise MeshnnValueError(f"ttnn.{op}: {name} must be DRAM interleaved")
    shape = tuple(t.shape)
    if not (len(shape) == 1 or (len(shape) == 2 and shape[0] == 1)):
        raise MeshnnValueError(f"ttnn.{op}: {name} must be 1D or 2D with first dimension == 1, got shape {list(shape)}")
    return t


def data_tensor(op: str, name: str, tensor: object) -> Tensor:
    """A data tensor: on device, bfloat8_b or bfloat16, TILE (32x32 tiles), DRAM interleaved, 2-D."""
    t = device_input(op, name, tensor)
    if t.dtype not in DATA_DTYPES:
        raise MeshnnValueError(f"ttnn.{op}: {name} must be BFLOAT8_B or BFLOAT16, got {t.dtype}")
    if t.layout is not Layout.TILE:
        raise MeshnnValueError(f"ttnn.{op}: {name} must be TILE layout, got {t.layout}")
    if not dram_interleaved(t):
        raise MeshnnValueError(f"ttnn.{op}: {name} must be DRAM interleaved")
    if len(t.shape) != 2:
        raise MeshnnValueError(f"ttnn.{op}: {name} must be 2D, got rank {len(t.shape)}")
    if tuple(t.spec.tile.tile_shape) != (TILE, TILE):
        raise MeshnnValueError(
            f"ttnn.{op}: {name} must have 32x32 tiles (the kernels count rows in 32-row tiles), got "
            f"{list(t.spec.tile.tile_shape)}"
        )
    return t


def _tables(op: str, start: object, counts: object, table: object, local_expert_id: object) -> tuple:
    """The three tables checked, and ``local_expert_id`` checked to index the expert table."""
    tables = tuple(index_table(op, n, t) for n, t in (("start", start), ("counts", counts),
                                                       ("global_expert_idx_table", table)))  # fmt: skip
    if tables[0].shape[-1] != tables[1].shape[-1]:
        raise MeshnnValueError(
            f"ttnn.{op}: start and counts must have the same last dimension, got start={tables[0].shape[-1]} and "
            f"counts={tables[1].shape[-1]}"
        )
    local = int_arg(op, "local_expert_id", local_expert_id)
    last = tables[2].shape[-1]
    if not 0 <= local < last:
        raise MeshnnValueError(
            f"ttnn.{op}: local_expert_id ({local}) must be in the range [0, {last - 1}] "
            "(global_expert_idx_table last dimension - 1)"
        )
    return tables, local


def _aligned(op: str, name: str, what: str, value: int, unit: str) -> None:
    if value % TILE:
        raise MeshnnValueError(f"ttnn.{op}: {name} {what} ({value}) must be a multiple of {unit} ({TILE})")


class _Slices:
    """Each device's slice, read from its tables when the kernel runs: ``(first tile, tiles)`` of
    the global tensor, checked against the tile counts the kernels assert."""

    def __init__(self, op: str, specs: list, local: int, tiles_per_row: int, global_tiles: int, other: tuple) -> None:
        self.op, self.specs, self.local = op, specs, local
        self.per_row, self.global_tiles, (self.other_name, self.other_tiles) = tiles_per_row, global_tiles, other

    def __call__(self, tables: list[np.ndarray], coords) -> list[tuple[int, int]]:
        start, counts, ids = (logical_values(r, s, as_float=False).reshape(r.shape[0], -1) for r, s in
                              zip(tables, self.specs, strict=True))  # fmt: skip
        found = []
        for d, coord in enumerate(coords):
            g = int(ids[d, self.local])
            if g >= start.shape[1]:
                raise MeshnnValueError(
                    f"ttnn.{self.op}: on device {coord}, global_expert_idx_table[{self.local}] = {g} is past start's "
                    f"{start.shape[1]} entries"
                )
            rows = -(-int(counts[d, g]) // TILE)
            first, tiles = (int(start[d, g]) // TILE) * self.per_row, rows * self.per_row
            if first + tiles > self.global_tiles:
                raise MeshnnValueError(
                    f"ttnn.{self.op}: on device {coord}, expert {g}'s slice (start {int(start[d, g])}, "
                    f"{int(counts[d, g])} tokens rounded up to {rows * TILE}) runs past global_tensor's "
                    f"{self.global_tiles // self.per_row * TILE} rows"
                )
            if tiles > self.other_tiles:
                raise MeshnnValueError(
                    f"ttnn.{self.op}: on device {coord}, expert {g}'s {int(counts[d, g])} tokens rounded up to "
                    f"{rows * TILE} exceed {self.other_name}'s {self.other_tiles // self.per_row * TILE} rows"
                )
            found.append((first, tiles))
        return found


@register(
    f"{NAMESPACE}.extract", kind=OpKind.DATA_MOVEMENT, family=OpFamily.SLICE, device_operation="ExtractDeviceOperation"
)
def extract(
    global_tensor: Tensor,
    start: Tensor,
    counts: Tensor,
    global_expert_idx_table: Tensor,
    *,
    local_expert_id: int,
    max_dispatched_tokens_per_expert: int,
) -> Tensor:
    """Expert ``global_expert_idx_table[local_expert_id]``'s tile rows of ``global_tensor``
    (``[rows, hidden]``) copied into the first rows of a new ``[max_dispatched_tokens_per_expert,
    hidden]`` DRAM tensor of its dtype (see the module's text)."""
    op = f"{NAMESPACE}.extract"
    g = data_tensor(op, "global_tensor", global_tensor)
    tables, local = _tables(op, start, counts, global_expert_idx_table, local_expert_id)
    most = int_arg(op, "max_dispatched_tokens_per_expert", max_dispatched_tokens_per_expert)
    rows, hidden = tuple(g.shape)
    _aligned(op, "global_tensor", "rows/tokens", rows, "TILE_HEIGHT")
    _aligned(op, "global_tensor", "hidden_dim", hidden, "TILE_WIDTH")
    if most <= 0:
        raise MeshnnValueError(f"ttnn.{op}: max_dispatched_tokens_per_expert must be > 0 (got {most})")
    _aligned(op, "max_dispatched_tokens_per_expert", "", most, "TILE_HEIGHT")
    mesh = same_mesh(op, {"global_tensor": g, "start": tables[0], "counts": tables[1],
                          "global_expert_idx_table": tables[2]})  # fmt: skip
    spec = out_spec_like(g, shape=(most, hidden), memory_config=DRAM_MEMORY_CONFIG, op=op)
    per_row = hidden // TILE
    size = g.spec.tile.get_tile_size(g.dtype)
    slices = _Slices(op, [t.spec for t in tables], local, per_row, rows // TILE * per_row,
                     ("the output", most // TILE * per_row))  # fmt: skip

    def kernel(in_rows, out_rows, coords) -> None:
        for d, (first, tiles) in enumerate(slices(list(in_rows[1:]), coords)):
            out_rows[0][d, : tiles * size] = in_rows[0][d, first * size : (first + tiles) * size]

    attrs = {"local_expert_id": local, "max_dispatched_tokens_per_expert": most}
    return launch(op, mesh, [g, *tables], [Output(spec)], kernel, attrs=attrs)[0]


@register(
    f"{NAMESPACE}.insert", kind=OpKind.DATA_MOVEMENT, family=OpFamily.KV_FILL, device_operation="InsertDeviceOperation"
)
def insert(
    global_tensor: Tensor,
    local_tensor: Tensor,
    start: Tensor,
    counts: Tensor,
    global_expert_idx_table: Tensor,
    *,
    local_expert_id: int,
) -> Tensor:
    """The first tile rows of ``local_tensor`` written in place into expert
    ``global_expert_idx_table[local_expert_id]``'s slice of ``global_tensor``; returns
    ``global_tensor`` (see the module's text)."""
    op = f"{NAMESPACE}.insert"
    g = data_tensor(op, "global_tensor", global_tensor)
    x = data_tensor(op, "local_tensor", local_tensor)
    if g.dtype is not x.dtype:
        raise MeshnnValueError(
            f"ttnn.{op}: global_tensor and local_tensor must have the same dtype, got global={g.dtype} local={x.dtype}"
        )
    (rows, hidden), local_rows = tuple(g.shape), x.shape[0]
    if x.shape[-1] != hidden:
        raise MeshnnValueError(
            f"ttnn.{op}: local_tensor hidden_dim ({x.shape[-1]}) must match global_tensor hidden_dim ({hidden})"
        )
    tables, local = _tables(op, start, counts, global_expert_idx_table, local_expert_id)
    _aligned(op, "global_tensor", "rows/tokens", rows, "TILE_HEIGHT")
    _aligned(op, "global_tensor", "hidden_dim", hidden, "TILE_WIDTH")
    _aligned(op, "local_tensor", "rows/tokens", local_rows, "TILE_HEIGHT")
    if local_rows <= 0:
        raise MeshnnValueError(f"ttnn.{op}: local_tensor must have at least one tile row/token")
    mesh = same_mesh(op, {"global_tensor": g, "local_tensor": x, "start": tables[0], "counts": tables[1],
                          "global_expert_idx_table": tables[2]})  # fmt: skip
    per_row = hidden // TILE
    size = g.spec.tile.get_tile_size(g.dtype)
    slices = _Slices(op, [t.spec for t in tables], local, per_row, rows // TILE * per_row,
                     ("local_tensor", local_rows // TILE * per_row))  # fmt: skip

    def kernel(in_rows, out_rows, coords) -> None:
        for d, (first, tiles) in enumerate(slices(list(in_rows[1:]), coords)):
            out_rows[0][d, first * size : (first + tiles) * size] = in_rows[0][d, : tiles * size]

    where = g.storage.coords  # type: ignore[union-attr]
    launch(op, mesh, [x, *tables], [Output(g.spec)], kernel, coords=where, into=[g], attrs={"local_expert_id": local})
    return g
