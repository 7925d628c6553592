"""``ttnn.experimental.moe_gpt``: gpt-oss's fused decode experts (tt-metal 2026), between
``all_to_all_dispatch_metadata`` and ``selective_reduce_combine``.

Per device (``T`` = ``input_tensor.shape[0]`` tokens of the dispatch line, ``K`` = top-k, ``E`` =
``w0_w1_tensor.shape[2]`` local experts, ``H`` = 2880):

- its local experts: the first ``E`` expert ids whose owner in its own row of ``expert_mapping``
  (``[devices, experts]`` uint16) is itself (its row-major device index);
- token ``t`` (from line member ``t // (T/G)``, G devices along ``cluster_axis``, default 0) goes to
  local expert ``e`` when one of its ids (``expert_indices`` row ``t``) is ``e``'s id and the
  source's mapping row names this device; rows whose ``K > 1`` ids are all equal were not
  dispatched and are skipped;
- each expert's tokens (ascending ``t``): ``x W0 + b0`` and ``x W1 + b1`` (bfloat16), gpt-oss's
  clamped SwiGLU (bfloat16), ``a W2 + b2`` (bfloat16), weights unpacked from their packed
  bfloat4_b layout (:mod:`meshnn.ops.ccl.moe_gpt_layout`; layer 0 of dim 1).

Outputs (L1): ``[0]`` ``[1, E']`` uint32 each expert's token count (``E'``: ``E`` aligned to 16 B);
``[1]`` ``[1, (T+1)*a]`` uint32 rows ``[t, k of each local expert (K+1: not picked), score bits of
each (bfloat16 bits, 0)]`` (``a``: ``2E+1`` aligned to 16 B) for each token that picked a local
expert, then a row ``[-1, K+1.., 0..]``; later rows keep what the buffer held; ``[2]`` ``[E, (T+1)*4]``
uint32: each expert's token ids (every 4th word), then ``-1``; ``[4]`` ``[cores, 2, 32, H]`` bfloat16
ROW_MAJOR HEIGHT_SHARDED over the whole worker grid (one ``[64, H]`` shard a core), ``[3]`` the same
buffer seen as TILE.  The combine cores (:func:`~meshnn.ops.ccl.moe_gpt_layout.combine_cores`) hold
the results: expert ``e``'s ``n`` tokens split over the ``H_c`` token parts (floor, the first parts
one more), token ``j`` of part ``h`` at row ``e*T/H_c + j`` of the shard of combine core
``h*W_c + w``, hidden columns ``w*H/W_c ..`` (the layout selective_reduce_combine reads).

The kernels are built for gpt-oss's sizes alone: 12 DRAM-bank matmul cores, hidden and intermediate
2880, bfloat4_b weights with a bias tile row; other sizes are refused here (tt-metal's kernels would
read or write the wrong bytes).  Perf: :func:`meshnn.perf.moe.predict_moe_gpt`.

May import: :mod:`meshnn.errors`, :mod:`meshnn.formats`, :mod:`meshnn.device`, :mod:`meshnn.mesh`,
:mod:`meshnn.tensor`, the ops' checks, launch, outputs, values and registry, and the collectives'
modules.
"""

from __future__ import annotations

import numpy as np

from meshnn.device.buffer import BufferType, ShardOrientation, ShardSpec, TensorMemoryLayout
from meshnn.device.core import CoreCoord, CoreRange, CoreRangeSet
from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.bfloat16 import float32_to_bfloat16_bits, round_to_bfloat16
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.mesh.coord import MeshCoordinate
from meshnn.mesh.mesh_device import MeshDevice
from meshnn.ops.ccl import moe_gpt_layout as lay
from meshnn.ops.ccl.all_to_all import _token_bits
from meshnn.ops.ccl.broadcast import device_groups, whole_mesh
from meshnn.ops.ccl.point_to_point import local_only
from meshnn.ops.checks import device_input, same_mesh
from meshnn.ops.launch import launch
from meshnn.ops.outputs import Output
from meshnn.ops.registry import OpKind, register
from meshnn.ops.values import logical_values
from meshnn.perf.desc import OpFamily
from meshnn.tensor.lifetime import device_tensor
from meshnn.tensor.spec import MemoryConfig, TensorSpec
from meshnn.tensor.tensor import Tensor

OP = "experimental.moe_gpt"
HIDDEN = lay.K_TILES * lay.TILE
NAMES = ("input_tensor", "expert_indices", "expert_scores", "expert_mapping", "w0_w1_tensor", "w2_tensor")


def _fail(message: str) -> MeshnnValueError:
    return MeshnnValueError(f"ttnn.{OP}: {message}")


def _int(name: str, value: object, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise MeshnnTypeError(f"ttnn.{OP}: {name} must be an int, got {value!r}")
    if value < low:
        raise _fail(f"{name} must be at least {low}, got {value}")
    return value


def _weights(mesh: MeshDevice, w01: Tensor, w2: Tensor) -> int:
    """ttnn's weight checks, and the kernels' fixed format (12 banks, 2880 + a bias tile, bfloat4_b)."""
    cores = len(lay.ring_cores(mesh))
    for name, t, groups, what in (("w0_w1_tensor", w01, 4, "K"), ("w2_tensor", w2, 2, "N")):
        shape = tuple(t.shape)
        if len(shape) != 6:
            raise _fail(
                f"{name} must have rank 6 (num_cores, L, E, groups, {what}, 4*TILE_SIZE), got rank {len(shape)}"
            )
        if shape[0] != cores:
            raise _fail(
                f"{name} dim 0 must equal the number of DRAM-bank-aligned matmul cores ({cores}), got {shape[0]}"
            )
        if shape[5] != lay.BLOCK:
            raise _fail(f"{name} dim 5 must be 4*TILE_SIZE ({lay.BLOCK}), got {shape[5]}")
        if shape[3] != groups or shape[4] != HIDDEN + lay.TILE or cores != lay.RING_CORES:
            raise _fail(
                f"{name} is {list(shape)}; the kernels are built for ({lay.RING_CORES}, L, E, {groups}, "
                f"{HIDDEN + lay.TILE}, {lay.BLOCK}) (gpt-oss's 2880 and a bias tile row)"
            )
        if t.dtype is not DataType.BFLOAT4_B or t.layout is not Layout.TILE:
            raise _fail(f"{name} must be bfloat4_b TILE (the kernels read Bfp4_b tiles), got {t.dtype} {t.layout}")
        memory = t.spec.memory_config
        if memory.buffer_type is not BufferType.DRAM or memory.memory_layout is not TensorMemoryLayout.HEIGHT_SHARDED:
            raise _fail(f"{name} must be HEIGHT_SHARDED in DRAM, one shard a bank (each core reads its own bank)")
        if len({c.x for c in memory.shard_spec.grid.cores()}) != cores:
            raise _fail(f"{name}'s shard grid must name the {cores} DRAM banks once each")
    if w01.shape[2] < 1:
        raise _fail(f"w0_w1_tensor dim 2 (experts_per_device) must be >= 1, got {w01.shape[2]}")
    if w2.shape[2] != w01.shape[2]:
        raise _fail(f"w2_tensor dim 2 (experts_per_device) must match w0_w1_tensor ({w01.shape[2]}), got {w2.shape[2]}")
    return int(w01.shape[2])


def _routing(tokens: Tensor, ids: Tensor, scores: Tensor, mapping: Tensor, mesh: MeshDevice, experts: int) -> int:
    """The token, id, score and mapping checks; the token count ``T``."""
    shape = tuple(tokens.shape)
    if len(shape) < 2:
        raise _fail(f"input_tensor (sparse buffer) must be at least rank 2, got {len(shape)}")
    if tokens.dtype is not DataType.BFLOAT16 or tokens.layout is not Layout.ROW_MAJOR or shape[-1] != HIDDEN:
        raise _fail(f"input_tensor must be bfloat16 ROW_MAJOR [T, {HIDDEN}], got {tokens.dtype} {list(shape)}")
    if int(np.prod(shape[1:-1])) != 1:
        raise _fail(f"input_tensor's tokens are its dim 0; got {list(shape)} (reshape it to [T, {HIDDEN}])")
    if len(ids.shape) < 2:
        raise _fail(f"expert_indices must be at least rank 2, got {len(ids.shape)}")
    for name, t, dtype in (("expert_indices", ids, DataType.UINT16), ("expert_scores", scores, DataType.BFLOAT16)):
        memory = t.spec.memory_config
        if memory.memory_layout is not TensorMemoryLayout.HEIGHT_SHARDED or memory.buffer_type is not BufferType.L1:
            raise _fail(f"{name} must be HEIGHT_SHARDED L1 (produced by all_to_all_dispatch_metadata)")
        if t.dtype is not dtype or t.layout is not Layout.ROW_MAJOR or tuple(t.shape) != tuple(ids.shape):
            raise _fail(f"{name} must be {dtype} ROW_MAJOR of expert_indices' shape, got {t.dtype} {list(t.shape)}")
    if int(np.prod(tuple(ids.shape)[:-1])) != shape[0]:
        raise _fail(f"expert_indices holds {int(np.prod(tuple(ids.shape)[:-1]))} token rows; input_tensor {shape[0]}")
    rows = mesh.get_num_devices()
    if mapping.dtype is not DataType.UINT16 or mapping.layout is not Layout.ROW_MAJOR or len(mapping.shape) != 2:
        raise _fail(
            f"expert_mapping must be uint16 ROW_MAJOR [devices, experts], got {mapping.dtype} {list(mapping.shape)}"
        )
    if mapping.shape[0] != rows or mapping.shape[1] < experts:
        raise _fail(
            f"expert_mapping last dim (experts_total={mapping.shape[1]}) must be >= experts_per_device ({experts}) "
            f"and it must have a row per device ({rows}), got {list(mapping.shape)}"
        )
    return int(shape[0])


def _specs(mesh: MeshDevice, tokens: int, experts: int, hidden: int) -> list[TensorSpec]:
    """ttnn's five output specs (the fourth is the fifth's TILE view)."""
    l1 = MemoryConfig(TensorMemoryLayout.INTERLEAVED, BufferType.L1)
    act = -(-(2 * experts + 1) // 4) * 4
    grid = mesh.compute_with_storage_grid_size()
    cores = CoreRangeSet([CoreRange(CoreCoord(0, 0), CoreCoord(grid.x - 1, grid.y - 1))])
    shard = ShardSpec(cores, (2 * lay.TILE, hidden), ShardOrientation.ROW_MAJOR)
    sharded = MemoryConfig(TensorMemoryLayout.HEIGHT_SHARDED, BufferType.L1, shard)
    dense = (grid.x * grid.y, 2, lay.TILE, hidden)
    return [
        TensorSpec((1, -(-experts // 4) * 4), DataType.UINT32, Layout.ROW_MAJOR, memory_config=l1),
        TensorSpec((1, (tokens + 1) * act), DataType.UINT32, Layout.ROW_MAJOR, memory_config=l1),
        TensorSpec((experts, (tokens + 1) * 4), DataType.UINT32, Layout.ROW_MAJOR, memory_config=l1),
        TensorSpec(dense, DataType.BFLOAT16, Layout.TILE, memory_config=sharded),
        TensorSpec(dense, DataType.BFLOAT16, Layout.ROW_MAJOR, memory_config=sharded),
    ]


def route_tokens(ids: np.ndarray, mapping: np.ndarray, me: int, sources: list[int], experts: int) -> dict:
    """One device's routing: its local expert ids, each expert's tokens, and the activation rows
    ``(t, {e: (k, score index)})`` (``ids`` ``(T, K)``; ``sources[t]``: token ``t``'s sender)."""
    local = [int(i) for i in np.flatnonzero(mapping[me] == me)[:experts]]
    count, k_sel = ids.shape
    chosen: list[list[int]] = [[] for _ in local]
    rows: list[tuple[int, dict[int, int]]] = []
    for t in range(count):
        row = ids[t]
        if k_sel > 1 and bool((row == row[0]).all()):
            continue  # not dispatched here: a placeholder row
        picks: dict[int, int] = {}
        owners = mapping[sources[t]]
        for k in range(k_sel):
            x = int(row[k])
            if x < owners.shape[0] and int(owners[x]) == me and x in local:
                picks[local.index(x)] = k
                chosen[local.index(x)].append(t)
        if picks:
            rows.append((t, picks))
    return {"local": local, "tokens": chosen, "rows": rows}


def _metadata(outs: list[np.ndarray], routed: dict, scores: np.ndarray, experts: int, k_sel: int) -> None:
    """Write one device's counts, activation rows and token maps (uint32 views ``outs``)."""
    counts, acts, maps = outs
    counts[:] = 0
    counts[: len(routed["tokens"])] = [len(t) for t in routed["tokens"]]
    width = -(-(2 * experts + 1) // 4) * 4
    table = acts[: acts.size // width * width].reshape(-1, width)
    for i, (t, picks) in enumerate([*routed["rows"], (-1, {})]):
        table[i] = 0
        table[i, 0] = t & 0xFFFFFFFF
        table[i, 1 : 1 + experts] = k_sel + 1
        for e, k in picks.items():
            table[i, 1 + e] = k
            table[i, 1 + experts + e] = scores[t, k]
    token_maps(maps, routed["tokens"], experts)


def token_maps(maps: np.ndarray, tokens: list[list[int]], experts: int) -> None:
    """Each expert's token ids (every 4th uint32 of its row of ``maps``), then ``-1``; zeros elsewhere."""
    entries = maps.reshape(experts, -1, 4)
    entries[:] = 0
    for e in range(experts):
        mine = tokens[e] if e < len(tokens) else []
        entries[e, : len(mine), 0] = mine
        entries[e, len(mine), 0] = 0xFFFFFFFF


def expert_outputs(x: np.ndarray, weights: tuple[np.ndarray, ...]) -> np.ndarray:
    """One expert on its tokens ``x`` ``(n, 2880)`` float32 (bfloat16 values), its unpacked
    ``(gate^T, gate bias, up^T, up bias, down^T, down bias)``; the bfloat16 outputs."""
    gate_t, gate_bias, up_t, up_bias, down_t, down_bias = weights
    g = round_to_bfloat16(np.ascontiguousarray((gate_t @ x.T).T + gate_bias, np.float32))
    u = round_to_bfloat16(np.ascontiguousarray((up_t @ x.T).T + up_bias, np.float32))
    a = round_to_bfloat16(np.ascontiguousarray(lay.clamped_swiglu(g, u)))
    return round_to_bfloat16(np.ascontiguousarray((down_t @ a.T).T + down_bias, np.float32))


def unpacked_expert(p01: np.ndarray, p2: np.ndarray, expert: int) -> tuple[np.ndarray, ...]:
    """Expert ``expert``'s weights from the ring-ordered packed values (layer 0), each matrix
    transposed (a few token rows times a weight read row by row)."""
    gate, gate_bias, up, up_bias = lay.w0_w1_of(p01[:, expert])
    down, down_bias = lay.w2_of(p2[:, expert])
    t = np.ascontiguousarray
    return t(gate.T), gate_bias, t(up.T), up_bias, t(down.T), down_bias


def _write_dense(shards: np.ndarray, y: np.ndarray, expert: int, plan: dict) -> None:
    """Expert ``expert``'s outputs ``y`` (bfloat16 values) into the combine cores' shards
    (``shards`` ``(cores, 64*H)`` uint16 bits), split as the kernel's writer splits them."""
    parts, width, per = plan["height"], plan["width"], plan["tokens"] // plan["height"]
    seg = plan["hidden"] // width
    chunk, rem = divmod(y.shape[0], parts)
    bits = float32_to_bfloat16_bits(np.ascontiguousarray(y, np.float32))
    j = 0
    for h in range(parts):
        for r in range(chunk + (1 if h < rem else 0)):
            base = (expert * per + r) * seg
            for w in range(width):
                shards[plan["cores"][h * width + w], base : base + seg] = bits[j, w * seg : (w + 1) * seg]
            j += 1


def _by_ring(rows: np.ndarray, spec: TensorSpec, ring_of_shard: list[int]) -> np.ndarray:
    """One device's packed weight values, layer 0, with dim 0 put in ring-position order."""
    values = np.asarray(logical_values(rows, spec))[0][:, 0]
    ordered = np.empty_like(values)
    ordered[ring_of_shard] = values
    return ordered


def _kernel(inputs: list[Tensor], specs: list[TensorSpec], plan: dict):
    tokens, ids, scores, mapping, w01, w2 = (t.spec for t in inputs)  # (the kernel holds specs: a trace keeps it)

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], _coords: tuple[MeshCoordinate, ...]) -> None:
        x_all = np.asarray(logical_values(in_rows[0], tokens)).reshape(in_rows[0].shape[0], plan["tokens"], -1)
        id_rows = np.asarray(logical_values(in_rows[1], ids, as_float=False))
        score_bits = _token_bits(in_rows[2], scores)
        table = np.asarray(logical_values(in_rows[3], mapping, as_float=False))
        cached: dict = {}
        for me in range(in_rows[0].shape[0]):
            routed = route_tokens(id_rows[me].reshape(plan["tokens"], -1), table[me], me, plan["sources"][me],
                                  plan["experts"])  # fmt: skip
            outs = [out_rows[i][me : me + 1, : specs[i].compute_packed_buffer_size_bytes()].view(np.uint32).reshape(-1)
                    for i in range(3)]  # fmt: skip
            _metadata(outs, routed, score_bits[me].reshape(plan["tokens"], -1).astype(np.uint32), plan["experts"],
                      plan["k"])  # fmt: skip
            shards = _token_bits(out_rows[3][me : me + 1], specs[4]).reshape(len(plan["grid"]), -1)
            if not any(routed["tokens"]):
                continue
            was = cached.get("device")
            if was is None or not all(np.array_equal(in_rows[i][me], in_rows[i][was]) for i in (4, 5)):
                packed = (_by_ring(in_rows[4][me : me + 1], w01, plan["ring01"]),
                          _by_ring(in_rows[5][me : me + 1], w2, plan["ring2"]))  # fmt: skip
                cached.clear()
                cached.update(device=me, packed=packed)
            for e, mine in enumerate(routed["tokens"]):
                if mine:
                    if e not in cached:
                        cached[e] = unpacked_expert(*cached["packed"], e)
                    _write_dense(shards, expert_outputs(x_all[me][mine], cached[e]), e, plan)

    return kernel


def _plan(mesh: MeshDevice, inputs: list[Tensor], attrs: dict) -> dict:
    """What the kernel needs besides the bytes: sizes, the combine cores' shard indices, each
    device's token senders, the weights' ring order; the layout checks on the way."""
    tokens, experts, hidden = attrs["tokens"], attrs["experts"], attrs["hidden_size"]
    width, height = attrs["output_width_shard_dim"], attrs["output_height_shard_dim"]
    if hidden != HIDDEN:
        raise _fail(f"hidden_size must be {HIDDEN} (the kernels' K_TILES = {lay.K_TILES}), got {hidden}")
    if (hidden // lay.TILE) % width:
        raise _fail(f"hidden_size / 32 ({hidden // lay.TILE}) must divide by output_width_shard_dim ({width})")
    if tokens % height or experts * (tokens // height) * (hidden // width) > 2 * lay.TILE * hidden:
        raise _fail(
            f"{tokens} tokens over {height} token parts and {experts} experts do not fit a combine core's "
            f"[64, {hidden}] shard (T must divide by output_height_shard_dim and E*T/H_c*H/W_c <= 64*H)"
        )
    groups = device_groups(OP, inputs[0], mesh, attrs["axis"])
    if tokens % len(groups[0]):
        raise _fail(f"{tokens} tokens do not divide over the {len(groups[0])} devices of the dispatch line")
    per = tokens // len(groups[0])
    sources: dict[int, list[int]] = {}
    for group in groups:
        for me in group:
            sources[me] = [group[t // per] for t in range(tokens)]
    grid = mesh.compute_with_storage_grid_size()
    cores = [c.y * grid.x + c.x for c in lay.combine_cores(mesh, width, height)]
    plan = {"tokens": tokens, "experts": experts, "k": attrs["k"], "hidden": hidden, "width": width}
    plan.update(height=height, cores=cores, grid=range(grid.x * grid.y))
    plan["sources"] = [sources.get(i, [i] * tokens) for i in range(mesh.get_num_devices())]
    plan.update(ring01=lay.ring_of_shards(mesh, inputs[4]), ring2=lay.ring_of_shards(mesh, inputs[5]))
    return plan


@register(OP, kind=OpKind.MATMUL, family=OpFamily.MOE_GPT, device_operation="MoEGPTDeviceOperation")
def moe_gpt(
    input_tensor: Tensor,
    *,
    expert_indices: Tensor,
    expert_scores: Tensor,
    expert_mapping: Tensor,
    w0_w1_tensor: Tensor,
    w2_tensor: Tensor,
    output_height_shard_dim: int = 4,
    output_width_shard_dim: int = 3,
    hidden_size: int = 2880,
    cluster_axis: int | None = None,
) -> list[Tensor]:
    """gpt-oss's fused experts on the dispatched tokens (see the module's text): five tensors."""
    given = (input_tensor, expert_indices, expert_scores, expert_mapping, w0_w1_tensor, w2_tensor)
    inputs = [device_input(OP, name, t) for name, t in zip(NAMES, given, strict=True)]
    mesh = same_mesh(OP, dict(zip(NAMES, inputs, strict=True)))
    local_only(OP, mesh)
    attrs = {"output_height_shard_dim": _int("output_height_shard_dim", output_height_shard_dim, 1)}
    attrs["output_width_shard_dim"] = _int("output_width_shard_dim", output_width_shard_dim, 1)
    attrs["hidden_size"] = _int("hidden_size", hidden_size, 1)
    if cluster_axis is not None:
        _int("cluster_axis", cluster_axis, 0)
    experts = _weights(mesh, inputs[4], inputs[5])
    tokens = _routing(*inputs[:4], mesh, experts)
    plan_attrs = {**attrs, "tokens": tokens, "experts": experts, "k": int(inputs[1].shape[-1])}
    plan = _plan(mesh, inputs, {**plan_attrs, "axis": 0 if cluster_axis is None else cluster_axis})
    specs = _specs(mesh, tokens, experts, attrs["hidden_size"])
    outs = [Output(spec) for spec in (*specs[:3], specs[4])]
    attrs["cluster_axis"] = cluster_axis
    result = launch(OP, mesh, inputs, outs, _kernel(inputs, specs, plan), coords=whole_mesh(mesh), attrs=attrs)
    dense = result[3]
    tiled = device_tensor(specs[3], dense.storage.mesh_buffer, dense.storage.coords, dense.tensor_topology())
    return [result[0], result[1], result[2], tiled, dense]
