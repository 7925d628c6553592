"""The dispatch, transfer and conv figures (tests/perf/published_dispatch.py) time what their sources
ran: a traced program is its kernel's cycles plus the model's traced gap; the shadow rows one slow
kernel and four or five empty ones; the conv misses quote what the model gives (meshnn.perf.conv)."""

from __future__ import annotations

import re

import pytest

from meshnn.perf.hardware import BLACKHOLE, WORMHOLE_B0

from . import published_conv, published_dispatch, published_transfer


@pytest.mark.parametrize("perf", [WORMHOLE_B0, BLACKHOLE])
def test_a_traced_program_is_its_cycles_plus_the_traced_gap(perf):
    arch = perf.arch.value
    for cycles in (0, 1000, 10000):
        expected = (perf.cycles_ns(cycles) + perf.op_to_op_traced_ns) / 1e3
        assert published_dispatch.traced_us(arch, (cycles,)) == pytest.approx(expected)
    shadow = published_dispatch.traced_us(arch, published_dispatch._programs("kernel_groups_4_shadow", 256))
    assert shadow == pytest.approx((perf.cycles_ns(40000) + 5 * perf.op_to_op_traced_ns) / 1e3)


def test_every_golden_row_is_a_figure_once():
    dispatch = published_dispatch.dispatch_figures()
    assert len({f.name for f in dispatch}) == len(dispatch)
    spinning = sum(len(v) for rows in published_dispatch.SPINNING.values() for v in rows.values())
    assert len(dispatch) == spinning + sum(len(rows) for rows in published_dispatch.EMPTY.values())
    transfers = published_transfer.figures()
    assert len(transfers) == sum(len(values) for values in published_transfer.ROWS.values())
    assert len({f.name for f in transfers}) == len(transfers)
    assert sum(f.fitted for f in transfers) == sum(len(p) for p in published_transfer.FITTED.values()) == 14


@pytest.mark.parametrize("row", sorted(published_conv.MISSES), ids=lambda r: "-".join(r))
def test_the_conv_reasons_quote_what_the_model_gives(row):
    name, system = row
    (config,) = [c for c in published_conv.CONFIGS if c[0] == name]
    quoted = re.search(r"([\d.]+) us, [+-]\d+% of ([\d.]+)", published_conv.MISSES[row])
    assert quoted is not None
    us = published_conv.conv_us(system, config)
    assert us == pytest.approx(float(quoted.group(1)), abs=0.05)
    target = config[-1][("n150", "p150").index(system)]
    assert float(quoted.group(2)) == target
    assert abs(us / target - 1) > 0.15  # still outside the claim
