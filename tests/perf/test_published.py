"""Every published op-level figure the model covers is reproduced within 15% (the figures, their
sources and the model's values are in :mod:`tests.perf.published`)."""

from __future__ import annotations

import pytest

from .published import figures

TOLERANCE = 0.15

COVERED = [f for f in figures() if f.covered]


@pytest.mark.parametrize("figure", COVERED, ids=[f.name for f in COVERED])
def test_published_figure_within_15_percent(figure):
    value = figure.value()
    assert abs(figure.error()) <= TOLERANCE, (
        f"{figure.name} [{figure.source}]: published {figure.low:g}-{figure.high:g} {figure.unit}, "
        f"model {value:.3g} ({100 * figure.error():+.1f}%)"
    )


def test_every_figure_names_its_source_and_a_positive_value():
    for figure in figures():
        assert figure.source and "tt-metal" in figure.source, figure.name
        assert 0 < figure.low <= figure.high, figure.name


def test_checked_figures_are_not_all_calibration():
    """Most figures set no constant: the model is checked on figures it was not fitted to."""
    checked = [f for f in COVERED if not f.fitted]
    assert len(checked) >= 20
    assert max(abs(f.error()) for f in checked) <= TOLERANCE


def test_known_misses_stay_outside_the_claim():
    """Size-switched steps and rows the model cannot meet are shown with why, not claimed; each is
    still more than 15% off (a miss the model comes to meet must join the claim)."""
    misses = [f for f in figures() if not f.covered]
    assert misses and all(f.why_not for f in misses)
    assert all(abs(f.error()) > TOLERANCE for f in misses), [f.name for f in misses if abs(f.error()) <= TOLERANCE]
