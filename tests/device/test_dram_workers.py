"""``MeshDevice.get_optimal_dram_bank_to_logical_worker_assignment`` against tt-metal's placement
worked by hand from its soc descriptors (each DRAM view's preferred worker endpoint, the worker one
column right of it, off rows 0 / 6) and ``core_assignment.cpp``'s moves (Wormhole: a worker on a
row outside the compute grid goes to the nearest free row, 3 then 2 columns right; Blackhole: the
endpoint row at least 2).  Exact lists: coordinates are integers."""

from __future__ import annotations

import pytest

import meshnn as ttnn
from meshnn.device.arch import SYSTEMS
from meshnn.device.dram_workers import optimal_dram_bank_workers
from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.mesh.compute_grid import system_for
from meshnn.mesh.device_config import DispatchCoreConfig, DispatchCoreType

# Galaxy, ROW dispatch (8x9): banks 0 and 5 sit on NOC0 row 11, the dispatch row: moved to row 10
# (logical 8) and 3 columns right (NOC0 x 1 -> 4, 6 -> 9: logical 3 and 7).
GALAXY_ROW = [(3, 8), (0, 0), (0, 4), (0, 5), (4, 0), (7, 8), (4, 1), (4, 7), (4, 6), (4, 2), (4, 4), (4, 5)]
# Galaxy, ETH dispatch (8x10): nothing moves; NOC0 row 11 is logical row 9.
GALAXY_ETH = [(0, 9), (0, 0), (0, 4), (0, 5), (4, 0), (4, 9), (4, 1), (4, 7), (4, 6), (4, 2), (4, 4), (4, 5)]
# P150 (11x10 of 12x10): NOC0 subchannels 2,0,0,0,2,2,2,2 of channels 0..7; NOC1 subchannel 1 of each.
P150_NOC0 = [(0, 9), (0, 0), (0, 7), (0, 3), (7, 9), (7, 1), (7, 6), (7, 4)]
P150_NOC1 = [(0, 0), (0, 8), (0, 2), (0, 5), (7, 0), (7, 8), (7, 2), (7, 5)]


def pairs(cores):
    return [(c.x, c.y) for c in cores]


def test_galaxy_mesh_answers_the_row_dispatch_placement():
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(4, 8), system="galaxy")
    try:
        assert pairs(mesh.get_optimal_dram_bank_to_logical_worker_assignment(ttnn.NOC.NOC_0)) == GALAXY_ROW
        assert pairs(mesh.get_optimal_dram_bank_to_logical_worker_assignment(0)) == GALAXY_ROW  # gpt-oss passes 0
        assert pairs(mesh.get_optimal_dram_bank_to_logical_worker_assignment(ttnn.NOC.NOC_1)) == GALAXY_ROW
    finally:
        ttnn.close_mesh_device(mesh)


def test_eth_dispatch_galaxy_moves_nothing():
    spec = system_for(SYSTEMS["galaxy"], DispatchCoreConfig(DispatchCoreType.ETH))
    assert spec.compute_grid == (8, 10)
    assert pairs(optimal_dram_bank_workers(spec, ttnn.NOC.NOC_0)) == GALAXY_ETH


def test_blackhole_nocs_use_their_own_subchannels():
    assert pairs(optimal_dram_bank_workers(SYSTEMS["p150"], ttnn.NOC.NOC_0)) == P150_NOC0
    assert pairs(optimal_dram_bank_workers(SYSTEMS["p150"], ttnn.NOC.RISCV_1_default)) == P150_NOC1


@pytest.mark.parametrize("name", sorted(SYSTEMS))
def test_one_distinct_compute_core_a_bank(name):
    spec = SYSTEMS[name]
    cores = pairs(optimal_dram_bank_workers(spec, 0))
    assert len(cores) == spec.arch_spec.num_dram_banks
    assert len(set(cores)) == len(cores)
    assert all(x < spec.compute_grid[0] and y < spec.compute_grid[1] for x, y in cores)


@pytest.mark.parametrize("noc,error", [(2, MeshnnValueError), ("NOC_0", MeshnnTypeError), (True, MeshnnTypeError)])
def test_bad_noc_is_refused(noc, error):
    with pytest.raises(error, match="noc"):
        optimal_dram_bank_workers(SYSTEMS["galaxy"], noc)
