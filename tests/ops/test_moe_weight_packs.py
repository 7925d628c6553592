"""The MoE weight packers (``ttnn.experimental.moe_compute_utils``' torch helpers and their
``ttnn.experimental`` device ports) against tt-metal's stated layout: the ring shares its module
lists (gpt-oss 2880 / 2880: ``[8, 7, 8, 7, ...]``; DeepSeek 7168 / 2048: ``[6, 5, 5, ...]``), and
positions worked by hand.  Inputs hold each element's own index (exact in float32), so a packed
tensor is checked element by element."""

from __future__ import annotations

import pytest
import torch

import meshnn as ttnn
from meshnn.ops.ccl import moe_weight_packs as packs


@pytest.fixture(scope="module")
def galaxy():
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 4), system="galaxy")
    yield mesh
    ttnn.close_mesh_device(mesh)


def test_ring_shares_are_tt_metals(galaxy):
    w0_w1, w2, banks = packs.get_weight_core_shard_maps(galaxy, 2880, 2880)
    assert w0_w1 == [8, 7] * 6
    assert w2 == [(3, 1), (4, 0)] * 6  # the complement: a big gate / up core is a small down core
    w0_w1, w2, _ = packs.get_weight_core_shard_maps(galaxy, 7168, 2048)
    assert w0_w1 == [6, 5, 5] * 4
    # the ring: the banks' workers by (y, x) descending: (7,8) bank 5, (3,8) 0, (4,7) 7, (4,6) 8, (4,5) 11, ...
    assert [r.start.x for r in banks.ranges()] == [5, 0, 7, 8, 11, 3, 10, 2, 9, 6, 4, 1]


def test_w0_w1_groups_are_w0_beside_w1_tile_by_tile():
    L, E, K, N = 1, 2, 64, 96  # Nt = 3 tiles over a ring of 2: shares [2, 1] -> padded to 2
    w0 = torch.arange(L * E * K * N, dtype=torch.float32).reshape(L, E, K, N)
    w1 = -w0 - 1
    out = packs.prepare_w0_w1_tensor_for_moe_compute(w0, w1, L, E, K, N, [2, 1])
    assert tuple(out.shape) == (2, L, E, 1, 224, 128)  # K padded to 7 tiles; one 2-tile group a core
    for e in range(E):
        for k in range(K):
            row = out[0, 0, e, 0, k]
            assert torch.equal(
                row, torch.cat([w0[0, e, k, 0:32], w1[0, e, k, 0:32], w0[0, e, k, 32:64], w1[0, e, k, 32:64]])
            )
            row = out[1, 0, e, 0, k]
            assert torch.equal(row, torch.cat([w0[0, e, k, 64:96], w1[0, e, k, 64:96], torch.zeros(64)]))
    assert not out[:, :, :, :, K:].any()  # the padding rows


def test_w2_rows_start_with_the_cores_own_chunk_and_go_down_the_ring():
    L, E, N, K = 1, 1, 96, 256  # Nt = 3 over 3 cores: one tile each; Kt = 8: (g-1)*4 + last
    w2 = torch.arange(L * E * N * K, dtype=torch.float32).reshape(L, E, N, K)
    out = packs.prepare_w2_tensor_for_moe_compute(w2, L, E, N, K, [(4, 0), (4, 0), (0, 4)], [1, 1, 1])
    assert tuple(out.shape) == (3, L, E, 1, 224, 128)
    for core, order in ((0, [0, 2, 1]), (1, [1, 0, 2]), (2, [2, 1, 0])):
        cols = w2[0, 0][:, core * 128 : core * 128 + 128] if core < 2 else torch.zeros(N, 128)
        expect = torch.cat([cols[t * 32 : t * 32 + 32] for t in order])
        assert torch.equal(out[core, 0, 0, 0, :96], expect)


def test_bias_rows_follow_the_weights(galaxy):
    L, E, K, N = 1, 1, 64, 64
    w = torch.zeros(L, E, K, N)
    bias = torch.arange(1, N + 1, dtype=torch.float32).reshape(L, E, N)
    out = packs.prepare_w0_w1_tensor_with_bias(w, w, bias, bias, L, E, K, N, [2])
    assert torch.equal(out[0, 0, 0, 0, K, :32], bias[0, 0, :32])  # the bias tile's row 0, right after K
    assert not out[0, 0, 0, 0, K + 1 :].any()
    w2 = torch.zeros(L, E, N, K)
    out = packs.prepare_w2_tensor_with_bias(w2, bias, L, E, N, K, [(2, 2)], [2])
    assert torch.equal(out[0, 0, 0, 0, N, :64], bias[0, 0])


def test_device_ports_pack_each_devices_experts(galaxy):
    L, E, K, N = 1, 2, 64, 384
    g = torch.Generator().manual_seed(3)
    w0, w1 = (torch.randn(L, 4 * E, K, N, generator=g).bfloat16() for _ in range(2))
    place = lambda t: ttnn.from_torch(t, dtype=ttnn.bfloat16, layout=ttnn.ROW_MAJOR_LAYOUT, device=galaxy,  # noqa: E731
                                      mesh_mapper=ttnn.ShardTensorToMesh(galaxy, dim=1))  # fmt: skip
    out = ttnn.experimental.prepare_w0_w1_tensor_for_moe_compute(place(w0), place(w1), L=L, E=E, K=K, N=N)
    shard_map, _, _ = packs.get_weight_core_shard_maps(galaxy, K, N)
    for d, shard in enumerate(ttnn.get_device_tensors(out)):
        want = packs.prepare_w0_w1_tensor_for_moe_compute(
            w0[:, d * E : d * E + E], w1[:, d * E : d * E + E], L, E, K, N, shard_map
        )
        assert torch.equal(ttnn.to_torch(shard), want)
    with pytest.raises(ttnn.MeshnnValueError, match="shard sizes"):
        packs.prepare_w0_w1_tensor_for_moe_compute(w0, w1, L, 4 * E, K, N, [4, 1, 1])
