"""``ttnn.experimental.nlp_kv_cache_load_slice``: the window of positions equals torch's slice
exactly for exact formats (a copy), the output is height-sharded in L1 one (d0, d1) pair a core
with shards of [window, head_dim], a preallocated output is written in place, and the device
operation's checks refuse bad windows."""

from __future__ import annotations

import pytest
import torch

import meshnn as ttnn

OP = ttnn.experimental.nlp_kv_cache_load_slice


@pytest.fixture(scope="module")
def mesh():
    m = ttnn.open_mesh_device(ttnn.MeshShape(1, 2))
    yield m
    m.close()


def _t(mesh, x, dtype):
    return ttnn.from_torch(x, dtype=dtype, layout=ttnn.TILE_LAYOUT, device=mesh)


@pytest.mark.parametrize("dtype", [ttnn.float32, ttnn.bfloat16, ttnn.uint32], ids=["f32", "bf16", "u32"])
@pytest.mark.parametrize(("shape", "start", "end"), [((2, 3, 128, 64), 32, 96), ((4, 1, 64, 32), 0, 64)])
def test_window_is_torchs_slice_exactly(mesh, dtype, shape, start, end):
    x = torch.randint(0, 1000, shape) if dtype == ttnn.uint32 else torch.randn(shape)
    src = _t(mesh, x, dtype)
    out = OP(src, seq_len_start=start, seq_len_end=end)
    want = ttnn.to_torch(src, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0))[: shape[0], :, start:end]
    got = ttnn.to_torch(out, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0))[: shape[0]]
    assert list(out.shape) == [shape[0], shape[1], end - start, shape[3]]
    assert torch.equal(got, want)


def test_output_is_height_sharded_a_pair_a_core(mesh):
    out = OP(_t(mesh, torch.randn(3, 2, 128, 64), ttnn.bfloat16), seq_len_start=64, seq_len_end=128)
    config = out.memory_config()
    assert config.memory_layout == ttnn.TensorMemoryLayout.HEIGHT_SHARDED
    assert config.buffer_type == ttnn.BufferType.L1
    assert list(config.shard_spec.shape) == [64, 64]
    assert config.shard_spec.grid.num_cores() == 6
    assert config.shard_spec.orientation == ttnn.ShardOrientation.ROW_MAJOR


def test_block_float_window_keeps_its_values(mesh):
    src = _t(mesh, torch.randn(1, 2, 96, 64), ttnn.bfloat8_b)
    out = OP(src, seq_len_start=32, seq_len_end=96)
    both = [ttnn.to_torch(t, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0))[:1] for t in (out, src)]
    assert torch.equal(both[0], both[1][:, :, 32:96])


def test_preallocated_output_is_written_in_place(mesh):
    src = _t(mesh, torch.randn(1, 2, 64, 32), ttnn.float32)
    first = OP(src, seq_len_start=0, seq_len_end=32)
    again = OP(_t(mesh, torch.randn(1, 2, 64, 32), ttnn.float32), seq_len_start=32, seq_len_end=64, output_tensor=first)
    assert again.buffer_address() == first.buffer_address()


@pytest.mark.parametrize(
    ("start", "end", "match"),
    [(16, 48, "multiples of 32"), (0, 48, "multiples of 32"), (64, 64, "seq_len_end"), (0, 160, "seq_len_end")],
)
def test_bad_windows_are_refused(mesh, start, end, match):
    src = _t(mesh, torch.randn(1, 2, 128, 32), ttnn.bfloat16)
    with pytest.raises(ttnn.MeshnnValueError, match=match):
        OP(src, seq_len_start=start, seq_len_end=end)
