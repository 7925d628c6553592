"""tt-metal's CI ceilings for single collectives (:func:`tests.perf.published_ccl_ci.ceilings`): the
model is not above any of them by more than the published figures' 15%.  A ceiling is not a
measurement, so it only checks one side; the measured CI figures are in tests/perf/published.py."""

from __future__ import annotations

import pytest

from .published_ccl_ci import ceilings

TOLERANCE = 0.15
CEILINGS = ceilings()


@pytest.mark.parametrize("ceiling", CEILINGS, ids=[c[0] for c in CEILINGS])
def test_the_model_is_under_the_ci_ceiling(ceiling):
    name, source, target, model = ceiling
    assert "tt-metal" in source and target > 0
    value = model()
    assert 0 < value <= target * (1 + TOLERANCE), f"{name} [{source}]: ceiling {target:g} us, model {value:.3g} us"
