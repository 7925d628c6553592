"""``ttnn.view``: a new logical shape over the same bytes (the same MeshBuffer, no op launched),
where ttnn.reshape would move data it is refused."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import meshnn as ttnn


def test_a_view_shares_the_buffer_and_the_values(open_mesh, rng):
    mesh = open_mesh((1, 2))
    x = rng.standard_normal((2, 4, 64, 32)).astype(np.float32)
    t = ttnn.from_torch(
        torch.from_numpy(x), layout=ttnn.TILE_LAYOUT, device=mesh, mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0)
    )
    v = ttnn.view(t, [2, 128, 32])
    assert v.buffer_address() == t.buffer_address() and tuple(v.shape) == (2, 128, 32)
    got = ttnn.to_torch(v, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0)).numpy()
    assert np.array_equal(got, x.reshape(4, 128, 32))
    rm = ttnn.from_torch(torch.from_numpy(x[:1]), device=mesh)
    assert tuple(ttnn.view(rm, [-1]).shape) == (x[:1].size,)
    with pytest.raises(ttnn.MeshnnValueError, match=r"ttnn\.reshape"):
        ttnn.view(t, [1, 4 * 64 * 32])
