"""The math threads of GEMM_FLOPS.md's largest manually tuned P150 calls (tests/perf/published_gemm_manual_split.py):
the rows as transcribed, their math threads read from the two utilisations, and the figures published.py makes
of them (checks only, named once)."""

from __future__ import annotations

from . import published_gemm_manual as manual
from . import published_gemm_manual_split as split
from .published import figures


def _row(system: str, dtype: str, fidelity, rows: int) -> split.Row:
    return next(r for r in split.ROWS[system] if r[0] == dtype and r[1] is fidelity and r[2][0] == rows)


def test_each_grid_holds_its_two_largest_shapes_in_every_format_once():
    for system, rows in split.ROWS.items():
        keys = {(d, f, size) for d, f, size, *_ in rows}
        assert len(rows) == len(keys) == 10, system
        assert {size[0] for *_, size in keys} == {10240, 20480}, system


def test_every_row_is_a_traced_row_of_its_manual_table_with_the_same_tflops():
    """The host-timed ns of each row gives the TFLOPs its manual table holds (2*M*K*N over the call), to the
    table's two decimals."""
    for system, rows in split.ROWS.items():
        table = {(d, f, size): tf for d, f, size, _, tf, _ in manual.rows(system)}
        for dtype, fidelity, (m, k, n), host_ns, _, _ in rows:
            tf = table[(manual.DTYPES[dtype], fidelity, (m, k, n))]
            assert abs(2 * m * k * n / host_ns / 1e3 - tf) < 0.006, (system, dtype, m)


def test_the_math_thread_is_the_host_time_scaled_by_the_two_utilisations():
    row = _row("p150_13x10", "BF16", split.F.HiFi2, 20480)
    assert split.math_thread_ns(row) == 121321547.03 * 66.58 / 88.66
    assert 0.75 < split.math_thread_ns(row) / row[3] < 0.752


def test_the_long_calls_run_further_past_their_math_threads_than_the_short_ones():
    """The same per-core loop at both sizes: the 10240-row calls sit within 11% of their math threads, the
    20480-row calls on 13x10 at least 17% past theirs, every format."""
    for system, rows in split.ROWS.items():
        for row in rows:
            excess = row[3] / split.math_thread_ns(row) - 1
            if row[2][0] == 10240:
                assert excess < 0.11, (system, row[0], row[1])
            elif system == "p150_13x10":
                assert excess > 0.17, (system, row[0], row[1])


def test_the_figures_are_checks_named_once_and_outside_the_manual_count():
    mine = [f for f in figures() if f.source == split.SOURCE]
    assert len(mine) == 20 and len({f.name for f in mine}) == 20
    assert all(f.covered and not f.fitted and f.unit == "us" and f.group == "matmul" for f in mine)
    assert not any(" manual " in f.name for f in mine)  # test_gemm_manual counts the TFLOPs rows by that word
