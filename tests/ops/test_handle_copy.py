"""An op that returns its input in ttnn (a slice of everything, ``to_memory_config`` to the tensor's
own config) hands Python another handle on the same device memory: ``deallocate(force=False)`` of
one handle keeps the memory while the other lives (tt-metal's ``Tensor::deallocate_impl``: a
shared tensor is freed only when forced), ``force=True`` frees it under both."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import meshnn as ttnn

from .reference import mesh_fixtures

meshes, mesh = mesh_fixtures([(1, 1), (1, 8)])


def put(mesh, values, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT):
    return ttnn.from_torch(
        torch.from_numpy(values), dtype=dtype, layout=layout, device=mesh, mesh_mapper=ttnn.ReplicateTensorToMesh(mesh)
    )


def values(tensor) -> np.ndarray:
    return ttnn.to_numpy(ttnn.get_device_tensors(tensor)[0])


SAME_MEMORY = {
    "slice of everything": lambda t: t[:, : t.shape[1]],
    "ttnn.slice of everything": lambda t: ttnn.slice(t, [0, 0], list(t.shape)),
    "to_memory_config, same config": lambda t: ttnn.to_memory_config(t, t.memory_config()),
}


@pytest.mark.parametrize("make", SAME_MEMORY.values(), ids=SAME_MEMORY.keys())
@pytest.mark.parametrize("layout", [ttnn.ROW_MAJOR_LAYOUT, ttnn.TILE_LAYOUT])
def test_a_soft_deallocate_of_one_handle_keeps_the_others_memory(mesh, make, layout):
    x = np.arange(12 * 40, dtype=np.int32).reshape(12, 40)
    t = put(mesh, x, ttnn.int32, layout)
    other = make(t)
    assert other is not t and other.buffer_address() == t.buffer_address()
    ttnn.deallocate(other, force=False)
    assert t.is_allocated() and other.is_allocated()
    np.testing.assert_array_equal(values(t), x)
    ttnn.deallocate(other)  # ttnn.deallocate's default: force=True frees the shared memory
    assert not t.is_allocated()
    with pytest.raises(ttnn.DeallocatedError):
        ttnn.to_torch(t)


def test_a_soft_deallocate_of_the_last_handle_frees(mesh):
    t = put(mesh, np.ones((32, 32), np.float32))
    other = ttnn.to_memory_config(t, t.memory_config())
    del t
    other.deallocate()  # the method's force=False: no other live handle, so it frees
    assert not other.is_allocated()
