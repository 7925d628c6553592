"""ttnn.MemoryTimeline: a step per op with exact per-bank figures, the peak and the op that set it,
the buffers live then, lock-step said once, and the pictures."""

from __future__ import annotations

import struct

import pytest
import torch

import meshnn as ttnn

TILE, BF16 = ttnn.TILE_LAYOUT, ttnn.bfloat16
L1 = ttnn.L1_MEMORY_CONFIG
PAGE = 2048  # one bfloat16 tile


def put(mesh, shape, memory_config=None):
    return ttnn.from_torch(torch.ones(shape), dtype=BF16, layout=TILE, device=mesh, memory_config=memory_config)


@pytest.fixture(params=[True, False], ids=["executing", "planning"])
def mesh(request):
    with ttnn.open_mesh_device(ttnn.MeshShape(2, 4), execute=request.param) as opened:
        yield opened


def test_a_step_per_op_with_exact_figures_per_bank(mesh):
    """64 tiles of L1 (one page on each of the 64 banks), then ops whose outputs take one page each."""
    with ttnn.MemoryTimeline() as timeline:
        a = put(mesh, (1, 1, 32, 32 * 64), L1)  # 64 tiles: one page per bank
        b = ttnn.gelu(a, memory_config=L1)
        c = ttnn.add(a, b, memory_config=L1)
        ttnn.deallocate(b)
        d = ttnn.exp(c, memory_config=L1)
    steps = timeline.of(mesh).steps
    assert [s.op for s in steps] == ["(between ops)", "gelu", "add", "(between ops)", "exp"]
    assert [s.lanes["L1"].allocated for s in steps] == [PAGE, 2 * PAGE, 3 * PAGE, 2 * PAGE, 3 * PAGE]
    assert [len(s.born) for s in steps] == [1, 1, 1, 0, 1] and steps[3].freed == (("L1", b_address(steps), PAGE),)
    assert steps[2].born == (("L1", c.buffer_address(), PAGE),)
    free = mesh.get_memory_view(ttnn.BufferType.L1).largest_contiguous_bytes_free_per_bank
    assert steps[-1].lanes["L1"].largest_free == free
    assert d.is_allocated() and all(s.lanes["DRAM"].allocated == 0 for s in steps)


def b_address(steps):
    return steps[1].born[0][1]


def test_the_peak_names_its_op_and_the_buffers_live_then(mesh):
    """The peak is the highest moment, though its buffer is freed right after; the report names the op."""
    with ttnn.MemoryTimeline() as timeline:
        a = put(mesh, (1, 1, 32, 32 * 64), L1)
        big = ttnn.repeat(a, (1, 1, 1, 4), memory_config=L1)  # 4 pages per bank
        ttnn.deallocate(big)
        ttnn.gelu(a, memory_config=L1)
    recorded = timeline.of(mesh)
    peak = recorded.peak("L1")
    assert (peak.per_bank, peak.op, peak.step, peak.num_banks) == (5 * PAGE, "repeat", 1, 64)
    assert peak.per_device == 5 * PAGE * 64
    live = recorded.live_at(peak.seq, "L1")
    assert sorted(b.size for b in live) == [PAGE, 4 * PAGE]
    assert {b.name for b in live} == {"1x1x32x2048 bf16", "repeat: 1x1x32x8192 bf16"}
    text = timeline.report()
    assert "L1 peak: 10 KiB per bank (640 KiB per device, 64 banks) at step 1, ttnn.repeat" in text
    assert "all 8 devices hold the same buffers at the same addresses" in text
    assert text.count("lock-step") == 1  # said once, not per device


def test_buffers_from_before_the_timeline_and_submeshes_join_the_root_mesh():
    with ttnn.open_mesh_device(ttnn.MeshShape(2, 4), execute=False) as mesh:
        first = put(mesh, (1, 1, 32, 32 * 64), L1)
        sub = mesh.create_submesh(ttnn.MeshShape(1, 4))
        assert sub.executes is False and "planning" in repr(sub)
        with ttnn.MemoryTimeline() as timeline:
            second = put(sub, (1, 1, 32, 32 * 64), L1)
        (recorded,) = timeline.meshes
        assert recorded.mesh_id == mesh.mesh_id and recorded.shape == (2, 4)
        before = [b for b in recorded.buffers if b.born == -1]
        assert [(b.address, b.size, b.label) for b in before] == [(first.buffer_address(), PAGE, "1x1x32x2048 bf16")]
        assert recorded.steps[-1].lanes["L1"].allocated == 2 * PAGE and second.is_allocated()


def test_an_op_that_runs_out_of_memory_is_a_failed_step():
    with ttnn.open_mesh_device(ttnn.MeshShape(1, 2), execute=False) as mesh:
        a = put(mesh, (1, 1, 32, 32 * 64), L1)
        with ttnn.MemoryTimeline() as timeline:
            with pytest.raises(ttnn.OutOfMemoryError, match=r"In ttnn\.repeat \(called at .*test_memory_timeline"):
                ttnn.repeat(a, (1, 1, 1, 2000), memory_config=L1)
            b = ttnn.gelu(a, memory_config=L1)
        steps = timeline.of(mesh).steps
        assert [(s.op, s.failed) for s in steps] == [("repeat", True), ("gelu", False)]
        assert steps[0].born == () and steps[0].lanes["L1"].allocated == PAGE  # nothing left behind
        assert b.is_allocated()


def png_size(path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def test_pictures_have_one_lane_per_buffer_type_whatever_the_number_of_devices(tmp_path):
    pytest.importorskip("matplotlib")
    sizes = []
    for shape, system in (((1, 2), "n300"), ((8, 4), "galaxy")):
        with ttnn.open_mesh_device(ttnn.MeshShape(*shape), system=system, execute=False) as mesh:
            with ttnn.MemoryTimeline() as timeline:
                a = put(mesh, (1, 1, 32, 32 * 64), L1)
                ttnn.gelu(ttnn.add(a, put(mesh, (1, 1, 32, 32 * 64))), memory_config=L1)
            sizes.append(png_size(ttnn.plot_memory(mesh, tmp_path / f"memory_{system}.png")))
            sizes.append(png_size(timeline.plot(tmp_path / f"timeline_{system}.png")))
    assert sizes[0] == sizes[2] and sizes[1] == sizes[3]  # 2 devices or 32: the same picture size
    assert sizes[0][1] < 500  # two lanes (DRAM, L1), not a row per device


def test_a_timeline_with_nothing_allocated_has_no_picture(tmp_path):
    with ttnn.MemoryTimeline() as timeline, ttnn.open_mesh_device(ttnn.MeshShape(1, 1), execute=False):
        pass
    assert timeline.meshes == []
    with pytest.raises(ttnn.MeshnnValueError, match="no mesh"):
        timeline.plot(tmp_path / "none.png")


def test_no_observer_left_behind():
    from meshnn.mesh.observers import OBSERVERS

    with ttnn.MemoryTimeline() as timeline:
        assert timeline in OBSERVERS
    assert timeline not in OBSERVERS
