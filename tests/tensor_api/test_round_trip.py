"""Round trips host -> mesh -> host for every dtype, layout and placement on 1x1, 1x8, 2x4 and 8x4.

Lossless dtypes must come back exactly.  Lossy ones are bounded by their format:
- bfloat16 keeps 8 significant bits, so round-to-nearest errs by at most 2**-8 of |x|;
- bfloat8_b / bfloat4_b share one exponent E per 16-value face row and keep 7 / 3 magnitude bits
  below it: one step is 2**(E - 6) / 2**(E - 2), the error (rounding, or clamping of the largest
  value) is at most one step, and 2**E <= the largest |x| of the row, so |err| <= rowmax / 64 and
  rowmax / 4.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import meshnn as ttnn

MESHES = {(1, 1): "n150", (1, 8): "t3k", (2, 4): "t3k", (8, 4): "galaxy"}
DTYPES = [
    ttnn.float32,
    ttnn.bfloat16,
    ttnn.bfloat8_b,
    ttnn.bfloat4_b,
    ttnn.int32,
    ttnn.uint32,
    ttnn.uint16,
    ttnn.uint8,
    ttnn.int8,
]
INTEGER_RANGE = {
    ttnn.int32: (-(2**31), 2**31),
    ttnn.uint32: (0, 2**31),
    ttnn.uint16: (0, 2**16),
    ttnn.uint8: (0, 256),
    ttnn.int8: (-128, 128),
}


@pytest.fixture(scope="module")
def meshes():
    opened = {shape: ttnn.open_mesh_device(ttnn.MeshShape(*shape), system=system) for shape, system in MESHES.items()}
    yield opened
    for mesh in opened.values():
        mesh.close()


def face_row_max(values: np.ndarray) -> np.ndarray:
    """For each element, the largest |x| of its 16-value face row (the block sharing an exponent)."""
    x = np.abs(values.astype(np.float64))
    *outer, width = x.shape
    padded = np.pad(x, [(0, 0)] * len(outer) + [(0, -width % 16)])
    rows = padded.reshape(*outer, -1, 16).max(axis=-1, keepdims=True)
    return np.broadcast_to(rows, (*outer, padded.shape[-1] // 16, 16)).reshape(padded.shape)[..., :width]


def shard_face_row_max(values: np.ndarray, cols: int) -> np.ndarray:
    """face_row_max of each of ``cols`` equal column shards (each shard is tiled on its own)."""
    return np.concatenate([face_row_max(part) for part in np.split(values, cols, axis=-1)], axis=-1)


def check(values: np.ndarray, back: np.ndarray, dtype, column_shards: int) -> None:
    back = back.astype(np.float64) if dtype.is_float else back
    if dtype is ttnn.bfloat16:
        assert np.all(np.abs(back - values) <= np.abs(values) * 2.0**-8)
    elif dtype.is_block_float:
        step = 64 if dtype is ttnn.bfloat8_b else 4
        err = np.abs(back - values)
        assert np.all(err <= shard_face_row_max(values, column_shards) / step)
        assert err.max() > 0, "the bound must be doing work: block floats are lossy here"
    else:
        np.testing.assert_array_equal(back, values)


def make_values(rng, shape, dtype) -> np.ndarray:
    if dtype.is_float:
        return (rng.standard_normal(shape) * 10).astype(np.float32)
    low, high = INTEGER_RANGE[dtype]
    return rng.integers(low, high, shape).astype(dtype.numpy_dtype)


def torch_input(values: np.ndarray):
    if values.dtype == np.uint32:
        return torch.from_numpy(values.view(np.int32))
    if values.dtype == np.uint16:
        return torch.from_numpy(values.astype(np.int32))
    return torch.from_numpy(values)


@pytest.mark.parametrize("shape", list(MESHES), ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize(
    ("dtype", "layout"),
    [
        (d, lay)
        for d in DTYPES
        for lay in (ttnn.ROW_MAJOR_LAYOUT, ttnn.TILE_LAYOUT)
        if not (d.is_block_float and lay is ttnn.ROW_MAJOR_LAYOUT)
    ],  # block floats exist only as tiles
    ids=str,
)
@pytest.mark.parametrize("placement", ["shard", "replicate", "shard2d"])
def test_round_trip(meshes, rng, shape, dtype, layout, placement):
    mesh = meshes[shape]
    rows, cols = shape
    n = rows * cols
    # random sizes, including non-multiples of 32, cut evenly by the mesh
    batch, height, width = int(rng.integers(1, 3)), int(rng.integers(1, 40)), int(rng.integers(1, 70))
    if placement == "shard":
        full = (batch, height, width * n)
        mapper, composer = ttnn.ShardTensorToMesh(mesh, dim=2), ttnn.ConcatMeshToTensor(mesh, dim=2)
    elif placement == "replicate":
        full = (batch, height, width)
        mapper, composer = ttnn.ReplicateTensorToMesh(mesh), ttnn.ConcatMeshToTensor(mesh, dim=0)
    else:
        full = (batch, height * rows, width * cols)
        mapper = ttnn.ShardTensor2dMesh(mesh, mesh_shape=shape, dims=(1, 2))
        composer = ttnn.ConcatMesh2dToTensor(mesh, mesh_shape=shape, dims=(1, 2))
    values = make_values(rng, full, dtype)
    tensor = ttnn.from_torch(torch_input(values), dtype=dtype, layout=layout, device=mesh, mesh_mapper=mapper)
    assert tensor.storage_type() is ttnn.StorageType.DEVICE and tensor.is_allocated()
    assert len(tensor.device_coords()) == n
    back = ttnn.to_numpy(tensor, mesh_composer=composer)
    expected = np.concatenate([values] * n, axis=0) if placement == "replicate" else values
    assert back.shape == expected.shape
    check(expected, back, dtype, {"shard": n, "replicate": 1, "shard2d": cols}[placement])
    address = tensor.buffer_address()
    ttnn.deallocate(tensor)
    assert not tensor.is_allocated()
    view = ttnn.get_memory_view(mesh, ttnn.BufferType.DRAM)
    assert all(int(b["address"]) + 1_048_640 != address or b["allocated"] == "no" for b in view.block_table)


@pytest.mark.parametrize("dtype", [ttnn.bfloat8_b, ttnn.bfloat4_b], ids=str)
def test_block_floats_refuse_row_major(dtype):
    with pytest.raises(ttnn.MeshnnError, match="Layout must be Layout::TILE for bfloat8_b or bfloat4_b!"):
        ttnn.from_torch(torch.zeros(32, 32), dtype=dtype, layout=ttnn.ROW_MAJOR_LAYOUT)


@pytest.mark.parametrize(
    "view",
    [
        lambda t: (
            torch.transpose(t[0, 0], -2, -1).unsqueeze(0).unsqueeze(0)
        ),  # a state dict's weight, as a model reads it
        lambda t: t[0].transpose(-2, -1),  # leading dims that merge, not all 1
        lambda t: t.permute(1, 0, 3, 2),  # leading dims that do not merge
        lambda t: t[0, 0].t(),  # a matrix
    ],
    ids=["weight-1x1", "leading-3", "permuted", "matrix"],
)
@pytest.mark.parametrize("dtype", [ttnn.bfloat16, ttnn.bfloat8_b])
def test_a_strided_bfloat16_view_converts_as_its_contiguous_copy(view, dtype):
    """A non-contiguous bfloat16 tensor (copied a matrix at a time when its leading dims merge)
    converts to what its contiguous copy converts to, and gives its own values back (bfloat16: exactly)."""
    source = torch.randn(2, 3, 64, 96, generator=torch.Generator().manual_seed(7)).to(torch.bfloat16)
    strided = view(source)
    assert not strided.is_contiguous()
    got = ttnn.from_torch(strided, dtype=dtype, layout=ttnn.TILE_LAYOUT)
    want = ttnn.from_torch(strided.contiguous(), dtype=dtype, layout=ttnn.TILE_LAYOUT)
    assert np.asarray(ttnn.to_numpy(got)).tobytes() == np.asarray(ttnn.to_numpy(want)).tobytes()
    if dtype is ttnn.bfloat16:
        assert torch.equal(ttnn.to_torch(got).view(torch.int16), strided.contiguous().view(torch.int16))


def test_from_torch_of_none_is_none():
    """ttnn's from_torch gives None for None (a model's optional weights pass through it); the
    mapper and device arguments are not looked at."""
    assert ttnn.from_torch(None) is None
    assert ttnn.from_torch(None, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT) is None
