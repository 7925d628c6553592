"""One published figure and the model's value for it (see tests/perf/published.py)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Figure:
    """A published figure (``low`` .. ``high``: a range, or one value twice), where it was published,
    the model's value for it, whether it is inside the claim (``covered``; else ``why_not``) and
    whether it set one of the model's constants (``fitted``) or only checks them."""

    name: str
    source: str
    low: float
    high: float
    unit: str
    model: Callable[[], float]
    covered: bool = True
    why_not: str = ""
    fitted: bool = False
    group: str = ""  # the family the README's table counts it under

    def value(self) -> float:
        return self.model()

    def error(self) -> float:
        """Relative distance of the model's value from the published range (0 inside it)."""
        v = self.value()
        if v < self.low:
            return v / self.low - 1
        if v > self.high:
            return v / self.high - 1
        return 0.0
