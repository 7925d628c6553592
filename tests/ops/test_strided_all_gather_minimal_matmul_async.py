"""``ttnn.experimental.strided_all_gather_minimal_matmul_async`` (issue 30; ``models/tt_dit``'s
column-parallel linears): its two outputs are, bit for bit, ``strided_all_gather_async``'s and
``minimal_matmul``'s of that gather (as tt-metal's test compares its fused and separate modes), the
product within bfloat16's bound of torch's; tt-metal's checks refuse bad calls before anything runs;
the gather is timed as an all-gather, the product as a matmul."""

from __future__ import annotations

import pytest
import torch

import meshnn as ttnn

from .test_strided_all_gather_async import BF16, TILE, sems, shard

FUSED = ttnn.experimental.strided_all_gather_minimal_matmul_async
CASES = [((1, 2), 1), ((1, 8), 1), ((2, 4), 1), ((8, 4), 0)]
IDS = ["1x2", "1x8", "2x4", "8x4-cols"]


def config(mesh):
    grid = ttnn.CoreCoord(2, 2)
    mm = ttnn.MinimalMatmulConfig(M_block_size=2, K_block_size=1, N_block_size=2, subblock_h=1, subblock_w=1,
                                  compute_with_storage_grid_size=grid)  # fmt: skip
    return mm, ttnn.init_device_compute_kernel_config(mesh.arch(), math_fidelity=ttnn.MathFidelity.HiFi4)


def operands(mesh, axis, k=64, n=128, bias=False):
    """The activation [1, 1, 64, K*ring] split along K over ``axis``; the weight (and bias) replicated."""
    ring = mesh.shape[axis]
    full = torch.randn(1, 1, 64 * mesh.shape[1 - axis], k * ring)
    w = torch.randn(1, 1, k * ring, n) / (k * ring) ** 0.5
    tw = ttnn.from_torch(w, dtype=BF16, layout=TILE, device=mesh)
    b = torch.randn(1, n) if bias else None
    tb = None if b is None else ttnn.from_torch(b, dtype=BF16, layout=TILE, device=mesh)
    return (full, w, b), (shard(mesh, full, axis), tw, tb)


def _bytes(t):
    return [ttnn.to_torch(d).view(torch.int16) for d in ttnn.get_device_tensors(t)]


@pytest.mark.parametrize(("shape", "axis"), CASES, ids=IDS)
def test_the_outputs_are_the_strided_gather_and_the_minimal_matmul_bit_for_bit(open_mesh, shape, axis):
    mesh = open_mesh(shape)
    mm, kernel = config(mesh)
    (_, w, _), (x, tw, tb) = operands(mesh, axis, bias=True)
    gathered, product = FUSED(x, tw, None, 3, sems(mesh), ttnn.CoreCoord(0, 6), cluster_axis=axis, bias=tb,
                              fused_activation=(ttnn.UnaryOpType.GELU, False), config=mm,
                              compute_kernel_config=kernel)  # fmt: skip
    alone = ttnn.experimental.strided_all_gather_async(x, None, 3, sems(mesh), cluster_axis=axis, mm_block_wt=1)
    separate = ttnn.experimental.minimal_matmul(alone, tw, bias_tensor=tb, config=mm, compute_kernel_config=kernel,
                                                fused_activation=(ttnn.UnaryOpType.GELU, False))  # fmt: skip
    assert all(torch.equal(p, q) for p, q in zip(_bytes(gathered), _bytes(alone), strict=True))
    assert all(torch.equal(p, q) for p, q in zip(_bytes(product), _bytes(separate), strict=True))
    assert list(product.shape) == [1, 1, 64, w.shape[-1]]


def test_the_product_is_torchs_within_bfloat16s_bound(open_mesh):
    mesh = open_mesh((1, 8))
    mm, kernel = config(mesh)
    (full, w, _), (x, tw, _) = operands(mesh, 1, k=96)
    buffer = ttnn.from_torch(torch.zeros(1, 1, 64, full.shape[-1]), dtype=BF16, layout=TILE, device=mesh)
    gathered, product = FUSED(x, tw, buffer, 3, sems(mesh), (0, 6), cluster_axis=1, config=mm,
                              compute_kernel_config=kernel, read_local_slice_from_input=True)  # fmt: skip
    assert gathered.buffer_address() == buffer.buffer_address()
    a, b = full.bfloat16().double(), w.bfloat16().double()
    want = (a @ b)[0, 0]
    scale = (a.abs() @ b.abs())[0, 0]
    for d in ttnn.get_device_tensors(product):
        got = ttnn.to_torch(d).double()[0, 0]
        assert torch.all((got - want).abs() <= 2**-7 * scale + 1e-6)  # the output's bfloat16 rounding, fp32 sums


def test_tt_metals_checks_refuse_bad_calls_before_anything_runs(open_mesh):
    mesh = open_mesh((1, 8))
    mm, kernel = config(mesh)
    _, (x, tw, _) = operands(mesh, 1)
    s = sems(mesh)
    buffer = ttnn.from_torch(torch.zeros(1, 1, 64, 512), dtype=BF16, layout=TILE, device=mesh)
    before = _bytes(buffer)
    good = dict(cluster_axis=1, config=mm, compute_kernel_config=kernel)
    with pytest.raises(ValueError, match="dim=3"):
        FUSED(x, tw, buffer, 2, s, (0, 6), **good)
    with pytest.raises(TypeError, match="config"):
        FUSED(x, tw, buffer, 3, s, (0, 6), **{**good, "config": None})
    with pytest.raises(TypeError, match="compute_kernel_config"):
        FUSED(x, tw, buffer, 3, s, (0, 6), **{**good, "compute_kernel_config": None})
    wide = ttnn.from_torch(torch.randn(1, 1, 256, 128), dtype=BF16, layout=TILE, device=mesh)
    with pytest.raises(ValueError, match="inner dimensions"):
        FUSED(x, wide, buffer, 3, s, (0, 6), **good)
    two = shard(mesh, torch.randn(2, 1, 64, 512), 1)
    with pytest.raises(ValueError, match="batch size 1"):
        FUSED(two, tw, buffer, 3, s, (0, 6), **good)
    with pytest.raises(TypeError, match="strided_all_gather_core_grid_offset"):
        FUSED(x, tw, buffer, 3, s, "0,6", **good)
    with pytest.raises(ValueError, match="2 semaphores"):
        FUSED(x, tw, buffer, 3, s[:1], (0, 6), **good)
    assert all(torch.equal(a, b) for a, b in zip(_bytes(buffer), before, strict=True))


def test_the_gather_is_timed_as_an_all_gather_and_the_product_as_a_matmul(open_mesh):
    mesh = open_mesh((1, 8))
    mm, kernel = config(mesh)
    _, (x, tw, _) = operands(mesh, 1)
    with ttnn.perf_capture() as capture:
        FUSED(x, tw, None, 3, sems(mesh), (0, 6), cluster_axis=1, config=mm, compute_kernel_config=kernel)
    entries = [e for r in capture.recorders for e in r.records]
    families = {e.desc.family for e in entries}
    assert {ttnn.perf.OpFamily.ALL_GATHER, ttnn.perf.OpFamily.MATMUL} <= families
    assert all(e.prediction.total_ns > 0 for e in entries)
    assert any(e.prediction.link_bytes > 0 for e in entries)
