"""The hardware tables: every figure has a source; systems match the simulator and the boards."""

from __future__ import annotations

import pytest

from meshnn.device.arch import SYSTEMS, Arch
from meshnn.errors import MeshnnValueError
from meshnn.perf import MathFidelity, arch_perf, machine, system_perf
from meshnn.perf.hardware import ARCHS


@pytest.mark.parametrize("arch", list(ARCHS))
def test_every_figure_has_a_source(arch):
    table = ARCHS[arch]
    assert table.missing_sources() == []
    assert all(text.strip() for text in table.sources.values())


def test_tile_multiply_cycles_per_fidelity():
    """GEMM_FLOPS.md: LoFi 16, HiFi2 32, HiFi3 48, HiFi4 64 cycles per 32x32x32 tile."""
    wh = arch_perf("wormhole_b0")
    assert [wh.lofi_cycles_per_tile * f.phases for f in MathFidelity] == [16, 32, 48, 64]


def test_clocks_and_peaks():
    wh, bh = arch_perf(Arch.WORMHOLE_B0), arch_perf(Arch.BLACKHOLE)
    assert (wh.clock_hz, bh.clock_hz) == (1.0e9, 1.35e9)
    lofi_tflops_per_core = 2 * 32**3 / wh.lofi_cycles_per_tile * wh.clock_hz / 1e12
    assert lofi_tflops_per_core == pytest.approx(4.096)  # "4 TFLOPS per matrix engine" at LoFi


def test_dram_rates_are_ordered():
    for table in ARCHS.values():
        assert table.dram_interleaved_bytes_per_s < table.dram_sharded_bytes_per_s < table.dram_spec_bytes_per_s


@pytest.mark.parametrize("name", list(SYSTEMS))
def test_systems_are_the_simulated_ones(name):
    view = system_perf(name)
    assert view.spec is SYSTEMS[name]
    assert view.compute_cores == SYSTEMS[name].compute_grid[0] * SYSTEMS[name].compute_grid[1]
    assert view.usable_links <= view.links_per_hop
    assert view.source


def test_links_from_the_cluster_descriptors():
    assert (system_perf("n300").links_per_hop, system_perf("n300").usable_links) == (2, 1)
    assert (system_perf("t3k").links_per_hop, system_perf("t3k").usable_links) == (2, 1)
    assert (system_perf("galaxy").links_per_hop, system_perf("galaxy").usable_links) == (4, 4)
    assert system_perf("p300").usable_links == 2
    assert system_perf("t3k").closes_ring(8) and not system_perf("t3k").closes_ring(4)
    assert not system_perf("galaxy").closes_ring(8)  # 6u_cluster_desc.yaml has no wraparound
    assert system_perf("galaxy").dram_sharded_bytes_per_s > system_perf("n150").dram_sharded_bytes_per_s


def test_harvested_grids():
    assert system_perf("n150").compute_cores == 64
    assert system_perf("p150").compute_cores == 110  # 12x10 after harvesting, one column for dispatch


def test_machine_checks_its_mesh():
    assert machine("t3k").mesh_shape == (2, 4)
    assert machine("t3k", (1, 8)).num_devices == 8
    with pytest.raises(MeshnnValueError, match="does not fit"):
        machine("n300", (2, 4))
    with pytest.raises(MeshnnValueError, match="unknown system"):
        system_perf("dgx")


def test_every_latency_figure_has_a_source():
    from meshnn.perf.latency import LATENCIES

    for table in LATENCIES.values():
        assert table.missing_sources() == []
        assert all(text.strip() for text in table.sources.values())
