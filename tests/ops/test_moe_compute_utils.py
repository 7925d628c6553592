"""``ttnn.experimental.moe_compute_utils`` and the MoE collectives' enums, against tt-metal's facts:
the Euclidean-rhythm tile counts (totals, and GPT-OSS's and DeepSeek's distributions that tt-metal's
helper module records), the complementary down-projection pattern, the ring sizes, the width shard,
the drain core, the nearest-holder routing of shared experts, and the import paths ttnn's model code
uses (``from ttnn.experimental.moe_compute_utils import ...``, ``ttnn.operations.ccl.X``)."""

from __future__ import annotations

import importlib

import pytest
import torch

import meshnn as ttnn
from meshnn.compat import ttnn_alias
from meshnn.ops.ccl import moe_compute_utils as mcu


@pytest.mark.parametrize("tiles,cores", [(90, 12), (64, 12), (12, 12), (7, 12), (100, 8), (45, 16), (0, 12)])
def test_shard_tiles_cover_every_tile_within_one(tiles, cores):
    counts = [mcu._shard_tiles(tiles, c, cores) for c in range(cores)]
    assert sum(counts) == tiles
    assert max(counts) - min(counts) <= (1 if tiles % cores else 0)


def test_shard_tiles_gpt_oss_and_deepseek_distributions():
    # GPT-OSS: hidden = intermediate = 2880 (90 tiles) on a ring of 12: 8, 7 alternating
    assert [mcu._shard_tiles(90, c, 12) for c in range(12)] == [8, 7] * 6
    # DeepSeek: hidden 7168 (224 tiles): tt-metal's former table [6, 5, 5] * 4
    assert [mcu._shard_tiles(64, c, 12) for c in range(12)] == [6, 5, 5] * 4


def test_w2_shard_tiles_complement_when_remainders_fill_the_ring():
    # 90 % 12 + 90 % 12 == 12: a core big in the gate / up split is small here
    w0 = [mcu._shard_tiles(90, c, 12) for c in range(12)]
    w2 = [mcu._w2_shard_tiles(90, c, 90, 12) for c in range(12)]
    assert sum(w2) == 90
    assert all((a == 8) == (b == 7) for a, b in zip(w0, w2, strict=True))
    # DeepSeek (Ht 224, Nt 64: 8 + 4 == 12): its former table, 2 or 3 extra tiles on 19 / 18
    assert [mcu._w2_shard_tiles(224, c, 64, 12) for c in range(12)] == [18, 19, 19] * 4
    # otherwise (Nt 65: 8 + 5 != 12) the plain rhythm of Ht
    plain = [mcu._shard_tiles(224, c, 12) for c in range(12)]
    assert [mcu._w2_shard_tiles(224, c, 65, 12) for c in range(12)] == plain


def test_ring_size_width_shard_and_drain_core(monkeypatch):
    monkeypatch.setenv("MESHNN_SYSTEM", "n300")
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 2), system="n300")
    try:
        assert mcu.effective_matmul_ring_size(mesh) == 12  # Wormhole: its 12 DRAM banks
        assert mcu.get_tilize_drain_core() == ttnn.CoreCoord(6, 9)
    finally:
        mesh.close()
    assert mcu.auto_output_width_shard_dim(2880) == 3  # 90 tiles: 4 does not divide, 3 does
    assert mcu.auto_output_width_shard_dim(2880, matmul_ring_size=8) == 2
    assert mcu.auto_output_width_shard_dim(7168) == 4
    assert mcu.auto_output_width_shard_dim(32 * 7, max_dim=4) == 1


def test_ring_size_on_blackhole_takes_its_rings_only(monkeypatch):
    monkeypatch.setenv("MESHNN_SYSTEM", "p150")  # the drain core follows the machine's arch, as ttnn's
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 1), system="p150")
    try:
        assert mcu.effective_matmul_ring_size(mesh) == 8
        assert mcu.effective_matmul_ring_size(mesh, bh_ring_size=16) == 16
        with pytest.raises(ValueError, match="bh_ring_size=10"):
            mcu.effective_matmul_ring_size(mesh, bh_ring_size=10)
        assert mcu.get_tilize_drain_core() == ttnn.CoreCoord(10, 9)
    finally:
        mesh.close()


def test_cluster_distance_along_an_axis():
    shape = (4, 8)
    assert mcu.cluster_distance(0, 24, shape, 0) == 3  # column 0, rows 0 and 3
    assert mcu.cluster_distance(0, 25, shape, 0) is None  # another column
    assert mcu.cluster_distance(9, 14, shape, 1) == 5  # row 1
    assert mcu.cluster_distance(9, 17, shape, 1) is None


def test_map_shared_experts_picks_the_nearest_holder_on_the_line():
    shape, devices = (2, 2), 4
    routed = torch.tensor([[0, 1, 2, 3]] * devices)
    # shared expert 4 on devices 0 and 3, 5 on devices 1 and 2 (one each)
    out = mcu.map_shared_experts(routed, {4: [0, 3], 5: [1, 2]}, shape, cluster_axis=0)
    assert out.shape == (4, 6)
    assert torch.equal(out[:, :4], routed)
    # axis 0: device d's line is its column; column 0 = {0, 2}, column 1 = {1, 3}
    assert out[:, 4].tolist() == [0, 3, 0, 3]
    assert out[:, 5].tolist() == [2, 1, 2, 1]
    assert mcu.get_shared_experts_per_device({4: [0, 3], 5: [1, 2]}, 4) == [1, 1, 1, 1]


@pytest.mark.parametrize(
    "shared,match",
    [({4: [0, 1], 5: [0, 2]}, "equal number"), ({5: [0, 1], 6: [2, 3]}, "contiguous")],
)
def test_map_shared_experts_refuses(shared, match):
    with pytest.raises(RuntimeError, match=match):
        mcu.map_shared_experts(torch.zeros((4, 4), dtype=torch.int64), shared, (2, 2), 0)
    with pytest.raises(RuntimeError, match="Expected: 2"):
        mcu.map_shared_experts(torch.zeros((1, 4, 4)), {4: [0, 1, 2, 3]}, (2, 2), 0)


def test_enums_values_and_ttnn_paths():
    assert [m.value for m in ttnn.experimental.MoEActivationFunction] == [0, 1, 2]
    assert ttnn.WorkerMode.DIRECT.value == 0 and ttnn.WorkerMode.MUX_PAYLOAD_SPLIT.value == 2
    assert ttnn.DispatchAlgorithm.SPARSE_MCAST_SHORTEST_PATH.value == 3
    installed = ttnn_alias.is_installed()
    alias = ttnn_alias.install()
    try:
        ccl = importlib.import_module("ttnn.operations.ccl")
        assert ccl.MoEActivationFunction is ttnn.experimental.MoEActivationFunction
        assert ccl.Topology is ttnn.Topology and ccl.WorkerMode is ttnn.WorkerMode
        inner = importlib.import_module("ttnn._ttnn.operations.experimental.ccl_experimental")
        assert inner.DispatchAlgorithm is ttnn.DispatchAlgorithm
        module = importlib.import_module("ttnn.experimental.moe_compute_utils")
        assert module is mcu and alias.experimental.moe_compute_utils is mcu
        with pytest.raises(ModuleNotFoundError):
            importlib.import_module("ttnn.experimental.no_such_helpers")
    finally:
        if not installed:
            ttnn_alias.uninstall()
