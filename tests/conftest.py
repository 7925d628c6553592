"""Shared fixtures: simulated meshes that are always closed, and a seeded random generator."""

from __future__ import annotations

import functools
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


def _tensors_held(kernel: object) -> list[str]:
    """Where ``kernel`` (an op's kernel: a closure, a bound method of a plan object, a partial)
    holds a ttnn.Tensor, as paths (``kernel.tensor``).  A kernel lives as long as the workload that
    runs it (a captured trace keeps it until released), so a tensor it holds stays allocated after
    the user drops it: kernels must hold specs, never tensors (a traced op must not keep its inputs)."""
    from meshnn.tensor.tensor import Tensor

    seen: set[int] = set()
    found: list[str] = []

    def visit(obj: object, path: str, depth: int) -> None:
        if depth < 0 or id(obj) in seen or obj is None or isinstance(obj, str | bytes | int | float | np.ndarray):
            return
        seen.add(id(obj))
        if isinstance(obj, Tensor):
            found.append(path)
            return
        if isinstance(obj, list | tuple | set | frozenset):
            for i, item in enumerate(obj):
                visit(item, f"{path}[{i}]", depth - 1)
            return
        if isinstance(obj, dict):
            for key, item in obj.items():
                visit(item, f"{path}[{key!r}]", depth - 1)
            return
        if isinstance(obj, functools.partial):
            visit(obj.func, f"{path}.func", depth - 1)
            visit(obj.args, f"{path}.args", depth - 1)
            visit(obj.keywords, f"{path}.keywords", depth - 1)
            return
        owner = getattr(obj, "__self__", None)
        if owner is not None and getattr(obj, "__func__", None) is not None:  # a bound method: its object
            visit(owner, f"{path}.__self__", depth - 1)
            obj = obj.__func__
        closure = getattr(obj, "__closure__", None)
        if closure:
            for name, cell in zip(obj.__code__.co_freevars, closure, strict=True):
                try:
                    contents = cell.cell_contents
                except ValueError:  # (an empty cell)
                    continue
                visit(contents, f"{path}.{name}", depth - 1)
            return
        if type(obj).__module__.startswith("meshnn.ops"):  # a plan object of an op: its attributes
            names = getattr(type(obj), "__slots__", ()) or tuple(getattr(obj, "__dict__", {}))
            for name in names:
                visit(getattr(obj, name, None), f"{path}.{name}", depth - 1)

    visit(kernel, "kernel", 4)
    return found


@pytest.fixture(autouse=True, scope="session")
def _kernels_hold_no_tensors():
    """Every op launched in the suite is checked: its kernel holds no ttnn.Tensor (see
    :func:`_tensors_held`); one that does fails the test that launched it, naming the op."""
    from meshnn.ops import launch as launch_module

    original = launch_module._Run.__init__

    def checked(self, kernel, inputs, *args, **kwargs):
        held = _tensors_held(kernel)
        if held:
            name = getattr(kernel, "__qualname__", type(kernel).__name__)
            raise AssertionError(f"{name} holds ttnn.Tensor objects (keeps them allocated while a trace lives): {held}")
        original(self, kernel, inputs, *args, **kwargs)

    launch_module._Run.__init__ = checked
    yield
    launch_module._Run.__init__ = original
