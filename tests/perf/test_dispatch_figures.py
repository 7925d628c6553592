"""The dispatch, transfer and conv figures (tests/perf/published_dispatch.py) time what their sources
ran: a traced program is the dispatcher's work for it or its kernel's cycles plus the model's traced
gap, whichever is longer; the shadow rows one slow kernel and four or five empty ones; the conv misses
quote what the model gives (meshnn.perf.conv)."""

from __future__ import annotations

import re

import pytest

from meshnn.perf.hardware import BLACKHOLE, WORMHOLE_B0
from meshnn.perf.program_dispatch import binary_write_ns, launch_copy_ns, program_dispatch_ns

from . import published_conv, published_dispatch, published_transfer


@pytest.mark.parametrize("perf", [WORMHOLE_B0, BLACKHOLE])
def test_a_traced_program_is_its_dispatch_or_its_cycles_plus_the_traced_gap(perf):
    arch = {"wormhole_b0": "WH", "blackhole": "BH"}[perf.arch.value]
    plain = published_dispatch.program(arch, published_dispatch.BENCH["brisc_only_all_processors"], 256)
    dispatch = program_dispatch_ns(plain, perf)
    for cycles in (0, 1000, 10000):
        expected = max(dispatch, perf.cycles_ns(cycles) + perf.op_to_op_traced_ns) / 1e3
        assert published_dispatch.traced_us(arch, [(plain, cycles)]) == pytest.approx(expected)
    assert published_dispatch.traced_us(arch, [(plain, 0)]) == pytest.approx(dispatch / 1e3)


@pytest.mark.parametrize("arch", ["WH", "BH"])
def test_the_shadow_rows_prepare_the_empty_programs_behind_the_slow_kernel(arch):
    perf = {"WH": WORMHOLE_B0, "BH": BLACKHOLE}[arch]
    cached = published_dispatch._programs(arch, "kernel_groups_4_shadow", 4096)
    assert all(p.binaries_cached and p.kernel_groups == published_dispatch.SHADOW_GROUPS[arch] for p, _ in cached)
    copy = launch_copy_ns(cached[0][0], perf)  # each launch's NCRISC binary into its instruction RAM (Wormhole)
    expected = perf.cycles_ns(40000) + 5 * (copy + perf.op_to_op_traced_ns)
    assert published_dispatch.traced_us(arch, cached) == pytest.approx(expected / 1e3)
    # 8 KiB binaries: the two programs' 80 KiB a core overflow the config ring, so the slow program and the
    # first fast one each wait for the one before and send their binaries; the other fast ones are cached
    big = published_dispatch._programs(arch, "kernel_groups_4_shadow", 8192)
    (one, _), *_ = big
    assert not one.binaries_cached
    dispatch, binaries = program_dispatch_ns(one, perf), binary_write_ns(one, perf)
    copy = launch_copy_ns(one, perf)
    expected = perf.cycles_ns(40000) + 2 * (binaries + dispatch + perf.op_to_op_traced_ns + copy) + 3 * dispatch
    assert published_dispatch.traced_us(arch, big) == pytest.approx(expected / 1e3)


def test_every_golden_row_is_a_figure_once():
    dispatch = published_dispatch.dispatch_figures()
    assert len({f.name for f in dispatch}) == len(dispatch)
    spinning = sum(len(v) for rows in published_dispatch.SPINNING.values() for v in rows.values())
    empty = sum(len(rows) for rows in (*published_dispatch.EMPTY.values(), *published_dispatch.BIG_BINARIES.values()))
    assert len(dispatch) == spinning + empty
    transfers = published_transfer.figures()
    assert len(transfers) == sum(len(values) for values in published_transfer.ROWS.values())
    assert len({f.name for f in transfers}) == len(transfers)
    assert sum(f.fitted for f in transfers) == sum(len(p) for p in published_transfer.FITTED.values()) == 14


def test_the_fitted_dispatch_rows_are_the_named_ones():
    """Each arch's rates were fitted to the rows ``FITTED`` names (Blackhole has no eth_dispatch row); every
    other row is a check, and the fitted rows reproduce their figure."""
    fitted = [f for f in published_dispatch.dispatch_figures() if f.fitted]
    assert len(fitted) == 2 * len(published_dispatch.FITTED) - 1
    assert {f.name.rsplit(": ", 1)[1] for f in fitted} == published_dispatch.FITTED
    assert all(abs(f.error()) < 0.01 for f in fitted)


def test_each_bench_row_is_described():
    for arch, rows in published_dispatch.EMPTY.items():
        assert set(rows) <= set(published_dispatch.BENCH), arch
    maxed = published_dispatch.program("WH", published_dispatch.BENCH["maxed_config_params"])
    assert (maxed.cores, maxed.rta_bytes_per_core, maxed.config_ranges) == (56, 3 * 128 * 4, 1)
    assert maxed.config_bytes == 32 * 16 + 4 * 16  # 32 CB configs and 4 semaphores, one multicast
    groups = published_dispatch.program("BH", published_dispatch.BENCH["all_processors_all_cores_1cb_8g"])
    assert (groups.cores, groups.config_ranges, groups.binary_bytes_per_core) == (99, 8, 5 * 1024)


def test_the_conv_reasons_quote_what_the_model_gives():
    # MISSES names exactly the conv rows outside 15%, and each reason quotes the model's time and the target
    targets = {(c[0], system): c[-1][i] for c in published_conv.CONFIGS for i, system in enumerate(("n150", "p150"))}
    configs = {c[0]: c for c in published_conv.CONFIGS}
    times = {row: published_conv.conv_us(row[1], configs[row[0]]) for row in targets}
    assert {row for row, us in times.items() if abs(us / targets[row] - 1) > 0.15} == set(published_conv.MISSES)
    for row, why in published_conv.MISSES.items():
        quoted = re.search(r"([\d.]+) us, [+-]\d+% of ([\d.]+)", why)
        assert quoted is not None
        assert times[row] == pytest.approx(float(quoted.group(1)), abs=0.05)
        assert float(quoted.group(2)) == targets[row]
