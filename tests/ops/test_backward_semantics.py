"""What the backward ops do beyond the derivative: ttnn's values where the derivative is not finite,
its overloads, ``are_required_outputs`` and preallocated outputs (written in place, nothing else
left allocated), the refusals ttnn makes (a negative ``pow_bw`` exponent, an unknown rounding
mode...) and the registry entries (kind, golden function, perf family), on one device and on a
2x4 mesh."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
import torch

import meshnn as ttnn
from meshnn.ops import registry
from meshnn.ops.registry import OpKind

from .reference import BF16, F32, TILE

NAN, INF = np.nan, np.inf


@pytest.fixture(scope="module")
def device():
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 1), system="n150")
    yield mesh
    mesh.close()


def on(device, values, dtype=F32, **kwargs) -> ttnn.Tensor:
    data = torch.tensor(np.asarray(values, np.float32))
    return ttnn.from_torch(data, dtype=dtype, layout=TILE, device=device, **kwargs)


def values(tensor: ttnn.Tensor) -> np.ndarray:
    return ttnn.to_numpy(tensor).astype(np.float64)


def test_log_bw_at_zero_is_nan_or_an_infinity_of_the_gradients_sign(device):
    out = ttnn.log_bw(on(device, [[0.0, 0.0, 0.0, 2.0]]), on(device, [[0.0, 0.0, 0.0, 0.5]]))
    got = ttnn.log_bw(on(device, [[0.0, 3.0, -3.0, 2.0]]), on(device, [[0.0, 0.0, 0.0, 0.5]]))[0]
    np.testing.assert_array_equal(values(got), [[NAN, INF, -INF, 4.0]])
    assert values(out[0])[0, 3] == 4.0


def test_sqrt_and_rsqrt_bw_outside_the_domain(device):
    g, x = on(device, [[1.0, -1.0, 0.0, 1.0, 2.0]]), on(device, [[0.0, 0.0, 0.0, -4.0, 4.0]])
    np.testing.assert_array_equal(values(ttnn.sqrt_bw(g, x)[0]), [[INF, -INF, NAN, NAN, 0.5]])
    np.testing.assert_array_equal(values(ttnn.rsqrt_bw(g, x)[0]), [[INF, INF, NAN, NAN, -0.125]])


def test_reciprocal_and_div_bw_at_a_zero_divisor(device):
    g, x = on(device, [[1.0, -1.0, 0.0, 2.0]]), on(device, [[0.0, 0.0, 0.0, 2.0]])
    np.testing.assert_array_equal(values(ttnn.reciprocal_bw(g, x)[0]), [[-INF, INF, NAN, -0.5]])
    a = on(device, [[3.0, 3.0, 3.0, 4.0]])
    da, db = ttnn.div_bw(g, a, x)
    np.testing.assert_array_equal(values(da), [[INF, -INF, NAN, 1.0]])
    np.testing.assert_array_equal(values(db), [[-INF, INF, NAN, -2.0]])
    np.testing.assert_array_equal(values(ttnn.div_bw(g, a, 0.0)[0]), [[INF, -INF, NAN, INF]])


def test_pow_bw_refuses_a_negative_exponent_and_is_infinite_at_nonpositive_inputs(device):
    g, x = on(device, [[1.0, 1.0, 1.0]]), on(device, [[-2.0, 0.0, 2.0]])
    with pytest.raises(ttnn.MeshnnValueError, match=r"exponent >= 0\.0") as caught:
        ttnn.pow_bw(g, x, -1.0)
    assert isinstance(caught.value, RuntimeError)  # ttnn raises a RuntimeError
    np.testing.assert_array_equal(values(ttnn.pow_bw(g, x, 2.0)[0]), [[INF, INF, 4.0]])
    np.testing.assert_array_equal(values(ttnn.pow_bw(g, x, 0.0)[0]), [[0.0, 0.0, 0.0]])


def test_acosh_bw_gives_the_devices_nan_and_infinity(device):
    g, x = on(device, [[1.0, -1.0, 1.0, 0.0]]), on(device, [[1.0, 1.0, 0.5, 1.0]])
    np.testing.assert_array_equal(
        values(ttnn.acosh_bw(g, x)[0]), np.float32([[1.7014e38, -1.7014e38, 7.004e19, 7.004e19]])
    )


def test_rdiv_bw_modes(device):
    g, x = on(device, [[1.0, 1.0]]), on(device, [[2.0, 0.0]])
    np.testing.assert_array_equal(values(ttnn.rdiv_bw(g, x, 4.0)[0]), [[-1.0, -INF]])
    np.testing.assert_array_equal(values(ttnn.rdiv_bw(g, x, 4.0, round_mode="floor")[0]), [[0.0, 0.0]])
    with pytest.raises(ttnn.MeshnnValueError, match="round_mode"):
        ttnn.rdiv_bw(g, x, 4.0, round_mode="ceil")


def test_clamp_bw_needs_a_bound_and_takes_tensor_bounds(device):
    g, x = on(device, [[1.0, 1.0, 1.0]]), on(device, [[-2.0, 0.0, 2.0]])
    with pytest.raises(ttnn.MeshnnValueError, match="min"):
        ttnn.clamp_bw(g, x)
    np.testing.assert_array_equal(values(ttnn.clamp_bw(g, x, -1.0, 1.0)[0]), [[0.0, 1.0, 0.0]])
    np.testing.assert_array_equal(values(ttnn.clip_bw(g, x, None, 1.0)[0]), [[1.0, 1.0, 0.0]])
    low = on(device, [[-3.0, 1.0, 1.0]])
    np.testing.assert_array_equal(values(ttnn.clamp_bw(g, x, low)[0]), [[1.0, 0.0, 1.0]])


def test_overloads_dispatch_on_argument_kinds(device):
    g, x, y = on(device, [[2.0]]), on(device, [[3.0]]), on(device, [[5.0]])
    assert [values(t)[0, 0] for t in ttnn.mul_bw(g, x, y)] == [10.0, 6.0]
    assert [values(t)[0, 0] for t in ttnn.mul_bw(g, x, 4.0)] == [8.0]
    with pytest.raises(ttnn.MeshnnTypeError, match="scalar"):
        ttnn.mul_bw(g, x, "4")
    with pytest.raises(ttnn.MeshnnTypeError, match="memory_config"):
        ttnn.exp_bw(g, x, memory_config="L1")
    with pytest.raises(ttnn.MeshnnTypeError, match="nonsense"):
        ttnn.exp_bw(g, x, nonsense=1)
    assert list(inspect.signature(ttnn.pow_bw).parameters) == [
        "grad_tensor",
        "input_tensor",
        "exponent",
        "memory_config",
        "input_grad",
        "queue_id",
    ]


def test_required_outputs_and_preallocated_gradients(device):
    g, x, y = on(device, [[2.0, 1.0]]), on(device, [[3.0, 4.0]]), on(device, [[5.0, 6.0]])
    into = on(device, [[0.0, 0.0]])
    live = len(device.live_buffers())
    out = ttnn.mul_bw(g, x, y, are_required_outputs=[True, False], input_grad=into, queue_id=0)
    assert out[0] is into and out[1] is None
    assert len(device.live_buffers()) == live, "the op left a buffer allocated"
    np.testing.assert_array_equal(values(into), [[10.0, 6.0]])
    with pytest.raises(ttnn.MeshnnValueError, match="are_required_outputs"):
        ttnn.add_bw(g, x, y, are_required_outputs=[False, False])
    wrong = on(device, [[0.0, 0.0, 0.0]])
    live = len(device.live_buffers())
    with pytest.raises(ttnn.MeshnnValueError, match="preallocated"):
        ttnn.add_bw(g, x, y, input_grad=wrong)
    assert len(device.live_buffers()) == live


def test_refused_inputs_name_the_argument(device):
    g, x = on(device, [[1.0]]), on(device, [[1.0]])
    dead = on(device, [[1.0]])
    ttnn.deallocate(dead)
    with pytest.raises(ttnn.DeallocatedError, match="input_tensor"):
        ttnn.exp_bw(g, dead)
    with pytest.raises(ttnn.MeshnnValueError, match="approximate"):
        ttnn.gelu_bw(g, x, approximate="fast")
    with pytest.raises(ttnn.MeshnnValueError, match="BFLOAT8_B"):
        ttnn.logaddexp_bw(
            on(device, np.ones((32, 32)), ttnn.bfloat8_b), on(device, np.ones((32, 32))), on(device, np.ones((32, 32)))
        )


def test_memory_config_places_the_gradient(device):
    g, x = on(device, [[1.0]]), on(device, [[0.5]])
    out = ttnn.exp_bw(g, x, memory_config=ttnn.L1_MEMORY_CONFIG)[0]
    assert out.memory_config().buffer_type == ttnn.BufferType.L1


def test_on_a_sharded_2x4_mesh_every_device_computes_its_shard(rng):
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(2, 4), system="t3k")
    try:
        x = rng.uniform(-2, 2, (8, 1, 32, 32)).astype(np.float32)
        g = rng.uniform(-2, 2, (8, 1, 32, 32)).astype(np.float32)
        put = lambda v: ttnn.from_torch(  # noqa: E731
            torch.from_numpy(v), dtype=F32, layout=TILE, device=mesh, mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0)
        )
        out = ttnn.sin_bw(put(g), put(x))[0]
        got = ttnn.to_numpy(out, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0))
        np.testing.assert_allclose(got, g * np.cos(x), rtol=2**-20, atol=2**-22)
    finally:
        mesh.close()


def test_registry_entries_of_the_backward_ops():
    names = [e.name for e in registry.entries() if e.short_name.endswith("_bw")]
    assert len(names) >= 100, len(names)
    for name in names:
        entry = registry.lookup(name)
        assert entry.kind in (OpKind.BACKWARD, OpKind.COMPLEX), name
        if name not in ("prod_bw", "embedding_bw"):  # ttnn attaches no golden to these two
            assert callable(ttnn.get_golden_function(entry.function)), name
    assert registry.lookup("neg_bw").modelled and not registry.lookup("mul_bw").modelled
    assert registry.lookup("embedding_bw").device_operation_name == "EmbeddingBackward"
    assert registry.lookup("polar_bw").kind is OpKind.COMPLEX


def test_gradient_dtype_follows_the_incoming_gradient(device):
    g = on(device, np.ones((32, 32)), BF16)
    x = on(device, np.full((32, 32), 0.5))
    out = ttnn.exp_bw(g, x)[0]
    assert out.dtype == BF16 and out.layout == TILE


def test_what_ttnns_backward_tests_read_with(device):
    """ttnn's backward tests wrap a gradient in ``ttnn.Tensor(tensor)`` (another handle on the same
    storage) and read bfloat8_b gradients back with ``.cpu().to(ROW_MAJOR_LAYOUT)`` (ttnn warns and
    leaves a host block-float tensor in tiles)."""
    t = on(device, np.ones((32, 32)), ttnn.bfloat8_b)
    handle = ttnn.Tensor(t)
    assert handle.storage is t.storage and handle.spec == t.spec
    with pytest.warns(UserWarning, match="not executed"):
        host = handle.cpu().to(ttnn.ROW_MAJOR_LAYOUT)
    assert host.layout == TILE
    np.testing.assert_array_equal(ttnn.to_numpy(host), np.ones((32, 32)))
    with pytest.raises(ttnn.MeshnnTypeError, match="no other argument"):
        ttnn.Tensor(t, ttnn.float32)
    ttnn.deallocate(t)
    assert not handle.is_allocated()
