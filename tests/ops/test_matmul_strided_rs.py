"""``ttnn.experimental.minimal_matmul_strided_reduce_scatter_async`` and
``strided_reduce_scatter_async`` (issue 30; ``models/tt_dit``'s row-parallel linears): the fused
op's two outputs are, bit for bit, ``minimal_matmul``'s and ``reduce_scatter_minimal_async``'s (and
``addcmul``'s after them), as tt-metal's own test compares its fused and separate modes; the strided
reduce-scatter is the minimal one; tt-metal's checks refuse bad calls."""

from __future__ import annotations

import pytest
import torch

import meshnn as ttnn

from .test_dit_ops import BF16, TILE

FUSED = ttnn.experimental.minimal_matmul_strided_reduce_scatter_async


def open_mesh(shape):
    return ttnn.open_mesh_device(ttnn.MeshShape(*shape), system="t3k")


def _sems(mesh, count=3):
    grid = ttnn.CoreRangeSet({ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(6, 6))})
    return [ttnn.create_global_semaphore(mesh, grid, 0) for _ in range(count)]


def _inputs(mesh, m=64, k=96, n=512, axis=1):
    """The activations replicated, a weight of its own on each device of ``axis`` (the tt-metal test's set-up)."""
    dims = [None, None]
    dims[axis] = 0
    x = ttnn.from_torch(torch.randn(1, 1, m, k), dtype=BF16, layout=TILE, device=mesh)
    w = ttnn.from_torch(
        torch.randn(mesh.shape[axis], 1, k, n), dtype=BF16, layout=TILE, device=mesh,
        mesh_mapper=ttnn.ShardTensor2dMesh(mesh, dims=dims, mesh_shape=tuple(mesh.shape)),
    )  # fmt: skip
    return x, w


def _config(mesh):
    return ttnn.init_device_compute_kernel_config(mesh.arch(), math_fidelity=ttnn.MathFidelity.HiFi2)


def _bytes(t):
    return [ttnn.to_torch(d).view(torch.int16) for d in ttnn.get_device_tensors(t)]


def _same(a, b):
    assert all(torch.equal(p, q) for p, q in zip(_bytes(a), _bytes(b), strict=True))


@pytest.mark.parametrize("shape", [(1, 8), (2, 4)])
def test_the_fused_outputs_are_the_matmul_and_the_reduce_scatter_bit_for_bit(shape):
    mesh = open_mesh(shape)
    try:
        x, w = _inputs(mesh)
        mm, rs = FUSED(x, w, 3, _sems(mesh), ttnn.CoreCoord(0, 6), compute_kernel_config=_config(mesh),
                       cluster_axis=1, num_workers_per_link=2, chunk_width_in_mm_blocks=2)  # fmt: skip
        alone = ttnn.experimental.minimal_matmul(x, w, compute_kernel_config=_config(mesh))
        _same(mm, alone)
        scattered = ttnn.experimental.reduce_scatter_minimal_async(alone, None, 3, _sems(mesh), cluster_axis=1)
        _same(rs, scattered)
        assert list(rs.shape) == [1, 1, 64, 512 // shape[1]]
        strided = ttnn.experimental.strided_reduce_scatter_async(
            alone, None, 3, _sems(mesh), cluster_axis=1, mm_block_ht=2, mm_block_wt=2, mm_cores_y=4
        )
        _same(strided, scattered)
        into = ttnn.from_torch(torch.zeros(1, 1, 64, 512 // shape[1]), dtype=BF16, layout=TILE, device=mesh)
        _, given = FUSED(x, w, 3, _sems(mesh), ttnn.CoreCoord(0, 6), compute_kernel_config=_config(mesh),
                         cluster_axis=1, optional_rs_output_tensor=into)  # fmt: skip
        assert given.buffer_address() == into.buffer_address()
        _same(into, scattered)
    finally:
        mesh.close()


@pytest.mark.parametrize("rows", [1, 64], ids=["broadcast_gate", "full_gate"])
def test_the_fused_addcmul_is_addcmul_of_the_scattered_slice(rows):
    mesh = open_mesh((1, 8))
    try:
        x, w = _inputs(mesh)
        a, b = (ttnn.from_torch(torch.randn(1, 1, r, 64), dtype=BF16, layout=TILE, device=mesh) for r in (64, rows))
        addcmul = dict(fused_ternary_scalar=0.5, addcmul_input_tensor1=a, addcmul_input_tensor2=b)
        _, rs = FUSED(x, w, 3, _sems(mesh), ttnn.CoreCoord(0, 6), compute_kernel_config=_config(mesh), cluster_axis=1,
                      **addcmul)  # fmt: skip
        alone = ttnn.experimental.minimal_matmul(x, w, compute_kernel_config=_config(mesh))
        scattered = ttnn.experimental.reduce_scatter_minimal_async(alone, None, 3, _sems(mesh), cluster_axis=1)
        _same(rs, ttnn.addcmul(a, scattered, b, value=0.5))
    finally:
        mesh.close()


CASES = {
    "dim 2": (dict(dim=2), ValueError, "dim=3"),
    "a Linear topology": (dict(topology=ttnn.Topology.Linear), ValueError, "Ring"),
    "two semaphores": (dict(sems=2), ValueError, "3 semaphores"),
    "one addcmul tensor": (dict(addcmul_input_tensor1="a"), ValueError, "together"),
    "addcmul without its scalar": (dict(addcmul_input_tensor1="a", addcmul_input_tensor2="a"), ValueError, "scalar"),
    "a width not of whole tiles a device": (dict(n=32 * 12), ValueError, "N_tiles"),
    "no compute kernel config": (dict(no_config=True), TypeError, "compute_kernel_config"),
    "no buffers a channel": (dict(num_buffers_per_channel=0), ValueError, "num_buffers_per_channel must be positive"),
    "a zero chunk width": (dict(chunk_width_in_mm_blocks=0), ValueError, "chunk_width_in_mm_blocks must be positive"),
}


@pytest.mark.parametrize("case", CASES)
def test_bad_fused_calls_are_refused(case):
    kwargs, error, message = dict(CASES[case][0]), CASES[case][1], CASES[case][2]
    mesh = open_mesh((1, 8))
    try:
        x, w = _inputs(mesh, n=kwargs.pop("n", 512))
        a = ttnn.from_torch(torch.randn(1, 1, 64, 64), dtype=BF16, layout=TILE, device=mesh)
        for name in ("addcmul_input_tensor1", "addcmul_input_tensor2"):
            if name in kwargs:
                kwargs[name] = a
        sems = _sems(mesh, kwargs.pop("sems", 3))
        if not kwargs.pop("no_config", False):
            kwargs["compute_kernel_config"] = _config(mesh)
        dim = kwargs.pop("dim", 3)
        with pytest.raises(error, match=message):
            FUSED(x, w, dim, sems, ttnn.CoreCoord(0, 6), cluster_axis=1, **kwargs)
    finally:
        mesh.close()


def test_a_strided_reduce_scatter_needs_the_matmul_blocks():
    mesh = open_mesh((1, 8))
    try:
        x, _ = _inputs(mesh)
        op = ttnn.experimental.strided_reduce_scatter_async
        with pytest.raises(ValueError, match="mm_block_wt must be > 0"):
            op(x, None, 3, _sems(mesh), cluster_axis=1, mm_block_ht=1, mm_block_wt=0)
        with pytest.raises(ValueError, match="dim=3"):
            op(x, None, 2, _sems(mesh), cluster_axis=1, mm_block_ht=1, mm_block_wt=1)
    finally:
        mesh.close()
