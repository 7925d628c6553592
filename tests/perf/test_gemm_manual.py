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
