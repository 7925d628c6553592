"""ttnn's smaller op families against float64 references: the SSM ops (prefix scan with h_prev
updated in place, repeat-and-interleave multiply, the latent-group sum), addmm and sparse_matmul,
the losses, random tensors (ranges, seeds, the bfloat16 upper bound), the example ops, the
tracer's DOT graph and the program cache's counts.

Bounds: bfloat16 results are within one rounding (2^-8 relative) of float64 plus, for sums of n
terms computed in float32, n float32 roundings; bfloat8_b inputs are quantized first (the
reference takes the quantized values)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import meshnn as ttnn

BF16_REL = 2.0**-8


def on(mesh, values: np.ndarray, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, **kwargs) -> ttnn.Tensor:
    return ttnn.from_torch(torch.from_numpy(values), dtype=dtype, layout=layout, device=mesh, **kwargs)


def back(tensor: ttnn.Tensor) -> np.ndarray:
    return ttnn.to_torch(tensor).float().numpy().astype(np.float64)


def bf16(values: np.ndarray) -> np.ndarray:
    return torch.from_numpy(values.astype(np.float32)).bfloat16().double().numpy()


def within_bf16(got: np.ndarray, expected: np.ndarray, terms: int = 1) -> None:
    bound = np.abs(expected) * BF16_REL + terms * np.finfo(np.float32).eps * np.abs(expected).max() + 1e-30
    assert np.all(np.abs(got - expected) <= bound), np.max(np.abs(got - expected) - bound)


@pytest.fixture
def mesh(open_mesh):
    return open_mesh((1, 1))


def test_prefix_scan_and_its_state(mesh, rng):
    length, width = 64, 64
    a, bx = (bf16(rng.standard_normal((1, 1, length, width)) * 0.5) for _ in range(2))
    h = bf16(rng.standard_normal((1, 1, 1, width)))
    expected, state = np.empty_like(bx), h[0, 0, 0].copy()
    for t in range(length):
        state = a[0, 0, t] * state + bx[0, 0, t]
        expected[0, 0, t] = state
    h_t = on(mesh, h.astype(np.float32), layout=ttnn.ROW_MAJOR_LAYOUT)
    out = ttnn.experimental.prefix_scan(on(mesh, a.astype(np.float32)), on(mesh, bx.astype(np.float32)), h_t)
    got = back(out)
    # the recurrence is run in float32 and each state rounded once to bfloat16 when stored
    assert np.allclose(got, expected, rtol=2 * BF16_REL, atol=1e-3)
    assert np.allclose(back(h_t)[0, 0, 0], bf16(got[0, 0, -1]), rtol=0, atol=0)  # h_prev holds the last state
    with pytest.raises(ttnn.MeshnnValueError, match="h_prev"):
        ttnn.experimental.prefix_scan(
            on(mesh, a.astype(np.float32)), on(mesh, bx.astype(np.float32)), on(mesh, h.astype(np.float32))
        )


def test_repeat_and_interleave_multiply_and_the_latent_sum(mesh, rng):
    a = bf16(rng.standard_normal((1, 1, 32, 32)))
    b = bf16(rng.standard_normal((1, 1, 32, 5120)))
    ta, tb = on(mesh, a.astype(np.float32)), on(mesh, b.astype(np.float32))
    out = ttnn.experimental.repeat_and_interleave_eltwise_mul(ta, tb)
    expected = np.tile(a, (1, 1, 1, 5120)) * np.repeat(b, 32, axis=-1)
    assert tuple(out.shape) == (1, 1, 32, 32 * 5120)
    within_bf16(back(out), expected)
    with pytest.raises(ttnn.MeshnnValueError, match="5120"):
        ttnn.experimental.repeat_and_interleave_eltwise_mul(ta, on(mesh, np.ones((1, 1, 32, 64), np.float32)))
    x = bf16(rng.standard_normal((1, 1, 32, 2048)))
    summed = ttnn.experimental.hc_sum_reduce(on(mesh, x.astype(np.float32)))
    assert tuple(summed.shape) == (1, 1, 32, 64)
    within_bf16(back(summed), x.reshape(1, 1, 32, 64, 32).sum(-1), terms=32)
    with pytest.raises(ttnn.MeshnnValueError, match="latent"):
        ttnn.experimental.hc_sum_reduce(on(mesh, np.ones((1, 1, 32, 64), np.float32)))


def test_addmm_and_its_checks(mesh, rng):
    x, a, b = (bf16(rng.standard_normal(s)) for s in ((64, 32), (64, 96), (96, 32)))
    out = ttnn.addmm(*(on(mesh, v.astype(np.float32)) for v in (x, a, b)), alpha=1.5, beta=-0.5)
    within_bf16(back(out), -0.5 * x + 1.5 * a @ b, terms=96)
    with pytest.raises(ttnn.MeshnnValueError, match="alpha parameter cannot be 0"):
        ttnn.addmm(*(on(mesh, v.astype(np.float32)) for v in (x, a, b)), alpha=0.0)
    wrong = on(mesh, np.ones((32, 32), np.float32))
    with pytest.raises(ttnn.MeshnnValueError, match="input_tensor must have shape matching"):
        ttnn.addmm(wrong, on(mesh, a.astype(np.float32)), on(mesh, b.astype(np.float32)))
    ignored = ttnn.addmm(wrong, on(mesh, a.astype(np.float32)), on(mesh, b.astype(np.float32)), beta=0.0)
    within_bf16(back(ignored), a @ b, terms=96)


def test_sparse_matmul_computes_the_marked_products(mesh, rng):
    a = bf16(rng.standard_normal((2, 3, 32, 64)))
    b = bf16(rng.standard_normal((1, 4, 64, 32)))
    mask = np.array(rng.random((2, 3, 1, 4)) < 0.5, np.float32)
    config = ttnn.MatmulMultiCoreReuseMultiCast1DProgramConfig(
        compute_with_storage_grid_size=ttnn.CoreCoord(2, 2), in0_block_w=1, out_subblock_h=1, out_subblock_w=1,
        per_core_M=1, per_core_N=1, fuse_batch=False, fused_activation=None, mcast_in0=True,
    )  # fmt: skip
    out = ttnn.sparse_matmul(
        on(mesh, a.astype(np.float32)),
        on(mesh, b.astype(np.float32)),
        sparsity=on(mesh, mask, layout=ttnn.ROW_MAJOR_LAYOUT),
        program_config=config,
    )
    got = back(out)
    assert got.shape == (2, 3, 1, 4, 32, 32)
    for i, j, e in np.ndindex(2, 3, 4):
        if mask[i, j, 0, e]:
            within_bf16(got[i, j, 0, e], a[i, j] @ b[0, e], terms=64)
        else:
            assert not got[i, j, 0, e].any()


@pytest.mark.parametrize("mode, reduce", [("NONE", None), ("SUM", np.sum), ("MEAN", np.mean)])
def test_losses(mesh, rng, mode, reduce):
    ref, pred = (bf16(rng.standard_normal((1, 2, 32, 64))) for _ in range(2))
    reduction = getattr(ttnn.LossReductionMode, mode)
    for name, elementwise in (("mse_loss", np.square), ("l1_loss", np.abs)):
        out = getattr(ttnn, name)(
            on(mesh, ref.astype(np.float32)), on(mesh, pred.astype(np.float32)), reduction=reduction
        )
        values = bf16(elementwise(ref - pred))  # the element-wise loss, rounded once
        expected = values if reduce is None else reduce(values)
        got = back(out)
        assert np.allclose(got.reshape(np.shape(expected)), expected, rtol=2 * BF16_REL + 4096 * 2**-24, atol=0)


def test_pearson_correlation_coefficient(rng):
    x = torch.from_numpy(rng.standard_normal(1000))
    assert ttnn.pearson_correlation_coefficient(x, x) == 1.0
    assert abs(ttnn.pearson_correlation_coefficient(x, 2 * x + 1) - 1.0) < 1e-12
    assert abs(ttnn.pearson_correlation_coefficient(x, -x) + 1.0) < 1e-12
    assert ttnn.pearson_correlation_coefficient(x, torch.zeros(1000, dtype=x.dtype)) == 0.0


def test_random_tensors(mesh):
    t = ttnn.rand((64, 64), mesh, low=-2.0, high=3.0, seed=7)
    values = back(t)
    assert t.dtype is ttnn.bfloat16 and t.layout is ttnn.TILE_LAYOUT and values.min() >= -2.0 and values.max() < 3.0
    assert np.array_equal(values, back(ttnn.rand((64, 64), mesh, low=-2.0, high=3.0, seed=7)))  # a seed repeats
    assert not np.array_equal(back(ttnn.rand((64, 64), mesh)), back(ttnn.rand((64, 64), mesh)))  # seed 0 does not
    ints = back(ttnn.rand((64, 64), mesh, dtype=ttnn.int32, layout=ttnn.ROW_MAJOR_LAYOUT, low=-5, high=5, seed=3))
    assert np.array_equal(ints, np.trunc(ints)) and ints.min() >= -5 and ints.max() < 5
    u = on(mesh, np.zeros((64, 64), np.float32))
    assert ttnn.uniform(u, 1.0, 2.0, 11) is u
    filled = back(u)
    assert filled.min() >= 1.0 and filled.max() < 2.0 and abs(filled.mean() - 1.5) < 0.05
    p = np.tile(np.array([0.0, 1.0], np.float32), (32, 16))
    drawn = back(ttnn.bernoulli(on(mesh, p), 5))
    assert np.array_equal(drawn, p)  # probabilities 0 and 1 are certain
    with pytest.raises(ttnn.MeshnnTypeError, match="shape"):
        ttnn.rand([2, -1], mesh)
    with pytest.raises(ttnn.MeshnnValueError, match="from"):
        ttnn.uniform(u, 2.0, 1.0)


def test_example_ops_copy(mesh, rng):
    x = bf16(rng.standard_normal((64, 128))).astype(np.float32)
    t = on(mesh, x)
    assert np.array_equal(back(ttnn.prim.example(t)), x)
    assert np.array_equal(back(ttnn.composite_example(t)), x)
    first, second = ttnn.prim.example_multiple_return(t, return_output1=False, return_output2=True)
    assert first is None and np.array_equal(back(second), x)
    assert ttnn.composite_example_multiple_return(t, False, False) == [None, None]


def test_the_tracer_draws_the_ops(mesh, tmp_path):
    with ttnn.tracer.trace():
        t = on(mesh, np.ones((32, 32), np.float32))
        ttnn.relu(ttnn.add(t, t))
    text = ttnn.tracer.visualize(file_name=tmp_path / "trace.dot")
    assert text.startswith("digraph") and "ttnn::add" in text and "ttnn::relu" in text and "->" in text
    assert (tmp_path / "trace.dot").read_text() == text


def test_the_program_cache_counts_programs(mesh, rng):
    mesh.clear_program_cache()
    x = on(mesh, rng.standard_normal((32, 64)).astype(np.float32))
    for _ in range(3):
        ttnn.relu(x)
    assert mesh.num_program_cache_entries() == 1
    ttnn.relu(on(mesh, rng.standard_normal((64, 64)).astype(np.float32)))  # another shape: another program
    ttnn.exp(x)
    assert mesh.num_program_cache_entries() == 3
    ttnn.rand((32, 32), mesh, seed=1)
    ttnn.rand((32, 32), mesh, seed=2)  # the seed is a runtime argument
    assert mesh.num_program_cache_entries() == 4
    mesh.disable_and_clear_program_cache()
    ttnn.relu(x)
    assert mesh.num_program_cache_entries() == 0 and not mesh.program_cache_enabled
    mesh.enable_program_cache()


def test_num_cores_in_sub_core_grids():
    grids = ttnn.CoreRangeSet(
        [
            ttnn.CoreRange(ttnn.CoreCoord(1, 0), ttnn.CoreCoord(3, 9)),
            ttnn.CoreRange(ttnn.CoreCoord(5, 0), ttnn.CoreCoord(6, 9)),
        ]
    )
    cores = ttnn.num_cores_to_corerangeset_in_subcoregrids(ttnn.CoreCoord(2, 0), 5, grids, row_wise=True)
    assert cores.num_cores() == 5 and [(r.start.x, r.start.y, r.end.x, r.end.y) for r in cores.ranges()] == [
        (2, 0, 3, 0),
        (1, 1, 3, 1),
    ]
    spill = ttnn.num_cores_to_corerangeset_in_subcoregrids(ttnn.CoreCoord(1, 0), 34, grids, row_wise=True)
    assert spill.num_cores() == 34 and spill.contains(ttnn.CoreCoord(6, 1)) and not spill.contains(ttnn.CoreCoord(5, 2))
    columns = ttnn.num_cores_to_corerangeset_in_subcoregrids(ttnn.CoreCoord(1, 0), 12, grids)
    assert [(r.start.x, r.start.y, r.end.x, r.end.y) for r in columns.ranges()] == [(1, 0, 1, 9), (2, 0, 2, 1)]
    with pytest.raises(ttnn.MeshnnValueError, match="Start core"):
        ttnn.num_cores_to_corerangeset_in_subcoregrids(ttnn.CoreCoord(4, 0), 2, grids)
