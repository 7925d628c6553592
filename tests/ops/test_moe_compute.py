"""``ttnn.experimental.moe_compute`` against numpy: DeepSeek's fused MoE experts and their combine.

The weights go the user's way (tt-metal's 6U test's): raw ``(L, E, K, N)`` torch weights on the
mesh, ``ttnn.experimental.prepare_*`` packers, ``quantize_weights_via_host`` to bfloat4_b on
``get_weight_mem_configs``' DRAM shards.  The reference never unpacks them: it quantizes the raw
weights tile by tile (bfloat4_b blocks lie inside a tile and the packers move whole tiles, so the
values are the ones the kernels read) and computes ``x W0 + b0``, ``x W1 + b1``, the activation and
``a W2 + b2`` in float32 with bfloat16 roundings where the kernel packs bfloat16.  Routing metadata
is exact; each expert output lies in the range a float32 sum's rounding allows (see
:func:`expert_reference`: only intermediates whose bfloat16 rounding that error can flip widen it).
Sizes are small (hidden and intermediate 384: 12 tiles, one a ring core); Galaxy meshes with column
dispatch (the op's tilize cores sit on row 9 of the unharvested grid): 1x8 (axis 1), 4x8 (axis 0),
and a compute-only 1x1."""

from __future__ import annotations

import numpy as np
import torch

import meshnn as ttnn

RM = ttnn.ROW_MAJOR_LAYOUT
HIDDEN = INTER = 384
SENTINEL = 7.0


def bf16(a):
    return torch.tensor(np.ascontiguousarray(a, np.float32)).bfloat16().float().numpy()


def quantized(w):
    """bfloat4_b values of ``w`` (..., rows, cols), tile by tile."""
    t = ttnn.from_torch(torch.tensor(w).bfloat16(), dtype=ttnn.bfloat4_b, layout=ttnn.TILE_LAYOUT)
    return ttnn.to_torch(t).float().numpy()


def activation(kind, g, u):
    if kind is ttnn.experimental.MoEActivationFunction.SWIGLU:
        g = np.minimum(g, 7.0)
        return (np.clip(u, -7.0, 7.0) + 1.0) * g / (1.0 + np.exp(-1.702 * g))
    if kind is ttnn.experimental.MoEActivationFunction.GELU:
        return 0.5 * g * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (g + 0.044715 * g**3))) * u
    return g / (1.0 + np.exp(-g)) * u


def make_weights(rng, layers, experts, bias):
    """Raw torch weights (bfloat16 values) and the reference's quantized float32 experts."""
    raw = {"w0": rng.standard_normal((layers, experts, HIDDEN, INTER)) / np.sqrt(HIDDEN),
           "w1": rng.standard_normal((layers, experts, HIDDEN, INTER)) / np.sqrt(HIDDEN),
           "w2": rng.standard_normal((layers, experts, INTER, HIDDEN)) / np.sqrt(INTER)}  # fmt: skip
    raw = {k: bf16(v) for k, v in raw.items()}
    if bias:
        raw.update(b0=bf16(rng.standard_normal((layers, experts, INTER)) * 0.1),
                   b1=bf16(rng.standard_normal((layers, experts, INTER)) * 0.1),
                   b2=bf16(rng.standard_normal((layers, experts, HIDDEN)) * 0.1))  # fmt: skip
    ref = {k: quantized(v) for k, v in raw.items() if k[0] == "w"}
    for k in ("b0", "b1", "b2"):
        if bias:
            tile = np.zeros((*raw[k].shape[:2], 32, raw[k].shape[-1]), np.float32)
            tile[:, :, 0] = raw[k]
            ref[k] = quantized(tile).sum(axis=2)
        else:
            ref[k] = np.zeros((layers, experts, HIDDEN if k == "b2" else INTER), np.float32)
    return raw, ref


def put_weights(mesh, raw, layers, experts, bias):
    """The user's path: raw weights replicated, packed on device, quantized onto the DRAM banks."""
    up = {k: ttnn.from_torch(torch.tensor(v).bfloat16(), device=mesh, memory_config=ttnn.DRAM_MEMORY_CONFIG,
                             mesh_mapper=ttnn.ReplicateTensorToMesh(mesh)) for k, v in raw.items()}  # fmt: skip
    size = dict(L=layers, E=experts)
    if bias:
        w01 = ttnn.experimental.prepare_w0_w1_tensor_with_bias(up["w0"], up["w1"], up["b0"], up["b1"], K=HIDDEN,
                                                               N=INTER, **size)  # fmt: skip
        w2 = ttnn.experimental.prepare_w2_tensor_with_bias(up["w2"], up["b2"], N=INTER, K=HIDDEN, **size)
    else:
        w01 = ttnn.experimental.prepare_w0_w1_tensor_for_moe_compute(up["w0"], up["w1"], K=HIDDEN, N=INTER, **size)
        w2 = ttnn.experimental.prepare_w2_tensor_for_moe_compute(up["w2"], N=INTER, K=HIDDEN, **size)
    configs = ttnn.experimental.get_weight_mem_configs(
        mesh, num_layers=layers, experts_per_device=experts, hidden_size=HIDDEN, intermediate_size=INTER, has_bias=bias
    )
    q = ttnn.experimental.quantize_weights_via_host
    return q(w01, dtype=ttnn.bfloat4_b, memory_config=configs.w0_w1), q(w2, dtype=ttnn.bfloat4_b,
                                                                       memory_config=configs.w2)  # fmt: skip


def rounding_range(v, slack):
    """The bfloat16 values ``v`` (float64) may round to when a float32 sum moved it by ``slack``."""
    return bf16(v - slack), bf16(v + slack)


def expert_reference(x, ref, layer, e, kind):
    """``(low, high)``: the range of each bfloat16 output of expert ``e`` on the tokens ``x``.  The
    kernel's float32 sums may differ from these by their rounding (``K`` terms: at most
    ``K * 2^-24`` of the sum of magnitudes); where that can flip a bfloat16 rounding of ``g`` or ``u``,
    the activation takes both values; where it can flip ``a``'s own rounding, both neighbours."""
    kind = kind or ttnn.experimental.MoEActivationFunction.SILU
    w0, w1, w2 = (ref[k][layer, e].astype(np.float64) for k in ("w0", "w1", "w2"))
    b0, b1, b2 = (ref[k][layer, e].astype(np.float64) for k in ("b0", "b1", "b2"))
    x = x.astype(np.float64)
    eps = 2.0**-24 * (x.shape[1] + 2)
    g = rounding_range(x @ w0 + b0, eps * (np.abs(x) @ np.abs(w0) + np.abs(b0)))
    u = rounding_range(x @ w1 + b1, eps * (np.abs(x) @ np.abs(w1) + np.abs(b1)))
    acts = np.stack([activation(kind, gi.astype(np.float64), ui.astype(np.float64)) for gi in g for ui in u])
    a_lo = bf16(acts.min(0) - 1e-6 * np.abs(acts.min(0)))
    a_hi = bf16(acts.max(0) + 1e-6 * np.abs(acts.max(0)))
    mid = (a_lo.astype(np.float64) + a_hi) / 2
    y = mid @ w2 + b2
    spread = ((a_hi - a_lo) / 2) @ np.abs(w2) + 2.0**-24 * (w2.shape[0] + 2) * (np.abs(a_hi) @ np.abs(w2) + np.abs(b2))
    return bf16(y - spread), bf16(y + spread)


def drained(mesh, tensor, d):
    return ttnn.to_torch(ttnn.get_device_tensors(tensor)[d])


def dense_slots(mesh, dense, d, height, width):
    """``slots[b]``: ``(tokens, H)`` rows of slot ``b`` of the combine cores, token parts in order."""
    values = drained(mesh, dense, d).float().numpy()
    grid = mesh.compute_with_storage_grid_size()
    cores = ttnn.experimental.get_moe_combine_cores(mesh, height, width)
    shards = np.stack([values[c.y * grid.x + c.x].reshape(2, -1, HIDDEN // width) for c in cores])
    shards = shards.reshape(height, width, 2, -1, HIDDEN // width)
    return shards.transpose(2, 0, 3, 1, 4).reshape(2, height, -1, HIDDEN)


def routing(ids, mapping, me, sources, experts):
    local = [x for x in range(mapping.shape[1]) if mapping[me, x] == me][:experts]
    tokens, rows = [[] for _ in local], []
    for t, row in enumerate(ids):
        picks = {}
        for k, x in enumerate(row):
            if mapping[sources[t], x] == me and x in local:
                picks[local.index(x)] = k
                tokens[local.index(x)].append(t)
        if picks:
            rows.append((t, picks))
    return local, tokens, rows


def check_metadata(mesh, outs, d, tokens, rows, score_bits, experts, k_sel, box):
    counts, acts, maps = (drained(mesh, o, d).numpy().astype(np.int64) & 0xFFFFFFFF for o in outs[:3])
    grid = mesh.compute_with_storage_grid_size()
    inside = [c.y * grid.x + c.x for c in ttnn.CoreRangeSet([box]).cores(row_wise=True)]
    assert counts.shape == (grid.x * grid.y, 4)
    assert counts[inside, :experts].tolist() == [[len(t) for t in tokens]] * len(inside)
    width = -(-(2 * experts + 1) // 4) * 4
    table = acts.reshape(-1, width)
    for i, (t, picks) in enumerate(rows):
        want = [t] + [picks.get(e, k_sel + 1) for e in range(experts)]
        want += [int(score_bits[t, picks[e]]) if e in picks else 0 for e in range(experts)]
        assert table[i, : 2 * experts + 1].tolist() == want
    rest = table[len(rows) :, : 2 * experts + 1]
    assert (rest == [0xFFFFFFFF] + [k_sel + 1] * experts + [0] * experts).all()
    entries = maps.reshape(experts, -1, 4)[:, :, 0]
    for e in range(experts):
        assert entries[e, : len(tokens[e]) + 1].tolist() == [*tokens[e], 0xFFFFFFFF]


def host_weights(mesh, raw, layers, experts):
    """The weights packed once on the host (``moe_compute_utils``' torch packers), replicated."""
    utils = ttnn.experimental.moe_compute_utils
    w01_map, w2_map, _ = utils.get_weight_core_shard_maps(mesh, HIDDEN, INTER)
    t = {k: torch.tensor(v) for k, v in raw.items()}
    packed = (
        utils.prepare_w0_w1_tensor_for_moe_compute(t["w0"], t["w1"], layers, experts, HIDDEN, INTER, w01_map),
        utils.prepare_w2_tensor_for_moe_compute(t["w2"], layers, experts, INTER, HIDDEN, w2_map, w01_map),
    )
    configs = ttnn.experimental.get_weight_mem_configs(mesh, num_layers=layers, experts_per_device=experts,
                                                       hidden_size=HIDDEN, intermediate_size=INTER)  # fmt: skip
    return [ttnn.from_torch(p, dtype=ttnn.bfloat4_b, layout=ttnn.TILE_LAYOUT, device=mesh, memory_config=m,
                            mesh_mapper=ttnn.ReplicateTensorToMesh(mesh))
            for p, m in zip(packed, (configs.w0_w1, configs.w2), strict=True)]  # fmt: skip


def mapping_of(shape, axis, experts):
    """Expert ``x`` on member ``x // E`` of the sender's line (the same experts on every line)."""
    rows_, cols = shape
    line = shape[axis]
    devices = rows_ * cols
    mapping = np.zeros((devices, experts * line), np.int64)
    lines = []
    for d in range(devices):
        r, c = divmod(d, cols)
        lines.append([(m * cols + c) if axis == 0 else (r * cols + m) for m in range(line)])
        mapping[d] = [lines[d][x // experts] for x in range(experts * line)]
    return mapping, lines


def inputs_of(mesh, x, ids, scores, mapping):
    shard = ttnn.ShardTensorToMesh(mesh, dim=0)
    x_t = ttnn.from_torch(torch.tensor(x).bfloat16(), layout=RM, device=mesh, memory_config=ttnn.L1_MEMORY_CONFIG,
                          mesh_mapper=shard)  # fmt: skip
    id_t = ttnn.from_torch(torch.tensor(ids, dtype=torch.int32), dtype=ttnn.uint16, layout=RM, device=mesh,
                           mesh_mapper=shard)  # fmt: skip
    score_t = ttnn.from_torch(scores, layout=RM, device=mesh, mesh_mapper=shard)
    map_t = ttnn.from_torch(torch.tensor(mapping, dtype=torch.int32), dtype=ttnn.uint16, layout=RM, device=mesh,
                            mesh_mapper=ttnn.ReplicateTensorToMesh(mesh))  # fmt: skip
    return [x_t, id_t, score_t, map_t]


def expected(x, ids, mapping, lines, ref, kind, per_device):
    """Per device: its routing, and each expert's output range ``(low, high)``; all devices' tokens of an
    expert computed in one product (every device holds the same weights)."""
    devices, tokens = ids.shape[:2]
    routes = []
    for d in range(devices):
        sources = [lines[d][t // per_device] for t in range(tokens)]
        routes.append((sources, *routing(ids[d], mapping, d, sources, ref["w0"].shape[1])[1:]))
    results = [[None] * ref["w0"].shape[1] for _ in range(devices)]
    for e in range(ref["w0"].shape[1]):
        rows = np.concatenate([x[d][routes[d][1][e]] for d in range(devices)])
        low, high = expert_reference(rows, ref, 1, e, kind)
        start = 0
        for d in range(devices):
            n = len(routes[d][1][e])
            results[d][e] = (low[start : start + n], high[start : start + n])
            start += n
    return routes, results


def run_case(shape, axis, kind, bias, *, seed, per_device=8, k_sel=4, experts=2, layers=2, height=2, user=True):
    """One call on ``shape`` along ``axis`` (layer 1 of 2; ``axis`` None: compute only), every
    output checked on every device; the MoE records of the perf capture and the outputs' layouts."""
    rng = np.random.default_rng(seed)
    devices, line = shape[0] * shape[1], 1 if axis is None else shape[axis]
    tokens = per_device * line
    raw, ref = make_weights(rng, layers, experts, bias)
    mapping, lines = mapping_of(shape, 1 if axis is None else axis, experts)
    ids = np.stack([np.array([rng.permutation(experts * line)[:k_sel] for _ in range(tokens)]) for _ in range(devices)])
    scores = torch.tensor(rng.random((devices, tokens, k_sel)), dtype=torch.bfloat16)
    x = bf16(rng.standard_normal((devices, tokens, HIDDEN)))  # each device's line tokens (garbage where unsent)
    routes, results = expected(x, ids, mapping, lines, ref, kind, per_device)
    column = ttnn.DispatchCoreConfig(axis=ttnn.DispatchCoreAxis.COL)  # the op's cores need the full 7x10 grid
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(*shape), system="galaxy", dispatch_core_config=column)
    try:
        weights = put_weights(mesh, raw, layers, experts, bias) if user else host_weights(mesh, raw, layers, experts)
        out_t = None
        if axis is not None:
            out_t = ttnn.from_torch(torch.full((devices * k_sel, per_device, HIDDEN), SENTINEL).bfloat16(), layout=RM,
                                    device=mesh, mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0))  # fmt: skip
            out_t = ttnn.reshape(out_t, [k_sel, per_device, HIDDEN])
        width = ttnn.experimental.moe_compute_utils.auto_output_width_shard_dim(HIDDEN, matmul_ring_size=12)
        with ttnn.perf_capture() as capture:
            outs = ttnn.experimental.moe_compute(*inputs_of(mesh, x, ids, scores, mapping), *weights, layer_id=1,
                                                 output_height_shard_dim=height, intermediate_size=INTER,
                                                 has_bias=bias, cluster_axis=axis, optional_output_tensor=out_t,
                                                 activation_type=kind, compute_only=axis is None)  # fmt: skip
        box = ttnn.experimental.get_moe_worker_mcast_bounding_box(mesh, height, width, HIDDEN)
        low_out = [np.full((k_sel, per_device, HIDDEN), SENTINEL, np.float32) for _ in range(devices)]
        high_out = [w.copy() for w in low_out]
        score_bits = scores.view(torch.int16).numpy().astype(np.int64) & 0xFFFF
        for d in range(devices):
            sources, tok, rows = routes[d]
            check_metadata(mesh, outs, d, tok, rows, score_bits[d], experts, k_sel, box)
            slots = dense_slots(mesh, outs[4], d, height, width)
            for e in range(max(0, experts - 2), experts):  # the last two experts stay in the double buffer
                low, high = results[d][e]
                got = slot_rows(slots[e % 2], len(tok[e]), height)
                assert np.all((low <= got) & (got <= high))
            for e in range(experts):
                low, high = results[d][e]
                for j, t in enumerate(tok[e]):
                    dest, k = sources[t], dict(rows)[t][e]
                    low_out[dest][k, t % per_device], high_out[dest][k, t % per_device] = low[j], high[j]
        for d in range(devices if axis is not None else 0):
            got = drained(mesh, outs[5], d).float().numpy()
            assert np.all((low_out[d] <= got) & (got <= high_out[d]))
        records = [r for r in capture.recorder(mesh).records if r.desc.family is ttnn.perf.OpFamily.MOE_COMPUTE]
        return records, [o.layout for o in outs]
    finally:
        ttnn.close_mesh_device(mesh)


def slot_rows(slot, n, height):
    """An expert's ``n`` token rows from its slot (parts of floor and the first parts one more)."""
    chunk, rem = divmod(n, height)
    return np.concatenate([slot[h, : chunk + (h < rem)] for h in range(height)])


def test_moe_compute_on_a_galaxy_line():
    """1x8 (a Galaxy's row, as tt-metal's 6U test opens it) along axis 1, the user's weight path
    with biases, SwiGLU: 16 experts (two a device), 64 tokens, top 4, layer 1 of 2; the combine
    writes into a preallocated output whose other rows keep their value."""
    kind = ttnn.experimental.MoEActivationFunction.SWIGLU
    (record,), layouts = run_case((1, 8), 1, kind, True, seed=5)
    assert layouts == [RM, RM, RM, ttnn.TILE_LAYOUT, RM, RM]
    assert record.prediction.cores == 12 and record.prediction.link_ns > 0
    w01, w2 = record.desc.inputs[4], record.desc.inputs[5]  # (12, 2 layers, 2 experts, groups, rows, 128)
    tiles = (np.prod(w01.shape) + np.prod(w2.shape)) // (2 * 32 * 32)
    assert record.prediction.dram_bytes == tiles * 576  # one layer's bfloat4_b tiles, each read once


def test_moe_compute_on_galaxy_columns():
    """4x8 along axis 0 (each column a line of 4, the same experts in every column), the default
    activation (SILU), weights packed on the host; 16 tokens a line over one token part."""
    run_case((4, 8), 0, None, False, seed=9, per_device=4, height=1, user=False)


def test_moe_compute_only_on_one_chip():
    """compute_only on a 1x1 mesh, GELU, four experts (the first two's slots rewritten by the last
    two): five outputs, no combine."""
    kind = ttnn.experimental.MoEActivationFunction.GELU
    (record,), layouts = run_case((1, 1), None, kind, False, seed=13, per_device=40, k_sel=2, experts=4, user=False)
    assert layouts == [RM, RM, RM, ttnn.TILE_LAYOUT, RM] and record.prediction.link_ns == 0
