"""The compute-with-storage grid follows the mesh's dispatch core config, per board and axis, as
tt-metal's core descriptors give it: everywhere the grid is read (the mesh and its devices, the L1
banks and their addresses, device_info, global semaphores, shard grids, op program configs)."""

from __future__ import annotations

import pytest
import torch

import meshnn as ttnn
from meshnn.mesh.compute_grid import compute_grid_for

ROW, COL = ttnn.DispatchCoreAxis.ROW, ttnn.DispatchCoreAxis.COL
WORKER, ETH = ttnn.DispatchCoreType.WORKER, ttnn.DispatchCoreType.ETH
MUX = ttnn.FabricTensixConfig.MUX

# (system, (type, axis, fabric tensix), grid): tt_metal/core_descriptors/wormhole_b0_80_arch*.yaml,
# blackhole_140_arch*.yaml (nebula_x1 = N150, nebula_x2 = N300 / T3000 chips, galaxy = 8x10 Tensix)
GRIDS = [
    ("n150", (WORKER, ROW, None), (8, 8)),
    ("n150", (WORKER, COL, None), (7, 9)),
    ("n150", (ETH, ROW, None), (8, 8)),
    ("n300", (WORKER, ROW, None), (8, 7)),
    ("n300", (WORKER, COL, None), (7, 8)),
    ("n300", (ETH, ROW, None), (8, 8)),
    ("t3k", (WORKER, ROW, None), (8, 7)),
    ("t3k", (WORKER, COL, None), (7, 8)),
    ("t3k", (ETH, ROW, None), (8, 8)),
    ("t3k", (WORKER, ROW, MUX), (8, 6)),
    ("t3k", (WORKER, COL, MUX), (6, 8)),
    ("galaxy", (WORKER, ROW, None), (8, 9)),
    ("galaxy", (WORKER, COL, None), (7, 10)),
    ("galaxy", (ETH, ROW, None), (8, 10)),
    ("galaxy", (WORKER, ROW, MUX), (8, 7)),
    ("p150", (WORKER, COL, None), (11, 10)),
    ("p150", (WORKER, ROW, MUX), (12, 9)),
    ("p150", (ETH, None, None), (12, 10)),
    ("p300", (WORKER, COL, None), (11, 10)),
]


def _config(monkeypatch, system, kind):
    monkeypatch.setenv("MESHNN_SYSTEM", system)  # a config takes the system in use when it is made
    return ttnn.DispatchCoreConfig(*kind)


def _open(open_mesh, system, config, fabric_tensix):
    """A 1x1 mesh; with the fabric's Tensix MUX set by set_fabric_config while it opens."""
    if fabric_tensix is None:
        return open_mesh((1, 1), system=system, dispatch_core_config=config)
    ttnn.set_fabric_config(ttnn.FabricConfig.FABRIC_1D, fabric_tensix_config=fabric_tensix)
    try:
        return open_mesh((1, 1), system=system, dispatch_core_config=config)
    finally:
        ttnn.set_fabric_config(ttnn.FabricConfig.DISABLED)


@pytest.mark.parametrize(("system", "kind", "grid"), GRIDS)
def test_the_grid_follows_the_board_and_the_dispatch_cores(monkeypatch, open_mesh, system, kind, grid):
    config = _config(monkeypatch, system, kind)
    mesh = _open(open_mesh, system, config, kind[2])
    assert mesh.compute_with_storage_grid_size() == ttnn.CoreCoord(*grid)
    assert (mesh.core_grid.x, mesh.core_grid.y) == grid
    assert mesh.get_devices()[0].compute_with_storage_grid_size() == ttnn.CoreCoord(*grid)
    cores = grid[0] * grid[1]
    assert mesh.allocator.memory_view(ttnn.BufferType.L1).num_banks == cores  # one L1 bank per compute core
    info = mesh.allocator.device_info()
    assert (info["num_x_compute_cores"], info["num_y_compute_cores"], info["num_compute_cores"]) == (*grid, cores)
    assert (info["num_x_cores"], info["num_y_cores"]) == mesh.system.worker_grid  # the Tensix grid stays


def test_a_blackhole_row_needs_the_mux_and_a_wormhole_mux_grid_needs_a_valid_bank_count(monkeypatch, open_mesh):
    row = _config(monkeypatch, "p150", (WORKER, ROW, MUX))
    with pytest.raises(ttnn.MeshnnValueError, match="ROW dispatch core axis is not supported for blackhole"):
        open_mesh((1, 1), system="p150", dispatch_core_config=row)  # the fabric has no Tensix MUX
    col = _config(monkeypatch, "galaxy", (WORKER, COL))
    with pytest.raises(ttnn.MeshnnValueError, match="invalid number of L1 banks: 60"):
        _open(open_mesh, "galaxy", col, MUX)  # 6x10: no interleaved bank modulo for 60 banks in tt-metal


@pytest.mark.parametrize("system", list(ttnn.SYSTEMS))
def test_each_system_s_default_config_gives_its_recorded_grid(monkeypatch, open_mesh, system):
    monkeypatch.setenv("MESHNN_SYSTEM", system)
    spec = ttnn.SYSTEMS[system]
    assert compute_grid_for(spec, ttnn.DispatchCoreConfig()) == spec.compute_grid
    mesh = open_mesh((1, 1), system=system)
    assert mesh.system is spec  # the default config leaves the system (and its golden addresses) as it was
    assert open_mesh((1, 1), system=system, dispatch_core_config=ttnn.DispatchCoreConfig()).system is spec


def test_l1_addresses_follow_the_bank_count(monkeypatch, open_mesh):
    """An interleaved L1 buffer takes ceil(pages / banks) pages per bank, from the top of L1 down:
    141 bfloat16 tiles are 2 pages a bank on 72 banks (galaxy ROW) and 3 on 70 (galaxy COL)."""
    top = ttnn.SYSTEMS["galaxy"].arch_spec.worker_l1_size
    l1 = ttnn.L1_MEMORY_CONFIG
    for kind, pages_per_bank in (((WORKER, ROW), 2), ((WORKER, COL), 3)):
        mesh = open_mesh((1, 1), system="galaxy", dispatch_core_config=_config(monkeypatch, "galaxy", kind))
        t = ttnn.from_torch(torch.zeros(1, 1, 141 * 32, 32), ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh,
                            memory_config=l1)  # fmt: skip
        assert t.buffer_address() == top - pages_per_bank * 2048


def _height_sharded(core):
    grid = ttnn.CoreRangeSet([ttnn.CoreRange(ttnn.CoreCoord(0, 0), core)])
    spec = ttnn.ShardSpec(grid, (32, 32), ttnn.ShardOrientation.ROW_MAJOR)
    return ttnn.MemoryConfig(ttnn.TensorMemoryLayout.HEIGHT_SHARDED, ttnn.BufferType.L1, spec), grid


def test_semaphores_and_shards_may_use_every_core_of_the_grid_and_none_outside(monkeypatch, open_mesh):
    col = open_mesh((1, 1), system="galaxy", dispatch_core_config=_config(monkeypatch, "galaxy", (WORKER, COL)))
    row = open_mesh((1, 1), system="galaxy")
    memory_config, grid = _height_sharded(ttnn.CoreCoord(6, 9))  # TT_CCL's 7x10 core range
    values = torch.arange(70 * 32 * 32, dtype=torch.float32).reshape(1, 1, 70 * 32, 32)
    t = ttnn.from_torch(values, ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=col, memory_config=memory_config)
    assert torch.equal(ttnn.to_torch(t), values.to(torch.bfloat16).float())
    assert ttnn.create_global_semaphore(col, grid, 0).cores == grid
    with pytest.raises(ttnn.MeshnnValueError, match=r"core \(6, 9\), which has no L1 bank: .* 8x9"):
        ttnn.from_torch(values, ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=row, memory_config=memory_config)
    with pytest.raises(ttnn.MeshnnValueError, match=r"outside the 8x9 compute grid"):
        ttnn.create_global_semaphore(row, grid, 0)
    memory_config, grid = _height_sharded(ttnn.CoreCoord(7, 0))  # column 7 is COL's dispatch column
    with pytest.raises(ttnn.MeshnnValueError, match=r"core \(7, 0\), which has no L1 bank: .* 7x10"):
        ttnn.from_torch(values[:, :, :256], ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=col,
                        memory_config=memory_config)  # fmt: skip
    assert col.allocator.memory_view(ttnn.BufferType.L1).total_bytes_allocated_per_bank > 0  # t and the semaphore


def _one_d(grid):
    return ttnn.MatmulMultiCoreReuseMultiCast1DProgramConfig(
        compute_with_storage_grid_size=grid, in0_block_w=1, out_subblock_h=1, out_subblock_w=1,
        per_core_M=1, per_core_N=1, fuse_batch=True, mcast_in0=True, fused_activation=None,
    )  # fmt: skip


def test_program_configs_are_checked_against_the_mesh_s_grid(monkeypatch, open_mesh):
    col = open_mesh((1, 1), system="galaxy", dispatch_core_config=_config(monkeypatch, "galaxy", (WORKER, COL)))
    row = open_mesh((1, 1), system="galaxy")
    a, b = torch.randn(1, 1, 32, 64), torch.randn(1, 1, 64, 70 * 32)

    def linear(mesh, grid):
        x = ttnn.from_torch(a, ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh)
        w = ttnn.from_torch(b, ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh)
        return ttnn.to_torch(ttnn.linear(x, w, program_config=_one_d(grid)))

    expected = ttnn.to_torch(ttnn.linear(*(ttnn.from_torch(v, ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=row)
                                           for v in (a, b))))  # fmt: skip
    assert torch.equal(linear(col, ttnn.CoreCoord(7, 10)), expected)  # the same product on 70 cores
    with pytest.raises(ttnn.MeshnnValueError, match="must fit"):
        linear(row, ttnn.CoreCoord(7, 10))
    with pytest.raises(ttnn.MeshnnValueError, match="must fit"):
        linear(col, ttnn.CoreCoord(8, 9))


def test_a_submesh_keeps_its_parent_s_grid(monkeypatch, open_mesh):
    config = _config(monkeypatch, "galaxy", (WORKER, COL))
    mesh = open_mesh((8, 4), system="galaxy", dispatch_core_config=config)
    sub = mesh.create_submesh(ttnn.MeshShape(2, 2))
    assert sub.compute_with_storage_grid_size() == ttnn.CoreCoord(7, 10)
    assert mesh.settings.dispatch_core_config is config
