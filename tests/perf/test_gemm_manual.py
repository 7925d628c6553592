"""GEMM_FLOPS.md's manually tuned tables as tests/perf/published_gemm_manual.py holds them: every traced row
of the three tables, its misses naming rows that exist, and the figures tests/perf/published.py makes of them
(checks only, none counted twice)."""

from __future__ import annotations

from . import published_gemm_manual as manual
from .published import figures


def test_each_table_holds_its_78_traced_rows_once():
    for system in manual.GRIDS:
        keys = [(d, f, size) for d, f, size, *_ in manual.rows(system)]
        assert len(keys) == 78 and len(set(keys)) == 78, system


def test_every_miss_names_a_row():
    for system, dtype, fidelity, size in manual.MISSED:
        assert any((d, f, s) == (manual.DTYPES[dtype], fidelity, size) for d, f, s, *_ in manual.rows(system)), (
            system,
            dtype,
            size,
        )


def test_the_tables_add_checks_and_skip_the_rows_already_named():
    mine = [f for f in figures() if " manual " in f.name]
    assert len(mine) == 3 * 78 - 25  # the 25 manual figures published.py names by hand are not repeated
    assert not any(f.fitted for f in mine)
    assert sum(not f.covered for f in mine) == len(manual.MISSED)


def test_every_row_gets_the_benchmarks_inner_block():
    """test_benchmark.py's manual loop: in0_block_w = K / grid x / 32 / in0_block_w_div, its shapes scaled by the
    grid (M by its rows, K and N by its columns); every traced row of the three tables is one of its shapes."""
    assert manual.in0_block_w((8, 8), "BFLOAT16", 1024, 1024, 1024) == 4  # (128, 128, 128): div 1
    assert manual.in0_block_w((8, 8), "BFLOAT16", 8192, 8192, 8192) == 16  # (1024, 1024, 1024): div 2
    assert manual.in0_block_w((8, 8), "BFLOAT4_B", 4096, 4096, 4096) == 8  # (512, 512, 512): div 2 in bfloat4_b
    assert manual.in0_block_w((13, 10), "BFLOAT4_B", 640, 832, 832) == 2  # (64, 64, 64) on 13x10
    assert manual.in0_block_w((8, 8), "BFLOAT16", 1000, 1024, 1024) is None  # not one of its shapes
    for system, grid in manual.GRIDS.items():
        for dtype, _, (m, k, n), *_ in manual.rows(system):
            assert manual.in0_block_w(grid, dtype, m, k, n), (system, dtype, m, k, n)
