"""``ttnn.concat`` of TILE tensors where no tile straddles two inputs joins their tiles' bytes
(:func:`meshnn.ops.movement.rearrange.joined_tiles`): the output's bytes are exactly those of the
joined values encoded (block floats too: a tile's bytes hold its own values and exponents alone),
along the last dim, the tile rows and the batch dims, from interleaved and width-sharded inputs;
a tile holding padding, or two tile formats, take the decode-join-encode path."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import meshnn as ttnn
from meshnn.ops.movement import joining

DTYPES = [ttnn.bfloat16, ttnn.bfloat8_b, ttnn.bfloat4_b, ttnn.float32]


@pytest.fixture
def mesh():
    device = ttnn.open_mesh_device(ttnn.MeshShape(1, 2))
    yield device
    ttnn.close_mesh_device(device)


@pytest.fixture
def no_rearranging(monkeypatch):
    """The decode-join-encode path refused: the tile join must serve the call."""

    def refused(*args, **kwargs):
        raise AssertionError("concat decoded and re-encoded its inputs")

    monkeypatch.setattr(joining, "rearranged", refused)


def put(mesh, values, dtype, memory_config=ttnn.DRAM_MEMORY_CONFIG):
    return ttnn.from_torch(
        torch.from_numpy(values),
        dtype=dtype,
        layout=ttnn.TILE_LAYOUT,
        device=mesh,
        memory_config=memory_config,
        mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0),
    )


def device_bytes(tensor):
    size = tensor.spec.compute_packed_buffer_size_bytes()
    return tensor.storage.mesh_buffer.slab()[:, :size].copy()


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize(
    ("axis", "shapes"),
    [
        (-1, [(2, 1, 64, 96), (2, 1, 64, 32), (2, 1, 64, 160)]),
        (-2, [(2, 3, 32, 64), (2, 3, 96, 64)]),
        (1, [(2, 1, 64, 64), (2, 2, 64, 64)]),
    ],
)
def test_joined_tiles_are_the_joined_values_encoded(mesh, no_rearranging, dtype, axis, shapes):
    rng = np.random.default_rng(len(shapes) + axis)
    parts = [(rng.standard_normal(s) * rng.choice([1e-3, 1, 40], size=s)).astype(np.float32) for s in shapes]
    tensors = [put(mesh, p, dtype) for p in parts]
    out = ttnn.concat(tensors, dim=axis)
    values = np.concatenate(
        [ttnn.to_torch(t, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0)).float().numpy() for t in tensors], axis
    )
    want = put(mesh, values, dtype)
    assert tuple(out.shape) == (values.shape[0] // 2, *values.shape[1:])  # each device its half
    assert np.array_equal(device_bytes(out), device_bytes(want))
    got = ttnn.to_torch(out, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0)).float().numpy()
    assert np.array_equal(got.view(np.uint32), values.view(np.uint32))


def test_width_sharded_parts_join_into_l1_as_the_lm_head_does(mesh, no_rearranging):
    """tt_transformers' LM head: width-sharded bfloat8_b splits joined into L1 interleaved."""
    grid = ttnn.CoreRangeSet({ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(3, 0))})
    sharded = ttnn.create_sharded_memory_config(
        (32, 64), grid, ttnn.ShardStrategy.WIDTH, use_height_and_width_as_shard_shape=True
    )
    rng = np.random.default_rng(7)
    parts = [rng.standard_normal((2, 1, 32, 256)).astype(np.float32) for _ in range(3)]
    tensors = [put(mesh, p, ttnn.bfloat8_b, sharded) for p in parts]
    out = ttnn.concat(tensors, dim=-1, memory_config=ttnn.L1_MEMORY_CONFIG)
    values = np.concatenate(
        [ttnn.to_torch(t, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0)).float().numpy() for t in tensors], -1
    )
    assert out.memory_config() == ttnn.L1_MEMORY_CONFIG
    assert np.array_equal(device_bytes(out), device_bytes(put(mesh, values, ttnn.bfloat8_b, ttnn.L1_MEMORY_CONFIG)))


@pytest.mark.parametrize(
    ("shapes", "dtypes"),
    [
        ([(2, 1, 32, 48), (2, 1, 32, 16)], [ttnn.bfloat8_b, ttnn.bfloat8_b]),  # a tile holds padding
        ([(2, 1, 32, 64), (2, 1, 32, 64)], [ttnn.bfloat16, ttnn.bfloat8_b]),  # two formats: refused below
    ],
)
def test_other_joins_take_the_values_path(mesh, monkeypatch, shapes, dtypes):
    taken = []
    real = joining.rearranged
    monkeypatch.setattr(joining, "rearranged", lambda *a, **k: taken.append(a[0]) or real(*a, **k))
    rng = np.random.default_rng(3)
    tensors = [put(mesh, rng.standard_normal(s).astype(np.float32), d) for s, d in zip(shapes, dtypes, strict=True)]
    if dtypes[0] is not dtypes[1]:
        with pytest.raises(ValueError, match="share a dtype"):
            ttnn.concat(tensors, dim=-1)
        return
    out = ttnn.concat(tensors, dim=-1)
    assert taken == ["concat"]
    values = np.concatenate(
        [ttnn.to_torch(t, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0)).float().numpy() for t in tensors], -1
    )
    got = ttnn.to_torch(out, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0)).float().numpy()
    want = (
        ttnn.to_torch(put(mesh, values, dtypes[0]), mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0)).float().numpy()
    )
    assert np.array_equal(got, want)
