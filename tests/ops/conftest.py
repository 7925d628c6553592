"""Fixtures shared by the op tests."""

from __future__ import annotations

import pytest

from meshnn.mesh.observers import OBSERVERS, MeshObserver


class OpRecorder(MeshObserver):
    """Every op launched while it watches, as its OpEvent (``ops``, in order)."""

    def __init__(self) -> None:
        self.ops: list = []

    def on_op_begin(self, event) -> None:
        self.ops.append(event)


@pytest.fixture
def recorder():
    """An :class:`OpRecorder` watching for the test's length."""
    rec = OpRecorder()
    OBSERVERS.add(rec)
    yield rec
    OBSERVERS.remove(rec)
