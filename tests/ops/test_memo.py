"""The operand memo reuses decoded values only while the bytes are the same, within its bound."""

from __future__ import annotations

import numpy as np
import torch

import meshnn as ttnn
from meshnn.ops import memo
from meshnn.ops.execution import logical_values
from meshnn.tensor.spec import TensorSpec

SPEC = TensorSpec((512, 1024), ttnn.bfloat16, ttnn.TILE_LAYOUT)  # 1 MiB per device


def counting(calls: list):
    def decode(rows, spec):
        calls.append(spec)
        return logical_values(rows, spec)

    return decode


def rows_of(rng, devices=2):
    return rng.integers(0, 256, (devices, SPEC.compute_packed_buffer_size_bytes()), dtype=np.uint8)


def test_same_bytes_decode_once_and_changed_bytes_decode_again(rng):
    store, calls = memo.OperandMemo(64 << 20), []
    rows = rows_of(rng)
    first = store.values(rows, SPEC, counting(calls))
    assert store.values(rows, SPEC, counting(calls)) is first and len(calls) == 1
    assert not first.flags.writeable, "a kernel must not change values another call reuses"
    rows[1, 100] ^= 0xFF  # one byte of one device
    changed = store.values(rows, SPEC, counting(calls))
    assert len(calls) == 2 and changed is not first
    np.testing.assert_array_equal(changed, logical_values(rows, SPEC))


def test_bound_evicts_least_recently_used(rng):
    one = SPEC.compute_packed_buffer_size_bytes() * 2 * 3  # saved bytes + float32 values, per entry
    store, calls = memo.OperandMemo(2 * one), []
    a, b, c = rows_of(rng), rows_of(rng), rows_of(rng)
    for rows in (a, b, a, c):  # c evicts b, the least recently used
        store.values(rows, SPEC, counting(calls))
    assert store.nbytes <= store.limit and len(calls) == 3
    store.values(a, SPEC, counting(calls))
    assert len(calls) == 3, "a was used more recently than b and must still be there"
    store.values(b, SPEC, counting(calls))
    assert len(calls) == 4


def test_small_operands_and_a_zero_limit_bypass_the_memo(rng):
    calls = []
    small = SPEC.__class__((32, 32), ttnn.bfloat16, ttnn.TILE_LAYOUT)
    rows = rng.integers(0, 256, (2, small.compute_packed_buffer_size_bytes()), dtype=np.uint8)
    store = memo.OperandMemo(64 << 20)
    store.values(rows, small, counting(calls))
    store.values(rows, small, counting(calls))
    off = memo.OperandMemo(0)
    big = rows_of(rng)
    off.values(big, SPEC, counting(calls))
    off.values(big, SPEC, counting(calls))
    assert len(calls) == 4 and store.nbytes == 0 and off.nbytes == 0


def test_linear_sees_a_weight_written_in_place(open_mesh, rng):
    mesh = open_mesh((1, 2))
    x = torch.from_numpy(rng.standard_normal((32, 1024)).astype(np.float32))
    w1, w2 = (torch.from_numpy(rng.standard_normal((1024, 1024)).astype(np.float32)) for _ in range(2))
    put = dict(dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh)
    tx = ttnn.from_torch(x, **put)
    tw = ttnn.from_torch(w1, mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=1), **put)
    composer = ttnn.ConcatMeshToTensor(mesh, dim=1)
    before = memo.OPERAND_MEMO.hits
    first = ttnn.to_torch(ttnn.linear(tx, tw), mesh_composer=composer)
    again = ttnn.to_torch(ttnn.linear(tx, tw), mesh_composer=composer)
    assert torch.equal(first, again) and memo.OPERAND_MEMO.hits > before
    host = ttnn.from_torch(
        w2, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=1)
    )
    ttnn.copy_host_to_device_tensor(host, tw)
    updated = ttnn.to_torch(ttnn.linear(tx, tw), mesh_composer=composer)
    want = (x.bfloat16().float() @ w2.bfloat16().float()).bfloat16().float()
    assert not torch.equal(updated, first)
    # the same rounding as the first product: bfloat16 inputs, float32 sums, one bfloat16 rounding
    assert torch.allclose(updated.float(), want, rtol=1 / 128, atol=1e-2)
