"""The memory pictures name what a developer wrote: each buffer by the variable and the line that
made it, each step by its op and line; small blocks are labelled above the lane; colours have a
legend."""

from __future__ import annotations

from pathlib import Path

import pytest

import meshnn as ttnn
from meshnn.mesh.memory_plot import COLORS, Block, _peak_blocks, address_map
from meshnn.mesh.timeline_text import made_where, step_label

HERE = "test_pictures.py"


def line_of(text: str) -> int:
    lines = Path(__file__).read_text().splitlines()
    return next(i for i, line in enumerate(lines, 1) if text in line and "line_of" not in line)


def test_buffers_and_steps_are_named_by_the_users_variable_and_line():
    with ttnn.open_mesh_device(ttnn.MeshShape(1, 2), execute=False) as mesh, ttnn.MemoryTimeline() as timeline:
        weights = ttnn.ones((64, 64), layout=ttnn.TILE_LAYOUT, device=mesh)  # made outside ops
        activated = ttnn.exp(weights, memory_config=ttnn.L1_MEMORY_CONFIG)
        ttnn.deallocate(activated)
    steps = timeline.of(mesh).steps
    labels = [step_label(s) for s in steps]
    assert f"exp {HERE}:{line_of('activated = ttnn.exp')}" in labels
    assert f"1 freed {HERE}:{line_of('ttnn.deallocate(activated)')}" in labels
    lives = {life.buffer_type: life for life in timeline.of(mesh).buffers}
    assert made_where(lives["L1"]) == ("activated = ttnn.exp", f"{HERE}:{line_of('activated = ttnn.exp')}")
    blocks, title = _peak_blocks(timeline.of(mesh), "L1")
    assert blocks[0].name.startswith(f"activated = ttnn.exp\n{HERE}:") and blocks[0].color == COLORS["peak"]
    assert "each named by the line that made it" in title


def test_small_blocks_are_labelled_above_the_lane_and_colours_have_a_legend():
    plt = pytest.importorskip("matplotlib.pyplot")
    figure, axis = plt.subplots(figsize=(13, 2))
    wide = Block(0, 1_000_000, "w = weights\nmodel.py:3", COLORS["outside"], "made outside ops")
    small = Block(1_000_000, 2048, "h = ttnn.add\nmodel.py:9", COLORS["peak"], "made by the op at the peak")
    address_map(axis, [wide, small], 1 << 30, "DRAM")
    inside = [t.get_text() for t in axis.texts]
    assert any(t.startswith("w = weights\nmodel.py:3") for t in inside)  # in its block
    assert any(t.startswith("h = ttnn.add model.py:9, 2 KiB") for t in inside)  # above the lane, with a line
    legend = [t.get_text() for t in axis.get_legend().get_texts()]
    assert legend == ["made outside ops", "made by the op at the peak", "free"]
    plt.close(figure)
