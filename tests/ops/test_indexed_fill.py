"""``ttnn.indexed_fill`` (tt-metal 2026-06's ``tests/ttnn/unit_tests/operations/data_movement``):
``input_tensor_a`` with the slices that ``batch_id`` names along ``dim`` replaced by
``input_tensor_b``'s, the last id naming a slice winning and ids naming none ignored (ttnn's reader
scans every id for each slice).  Values move unchanged, so they are compared exactly, per device on
a mesh whose devices hold different ids; bad operands are refused before anything is allocated.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import meshnn as ttnn
from meshnn.errors import MeshnnTypeError, MeshnnValueError

from .reference import mesh_fixtures

meshes, mesh = mesh_fixtures([(1, 1), (2, 4)])


def bf16(rng, shape):
    return torch.from_numpy(rng.standard_normal(shape).astype(np.float32)).bfloat16().float().numpy()


def put(mesh, values, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, shard=False):
    mapper = ttnn.ShardTensorToMesh(mesh, dim=0) if shard else ttnn.ReplicateTensorToMesh(mesh)
    return ttnn.from_torch(torch.from_numpy(values), dtype=dtype, layout=layout, device=mesh, mesh_mapper=mapper)


def expected(a, b, ids, axis):
    out = a.copy()
    for k, j in enumerate(ids):
        if 0 <= j < a.shape[axis]:
            np.moveaxis(out, axis, 0)[j] = np.moveaxis(b, axis, 0)[k]
    return out


@pytest.mark.parametrize("layout", [ttnn.TILE_LAYOUT, ttnn.ROW_MAJOR_LAYOUT], ids=["tile", "row_major"])
@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_the_named_slices_are_replaced_on_every_device_by_its_own_ids(mesh, layout, dim):
    rng = np.random.default_rng(7)
    n = mesh.get_num_devices()
    shape_a = [5, 3, 40, 48]
    axis = dim % 4
    shape_b = list(shape_a)
    shape_b[axis] = 4
    a, b = bf16(rng, shape_a), bf16(rng, shape_b)
    # device d's ids: a repeated id (the later wins), and one naming no slice (ignored)
    ids = np.stack([np.array([1, (2 + d) % shape_a[axis], 1, shape_a[axis] + 3]) for d in range(n)])
    id_tensor = put(mesh, ids.reshape(n, 1, 1, 4).astype(np.int32), ttnn.uint32, ttnn.ROW_MAJOR_LAYOUT, shard=True)
    out = ttnn.indexed_fill(id_tensor, put(mesh, a, layout=layout), put(mesh, b, layout=layout), dim=dim)
    assert out.layout == layout and list(out.shape) == shape_a and out.dtype == ttnn.bfloat16
    for d, shard in enumerate(ttnn.get_device_tensors(out)):
        np.testing.assert_array_equal(ttnn.to_torch(shard).float().numpy(), expected(a, b, ids[d], axis))


def test_int32_ids_and_a_memory_config(mesh):
    rng = np.random.default_rng(8)
    a, b = bf16(rng, (4, 1, 32, 32)), bf16(rng, (2, 1, 32, 32))
    ids = put(mesh, np.array([[[[3, 0]]]], np.int32), ttnn.int32, ttnn.ROW_MAJOR_LAYOUT)
    out = ttnn.indexed_fill(ids, put(mesh, a), put(mesh, b), memory_config=ttnn.L1_MEMORY_CONFIG)
    assert out.memory_config() == ttnn.L1_MEMORY_CONFIG
    for shard in ttnn.get_device_tensors(out):
        np.testing.assert_array_equal(ttnn.to_torch(shard).float().numpy(), expected(a, b, [3, 0], 0))


def _bad_calls(mesh):
    rng = np.random.default_rng(9)
    a, b = put(mesh, bf16(rng, (4, 1, 32, 32))), put(mesh, bf16(rng, (2, 1, 32, 32)))
    ids = put(mesh, np.array([[[[1, 2]]]], np.int32), ttnn.uint32, ttnn.ROW_MAJOR_LAYOUT)
    return {
        "same layout": (ids, a, put(mesh, bf16(rng, (2, 1, 32, 32)), layout=ttnn.ROW_MAJOR_LAYOUT)),
        "rank-4": (ids, put(mesh, bf16(rng, (4, 32, 32))), put(mesh, bf16(rng, (2, 32, 32)))),
        "must match on every dim": (ids, a, put(mesh, bf16(rng, (2, 1, 32, 64)))),
        "number of batch_ids": (
            put(mesh, np.array([[[[1, 2, 3]]]], np.int32), ttnn.uint32, ttnn.ROW_MAJOR_LAYOUT),
            a,
            b,
        ),
        "ROW MAJOR": (  # (a TILE id tensor's padded last dim is 32: b brings 32 slices)
            put(mesh, np.zeros((1, 1, 1, 32), np.int32), ttnn.uint32),
            a,
            put(mesh, bf16(rng, (32, 1, 32, 32))),
        ),
        "UINT32 or INT32": (
            put(mesh, np.array([[[[1.0, 2.0]]]], np.float32), ttnn.float32, ttnn.ROW_MAJOR_LAYOUT),
            a,
            b,
        ),
        "dtype": (ids, a, put(mesh, bf16(rng, (2, 1, 32, 32)), dtype=ttnn.float32)),
    }


@pytest.mark.parametrize(
    "case",
    [
        "same layout",
        "rank-4",
        "must match on every dim",
        "number of batch_ids",
        "ROW MAJOR",
        "UINT32 or INT32",
        "dtype",
    ],
)
def test_bad_operands_are_refused_before_anything_is_allocated(mesh, case):
    ids, a, b = _bad_calls(mesh)[case]
    live = [(buffer.buffer_type(), buffer.address()) for buffer in mesh.live_buffers()]
    with pytest.raises((MeshnnValueError, MeshnnTypeError), match=case):
        ttnn.indexed_fill(ids, a, b)
    assert [(buffer.buffer_type(), buffer.address()) for buffer in mesh.live_buffers()] == live


def test_a_dim_out_of_range_is_refused(mesh):
    calls = _bad_calls(mesh)
    ids, a, b = calls["dtype"][0], *calls["number of batch_ids"][1:]
    with pytest.raises(MeshnnValueError, match="out of range"):
        ttnn.indexed_fill(ids, a, b, dim=4)
