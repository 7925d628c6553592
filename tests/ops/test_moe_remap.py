"""``ttnn.moe_expert_token_remap`` against a loop over tokens and experts written from ttnn's
description: each device's local experts (mapping column of its row-major index, ascending), the
token's score moved byte for byte where the token selected that expert, 0 elsewhere; the chunked
activity per ``reduction_size`` tokens, ``B*S // reduction_size`` rows (ttnn's integer quotient)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import meshnn as ttnn

RM = ttnn.ROW_MAJOR_LAYOUT


@pytest.fixture(scope="module")
def mesh():
    m = ttnn.open_mesh_device(ttnn.MeshShape(2, 4), system="t3k")
    yield m
    m.close()


def routing(devices: int, local: int, batch: int, seq: int, k: int, seed: int):
    """A mapping of experts to devices (shuffled), every device's top-k expert ids and scores."""
    rng = np.random.default_rng(seed)
    experts = devices * local
    owner = rng.permutation(np.repeat(np.arange(devices), local))
    mapping = np.zeros((1, 1, experts, devices), dtype=np.int64)
    mapping[0, 0, np.arange(experts), owner] = 1
    chosen = np.stack([rng.choice(experts, size=k, replace=False) for _ in range(devices * batch * seq)])
    chosen = chosen.reshape(devices, batch, seq, k)
    scores = rng.uniform(0.1, 1.0, size=(devices, batch, seq, experts)).astype(np.float32)
    return mapping, chosen, scores


def reference(mapping, chosen, scores, device: int, size: int):
    """One device's two outputs, by loops."""
    experts = np.flatnonzero(mapping[0, 0, :, device])
    _, batch, seq, _ = scores.shape
    out = np.zeros((1, batch, seq, len(experts)), dtype=scores.dtype)
    active = np.zeros((batch * seq, len(experts)), dtype=bool)
    for b in range(batch):
        for s in range(seq):
            for j, e in enumerate(experts):
                if e in chosen[device, b, s]:
                    out[0, b, s, j] = scores[device, b, s, e]
                    active[b * seq + s, j] = True
    chunks = batch * seq // size
    reduced = np.array([active[c * size : (c + 1) * size].any(axis=0) for c in range(chunks)], dtype=np.uint16)
    return out, reduced.reshape(1, 1, chunks, len(experts))


def put(mesh, values, dtype, shard: bool):
    mapper = ttnn.ShardTensorToMesh(mesh, dim=0) if shard else ttnn.ReplicateTensorToMesh(mesh)
    return ttnn.from_torch(torch.from_numpy(values), dtype=dtype, layout=RM, device=mesh, mesh_mapper=mapper)


def per_device(tensor) -> list[np.ndarray]:
    return [ttnn.to_torch(t).float().numpy() for t in ttnn.get_device_tensors(tensor)]


@pytest.mark.parametrize(("batch", "seq", "size"), [(8, 2, 16), (6, 3, 4), (5, 1, 16)])
@pytest.mark.parametrize("dtype", [ttnn.bfloat16, ttnn.float32], ids=str)
def test_remap_matches_the_loops(mesh, batch, seq, size, dtype):
    devices = mesh.get_num_devices()
    mapping, chosen, scores = routing(devices, 2, batch, seq, 3, seed=batch * 10 + seq)
    topk = put(mesh, scores, dtype, shard=True)
    mapped, reduced = ttnn.moe_expert_token_remap(
        topk,
        put(mesh, mapping.astype(np.int32), ttnn.uint16, shard=False),
        put(mesh, chosen.astype(np.int32), ttnn.uint16, shard=True),
        reduction_size=size,
    )
    stored = per_device(topk)  # the scores as the device holds them (bfloat16: rounded once)
    assert list(mapped.shape) == [1, batch, seq, 2] and mapped.dtype == dtype
    assert list(reduced.shape) == [1, 1, batch * seq // size, 2] and reduced.dtype == ttnn.uint16
    for d, (got, act) in enumerate(zip(per_device(mapped), per_device(reduced), strict=True)):
        want, want_active = reference(mapping, chosen, np.stack([s[0] for s in stored]), d, size)
        assert np.array_equal(got.astype(np.float32), want.astype(np.float32))
        assert np.array_equal(act.astype(np.uint16), want_active)


def test_preallocated_outputs_are_written_in_place(mesh):
    devices = mesh.get_num_devices()
    mapping, chosen, scores = routing(devices, 2, 4, 4, 2, seed=3)
    args = (
        put(mesh, scores, ttnn.bfloat16, shard=True),
        put(mesh, mapping.astype(np.int32), ttnn.uint16, shard=False),
        put(mesh, chosen.astype(np.int32), ttnn.uint16, shard=True),
    )
    first = ttnn.moe_expert_token_remap(*args)
    outs = [ttnn.allocate_tensor_on_device(t.spec, mesh) for t in first]
    again = ttnn.moe_expert_token_remap(
        *args, optional_output_mapping_tensor=outs[0], optional_output_reduced_tensor=outs[1]
    )
    assert again[0] is outs[0] and again[1] is outs[1]
    for a, b in zip(first, again, strict=True):
        assert all(np.array_equal(x, y) for x, y in zip(per_device(a), per_device(b), strict=True))
