"""Matrix products with bfloat16 sums on a CPU whose torch has no fast bfloat16 kernels (x86 with
AVX2 alone: ATen's scalar fallback, about 200x its float32 product): there they are float32
products of the same values rounded once to bfloat16 (:func:`meshnn.ops.operands.bf16_products`).
Each test runs both routes, whatever this machine's CPU, and compares them on sums that float32
holds exactly (so any summation order gives the same bits), and against a rounding by hand."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
import torch

import meshnn as ttnn
from meshnn.ops import operands


@pytest.fixture(params=[True, False], ids=["bf16 products", "float32 products"])
def route(request, monkeypatch):
    monkeypatch.setitem(operands._FAST, id(torch), request.param)
    return request.param


def exact_operands(rng, m, k, n):
    """Values in quarters from -2 to 2: every partial sum of a row times a column is a multiple
    of 1/16 below 2^9, exact in float32, while a sum needs up to 13 significant bits, more than
    bfloat16's 8: the result's rounding is the one rounding to bfloat16 of the exact sum."""
    a = rng.integers(-8, 9, (1, 1, m, k)).astype(np.float32) / 4
    b = rng.integers(-8, 9, (k, n)).astype(np.float32) / 4
    return a, b


def by_hand(a, b):
    """The exact sums rounded to nearest bfloat16, ties to even (ml_dtypes' cast)."""
    return (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32).astype(ml_dtypes.bfloat16)


@pytest.mark.parametrize("shape", [(1, 1), (1, 4)])
@pytest.mark.parametrize("weights", [ttnn.bfloat16, ttnn.bfloat8_b])
def test_a_bfloat16_output_is_the_exact_sum_rounded_once(open_mesh, rng, route, shape, weights):
    mesh = open_mesh(shape)
    n = mesh.get_num_devices()
    a, b = exact_operands(rng, 32, 128, 64 * n)
    x = ttnn.from_torch(
        torch.from_numpy(a),
        dtype=ttnn.bfloat16,
        layout=ttnn.TILE_LAYOUT,
        device=mesh,
        mesh_mapper=ttnn.ReplicateTensorToMesh(mesh),
    )
    w = ttnn.from_torch(
        torch.from_numpy(b),
        dtype=weights,
        layout=ttnn.TILE_LAYOUT,
        device=mesh,
        mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=1),
    )
    got = ttnn.to_torch(ttnn.linear(x, w, dtype=ttnn.bfloat16), mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=-1))
    want = by_hand(a, b)  # (quarters are exact in bfloat8_b's blocks too: no value is lost)
    assert np.array_equal(got.float().numpy().view(np.uint32), want.astype(np.float32).view(np.uint32))


def test_a_block_float_output_is_packed_from_the_same_bfloat16_values(open_mesh, rng, monkeypatch):
    mesh = open_mesh((1, 1))
    a, b = exact_operands(rng, 64, 96, 128)
    x = ttnn.from_torch(torch.from_numpy(a), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh)
    w = ttnn.from_torch(torch.from_numpy(b), dtype=ttnn.bfloat8_b, layout=ttnn.TILE_LAYOUT, device=mesh)
    outputs = []
    for fast in (True, False):
        monkeypatch.setitem(operands._FAST, id(torch), fast)
        out = ttnn.matmul(x, w, dtype=ttnn.bfloat8_b)
        outputs.append(np.asarray(ttnn.to_numpy(ttnn.get_device_tensors(out)[0])).tobytes())
    assert outputs[0] == outputs[1]
    packed = ttnn.from_torch(
        torch.from_numpy(by_hand(a, b).astype(np.float32)), dtype=ttnn.bfloat8_b, layout=ttnn.TILE_LAYOUT, device=mesh
    )
    assert outputs[1] == np.asarray(ttnn.to_numpy(ttnn.get_device_tensors(packed)[0])).tobytes()


def test_the_float32_route_is_within_float32_sums_and_one_rounding_of_random_values(open_mesh, rng, monkeypatch):
    monkeypatch.setitem(operands._FAST, id(torch), False)
    mesh = open_mesh((1, 1))
    a = rng.standard_normal((1, 1, 32, 512)).astype(np.float32)
    b = rng.standard_normal((512, 64)).astype(np.float32)
    fmt = dict(dtype=ttnn.bfloat8_b, layout=ttnn.TILE_LAYOUT, device=mesh)
    x, w = (ttnn.from_torch(torch.from_numpy(t), **fmt) for t in (a, b))
    xs, ws = (ttnn.to_torch(t).double().numpy() for t in (x, w))
    want = xs @ ws
    got = ttnn.to_torch(ttnn.matmul(x, w, dtype=ttnn.bfloat16)).double().numpy()
    gamma = 512 * 2.0**-24 * (np.abs(xs) @ np.abs(ws))
    assert (np.abs(got - want) <= gamma + 2.0**-8 * np.abs(want) + 1e-30).all()


def test_a_replay_equals_the_eager_product_on_the_float32_route(open_mesh, rng, monkeypatch):
    monkeypatch.setitem(operands._FAST, id(torch), False)
    mesh = open_mesh((1, 1), trace_region_size=1 << 20)
    x = ttnn.from_torch(
        torch.from_numpy(rng.standard_normal((1, 1, 32, 256)).astype(np.float32)),
        dtype=ttnn.bfloat16,
        layout=ttnn.TILE_LAYOUT,
        device=mesh,
    )
    w = ttnn.from_torch(
        torch.from_numpy(rng.standard_normal((256, 128)).astype(np.float32)),
        dtype=ttnn.bfloat8_b,
        layout=ttnn.TILE_LAYOUT,
        device=mesh,
    )
    eager = ttnn.to_torch(ttnn.linear(x, w, dtype=ttnn.bfloat16))
    trace = ttnn.begin_trace_capture(mesh, cq_id=0)
    out = ttnn.linear(x, w, dtype=ttnn.bfloat16)
    ttnn.end_trace_capture(mesh, trace, cq_id=0)
    ttnn.execute_trace(mesh, trace, cq_id=0, blocking=True)
    assert torch.equal(ttnn.to_torch(out).view(torch.int16), eager.view(torch.int16))
    ttnn.release_trace(mesh, trace)


@pytest.mark.parametrize("setting, expected", [("0", False), ("1", True)])
def test_the_environment_overrides_the_cpu_check(monkeypatch, setting, expected):
    monkeypatch.setenv("MESHNN_BF16_PRODUCTS", setting)
    assert operands._fast_bf16(torch) is expected


def test_without_an_override_torch_s_own_cpu_check_decides(monkeypatch):
    monkeypatch.delenv("MESHNN_BF16_PRODUCTS", raising=False)
    assert operands._fast_bf16(torch) is bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
