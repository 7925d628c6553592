"""``ttnn.experimental.deepseek.moe.moe_gate_mm`` and ``ttnn.experimental.deepseek.mla.matmul_wo``
on Wormhole's 12 DRAM-bank cores: the weights laid out bank by bank as the ops document, inputs
chosen so every product and partial sum is exact in bfloat16 (sparse 0/1 activations, weights on a
1/16 grid), so the outputs are compared exactly: values, expert ids, output tile placement, and
the tiles the ops leave untouched."""

from __future__ import annotations

import pytest
import torch

import meshnn as ttnn

TILE = 32


@pytest.fixture
def device():
    dev = ttnn.open_device(device_id=0)
    yield dev
    ttnn.close_device(dev)


def _cores(coords):
    return ttnn.CoreRangeSet([ttnn.CoreRange(c, c) for c in coords])


def _mem(layout, buffer, coords, shard):
    return ttnn.MemoryConfig(layout, buffer, ttnn.ShardSpec(_cores(coords), shard, ttnn.ShardOrientation.ROW_MAJOR))


def _grid16(shape, seed, low=-16, high=16):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(low, high, shape, generator=g).float() / 16


def _put(dev, values, config, dtype=ttnn.bfloat16):
    return ttnn.from_torch(values.bfloat16(), dtype=dtype, layout=ttnn.TILE_LAYOUT, device=dev, memory_config=config)


def _largest(values, k):
    return torch.argsort(-values, dim=-1, stable=True)[..., :k]


def _gate_shards(w, bias, ring):
    """Each bank's [77*32, 64] weight shard (module text of moe_gate_mm), by bank id."""
    shards = {}
    recv = [p for p in range(12) if p % 3]
    for p, bank in enumerate(ring):
        shard = torch.zeros(77 * TILE, 2 * TILE)
        if p % 3 == 0:
            n = recv.index(p + 1)
            for t in range(72):
                k = slice((152 + t) * TILE, (153 + t) * TILE)
                first, second = w[k, n * TILE : (n + 1) * TILE], w[k, (n + 1) * TILE : (n + 2) * TILE]
                shard[t * TILE : (t + 1) * TILE] = torch.cat([first, second], dim=1)
        else:
            n = recv.index(p)
            cols = slice(n * TILE, (n + 1) * TILE)
            for t in range(76):
                even, odd = w[2 * t * TILE : (2 * t + 1) * TILE, cols], w[(2 * t + 1) * TILE : (2 * t + 2) * TILE, cols]
                shard[t * TILE : (t + 1) * TILE] = torch.cat([even, odd], dim=1)
            shard[76 * TILE, :TILE] = bias[cols]
        shards[bank] = shard
    return torch.stack([shards[b] for b in range(12)])


def test_moe_gate_mm_routes_32_tokens(device):
    banks = device.get_optimal_dram_bank_to_logical_worker_assignment(ttnn.NOC.NOC_0)
    ring = sorted(range(12), key=lambda b: (banks[b].y, banks[b].x), reverse=True)
    w, bias = _grid16((7168, 256), 1), _grid16((256,), 2, 0, 8)
    x = torch.zeros(32, 7168)
    tokens = torch.arange(32)
    x[tokens, tokens * 97 % 4864] = 1.0
    x[tokens, 4864 + tokens * 31 % 2304] = 1.0
    hs, ws = ttnn.TensorMemoryLayout.HEIGHT_SHARDED, ttnn.TensorMemoryLayout.WIDTH_SHARDED
    x_t = _put(device, x.expand(12, 32, 7168), _mem(hs, ttnn.BufferType.L1, banks, (32, 7168)))
    dram = [ttnn.CoreCoord(b, 0) for b in range(12)]
    w_t = _put(device, _gate_shards(w, bias, ring), _mem(hs, ttnn.BufferType.DRAM, dram, (77 * TILE, 2 * TILE)))
    out = _put(device, torch.full((32, 12 * TILE), 3.0), _mem(ws, ttnn.BufferType.L1, banks, (32, 32)))
    got = ttnn.experimental.deepseek.moe.moe_gate_mm(x_t, w_tensor=w_t, output_tensor=out, layer_id=0, column_id=0)
    assert got is out

    s = torch.sigmoid((x @ w).bfloat16().float()).bfloat16().float()
    v = (s + bias).bfloat16().float().reshape(32, 8, 32)
    best2 = v.topk(2, dim=-1).values
    kept = _largest((best2[..., 0] + best2[..., 1]).bfloat16().float(), 4)
    mask = torch.zeros(32, 8, dtype=torch.bool).scatter(1, kept, True)
    flat = torch.where(mask[..., None], v, torch.tensor(float("-inf"))).reshape(32, 256)
    ids = _largest(flat, 8)
    values = flat.gather(1, ids)

    result = ttnn.to_torch(got).bfloat16()
    collector = ring[11]
    tile = result[:, collector * TILE : (collector + 1) * TILE]
    assert torch.equal(tile[:8].float().T, values)
    bits = tile[8:16].view(torch.int16).to(torch.int64) & 0xFFFF
    assert torch.equal((bits >> 7).T, ids)
    others = torch.ones(32, 12 * TILE, dtype=torch.bool)
    others[:16, collector * TILE : (collector + 1) * TILE] = False
    assert torch.all(result.float()[others] == 3.0)


K_TILES = (44, 44, 42, 42, 42, 42, 42, 42, 44, 44, 42, 42)


def _wo_shards(w):
    """Each bank's [44*4*32, 224] weight shard (module text of matmul_wo)."""
    shards, start = [], 0
    for k in K_TILES:
        rows = w[start * TILE : (start + k) * TILE]
        blocks = [rows[:, j * 7 * TILE : (j + 1) * 7 * TILE] for j in range(4)]
        pad = torch.zeros((44 - k) * 4 * TILE, 7 * TILE)
        shards.append(torch.cat([*blocks, pad]))
        start += k
    return torch.stack(shards)


def test_matmul_wo_sums_the_banks_into_the_collectors(device):
    banks = device.get_optimal_dram_bank_to_logical_worker_assignment(ttnn.NOC.NOC_0)
    grid = device.compute_with_storage_grid_size()
    collectors = [
        ttnn.CoreCoord(x, y) for y in range(grid.y - 1, -1, -1) for x in range(grid.x - 1, -1, -1)
        if (x, y) not in {(c.x, c.y) for c in banks}
    ][:7]  # fmt: skip
    w = _grid16((16384, 896), 3)
    x = torch.zeros(32, 16384)
    starts = torch.cumsum(torch.tensor((0, *K_TILES[:-1])), 0) * TILE
    for t in range(32):
        x[t, starts + (t * 13) % (42 * TILE)] = 1.0  # one K in each bank's range
    hs, ws = ttnn.TensorMemoryLayout.HEIGHT_SHARDED, ttnn.TensorMemoryLayout.WIDTH_SHARDED
    x_t = _put(device, x.expand(12, 32, 16384), _mem(hs, ttnn.BufferType.L1, banks, (32, 16384)))
    dram = [ttnn.CoreCoord(b, 0) for b in range(12)]
    w_t = _put(device, _wo_shards(w), _mem(hs, ttnn.BufferType.DRAM, dram, (44 * 4 * TILE, 7 * TILE)))
    out = _put(device, torch.zeros(32, 896), _mem(ws, ttnn.BufferType.L1, collectors, (32, 128)))
    got = ttnn.experimental.deepseek.mla.matmul_wo(x_t, w_tensor=w_t, output_tensor=out, layer_id=0)
    product = (x @ w).reshape(32, 4, 7, TILE)  # product tile 7 j + c
    want = product.permute(0, 2, 1, 3).reshape(32, 896)  # output tile 4 c + j
    assert torch.equal(ttnn.to_torch(got).float(), want)


def test_matmul_wo_refuses_a_layer_past_the_weights(device):
    banks = device.get_optimal_dram_bank_to_logical_worker_assignment(ttnn.NOC.NOC_0)
    hs = ttnn.TensorMemoryLayout.HEIGHT_SHARDED
    x_t = _put(device, torch.zeros(12, 32, 16384), _mem(hs, ttnn.BufferType.L1, banks, (32, 16384)))
    dram = [ttnn.CoreCoord(b, 0) for b in range(12)]
    w_t = _put(device, torch.zeros(12, 44 * 4 * TILE, 224), _mem(hs, ttnn.BufferType.DRAM, dram, (44 * 4 * TILE, 224)))
    with pytest.raises(ttnn.MeshnnValueError, match="layer_id"):
        ttnn.experimental.deepseek.mla.matmul_wo(x_t, w_tensor=w_t, output_tensor=x_t, layer_id=1)


def test_the_ring_ops_refuse_blackhole():
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 1), system="p150")
    try:
        t = ttnn.from_torch(torch.zeros(32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh)
        with pytest.raises(ttnn.MeshnnValueError, match="12 DRAM-aligned cores"):
            ttnn.experimental.deepseek.moe.moe_gate_mm(t, w_tensor=t, output_tensor=t, layer_id=0, column_id=0)
        with pytest.raises(ttnn.MeshnnValueError, match="12 DRAM-aligned cores"):
            ttnn.experimental.deepseek.mla.matmul_wo(t, w_tensor=t, output_tensor=t, layer_id=0)
    finally:
        ttnn.close_mesh_device(mesh)
