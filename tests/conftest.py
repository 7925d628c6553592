"""Shared fixtures: simulated meshes that are always closed, and a seeded random generator."""

from __future__ import annotations

import os

import numpy as np
import pytest

from meshnn.mesh import MeshShape, open_mesh_device

# tests/ttnn_style/ and tests/ttnn_parity/ import ttnn: they run only through the plugin
# (tests/test_ttnn_style_suite.py, tests/testing/test_plugin_in_action.py).
collect_ignore = [] if os.environ.get("MESHNN_TTNN_STYLE") == "1" else ["ttnn_style", "ttnn_parity"]

# The mesh shapes the acceptance cases run on, and the simulated system that has them.
SYSTEM_FOR = {(1, 1): "n150", (1, 2): "n300", (2, 4): "t3k", (1, 8): "t3k", (8, 4): "galaxy"}


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(20261202)


@pytest.fixture
def open_mesh():
    """``open_mesh((rows, cols), **kw)`` opens a mesh on the system that has it; all close at teardown."""
    opened = []

    def opener(shape=(2, 4), **kwargs):
        kwargs.setdefault("system", SYSTEM_FOR.get(tuple(shape), "galaxy"))
        mesh = open_mesh_device(MeshShape(*shape), **kwargs)
        opened.append(mesh)
        return mesh

    yield opener
    for mesh in opened:
        mesh.close()
