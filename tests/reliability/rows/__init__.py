"""Bad-input rows by op family: each module here defines ``rows() -> list[Case]`` (see
``tests/reliability/cases.py`` for the vocabulary and the environment a row's call gets).  Every
module is found and read; a new family adds a module, no list to edit."""

from __future__ import annotations

import importlib
import pkgutil

from ..cases import Case


def family_rows() -> list[Case]:
    """The rows of every module of this package, in module order."""
    found: list[Case] = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        found += module.rows()
    return found
