"""Overlapped tensors in one file: dump_overlapped_tensors / load_overlapped_tensors keep every view's
fields and the fused tensor's bytes (host or device load, the views sharing one fused tensor), and
refuse a wrong extension, views of different fused tensors and a damaged view record."""

from __future__ import annotations

import numpy as np
import pytest

import meshnn as ttnn
from meshnn.tensor.files import overlap
from meshnn.tensor.files.writer import save_tensor

C, R = ttnn.CoreCoord, ttnn.CoreRange


def fused_and_views(mesh):
    grid = ttnn.CoreRangeSet({R(C(0, 0), C(1, 1))})
    spec = ttnn.ShardSpec(grid, (32, 64), ttnn.ShardOrientation.ROW_MAJOR)
    config = ttnn.MemoryConfig(ttnn.TensorMemoryLayout.HEIGHT_SHARDED, ttnn.BufferType.L1, spec)
    values = np.arange(128 * 64, dtype=np.float32).reshape(128, 64) % 251
    fused = ttnn.from_torch(values, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh, memory_config=config)
    first = ttnn.OverlappedTensor(fused, (64, 64), (32, 32), grid, ttnn.bfloat16, (32, 32), 0, 2048)
    other_grid = ttnn.CoreRangeSet({R(C(0, 0), C(0, 1))})
    second = ttnn.OverlappedTensor(fused, (32, 32), (32, 32), other_grid, ttnn.bfloat8_b, (32, 32), 2048, 1088)
    return fused, {"w_a": first, "w_b": second}


def fields(view):
    ranges = sorted((r.start.x, r.start.y, r.end.x, r.end.y) for r in view.core_range_set.ranges())
    return (view.tensor_shape, view.shard_shape, ranges, view.dtype, view.tile_shape, view.byte_offset, view.total_size)


@pytest.mark.parametrize("onto_device", [False, True])
def test_a_roundtrip_keeps_the_views_and_the_bytes(open_mesh, tmp_path, onto_device):
    mesh = open_mesh((1, 1))
    fused, views = fused_and_views(mesh)
    path = str(tmp_path / "w.overlappedtensorbin")
    ttnn._ttnn.tensor.dump_overlapped_tensors(path, views)
    loaded = ttnn._ttnn.tensor.load_overlapped_tensors(path, device=mesh if onto_device else None)
    assert list(loaded) == ["w_a", "w_b"]
    assert all(fields(loaded[k]) == fields(views[k]) for k in views)
    assert loaded["w_a"].fused_tensor is loaded["w_b"].fused_tensor
    back = loaded["w_a"].fused_tensor
    assert (back.storage_type() == ttnn.StorageType.DEVICE) == onto_device
    if onto_device:
        assert back.memory_config() == fused.memory_config()
    np.testing.assert_array_equal(ttnn.to_torch(back).float().numpy(), ttnn.to_torch(fused).float().numpy())


def test_refusals(open_mesh, tmp_path):
    mesh = open_mesh((1, 1))
    _, views = fused_and_views(mesh)
    with pytest.raises(RuntimeError, match=r"must have \.overlappedtensorbin extension"):
        ttnn._ttnn.tensor.dump_overlapped_tensors(str(tmp_path / "w.tensorbin"), views)
    other, _ = fused_and_views(mesh)
    views["w_b"].fused_tensor = other
    with pytest.raises(RuntimeError, match="same fused tensor"):
        ttnn._ttnn.tensor.dump_overlapped_tensors(str(tmp_path / "w.overlappedtensorbin"), views)
    with pytest.raises(RuntimeError, match="at least one view"):
        ttnn._ttnn.tensor.dump_overlapped_tensors(str(tmp_path / "w.overlappedtensorbin"), {})


def test_a_damaged_view_record_is_the_files_error(open_mesh, tmp_path):
    mesh = open_mesh((1, 1))
    fused, views = fused_and_views(mesh)
    path = str(tmp_path / "w.overlappedtensorbin")
    records = [overlap._view_record(k, v) for k, v in views.items()]
    records[1]["dtype"] = "NOT_A_DTYPE"
    save_tensor(path, fused, extra={overlap.KEY: records})
    live = len(mesh.live_buffers())
    with pytest.raises(ttnn.TensorFileError, match="unknown dtype 'NOT_A_DTYPE'"):
        ttnn._ttnn.tensor.load_overlapped_tensors(path, device=mesh)
    assert len(mesh.live_buffers()) == live  # refused before anything was loaded
