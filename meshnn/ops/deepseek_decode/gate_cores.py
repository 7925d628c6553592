"""What the two face-per-tile MoE gates share (``deepseek_moe_gate``, ``generalized_moe_gate``):
tt-metal's validate() of their five sharded tensors, and the program: each core of the logits'
shard grid reads its own shards (logits, bias, indices: ``num_blocks`` 32x32 tiles, each holding one
256-expert block in its top-left 16x16 face) and writes row 0 of its own 32x32 output and
output-index tiles; the rest of those tiles keeps what it held (the kernel packs its working tile
there: scratch no caller reads).

The checks, in tt-metal's order (2026-06): every tensor on device, one device; logits, bias and
output BFLOAT16, both index tensors UINT16; all sharded; bias of the logits' shape, output indices
of the output's; ``deepseek_moe_gate``: input indices of the logits' shape too, ``generalized``:
256 elements in their last two dims; the logits rank >= 2 with 256 elements in the last two dims;
bias / input-index shards of the logits' shard shape and orientation on grids containing the
logits' grid; output and output-index shard grids, shapes and orientations equal, containing the
logits' grid; 32x32 tiles; the output shard 32x32; the logits' shard 32x32 (``deepseek_moe_gate``)
or tile-aligned with 1 or 2 tiles (``generalized``, 1 when ``grouped``).

May import: :mod:`meshnn.errors`, :mod:`meshnn.device`, :mod:`meshnn.formats`, :mod:`meshnn.mesh`,
:mod:`meshnn.tensor` and the ops' checks, launch, outputs, values and shards.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from meshnn.errors import MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.mesh.coord import MeshCoordinate
from meshnn.ops.checks import device_input, same_mesh
from meshnn.ops.deepseek_decode.shards import block_of, core_shards, logical_of, padded_2d, padded_shape_2d, shard_spec
from meshnn.ops.launch import launch
from meshnn.ops.outputs import Output
from meshnn.ops.values import logical_values, write_values
from meshnn.tensor.tensor import Tensor

NAMES = ("input_tensor", "bias_tensor", "input_indices_tensor", "output_tensor", "output_indices_tensor")
DTYPES = (DataType.BFLOAT16, DataType.BFLOAT16, DataType.UINT16, DataType.BFLOAT16, DataType.UINT16)
TILE, FACE, CHOSEN = 32, 16, 8
Route = Callable[[np.ndarray, np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]
"""A gate's arithmetic: (logits, bias, ids) faces ``(cores, blocks, 16, 16)`` -> (weights, ids) ``(cores, 8)``."""


def gate_tensors(op: str, tensors: tuple[object, ...]) -> dict[str, Tensor]:
    """The five tensors, checked to be usable device tensors on one mesh."""
    named = {name: device_input(op, name, tensor) for name, tensor in zip(NAMES, tensors, strict=True)}
    same_mesh(op, named)
    return named


def check(op: str, named: dict[str, Tensor], *, generalized: bool, grouped: bool = True) -> int:
    """tt-metal's validate() (the module's text); returns the blocks a logits shard holds."""
    for (name, tensor), dtype in zip(named.items(), DTYPES, strict=True):
        if tensor.dtype is not dtype:
            raise MeshnnValueError(f"ttnn.{op}: {name} must be {dtype.name}, got {tensor.dtype}")
    specs = {name: shard_spec(op, name, tensor) for name, tensor in named.items()}
    x, idx = named["input_tensor"], named["input_indices_tensor"]
    pairs = [("bias_tensor", "input_tensor"), ("output_indices_tensor", "output_tensor")]
    if not generalized:
        pairs.insert(1, ("input_indices_tensor", "input_tensor"))
    for name, like in pairs:
        if tuple(named[name].shape) != tuple(named[like].shape):
            raise MeshnnValueError(
                f"ttnn.{op}: {name} {list(named[name].shape)} must have the shape of {like} {list(named[like].shape)}"
            )
    shape = tuple(x.shape)
    if len(shape) < 2 or shape[-1] * shape[-2] != 256:
        raise MeshnnValueError(f"ttnn.{op}: input_tensor must have 256 elements per block (last two dims), got {shape}")
    if generalized and (len(idx.shape) < 2 or idx.shape[-1] * idx.shape[-2] != 256):
        raise MeshnnValueError(f"ttnn.{op}: input_indices must have 256 elements (one block, last two dims)")
    first = specs["input_tensor"]
    cores = first.grid.cores()
    for name in ("bias_tensor", "input_indices_tensor"):
        other = specs[name]
        if other.shape != first.shape or other.orientation is not first.orientation:
            raise MeshnnValueError(f"ttnn.{op}: input_tensor and {name} shard shapes and orientations must match")
        if not all(other.grid.contains(core) for core in cores):
            raise MeshnnValueError(f"ttnn.{op}: {name}'s shard grid must contain input_tensor's shard grid")
    o, oi = specs["output_tensor"], specs["output_indices_tensor"]
    if o.grid != oi.grid or o.shape != oi.shape or o.orientation is not oi.orientation:
        raise MeshnnValueError(f"ttnn.{op}: output and output-indices shard grids, shapes and orientations must match")
    if not all(o.grid.contains(core) for core in cores):
        raise MeshnnValueError(f"ttnn.{op}: output shard grid must contain the input compute grid")
    for name, tensor in named.items():
        if tuple(tensor.spec.tile.tile_shape) != (TILE, TILE):
            raise MeshnnValueError(f"ttnn.{op}: {name}'s tile must be 32x32, got {list(tensor.spec.tile.tile_shape)}")
    return _blocks(op, first.shape, o.shape, generalized=generalized, grouped=grouped)


def _blocks(op: str, shard: tuple[int, int], out: tuple[int, int], *, generalized: bool, grouped: bool) -> int:
    if not generalized and tuple(shard) != (TILE, TILE):
        raise MeshnnValueError(f"ttnn.{op}: Input shard shape must be 32x32, got {list(shard)}")
    if shard[0] % TILE or shard[1] % TILE:
        raise MeshnnValueError(f"ttnn.{op}: Input shard must be 32x32 tile-aligned (num_blocks tiles per core)")
    if tuple(out) != (TILE, TILE):
        raise MeshnnValueError(f"ttnn.{op}: Output shard shape must be 32x32, got {list(out)}")
    blocks = (shard[0] // TILE) * (shard[1] // TILE)
    if blocks > 2:
        raise MeshnnValueError(f"ttnn.{op} supports up to 2 blocks (<=512 experts), got {blocks}")
    if grouped and blocks != 1:
        raise MeshnnValueError(f"ttnn.{op}: grouped mode (DeepSeek gate) is single-256-block only; got {blocks}")
    return blocks


def _tiles(block: tuple[slice, slice]) -> list[tuple[int, int]]:
    """The top-left corners of a shard block's 32x32 tiles, row-major."""
    rows, cols = block
    return [(r, c) for r in range(rows.start, rows.stop, TILE) for c in range(cols.start, cols.stop, TILE)]


def _cores(op: str, named: dict[str, Tensor]) -> list[tuple[list, list, list, tuple[slice, slice]]]:
    """Per core holding a logits shard: the tiles of its logits, bias and index shards, and its
    output shard's block (each core reads and writes its own shards)."""
    spec = {name: t.spec.memory_config.shard_spec for name, t in named.items()}
    views = {name: padded_shape_2d(t.spec) for name, t in named.items()}
    held = {name: core_shards(spec[name], views[name]) for name in named}
    result = []
    for core in held["input_tensor"]:
        where = [held[name].get(core) for name in NAMES]
        if any(k is None for k in where):
            raise MeshnnValueError(f"ttnn.{op}: core {core} holds a logits shard but not every other tensor's")
        tiles = [_tiles(block_of(k, views[n], spec[n].shape)) for n, k in zip(NAMES[:3], where, strict=False)]
        result.append((*tiles, block_of(where[3], views["output_tensor"], (TILE, TILE))))
    return result


def run_gate(op: str, named: dict[str, Tensor], route: Route, attrs: dict) -> tuple[Tensor, Tensor]:
    """Launch the gate: every core's faces through ``route``, its weights and ids written to row 0
    of its output tiles; returns (output_tensor, output_indices_tensor)."""
    mesh = same_mesh(op, named)
    places = _cores(op, named)
    specs = [t.spec for t in named.values()]
    out_spec, idx_spec = specs[3], specs[4]

    def faces(view: np.ndarray, tiles: list[tuple[int, int]]) -> np.ndarray:
        return np.stack([view[r : r + FACE, c : c + FACE] for r, c in tiles])

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], _coords: tuple[MeshCoordinate, ...]) -> None:
        values = [logical_values(r, s) for r, s in zip(in_rows, specs, strict=True)]
        weights_out, ids_out = np.array(values[3], dtype=np.float32), np.array(values[4], dtype=np.float32)
        for device in range(weights_out.shape[0]):
            views = [
                padded_2d(np.asarray(v[device], dtype=np.float32), s) for v, s in zip(values[:3], specs, strict=False)
            ]
            picks = [[faces(view, tiles) for view, tiles in zip(views, place[:3], strict=True)] for place in places]
            if not picks:
                continue
            weights, ids = route(*(np.stack(p) for p in zip(*picks, strict=True)))
            w2d = padded_2d(weights_out[device].copy(), out_spec)
            i2d = padded_2d(ids_out[device].copy(), idx_spec)
            for n, place in enumerate(places):
                w2d[place[3]][0, :CHOSEN] = weights[n]
                i2d[place[3]][0, :CHOSEN] = ids[n]
            weights_out[device] = logical_of(w2d, out_spec)
            ids_out[device] = logical_of(i2d, idx_spec)
        write_values(out_rows[0], weights_out, out_spec)
        write_values(out_rows[1], ids_out, idx_spec)

    outputs = [Output(out_spec), Output(idx_spec)]
    into = [named["output_tensor"], named["output_indices_tensor"]]
    result = launch(op, mesh, list(named.values()), outputs, kernel, into=into, rowwise=True, attrs=attrs)
    return result[0], result[1]
