"""``ttnn.experimental.moe_compute``: DeepSeek's fused MoE experts (tt-metal 2026), any
``(hidden, intermediate)`` pair: the tokens the all-to-all dispatch left on each device, through its
local experts, and (unless ``compute_only``) back to their devices in their top-k slots.

Per device (``T = input.shape[0] * input.shape[1]`` tokens of the dispatch line, ``H`` its last dim,
``K`` = ``expert_indices.shape[-1]``, ``E`` = ``w0_w1.shape[2]`` local experts, ``G`` devices along
``cluster_axis`` (1 when None), ``H_c`` = ``output_height_shard_dim``, ``W_c`` the data-parallel
combine cores, :func:`~meshnn.ops.ccl.moe_compute_layout.data_parallel_cores`):

- its local experts: the expert ids (ascending, at most ``E``) whose owner in its own row of
  ``expert_mapping`` (``[devices, experts]`` uint16) is itself; token ``t`` (sent by line member
  ``t // (T/G)``) takes local expert ``e`` at each ``k`` whose id is ``e``'s and whose owner in the
  sender's mapping row is this device;
- each expert's tokens (ascending ``t``): ``x W0 + b0``, ``x W1 + b1`` (bfloat16), the activation
  (SILU, SWIGLU or GELU, bfloat16), ``a W2 + b2`` (bfloat16); weights of layer ``layer_id`` read from
  their packed bfloat4_b layout (:mod:`meshnn.ops.ccl.moe_compute_layout`); float32 products (the
  kernel's LoFi products and SFPU approximations are not modelled).

Outputs: ``[0]`` ``[cores, E']`` uint32, one row a worker core (``E'``: ``E`` aligned to 16 B), each
expert's token count on the cores of the worker bounding box (the others keep what they held);
``[1]`` ``[1, T*a]`` uint32 rows ``[t, k of each local expert (K+1: not picked), score bits]`` (``a``:
``2E+1`` aligned to 16 B) for each token that picked a local expert, the rest ``[-1, K+1.., 0..]``;
``[2]`` ``[E, (T+1)*4]`` uint32: each expert's token ids (every 4th word), then ``-1``; ``[4]``
``[cores, 2, 32, H]`` bfloat16 ROW_MAJOR HEIGHT_SHARDED over the worker grid, ``[3]`` the same
buffer as TILE: expert ``e``'s outputs in slot ``e % 2`` of the combine cores (its tokens split over
``H_c`` parts, floor and the first parts one more, token ``r`` of part ``h`` at row ``r`` of the slot
on core ``h*W_c + w``, hidden columns ``w*H/W_c ..``): the last two experts stay; ``[5]`` (unless
``compute_only``) ``[K, T/G, H]`` bfloat16 ROW_MAJOR (``output_memory_config``, DRAM; or written into
``optional_output_tensor``): token ``t``'s expert output in its slot ``k`` on the sender at row
``t % (T/G)``; other rows keep what they held.  Topology, links, mux cores and the semaphore choose
hardware: checked, recorded.  Perf: :func:`meshnn.perf.moe.predict_moe_compute`.

May import: :mod:`meshnn.errors`, :mod:`meshnn.formats`, :mod:`meshnn.device`, :mod:`meshnn.mesh`,
:mod:`meshnn.tensor`, the ops' checks, launch, outputs, values and registry, and the collectives'
modules.
"""

from __future__ import annotations

import numpy as np

from meshnn.device.buffer import BufferType, ShardOrientation, ShardSpec, TensorMemoryLayout
from meshnn.device.core import CoreCoord, CoreRange, CoreRangeSet
from meshnn.errors import MeshnnValueError
from meshnn.formats.bfloat16 import float32_to_bfloat16_bits, round_to_bfloat16
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.mesh.coord import MeshCoordinate
from meshnn.mesh.mesh_device import MeshDevice
from meshnn.ops.ccl import moe_compute_args as args
from meshnn.ops.ccl import moe_compute_layout as lay
from meshnn.ops.ccl.all_to_all import _preallocated, _token_bits
from meshnn.ops.ccl.broadcast import device_groups, whole_mesh
from meshnn.ops.ccl.moe_gpt import token_maps
from meshnn.ops.ccl.moe_gpt_layout import ring_of_shards
from meshnn.ops.ccl.selective_combine import BF16_PACKET_BYTES, data_parallel_split
from meshnn.ops.launch import launch
from meshnn.ops.outputs import Output, allocate_outputs
from meshnn.ops.registry import DeviceWork, OpKind, register
from meshnn.ops.values import logical_values
from meshnn.perf.desc import OpFamily
from meshnn.tensor.lifetime import device_tensor
from meshnn.tensor.spec import MemoryConfig, TensorSpec
from meshnn.tensor.tensor import Tensor

OP = lay.OP


def _specs(mesh: MeshDevice, plan: dict, combine: MemoryConfig | None) -> list[TensorSpec]:
    """ttnn's output specs (the fourth is the fifth's TILE view; the sixth unless compute-only)."""
    l1 = MemoryConfig(TensorMemoryLayout.INTERLEAVED, BufferType.L1)
    tokens, experts, hidden = plan["tokens"], plan["experts"], plan["hidden"]
    grid = mesh.compute_with_storage_grid_size()
    cores = CoreRangeSet([CoreRange(CoreCoord(0, 0), CoreCoord(grid.x - 1, grid.y - 1))])
    row = -(-experts // 4) * 4
    per_core = ShardSpec(cores, (1, row), ShardOrientation.ROW_MAJOR)
    counts = MemoryConfig(TensorMemoryLayout.HEIGHT_SHARDED, BufferType.L1, per_core)
    shard = ShardSpec(cores, (lay.DOUBLE_BUFFER * lay.TOKEN_SIZE, hidden), ShardOrientation.ROW_MAJOR)
    sharded = MemoryConfig(TensorMemoryLayout.HEIGHT_SHARDED, BufferType.L1, shard)
    dense = (grid.x * grid.y, lay.DOUBLE_BUFFER, lay.TOKEN_SIZE, hidden)
    specs = [
        TensorSpec((grid.x * grid.y, row), DataType.UINT32, Layout.ROW_MAJOR, memory_config=counts),
        TensorSpec((1, tokens * plan["act"]), DataType.UINT32, Layout.ROW_MAJOR, memory_config=l1),
        TensorSpec((experts, (tokens + 1) * 4), DataType.UINT32, Layout.ROW_MAJOR, memory_config=l1),
        TensorSpec(dense, DataType.BFLOAT16, Layout.TILE, memory_config=sharded),
        TensorSpec(dense, DataType.BFLOAT16, Layout.ROW_MAJOR, memory_config=sharded),
    ]
    if combine is not None:
        shape = (plan["k"], tokens // plan["line"], hidden)
        specs.append(TensorSpec(shape, DataType.BFLOAT16, Layout.ROW_MAJOR, memory_config=combine))
    return specs


def _metadata(outs: list[np.ndarray], routed: dict, scores: np.ndarray, plan: dict) -> None:
    """Write one device's counts (on the bounding box's cores), activation rows and token maps."""
    counts, acts, maps = outs
    experts, width = plan["experts"], plan["act"]
    table = counts.reshape(-1, -(-experts // 4) * 4)
    for core in plan["bbox_cores"]:
        table[core] = 0
        table[core, :experts] = [len(t) for t in routed["tokens"]] + [0] * (experts - len(routed["tokens"]))
    rows = acts.reshape(-1, width)
    rows[:] = 0
    rows[:, 0] = 0xFFFFFFFF
    rows[:, 1 : 1 + experts] = plan["k"] + 1
    for i, (t, picks) in enumerate(routed["rows"]):
        rows[i, 0] = t
        for e, k in picks.items():
            rows[i, 1 + e] = k
            rows[i, 1 + experts + e] = scores[t, k]
    token_maps(maps, routed["tokens"], experts)


def expert_outputs(x: np.ndarray, weights: tuple, kind: str, mask: np.ndarray | None) -> np.ndarray:
    """One expert on its tokens ``x`` ``(n, H)`` float32: its bfloat16 outputs."""
    gate, gate_bias, up, up_bias, down, down_bias = weights
    g = round_to_bfloat16(np.ascontiguousarray(x @ gate + gate_bias, np.float32))
    u = round_to_bfloat16(np.ascontiguousarray(x @ up + up_bias, np.float32))
    a = lay.activation(kind, g, u)
    if mask is not None:
        a = a * mask
    a = round_to_bfloat16(np.ascontiguousarray(a, np.float32))
    return round_to_bfloat16(np.ascontiguousarray(a @ down + down_bias, np.float32))


def _write_dense(shards: np.ndarray, bits: np.ndarray, expert: int, plan: dict) -> None:
    """Expert ``expert``'s output bits ``(n, H)`` into slot ``expert % 2`` of the combine cores."""
    parts, width = plan["height"], plan["width"]
    seg = plan["hidden"] // width
    chunk, rem = divmod(bits.shape[0], parts)
    j = 0
    for h in range(parts):
        for r in range(chunk + (1 if h < rem else 0)):
            for w in range(width):
                slot = shards[plan["cores"][h * width + w]].reshape(lay.DOUBLE_BUFFER, -1, seg)
                slot[expert % 2, r] = bits[j, w * seg : (w + 1) * seg]
            j += 1


def _combine(outs: list[np.ndarray], bits: np.ndarray, tokens: list[int], ks: list[int], plan: dict) -> None:
    """Each token's output bits to its sender's ``[K, T/G, H]`` output (``outs``: the line's, by
    member), the columns the combine's data-parallel split sends."""
    per = plan["tokens"] // plan["line"]
    for j, (t, k) in enumerate(zip(tokens, ks, strict=True)):
        if k >= plan["k"] or t // per >= len(outs):
            continue
        for lo, hi in plan["columns"]:
            outs[t // per][k, t % per, lo:hi] = bits[j, lo:hi]


def _device_weights(
    cache: dict, in_rows: list[np.ndarray], me: int, w01: TensorSpec, w2: TensorSpec, plan: dict
) -> dict:
    """Device ``me``'s packed layer ``layer_id`` weights in ring order (kept while the next
    device's bytes are the same); ``w01``, ``w2``: the weight tensors' specs."""
    was = cache.get("device")
    if was is not None and all(np.array_equal(in_rows[i][me], in_rows[i][was]) for i in (4, 5)):
        return cache
    packed = []
    for i, t, ring in ((4, w01, plan["ring01"]), (5, w2, plan["ring2"])):
        values = np.asarray(logical_values(in_rows[i][me : me + 1], t))[0][:, plan["layer"]]
        ordered = np.empty_like(values)
        ordered[ring] = values
        packed.append(ordered.reshape(values.shape[0], values.shape[1], -1))
    cache.clear()
    cache.update(device=me, packed=packed)
    return cache


def _expert(cache: dict, e: int, plan: dict) -> tuple:
    if e not in cache:
        p01, p2 = (p[:, e].reshape(-1) for p in cache["packed"])
        cache[e] = lay.expert_weights(p01, p2, plan["key"], (plan["hidden"], plan["inter"], plan["bias"]))
    return cache[e]


def _kernel(inputs: list[Tensor], specs: list[TensorSpec], plan: dict):
    tokens, ids, scores, mapping, w01, w2 = (t.spec for t in inputs)  # (the kernel holds specs: a trace keeps it)
    count, k_sel = plan["tokens"], plan["k"]

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], _coords: tuple[MeshCoordinate, ...]) -> None:
        n = in_rows[0].shape[0]
        x_all = np.asarray(logical_values(in_rows[0], tokens)).reshape(n, -1, plan["hidden"])[:, :count]
        id_rows = np.asarray(logical_values(in_rows[1], ids, as_float=False)).reshape(n, -1, k_sel)[:, :count]
        score_bits = _token_bits(in_rows[2], scores).reshape(n, -1, k_sel)[:, :count].astype(np.uint32)
        table = np.asarray(logical_values(in_rows[3], mapping, as_float=False))
        combined = _token_bits(out_rows[4], specs[5]) if len(specs) > 5 else None
        cache: dict = {}
        for me in range(n):
            routed = _routed(id_rows[me], table[me], me, plan)
            outs = [out_rows[i][me : me + 1, : specs[i].compute_packed_buffer_size_bytes()].view(np.uint32).reshape(-1)
                    for i in range(3)]  # fmt: skip
            _metadata(outs, routed, score_bits[me], plan)
            shards = _token_bits(out_rows[3][me : me + 1], specs[4]).reshape(plan["grid"], -1)
            for e, mine in enumerate(routed["tokens"]):
                if not mine:
                    continue
                weights = _expert(_device_weights(cache, in_rows, me, w01, w2, plan), e, plan)
                mask = plan["mask"] if e >= plan["experts"] - plan["shared"] else None
                y = expert_outputs(x_all[me][mine], weights, plan["activation"], mask)
                bits = float32_to_bfloat16_bits(np.ascontiguousarray(y, np.float32))
                _write_dense(shards, bits, e, plan)
                if combined is not None:
                    ks = [dict(routed["rows_of"][t])[e] for t in mine]
                    _combine([combined[m] for m in plan["line_of"][me]], bits, mine, ks, plan)

    return kernel


def _routed(ids: np.ndarray, table: np.ndarray, me: int, plan: dict) -> dict:
    """One device's routing (:func:`meshnn.ops.ccl.moe_gpt.route_tokens` without its placeholder
    rule: moe_compute's reader takes every row)."""
    local = [int(i) for i in np.flatnonzero(table[me] == me)[: plan["experts"]]]
    chosen: list[list[int]] = [[] for _ in local]
    rows: list[tuple[int, dict[int, int]]] = []
    for t in range(ids.shape[0]):
        owners, picks = table[plan["sources"][me][t]], {}
        for k, x in enumerate(ids[t].tolist()):
            if x < owners.shape[0] and int(owners[x]) == me and x in local:
                picks[local.index(x)] = k
                chosen[local.index(x)].append(t)
        if picks:
            rows.append((t, picks))
    return {"local": local, "tokens": chosen, "rows": rows, "rows_of": dict(rows)}


def _plan(mesh: MeshDevice, inputs: list[Tensor], given: dict) -> dict:
    """Sizes, cores, each device's senders and line, the weights' ring order and inverse key."""
    plan = dict(given)
    groups = device_groups(OP, inputs[0], mesh, plan["axis"])
    plan["line"] = len(groups[0])
    if plan["tokens"] % plan["line"]:
        raise MeshnnValueError(f"ttnn.{OP}: {plan['tokens']} tokens do not divide over the {plan['line']} devices")
    per = plan["tokens"] // plan["line"]
    lines = {me: group for group in groups for me in group}
    plan["sources"] = [[lines.get(me, [me])[min(t // per, len(lines.get(me, [me])) - 1)]
                        for t in range(plan["tokens"])] for me in range(mesh.get_num_devices())]  # fmt: skip
    plan["line_of"] = [lines.get(me, [me]) for me in range(mesh.get_num_devices())]
    grid = mesh.compute_with_storage_grid_size()
    plan["grid"] = grid.x * grid.y
    plan["cores"] = [c.y * grid.x + c.x for c in lay.combine_cores(mesh, plan["height"], plan["width"])]
    box = lay.worker_bounding_box(mesh, plan["height"], plan["width"], plan["hidden"])
    plan["bbox_cores"] = [c.y * grid.x + c.x for c in box.cores(row_wise=True)]
    sizes = data_parallel_split(plan["hidden"] * 2, BF16_PACKET_BYTES, plan["width"])
    plan["columns"] = [(sum(sizes[:d]) // 2, sum(sizes[: d + 1]) // 2) for d in range(len(sizes))]
    plan["act"] = -(-(2 * plan["experts"] + 1) // 4) * 4
    plan["key"] = lay.shard_maps(mesh, plan["hidden"], plan["inter"])
    plan["ring01"], plan["ring2"] = ring_of_shards(mesh, inputs[4]), ring_of_shards(mesh, inputs[5])
    plan["mask"] = lay.shared_mask(plan["key"], plan["inter"], plan["tp"])
    return plan


@register(OP, kind=OpKind.MATMUL, family=OpFamily.MOE_COMPUTE, device_operation="MoEComputeDeviceOperation")
def moe_compute(
    tilize_input_tensor: Tensor,
    tilize_expert_indices_tensor: Tensor,
    tilize_expert_scores_tensor: Tensor,
    tilize_expert_mapping_tensor: Tensor,
    matmul_w0_w1_tensor: Tensor,
    matmul_w2_tensor: Tensor,
    *,
    layer_id: int,
    output_height_shard_dim: int,
    intermediate_size: int,
    has_bias: bool = False,
    cluster_axis: int | None = None,
    topology: object = None,
    num_links: int | None = None,
    mux_core_range_set: CoreRangeSet | None = None,
    output_memory_config: MemoryConfig | None = None,
    optional_output_tensor: Tensor | None = None,
    optional_cross_device_semaphore: object = None,
    activation_type: object = None,
    compute_only: bool = False,
    num_shared_experts_per_device: int | None = None,
) -> list[Tensor]:
    """The dispatched tokens through this device's experts, and back (see the module's text):
    six tensors, five when ``compute_only``."""
    given = (tilize_input_tensor, tilize_expert_indices_tensor, tilize_expert_scores_tensor,
             tilize_expert_mapping_tensor, matmul_w0_w1_tensor, matmul_w2_tensor)  # fmt: skip
    inputs, mesh = args.checked_inputs(given)
    named = dict(layer_id=layer_id, output_height_shard_dim=output_height_shard_dim, has_bias=has_bias)
    named.update(intermediate_size=intermediate_size, cluster_axis=cluster_axis, topology=topology)
    named.update(num_links=num_links, mux_core_range_set=mux_core_range_set, compute_only=compute_only)
    named.update(output_memory_config=output_memory_config, activation_type=activation_type)
    named.update(num_shared_experts_per_device=num_shared_experts_per_device)
    named["optional_cross_device_semaphore"] = optional_cross_device_semaphore
    attrs, plan = args.checked_attributes(mesh, inputs, named, optional_output_tensor)
    plan = _plan(mesh, inputs, plan)
    combine = None if compute_only else attrs["output_memory_config"]
    specs = _specs(mesh, plan, combine)
    into = _outputs(mesh, inputs[0], specs, optional_output_tensor)
    outs = [Output(spec) for spec in (*specs[:3], *specs[4:])]
    try:
        result = launch(OP, mesh, inputs, outs, _kernel(inputs, specs, plan), coords=whole_mesh(mesh), into=into,
                        attrs=attrs, semaphores=0 if compute_only else 2)  # fmt: skip
    except BaseException:
        for t in into[: len(into) - (optional_output_tensor is not None)]:
            t.storage.mesh_buffer.deallocate()
        raise
    dense = result[3]
    tiled = device_tensor(specs[3], dense.storage.mesh_buffer, dense.storage.coords, dense.tensor_topology())
    return [*result[:3], tiled, *result[3:]]


def _outputs(mesh: MeshDevice, first: Tensor, specs: list[TensorSpec], given: Tensor | None) -> list[Tensor]:
    """The output tensors the kernel writes: new ones, and the caller's combine output when given."""
    where = whole_mesh(mesh)
    wanted = [*specs[:3], *specs[4:]]
    if given is not None:
        given = _preallocated(OP, "optional_output_tensor", given, specs[5], mesh)
        wanted = wanted[:-1]
    buffers = allocate_outputs(mesh, wanted)
    made = [device_tensor(s, b, where, first.tensor_topology()) for s, b in zip(wanted, buffers, strict=True)]
    return made if given is None else [*made, given]


@register(
    "experimental.get_moe_combine_cores", kind=OpKind.PYTHON, family=OpFamily.COPY, modelled=False, runs=DeviceWork.HOST
)
def get_moe_combine_cores(mesh_device: MeshDevice, combine_token_parallel_cores: int,
                          combine_data_parallel_cores: int) -> list[CoreCoord]:  # fmt: skip
    """The cores moe_compute's combine uses, in order (core ``h*W + w``: token part ``h``, hidden part ``w``)."""
    mesh = args.mesh_of(mesh_device, "get_moe_combine_cores")
    height = args.integer("combine_token_parallel_cores", combine_token_parallel_cores, 1)
    return lay.combine_cores(mesh, height, args.integer("combine_data_parallel_cores", combine_data_parallel_cores, 1))


@register(
    "experimental.get_moe_worker_mcast_bounding_box",
    kind=OpKind.PYTHON,
    family=OpFamily.COPY,
    modelled=False,
    runs=DeviceWork.HOST,
)
def get_moe_worker_mcast_bounding_box(mesh_device: MeshDevice, combine_token_parallel_cores: int,
                                      combine_data_parallel_cores: int, hidden_size: int) -> CoreRange:  # fmt: skip
    """The bounding box of moe_compute's tilize, matmul and combine cores (its count multicast)."""
    mesh = args.mesh_of(mesh_device, "get_moe_worker_mcast_bounding_box")
    height = args.integer("combine_token_parallel_cores", combine_token_parallel_cores, 1)
    width = args.integer("combine_data_parallel_cores", combine_data_parallel_cores, 1)
    hidden = args.integer("hidden_size", hidden_size, lay.TILE)
    return lay.worker_bounding_box(mesh, height, width, hidden)
