"""The ``pytest11`` entry point: inert unless ``MESHNN_AS_TTNN=1`` asks for the meshnn plugin."""

from __future__ import annotations

import os

import pytest


def pytest_addoption(parser: pytest.Parser, pluginmanager: pytest.PytestPluginManager) -> None:
    if os.environ.get("MESHNN_AS_TTNN") == "1" and not pluginmanager.has_plugin("meshnn.testing"):
        pluginmanager.import_plugin("meshnn.testing")
