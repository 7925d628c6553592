"""``ttnn.experimental.deepseek.moe.moe_gate_mm``: DeepSeek-V3's MoE gate, projection and routing
in one program on Wormhole's 12 DRAM-bank cores: of 32 tokens' ``x @ W`` (K 7168, 256 experts) the
top-8 bias-corrected scores and their experts.

The ring: the 12 bank cores ordered by their NoC coordinates, y then x, both descending; ring
positions ``0, 3, 6, 9`` are senders, the other 8 receivers, receiver ``j`` (in ring order) owning
experts ``32j .. 32j + 31`` (an N tile, one of DeepSeek's 8 groups).  The weights (``w_tensor``,
bfloat16, height-sharded over the DRAM banks, ``77 * 32`` rows x 64 columns a layer in each bank's
shard, layer ``layer_id``'s block read):

- a receiver's bank: K tiles ``0 .. 151`` of its N tile, two a tile row (even K tile in columns
  0..31, odd in 32..63), then its bias in row 0, columns 0..31 of the 77th tile row;
- a sender's bank (ring ``p``): K tiles ``152 .. 223`` of the N tiles of ring ``p + 1`` (columns
  0..31) and ``p + 2`` (32..63), one K tile a tile row.

Each core reads its own L1 shard of ``input_tensor`` ([32, 7168] bfloat16 a core).  Per token and
receiver: ``p = bf16(x[:, :4864] @ W_recv)``, ``q = bf16(x[:, 4864:] @ W_send)`` (the sender's
packed partial), ``s = bf16(sigmoid(bf16(p + q)))``, ``v = bf16(s + bias)``; the experts chosen as
:func:`~meshnn.ops.deepseek_decode.moe_gate.choose` chooses (each group ranked by ``bf16(v1 + v2)``
of its two largest ``v``, the 4 best kept, the 8 largest ``v`` of those, largest first; equal
values: the lower group / expert).  The
products are float32 sums rounded once, as meshnn's matmul (the kernel's LoFi passes and 16-bit
destination accumulation are not modelled: a bound of a few bfloat16 steps).

Written: the collector's (ring position 11) tile of ``output_tensor`` ([32, 32] on that core): row
``r < 8``, column ``t``: token ``t``'s ``r``-th value ``v``; row ``8 + r``: its expert id ``e`` as the
bit pattern ``e << 7`` (tt-metal's tests shift it back).  The other cores' output tiles, and the rest
of the collector's, keep what they held (the kernel's scratch there, the group bitmask it also
writes in rows 16..19, is not modelled).  Returns ``output_tensor``.

tt-metal (2026-06, ``MoEGateMMDeviceOperation``) validates nothing but the 12 DRAM-bank cores
(Wormhole).  meshnn also refuses what the fixed kernel would read past or misread: a tensor not
bfloat16 TILE, an input without its [32, 7168] shard on every ring core, weights not in DRAM, 64
wide, whose shards lack layer ``layer_id``'s rows, an output without a 32x32 shard on the collector.

May import: :mod:`meshnn.errors`, :mod:`meshnn.device`, :mod:`meshnn.formats`, :mod:`meshnn.mesh`,
:mod:`meshnn.tensor` and the ops' checks, launch, outputs, values, shards, deepseek_prefill arguments
and registry.
"""

from __future__ import annotations

import numpy as np

from meshnn.errors import MeshnnValueError
from meshnn.formats.bfloat16 import bf16
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.mesh.coord import MeshCoordinate
from meshnn.mesh.mesh_device import MeshDevice
from meshnn.ops.checks import device_input, same_mesh
from meshnn.ops.deepseek_decode.moe_gate import choose
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

OP = "experimental.deepseek.moe.moe_gate_mm"
K_TILES, RECV_K_TILES, TILE = 224, 152, 32
LAYER_ROWS = 77 * TILE
"""One layer's rows in a bank's weight shard (76 tile rows of weights and one of bias)."""
SENDERS = (0, 3, 6, 9)
COLLECTOR = 11
CHOSEN = 8


def ring_order(mesh: MeshDevice, banks: list) -> list[int]:
    """Bank ids in ring order: their cores' NoC coordinates sorted by y, then x, both descending."""

    def key(bank: int) -> tuple[int, int]:
        noc = mesh.worker_core_from_logical_core(banks[bank])
        return (-noc.y, -noc.x)

    return sorted(range(len(banks)), key=key)


def route(inputs: list[np.ndarray], weights: list[np.ndarray], layer: int) -> tuple[np.ndarray, np.ndarray]:
    """(values, expert ids) ``(tokens, 8)`` of the ring's cores' input shards and bank shards, both
    in ring order (the module's arithmetic)."""
    rows = slice(layer * LAYER_ROWS, (layer + 1) * LAYER_ROWS)
    receivers = [p for p in range(len(inputs)) if p not in SENDERS]
    sent: dict[int, np.ndarray] = {}
    for p in SENDERS:
        block = weights[p][rows][: (K_TILES - RECV_K_TILES) * TILE].astype(np.float32)
        x = inputs[p][:, RECV_K_TILES * TILE :].astype(np.float32)
        sent[p + 1], sent[p + 2] = bf16(x @ block[:, :TILE]), bf16(x @ block[:, TILE:])
    biased = []
    for p in receivers:
        shard = weights[p][rows].astype(np.float32)
        pairs = shard[: RECV_K_TILES // 2 * TILE].reshape(RECV_K_TILES // 2, TILE, 2, TILE)
        w = pairs.transpose(0, 2, 1, 3).reshape(RECV_K_TILES * TILE, TILE)
        partial = bf16(inputs[p][:, : RECV_K_TILES * TILE].astype(np.float32) @ w)
        total = bf16(partial + sent[p])
        s = bf16(1.0 / (1.0 + np.exp(-total.astype(np.float64))))
        biased.append(bf16(s + shard[RECV_K_TILES // 2 * TILE, :TILE][None, :]))
    v = np.stack(biased, axis=1).reshape(len(inputs[0]), -1)  # (tokens, 8 groups x 32)
    ids = choose(v)
    return np.take_along_axis(v, ids, axis=-1), ids


def index_bits(ids: np.ndarray) -> np.ndarray:
    """Expert ids as the float32 values whose bfloat16 bit pattern is ``id << 7``."""
    bits = (ids.astype(np.uint32) << 7) << 16
    return bits.astype(np.uint32).view(np.float32)


def _check(named: dict[str, Tensor], layer: int, banks: list) -> dict[str, object]:
    for name, tensor in named.items():
        require(OP, name, tensor, (DataType.BFLOAT16,), Layout.TILE)
    specs = {name: shard_spec(OP, name, tensor) for name, tensor in named.items()}
    x_view = padded_shape_2d(named["input_tensor"].spec)
    if tuple(specs["input_tensor"].shape) != (TILE, K_TILES * TILE):
        raise MeshnnValueError(
            f"ttnn.{OP}: input_tensor's shard must be [{TILE}, {K_TILES * TILE}] (32 tokens, K 7168), "
            f"got {list(specs['input_tensor'].shape)}"
        )
    x_shards = [local_shard(OP, "input_tensor", specs["input_tensor"], x_view, core) for core in banks]
    w_spec = specs["w_tensor"]
    if w_spec.shape[1] != 2 * TILE:
        raise MeshnnValueError(f"ttnn.{OP}: w_tensor's shard must be {2 * TILE} wide, got {w_spec.shape[1]}")
    w_shards = bank_shards(OP, "w_tensor", named["w_tensor"], w_spec, (layer + 1) * LAYER_ROWS)
    o_spec = specs["output_tensor"]
    if tuple(o_spec.shape) != (TILE, TILE):
        raise MeshnnValueError(f"ttnn.{OP}: output_tensor's shard must be [32, 32], got {list(o_spec.shape)}")
    return {"x": x_shards, "w": w_shards, "specs": specs}


@register(OP, kind=OpKind.MATMUL, family=OpFamily.MATMUL, device_operation="MoEGateMMDeviceOperation")
def moe_gate_mm(
    input_tensor: Tensor, *, w_tensor: Tensor, output_tensor: Tensor, layer_id: int, column_id: int
) -> Tensor:
    """``output_tensor``, its collector tile written with 32 tokens' top-8 routed experts (see the
    module's text).  ``column_id`` (the gate's column of a 16x8 mesh) only picks which 32 experts
    the kernel's bitmask (not modelled) describes."""
    named = {
        "input_tensor": device_input(OP, "input_tensor", input_tensor),
        "w_tensor": device_input(OP, "w_tensor", w_tensor),
        "output_tensor": device_input(OP, "output_tensor", output_tensor),
    }
    mesh = same_mesh(OP, named)
    layer, column = uint_arg(OP, "layer_id", layer_id), uint_arg(OP, "column_id", column_id)
    banks = ring_banks(OP, mesh)
    found = _check(named, layer, banks)
    ring = ring_order(mesh, banks)
    specs = found["specs"]
    collector = banks[ring[COLLECTOR]]
    out_view = padded_shape_2d(named["output_tensor"].spec)
    out_block = block_of(local_shard(OP, "output_tensor", specs["output_tensor"], out_view, collector), out_view,
                         (TILE, TILE))  # fmt: skip
    x_spec, w_spec, o_spec = (t.spec for t in named.values())
    x_blocks = [block_of(found["x"][b], padded_shape_2d(x_spec), specs["input_tensor"].shape) for b in ring]
    w_blocks = [block_of(found["w"][b], padded_shape_2d(w_spec), specs["w_tensor"].shape) for b in ring]

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], _coords: tuple[MeshCoordinate, ...]) -> None:
        x_all, w_all, o_all = (logical_values(r, s) for r, s in zip(in_rows, (x_spec, w_spec, o_spec), strict=True))
        result = np.array(o_all, dtype=np.float32)
        for device in range(result.shape[0]):
            x2d, w2d = padded_2d(x_all[device], x_spec), padded_2d(w_all[device], w_spec)
            values, ids = route([x2d[b] for b in x_blocks], [w2d[b] for b in w_blocks], layer)
            o2d = padded_2d(result[device].copy(), o_spec)
            tile = o2d[out_block]
            tile[:CHOSEN, : values.shape[0]] = values.T
            tile[CHOSEN : 2 * CHOSEN, : values.shape[0]] = index_bits(ids).T
            result[device] = logical_of(o2d, o_spec)
        write_values(out_rows[0], result, o_spec)

    attrs = {"layer_id": layer, "column_id": column}
    into = [named["output_tensor"]]
    return launch(OP, mesh, list(named.values()), [Output(o_spec)], kernel, into=into, rowwise=True, attrs=attrs)[0]
