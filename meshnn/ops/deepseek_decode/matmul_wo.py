"""``ttnn.experimental.deepseek.mla.matmul_wo``: DeepSeek-V3's MLA output projection on Wormhole's
12 DRAM-bank cores: 32 tokens' ``x @ W`` (K 16384, N 896), K split over the banks, the partials
summed on 7 collector cores.

The weights (``w_tensor``, height-sharded over the 12 DRAM banks, shard ``b`` in bank ``b``): bank
``b`` holds the ``k_b`` K tiles (44, 44, 42, 42, 42, 42, 42, 42, 44, 44, 42, 42: tt-metal's kernel
table, 512 in all) after the banks before it, a layer taking ``44 * 4 * 32`` rows of 224 columns
(layer ``layer_id``'s block read): for each of 4 blocks of 7 N tiles, its ``k_b`` K tiles (7 N tiles
side by side), the block's unused rows after the 4 blocks zero.  Bank ``b``'s core reads its own L1
shard of ``input_tensor`` ([32, 16384] a core) at those K tiles.

The collectors: the 7 worker cores not next to a DRAM bank, counted from the grid's bottom-right
corner (x, then y, both descending); collector ``c`` sums N tiles ``7 j + c`` (``j < 4``) and writes
them, in that order, as its shard of ``output_tensor`` (width-sharded [32, 128] a core): output column
tile ``4 c + j`` holds product tile ``7 j + c``.  Arithmetic: each bank's partial ``bf16(x_b @ W_b)``
(float32 sums rounded once, as meshnn's matmul: the kernel's LoFi passes and 16-bit destination
accumulation are not modelled), then the collector's running sum in bank order, rounded to
bfloat16 after each add (its 16-bit destination).  Returns ``output_tensor``.

tt-metal (2026-06, ``MatmulWODeviceOperation``) checks only the input's rank (>= 2) and that 7
collector cores exist.  meshnn also refuses what the fixed kernel would read past or misread: fewer
or more than 12 DRAM banks (the kernel's table), an input not bfloat16 TILE without its
[32, 16384] shard on every bank core, weights not bfloat16 / bfloat8_b / bfloat4_b TILE in DRAM,
224 wide, whose shards lack layer ``layer_id``'s rows, an output not bfloat16 TILE without a
[32, 128] shard on each collector.

May import: :mod:`meshnn.errors`, :mod:`meshnn.device`, :mod:`meshnn.formats`, :mod:`meshnn.mesh`,
:mod:`meshnn.tensor` and the ops' checks, launch, outputs, values, shards, deepseek_prefill arguments
and registry.
"""

from __future__ import annotations

import numpy as np

from meshnn.device.core import CoreCoord
from meshnn.errors import MeshnnValueError
from meshnn.formats.bfloat16 import bf16
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.mesh.coord import MeshCoordinate
from meshnn.mesh.mesh_device import MeshDevice
from meshnn.ops.checks import device_input, same_mesh
from meshnn.ops.deepseek_decode.shards import (
    bank_shards,
    block_of,
    local_shard,
    logical_of,
    padded_2d,
    padded_shape_2d,
    ring_banks,
    shard_spec,
)
from meshnn.ops.deepseek_prefill.arguments import require, uint_arg
from meshnn.ops.launch import launch
from meshnn.ops.outputs import Output
from meshnn.ops.registry import OpKind, register
from meshnn.ops.values import logical_values, write_values
from meshnn.perf.desc import OpFamily
from meshnn.tensor.tensor import Tensor

OP = "experimental.deepseek.mla.matmul_wo"
TILE = 32
K_TILES_PER_BANK = (44, 44, 42, 42, 42, 42, 42, 42, 44, 44, 42, 42)
"""tt-metal's kernel table: the K tiles each DRAM bank holds (512 in all, K 16384)."""
MAX_K_TILES = max(K_TILES_PER_BANK)
N_TILES, N_BLOCK, COLLECTORS = 28, 7, 7
BLOCKS = N_TILES // N_BLOCK
LAYER_ROWS = MAX_K_TILES * BLOCKS * TILE
K = sum(K_TILES_PER_BANK) * TILE
WEIGHT_DTYPES = (DataType.BFLOAT16, DataType.BFLOAT8_B, DataType.BFLOAT4_B)


def collector_cores(op: str, mesh: MeshDevice, banks: list[CoreCoord]) -> list[CoreCoord]:
    """The 7 worker cores not next to a DRAM bank, from the grid's bottom-right corner, x then y
    descending (tt-metal refuses a grid without 7)."""
    grid = mesh.compute_with_storage_grid_size()
    taken = set(banks)
    found = [
        CoreCoord(x, y)
        for y in range(grid.y - 1, -1, -1)
        for x in range(grid.x - 1, -1, -1)
        if CoreCoord(x, y) not in taken
    ][:COLLECTORS]
    if len(found) < COLLECTORS:
        raise MeshnnValueError(f"ttnn.{op}: Failed to find {COLLECTORS} cores")
    return found


def project(inputs: list[np.ndarray], weights: list[np.ndarray], layer: int) -> np.ndarray:
    """``(tokens, 896)`` products in the output's column order, of each bank's input shard and
    weight shard (bank order; the module's arithmetic)."""
    rows = slice(layer * LAYER_ROWS, (layer + 1) * LAYER_ROWS)
    total = None
    start = 0
    for bank, k_tiles in enumerate(K_TILES_PER_BANK):
        block = weights[bank][rows][: BLOCKS * k_tiles * TILE].astype(np.float32)
        w = block.reshape(BLOCKS, k_tiles * TILE, N_BLOCK * TILE).transpose(1, 0, 2).reshape(k_tiles * TILE, -1)
        x = inputs[bank][:, start * TILE : (start + k_tiles) * TILE].astype(np.float32)
        partial = bf16(x @ w)
        total = partial if total is None else bf16(total + partial)
        start += k_tiles
    assert total is not None
    tiles = total.reshape(total.shape[0], BLOCKS, N_BLOCK, TILE)  # product tile 7 j + c at [j, c]
    return tiles.transpose(0, 2, 1, 3).reshape(total.shape[0], -1)  # collector c's 4 tiles side by side


def _check(named: dict[str, Tensor], layer: int, banks: list[CoreCoord], collectors: list[CoreCoord]) -> dict:
    x, w, out = named["input_tensor"], named["w_tensor"], named["output_tensor"]
    require(OP, "input_tensor", x, (DataType.BFLOAT16,), Layout.TILE)
    require(OP, "w_tensor", w, WEIGHT_DTYPES, Layout.TILE)
    require(OP, "output_tensor", out, (DataType.BFLOAT16,), Layout.TILE)
    specs = {name: shard_spec(OP, name, tensor) for name, tensor in named.items()}
    if tuple(specs["input_tensor"].shape) != (TILE, K):
        raise MeshnnValueError(
            f"ttnn.{OP}: input_tensor's shard must be [{TILE}, {K}] (32 tokens, K 16384), "
            f"got {list(specs['input_tensor'].shape)}"
        )
    x_view = padded_shape_2d(x.spec)
    x_shards = [local_shard(OP, "input_tensor", specs["input_tensor"], x_view, core) for core in banks]
    if specs["w_tensor"].shape[1] != N_BLOCK * TILE:
        raise MeshnnValueError(f"ttnn.{OP}: w_tensor's shard must be {N_BLOCK * TILE} wide")
    w_shards = bank_shards(OP, "w_tensor", w, specs["w_tensor"], (layer + 1) * LAYER_ROWS)
    if tuple(specs["output_tensor"].shape) != (TILE, BLOCKS * TILE):
        raise MeshnnValueError(
            f"ttnn.{OP}: output_tensor's shard must be [{TILE}, {BLOCKS * TILE}], "
            f"got {list(specs['output_tensor'].shape)}"
        )
    o_view = padded_shape_2d(out.spec)
    o_shards = [local_shard(OP, "output_tensor", specs["output_tensor"], o_view, core) for core in collectors]
    return {"x": x_shards, "w": [w_shards[b] for b in range(len(banks))], "o": o_shards, "specs": specs}


@register(OP, kind=OpKind.MATMUL, family=OpFamily.MATMUL, device_operation="MatmulWODeviceOperation")
def matmul_wo(input_tensor: Tensor, *, w_tensor: Tensor, output_tensor: Tensor, layer_id: int) -> Tensor:
    """``output_tensor``, written with ``x @ W`` of layer ``layer_id`` (see the module's text)."""
    named = {
        "input_tensor": device_input(OP, "input_tensor", input_tensor),
        "w_tensor": device_input(OP, "w_tensor", w_tensor),
        "output_tensor": device_input(OP, "output_tensor", output_tensor),
    }
    mesh = same_mesh(OP, named)
    layer = uint_arg(OP, "layer_id", layer_id)
    if len(tuple(named["input_tensor"].shape)) < 2:
        rank = len(named["input_tensor"].shape)
        raise MeshnnValueError(f"ttnn.{OP}: Input tensor must be at least rank 2, got {rank}")
    banks = ring_banks(OP, mesh)
    collectors = collector_cores(OP, mesh, banks)
    found = _check(named, layer, banks, collectors)
    specs = found["specs"]
    x_spec, w_spec, o_spec = (t.spec for t in named.values())
    x_blocks = [block_of(k, padded_shape_2d(x_spec), specs["input_tensor"].shape) for k in found["x"]]
    w_blocks = [block_of(k, padded_shape_2d(w_spec), specs["w_tensor"].shape) for k in found["w"]]
    o_blocks = [block_of(k, padded_shape_2d(o_spec), specs["output_tensor"].shape) for k in found["o"]]

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], _coords: tuple[MeshCoordinate, ...]) -> None:
        x_all, w_all, o_all = (logical_values(r, s) for r, s in zip(in_rows, (x_spec, w_spec, o_spec), strict=True))
        result = np.array(o_all, dtype=np.float32)
        for device in range(result.shape[0]):
            x2d, w2d = padded_2d(x_all[device], x_spec), padded_2d(w_all[device], w_spec)
            product = project([x2d[b] for b in x_blocks], [w2d[b] for b in w_blocks], layer)
            o2d = padded_2d(result[device].copy(), o_spec)
            width = BLOCKS * TILE
            for c, block in enumerate(o_blocks):
                o2d[block] = product[:, c * width : (c + 1) * width]
            result[device] = logical_of(o2d, o_spec)
        write_values(out_rows[0], result, o_spec)

    into = [named["output_tensor"]]
    attrs = {"layer_id": layer}
    return launch(OP, mesh, list(named.values()), [Output(o_spec)], kernel, into=into, rowwise=True, attrs=attrs)[0]
