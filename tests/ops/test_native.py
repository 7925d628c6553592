"""torch's native bfloat16 kernels give exactly the bytes of meshnn's numpy path."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import meshnn as ttnn
from meshnn.formats.bfloat16 import BFLOAT16_NAN
from meshnn.ops.eltwise import binary, native

# bfloat16 bit patterns: zeros, subnormals, the smallest and largest normals, a tie's neighbours,
# infinities and NaNs of both signs; every op meets every pattern (the rest of the tile: random)
SPECIAL = np.array(
    [0x0000, 0x8000, 0x0001, 0x807F, 0x0080, 0x7F7F, 0xFF7F, 0x3F80, 0x3F81, 0xBF80, 0x7F80, 0xFF80, 0x7FC0,
     0xFFC0, 0x7F81, 0x4000],
    np.uint16,
)  # fmt: skip


def bf16_tensor(mesh, bits: np.ndarray) -> ttnn.Tensor:
    values = torch.from_numpy(bits.view(np.int16).copy()).view(torch.bfloat16)
    return ttnn.from_torch(
        values, ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh, mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0)
    )


def stored_bits(tensor: ttnn.Tensor) -> np.ndarray:
    return tensor.storage.mesh_buffer.slab().view(np.uint16).copy()


@pytest.mark.parametrize("op", ["add", "subtract", "multiply"])
def test_native_kernel_is_checked_and_used(op):
    kernel = native.bfloat16_binary(op)
    assert kernel is not None, "torch is imported and rounds as meshnn does: its kernel must be used"
    assert native._checked[op] is not None


def test_ops_without_a_native_kernel_get_none():
    assert native.bfloat16_binary("divide") is None
    assert native.bfloat16_binary("pow") is None


@pytest.mark.parametrize("op", ["add", "subtract", "multiply"])
def test_native_bytes_equal_the_numpy_path(open_mesh, rng, monkeypatch, op):
    mesh = open_mesh((2, 4))
    a_bits = rng.integers(0, 1 << 16, (8, 32, 64), dtype=np.uint32).astype(np.uint16)
    b_bits = rng.integers(0, 1 << 16, (8, 32, 64), dtype=np.uint32).astype(np.uint16)
    n = len(SPECIAL)
    a_bits[:, :4, :] = np.repeat(SPECIAL, n).reshape(4, 64)  # every special against every special
    b_bits[:, :4, :] = np.tile(SPECIAL, n).reshape(4, 64)
    a, b = bf16_tensor(mesh, a_bits), bf16_tensor(mesh, b_bits)
    calls = []
    real = native.bfloat16_binary(op)
    monkeypatch.setattr(binary, "bfloat16_binary", lambda name: lambda *rows: (calls.append(name), real(*rows)))
    fast = stored_bits(getattr(ttnn, op)(a, b))
    assert calls == [op], "the native kernel was not used"
    monkeypatch.setattr(binary, "bfloat16_binary", lambda name: None)
    slow = stored_bits(getattr(ttnn, op)(a, b))
    np.testing.assert_array_equal(fast, slow)
    nan = (slow & 0x7FFF) > 0x7F80
    assert nan.any() and np.all(fast[nan] == BFLOAT16_NAN), "NaNs must be ttnn's one NaN"


def test_broadcast_operands_take_the_numpy_path(open_mesh, rng, monkeypatch):
    mesh = open_mesh((1, 2))
    calls = []
    monkeypatch.setattr(binary, "bfloat16_binary", lambda name: lambda *rows: calls.append(name))
    x = rng.standard_normal((2, 32, 64)).astype(np.float32)
    y = rng.standard_normal((1, 64)).astype(np.float32)
    a = ttnn.from_torch(torch.from_numpy(x), ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh,
                        mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0))  # fmt: skip
    b = ttnn.from_torch(torch.from_numpy(y), ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh)
    out = ttnn.to_torch(ttnn.add(a, b), mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0))
    assert calls == []
    want = (torch.from_numpy(x).bfloat16().float() + torch.from_numpy(y).bfloat16().float()).bfloat16()
    assert torch.equal(out.bfloat16(), want.reshape(out.shape))


def test_a_torch_that_rounds_differently_is_not_used(monkeypatch):
    class Truncating:  # a stand-in for a torch whose add rounds toward zero
        bfloat16 = torch.bfloat16

        @staticmethod
        def from_numpy(array):
            return torch.from_numpy(array)

        @staticmethod
        def add(x, y, out):
            wide = (x.float() + y.float()).view(torch.int32) >> 16
            out.view(torch.int16).copy_(wide.to(torch.int16))

    monkeypatch.setattr(native, "_checked", {})
    assert native._check(Truncating, "add") is None
