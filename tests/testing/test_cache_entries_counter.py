"""tt-metal's conftest attaches ``tests.tests_common.cache_entries_counter.CacheEntriesCounter`` to the
devices of its ``device`` and ``mesh_device`` fixtures (its 2026 tests measure program-cache entries
with ``device.cache_entries_counter``); meshnn's fixtures do the same when the tree under test has
that helper, and nothing when it has not."""

from __future__ import annotations

import sys
import textwrap

import numpy as np
import pytest
import torch

import meshnn as ttnn
from meshnn.testing.fixtures import _with_counter

HELPER = """
from contextlib import contextmanager


class CacheEntriesCounter:
    def __init__(self, device):
        self.device = device
        self.total = 0

    @contextmanager
    def measure(self):
        before = self.device.num_program_cache_entries()
        yield
        self.total += self.device.num_program_cache_entries() - before
"""


@pytest.fixture
def tree_with_helper(tmp_path, monkeypatch):
    package = tmp_path / "tests" / "tests_common"
    package.mkdir(parents=True)
    (tmp_path / "tests" / "__init__.py").write_text("")
    (package / "__init__.py").write_text("")
    (package / "cache_entries_counter.py").write_text(textwrap.dedent(HELPER))
    for name in [m for m in sys.modules if m == "tests" or m.startswith("tests.tests_common")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield
    for name in [m for m in sys.modules if m.startswith("tests.tests_common")]:
        sys.modules.pop(name, None)


@pytest.fixture
def single():
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 1))
    yield mesh
    ttnn.close_mesh_device(mesh)


def test_the_counter_counts_the_program_cache_entries_an_op_adds(tree_with_helper, single):
    mesh = _with_counter(single)
    x = ttnn.from_torch(torch.from_numpy(np.ones((32, 32), np.float32)), layout=ttnn.TILE_LAYOUT, device=mesh)
    with mesh.cache_entries_counter.measure():
        ttnn.add(x, x)
    assert mesh.cache_entries_counter.total == 1  # a new program
    with mesh.cache_entries_counter.measure():
        ttnn.add(x, x)
    assert mesh.cache_entries_counter.total == 1  # the same program again: no new entry


def test_without_the_helper_nothing_is_attached(single, monkeypatch):
    monkeypatch.setitem(sys.modules, "tests.tests_common.cache_entries_counter", None)  # (import fails)
    assert not hasattr(_with_counter(single), "cache_entries_counter")
