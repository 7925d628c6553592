"""``ttnn.experimental.matmul_reduce_scatter_async`` on 1x8 and 2x4 meshes: a row-parallel
projection (input sharded along K, weight along its rows, bias replicated) whose partial products
are summed over the mesh and scattered along dim 3.  Both results are compared with float64 numpy
within the bound of the bfloat16 output (each rounding errs by at most 2^-8 of its value, the
float32 sums by K u of their magnitude), and with ``matmul`` then ``reduce_scatter_minimal_async``
exactly; the persistent output buffer is written in place and returned; the checks of the
hardware-only arguments run before anything is allocated.
"""

from __future__ import annotations

import gc

import numpy as np
import pytest
import torch

import meshnn as ttnn

from .reference import BF16_HALF_ULP, U, mesh_fixtures

SHAPES = [(1, 8), (2, 4)]
meshes, mesh = mesh_fixtures(SHAPES)
OP = ttnn.experimental.matmul_reduce_scatter_async


@pytest.fixture
def rng():
    return np.random.default_rng(35)


def sems(mesh, count=3):
    grid = mesh.compute_with_storage_grid_size()
    cores = ttnn.CoreRangeSet([ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(grid.x - 1, grid.y - 1))])
    return [ttnn.create_global_semaphore(mesh, cores, 0) for _ in range(count)]


def bf16_values(rng, shape):
    """Normal values that bfloat16 holds exactly (the device sees the inputs unrounded)."""
    return torch.from_numpy(rng.standard_normal(shape).astype(np.float32)).bfloat16().float().numpy()


def on(mesh, values, mapper):
    return ttnn.from_torch(
        torch.from_numpy(values), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh, mesh_mapper=mapper
    )


def zeros(mesh, shape):
    return on(mesh, np.zeros(shape, np.float32), ttnn.ReplicateTensorToMesh(mesh))


def problem(mesh, rng, batch=2, m=64, k_per=32, n_per=32):
    """x [batch, 1, m, K] sharded along K, w [1, 1, K, N] along its rows, bias [1, 1, 1, N]
    replicated; N = 2 tiles per device so every device keeps two tiles of the sum."""
    n = mesh.get_num_devices()
    k, width = k_per * n, 2 * n_per * n
    x, w, b = bf16_values(rng, (batch, 1, m, k)), bf16_values(rng, (1, 1, k, width)), bf16_values(rng, (1, 1, 1, width))
    tensors = (
        on(mesh, x, ttnn.ShardTensorToMesh(mesh, dim=3)),
        on(mesh, w, ttnn.ShardTensorToMesh(mesh, dim=2)),
        on(mesh, b, ttnn.ReplicateTensorToMesh(mesh)),
    )
    return (x, w, b), tensors


def partials(x, w, b, n):
    """Each device's exact product in float64 and the bound of its bfloat16 result."""
    xs, ws = np.split(x.astype(np.float64), n, axis=3), np.split(w.astype(np.float64), n, axis=2)
    exact = [xi @ wi + b for xi, wi in zip(xs, ws, strict=True)]
    magnitude = [np.abs(xi) @ np.abs(wi) + np.abs(b) for xi, wi in zip(xs, ws, strict=True)]
    k = xs[0].shape[-1] + 1
    bounds = [BF16_HALF_ULP * np.abs(e) + 2 * k * U * a for e, a in zip(exact, magnitude, strict=True)]
    return exact, bounds


def test_both_results_within_the_bfloat16_bound(mesh, rng):
    n = mesh.get_num_devices()
    (x, w, b), (xt, wt, bt) = problem(mesh, rng)
    out_shape = (x.shape[0], 1, x.shape[2], w.shape[3] // n)
    middle, out = zeros(mesh, (x.shape[0], 1, x.shape[2], w.shape[3])), zeros(mesh, out_shape)
    address = out.buffer_address()
    product, scattered = OP(xt, wt, middle, out, 3, sems(mesh), ttnn.CoreCoord(0, 6), bias=bt, num_links=1)
    assert scattered is out and scattered.buffer_address() == address  # written in place
    exact, bounds = partials(x, w, b, n)
    got = [ttnn.to_torch(t).float().numpy().astype(np.float64) for t in ttnn.get_device_tensors(product)]
    for device, (g, e, bound) in enumerate(zip(got, exact, bounds, strict=True)):
        assert np.all(np.abs(g - e) <= bound), f"device {device}: the product is outside the bound"
    total, spread = sum(exact), sum(np.abs(e) + bd for e, bd in zip(exact, bounds, strict=True))
    bound = sum(bounds) + n * U * spread + BF16_HALF_ULP * (np.abs(total) + sum(bounds) + n * U * spread)
    pieces = [ttnn.to_torch(t).float().numpy() for t in ttnn.get_device_tensors(scattered)]
    for device, (piece, want, tol) in enumerate(
        zip(pieces, np.split(total, n, axis=3), np.split(bound, n, axis=3), strict=True)
    ):
        assert piece.shape == out_shape
        assert np.all(np.abs(piece - want) <= tol), f"device {device}: its slice of the sum is outside the bound"


def test_same_bytes_as_matmul_then_reduce_scatter(mesh, rng):
    n = mesh.get_num_devices()
    (_, w, _), (xt, wt, bt) = problem(mesh, rng, batch=1, m=32)
    out_shape = (1, 1, 32, w.shape[3] // n)
    middle, out = zeros(mesh, (1, 1, 32, w.shape[3])), zeros(mesh, out_shape)
    kernel = ttnn.WormholeComputeKernelConfig(math_fidelity=ttnn.MathFidelity.HiFi2, fp32_dest_acc_en=True)
    product, scattered = OP(
        xt, wt, middle, out, 3, sems(mesh), (0, 6), bias=bt, compute_kernel_config=kernel,
        memory_config_mm=ttnn.L1_MEMORY_CONFIG, topology=ttnn.Topology.Linear,
    )  # fmt: skip
    want = ttnn.linear(xt, wt, bias=bt, memory_config=ttnn.L1_MEMORY_CONFIG)
    assert product.memory_config() == ttnn.L1_MEMORY_CONFIG
    want_rs = ttnn.experimental.reduce_scatter_minimal_async(
        want, None, 3, sems(mesh), memory_config=ttnn.DRAM_MEMORY_CONFIG
    )
    for got, expected in ((product, want), (scattered, want_rs)):
        for a, b in zip(ttnn.get_device_tensors(got), ttnn.get_device_tensors(expected), strict=True):
            np.testing.assert_array_equal(ttnn.to_torch(a).float().numpy(), ttnn.to_torch(b).float().numpy())


def test_checked_before_anything_is_allocated(mesh, rng):
    n = mesh.get_num_devices()
    (_, w, _), (xt, wt, bt) = problem(mesh, rng, batch=1, m=32)
    middle, out = zeros(mesh, (1, 1, 32, w.shape[3])), zeros(mesh, (1, 1, 32, w.shape[3] // n))
    wrong_out = zeros(mesh, (1, 1, 32, w.shape[3] // n * 2))
    wrong_middle = ttnn.typecast(middle, ttnn.bfloat8_b)
    three = sems(mesh)
    one_d = ttnn.MatmulMultiCoreReuseMultiCast1DProgramConfig(
        compute_with_storage_grid_size=(8, 1), in0_block_w=1, out_subblock_h=1, out_subblock_w=1, per_core_M=1,
        per_core_N=1, fuse_batch=True, mcast_in0=True,
    )  # fmt: skip
    bad = [
        (lambda: OP(xt, wt, middle, out, 2, three, (0, 6)), ttnn.MeshnnValueError, "dim=3"),
        (lambda: OP(xt, wt, middle, out, 3, three[:2], (0, 6)), ttnn.MeshnnValueError, "semaphore"),
        (lambda: OP(xt, wt, middle, out, 3, three, "0,6"), ttnn.MeshnnTypeError, "core_grid_offset"),
        (lambda: OP(xt, wt, middle, out, 3, three, (0, 6), program_config=one_d), ttnn.MeshnnValueError, "2-D"),
        (lambda: OP(xt, wt, middle, wrong_out, 3, three, (0, 6)), ttnn.MeshnnValueError, "persistent_output"),
        (lambda: OP(xt, wt, wrong_middle, out, 3, three, (0, 6)), ttnn.MeshnnValueError, "intermediate"),
        (lambda: OP(xt, bt, middle, out, 3, three, (0, 6)), ttnn.MeshnnValueError, "inner dimensions"),
        (lambda: OP(xt, wt, middle, out, 3, three, (0, 6), num_links=0), ttnn.MeshnnValueError, "num_links"),
    ]
    before = mesh.buffer_counts()
    for call, error, match in bad:
        with pytest.raises(error, match=match):
            call()
        assert mesh.buffer_counts() == before


@pytest.mark.parametrize("collective", ["reduce_scatter", "all_gather", "all_reduce", "matmul_reduce_scatter"])
def test_a_trace_does_not_keep_its_inputs_allocated(rng, collective):
    """A captured (never released) trace holds its buffers' bytes, not its tensors: the input of
    a traced collective is freed once the caller drops it (tt-metal's traces keep no tensors)."""
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 8), system="t3k", trace_region_size=1 << 16)
    try:
        _trace_and_drop(mesh, rng, collective)
    finally:
        ttnn.close_mesh_device(mesh)


def _trace_and_drop(mesh, rng, collective):
    n = mesh.get_num_devices()
    (_, w, _), (xt, wt, _) = problem(mesh, rng, batch=1, m=32)
    middle, out = zeros(mesh, (1, 1, 32, w.shape[3])), zeros(mesh, (1, 1, 32, w.shape[3] // n))
    three = sems(mesh)
    t = {"x": xt, "w": wt, "p": ttnn.matmul(xt, wt)}  # dropped below: the only references
    del xt, wt
    calls = {
        "reduce_scatter": lambda: ttnn.experimental.reduce_scatter_minimal_async(t["p"], None, 3, three),
        "all_gather": lambda: ttnn.experimental.all_gather_async(t["p"], 3, three[:2]),
        "all_reduce": lambda: ttnn.all_reduce(t["p"]),
        "matmul_reduce_scatter": lambda: OP(t["x"], t["w"], middle, out, 3, three, (0, 6))[0],
    }
    calls[collective]()  # compiled outside the trace, as tt-metal's tests do
    trace = ttnn.begin_trace_capture(mesh, cq_id=0)
    t["result"] = calls[collective]()
    ttnn.end_trace_capture(mesh, trace, cq_id=0)
    ttnn.execute_trace(mesh, trace, cq_id=0, blocking=True)
    held = {tensor.buffer_address() for tensor in t.values()}
    t.clear()
    gc.collect()
    live = {b.address() for b in mesh.live_buffers() if b.buffer_type() is ttnn.BufferType.DRAM}
    assert not held & live, "the trace kept a traced op's input allocated"


def test_all_gather_async_takes_the_binding_with_an_intermediate_buffer(mesh, rng):
    """June 2025's ``all_gather_async(input, persistent_intermediate_buffer, persistent_output_buffer,
    dim, semaphores)`` (tt-metal's prefill tests call it): all_gather's bytes, written into the
    output buffer; the intermediate checked (a live tensor of the mesh) and recorded."""
    n = mesh.get_num_devices()
    x = on(mesh, bf16_values(rng, (1, 1, 32, 32 * n)), ttnn.ShardTensorToMesh(mesh, dim=3))
    middle, out = zeros(mesh, (1, 1, 32, 64)), zeros(mesh, (1, 1, 32, 32 * n))
    got = ttnn.experimental.all_gather_async(
        x, persistent_intermediate_buffer=middle, persistent_output_buffer=out, dim=3,
        multi_device_global_semaphore=sems(mesh, 2), num_links=1, topology=ttnn.Topology.Ring,
    )  # fmt: skip
    assert got is out
    want = ttnn.all_gather(x, 3)
    for a, b in zip(ttnn.get_device_tensors(got), ttnn.get_device_tensors(want), strict=True):
        np.testing.assert_array_equal(ttnn.to_torch(a).float().numpy(), ttnn.to_torch(b).float().numpy())
    ttnn.deallocate(middle)
    with pytest.raises(ttnn.DeallocatedError, match="persistent_intermediate_buffer"):
        ttnn.experimental.all_gather_async(x, middle, out, 3, sems(mesh, 2))
    with pytest.raises(ttnn.MeshnnTypeError, match="incompatible"):  # not a form of the reversed gather
        ttnn.experimental.all_gather_async_reversed(x, out, out, 3, sems(mesh, 2))
