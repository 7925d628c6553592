"""``ttnn._ttnn.core.tilize_and_pack_bfp8_b`` / ``_bfp4_b``: the bytes of a matrix as block-float
tiles are exactly the host bytes of a TILE bfloat8_b / bfloat4_b tensor of that tile (whose 32x32
bytes the golden data pins), for 32x32 and 16x32 tiles; sizes that are not whole tiles, too little
data and other dtypes are refused."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import meshnn as ttnn


def host_bytes(t):
    return np.asarray(next(iter(t.storage.buffer.local_shards().values())).data).tobytes()


@pytest.mark.parametrize("dtype, name", [(ttnn.bfloat8_b, "bfp8_b"), (ttnn.bfloat4_b, "bfp4_b")])
@pytest.mark.parametrize("tile_h", [32, 16])
def test_the_bytes_are_a_tile_tensors(dtype, name, tile_h):
    x = np.random.default_rng(tile_h).standard_normal((64, 96)).astype(np.float32)
    x[0, :32] = 0.0  # a zero block among them
    pack = getattr(ttnn._ttnn.core, f"tilize_and_pack_{name}")
    tensor = ttnn.from_torch(torch.from_numpy(x), dtype=dtype, layout=ttnn.TILE_LAYOUT, tile=ttnn.Tile((tile_h, 32)))
    assert pack(x, 64, 96, tile_h, 32) == host_bytes(tensor)
    assert pack(x.reshape(-1), 64, 96, tile_h=tile_h) == host_bytes(tensor)  # read row-major, whatever its shape


def test_refusals():
    pack = ttnn._ttnn.core.tilize_and_pack_bfp8_b
    x = np.zeros((32, 64), np.float32)
    with pytest.raises(ttnn.MeshnnValueError, match="whole 32 x 32 tiles"):
        pack(x, 32, 48)
    with pytest.raises(ttnn.MeshnnValueError, match="fewer than H x W"):
        pack(x, 64, 64)
    with pytest.raises(ttnn.MeshnnTypeError, match="float32"):
        pack(x.astype(np.float64), 32, 64)
    with pytest.raises(ttnn.MeshnnTypeError, match="tile_h"):
        pack(x, 32, 64, 0)


def test_ttnns_binary_module_path_answers_them_under_the_alias():
    from meshnn.compat import ttnn_modules

    core = ttnn_modules._own_namespace("_ttnn.core")
    assert core.tilize_and_pack_bfp8_b is ttnn._ttnn.core.tilize_and_pack_bfp8_b
    assert core.tilize_and_pack_bfp4_b is ttnn._ttnn.core.tilize_and_pack_bfp4_b
