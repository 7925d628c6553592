"""``ttnn.experimental.indexer_score`` and ``ttnn.IndexerScoreProgramConfig`` against numpy written
from the op's description: ``sum_h relu(q_h . k) * w_h`` for the keys a query sees (``t <= start + s``),
-inf elsewhere, in the kernel's 16-bit arithmetic (each head's dot rounded to bfloat16, the gated
score rounded, heads summed with a rounding at each add, in chunks of ``qk_batch_heads`` whose sums
are added into the accumulator); small-integer inputs make the sums exact, a constructed case shows
the chunks' rounding, and random inputs stay within the float32 reference's bounds."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import meshnn as ttnn

TILE = ttnn.TILE_LAYOUT


def float_reference(q, k, w, start):
    q, k, w = (np.asarray(a, np.float64) for a in (q, k, w))
    score = sum(np.maximum(q[0, h] @ k[0, 0].T, 0) * w[0, h] for h in range(q.shape[1]))
    sq, t = score.shape
    future = np.arange(t)[None, :] > start + np.arange(sq)[:, None]
    return np.where(future, -np.inf, score)[None, None]


@pytest.fixture
def p150():
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 1), system="p150")
    yield mesh
    ttnn.close_mesh_device(mesh)


def put(mesh, t, dtype=ttnn.bfloat16):
    return ttnn.from_torch(torch.as_tensor(t, dtype=torch.float32), dtype=dtype, layout=TILE, device=mesh)


def run(mesh, q, k, w, start=0, config=None, **kw):
    out = ttnn.experimental.indexer_score(put(mesh, q), put(mesh, k), put(mesh, w), chunk_start_idx=start,
                                          program_config=config, **kw)  # fmt: skip
    return out, ttnn.to_torch(out).float().numpy()


@pytest.mark.parametrize("heads,sq,t,start,config", [
    (4, 64, 128, 64, None),
    (8, 64, 96, 0, (64, 32, 0)),
    (3, 32, 64, 32, (32, 64, 3)),
])  # fmt: skip
def test_integer_scores_match_exactly(p150, heads, sq, t, start, config):
    rng = np.random.default_rng(heads + t)
    q = rng.integers(-1, 2, (1, heads, sq, 32)).astype(np.float32)  # (|dot| <= 32, |sum| <= 256: exact)
    k = rng.integers(-1, 2, (1, 1, t, 32)).astype(np.float32)
    w = rng.integers(-1, 2, (1, heads, sq, 1)).astype(np.float32)
    cfg = None if config is None else ttnn.IndexerScoreProgramConfig(
        q_chunk_size=config[0], k_chunk_size=config[1], head_group_size=config[2])  # fmt: skip
    out, got = run(p150, q, k, w, start, cfg)
    assert tuple(out.shape) == (1, 1, sq, t) and out.dtype == ttnn.bfloat16 and out.layout == ttnn.ROW_MAJOR_LAYOUT
    np.testing.assert_array_equal(got, float_reference(q, k, w, start))


def test_head_chunks_round_as_the_kernel_sums_them(p150):
    """Gated head scores 256, 1, 1, 1: summed in one chunk, each + 1 rounds back to 256 (bfloat16's
    step there is 2); in chunks of two heads the second chunk's 2 survives: 258."""
    q = np.zeros((1, 4, 32, 32), np.float32)
    q[0, :, :, 0] = np.array([256.0, 1.0, 1.0, 1.0])[:, None]
    k = np.zeros((1, 1, 32, 32), np.float32)
    k[0, 0, :, 0] = 1.0
    w = np.ones((1, 4, 32, 1), np.float32)
    config = ttnn.IndexerScoreProgramConfig(q_chunk_size=32, k_chunk_size=32, head_group_size=0)
    assert run(p150, q, k, w, 0, config)[1][0, 0, 31, 0] == 256.0
    config.head_group_size = 2
    assert run(p150, q, k, w, 0, config)[1][0, 0, 31, 0] == 258.0
    visible = run(p150, q, k, w, 0, config)[1][0, 0]
    assert np.isneginf(visible[0, 1:]).all() and np.isfinite(np.diag(visible)).all()


def test_random_scores_within_bfloat16_of_the_float_reference(p150):
    g = torch.Generator().manual_seed(42)
    q = torch.randn(1, 16, 64, 128, generator=g).to(torch.bfloat16).float()
    k = torch.randn(1, 1, 256, 128, generator=g).to(torch.bfloat16).float()
    w = torch.randn(1, 16, 64, 1, generator=g).to(torch.bfloat16).float()
    _, got = run(p150, q, k, w, 128, ttnn.IndexerScoreProgramConfig(head_group_size=0))
    want = float_reference(q, k, w, 128)
    masked = np.isneginf(want)
    np.testing.assert_array_equal(np.isneginf(got), masked)
    qn, kn, wn = (a.double().numpy() for a in (q, k, w))
    magnitude = sum(np.abs(np.maximum(qn[0, h] @ kn[0, 0].T, 0) * wn[0, h]) for h in range(16))
    bound = (16 + 2) * 2**-8 * magnitude  # each head's dot and gate, then every partial sum: one rounding each
    seen = ~masked[0, 0]
    assert (np.abs(got[0, 0][seen] - want[0, 0][seen]) <= bound[seen]).all()


def test_bfloat8_k_and_a_given_fidelity_run(p150):
    q = np.ones((1, 2, 32, 32), np.float32)
    k = np.ones((1, 1, 32, 32), np.float32)
    w = np.ones((1, 2, 32, 1), np.float32)
    ckc = ttnn.init_device_compute_kernel_config(p150.arch(), math_fidelity=ttnn.MathFidelity.HiFi4)
    out = ttnn.experimental.indexer_score(put(p150, q), put(p150, k, ttnn.bfloat8_b), put(p150, w),
                                          compute_kernel_config=ckc)  # fmt: skip
    got = ttnn.to_torch(out).float().numpy()[0, 0]
    assert got[31, 31] == 64.0 and np.isneginf(got[0, 1])


def test_program_config_fields():
    config = ttnn.IndexerScoreProgramConfig()
    assert (config.q_chunk_size, config.k_chunk_size, config.head_group_size) == (32, 32, 1)
    with pytest.raises(TypeError):
        ttnn.IndexerScoreProgramConfig(64)  # (keyword-only)
    with pytest.raises(ttnn.MeshnnTypeError, match="q_chunk_size"):
        ttnn.IndexerScoreProgramConfig(q_chunk_size=-32)
    with pytest.raises(ttnn.MeshnnTypeError, match="head_group_size"):
        config.head_group_size = True
    with pytest.raises(ttnn.MeshnnTypeError, match="no field"):
        config.chunk = 1


def test_refusals(p150):
    q, k, w = np.zeros((1, 4, 64, 32), np.float32), np.zeros((1, 1, 128, 32), np.float32), np.ones((1, 4, 64, 1))
    cfg = ttnn.IndexerScoreProgramConfig
    bad = [
        (dict(start=16), "chunk_start_idx"),
        (dict(start=96), "exceeds T"),
        (dict(config=cfg(q_chunk_size=48)), "tile-aligned"),
        (dict(config=cfg(q_chunk_size=96)), "must divide Sq"),
        (dict(config=cfg(k_chunk_size=160)), "out of range"),
        (dict(config=cfg(head_group_size=3)), "must divide Hi"),
        (dict(compute_kernel_config=ttnn.init_device_compute_kernel_config(p150.arch(), fp32_dest_acc_en=True)),
         "fp32_dest_acc_en=false"),
        (dict(compute_kernel_config=ttnn.init_device_compute_kernel_config(p150.arch(), dst_full_sync_en=True)),
         "dst_full_sync_en=false"),
    ]  # fmt: skip
    for kwargs, message in bad:
        start = kwargs.pop("start", 0)
        with pytest.raises(ttnn.MeshnnValueError, match=message):
            run(p150, q, k, w, start, kwargs.pop("config", None), **kwargs)
    with pytest.raises(ttnn.MeshnnValueError, match="qk_batch_heads"):  # 48 heads in chunks of 32 (QC 2)
        run(p150, np.zeros((1, 48, 64, 32)), k, np.ones((1, 48, 64, 1)), 0, cfg(q_chunk_size=64, head_group_size=0))
    with pytest.raises(ttnn.MeshnnValueError, match="beyond max L1"):  # 64 heads' scores for 16 k tiles
        run(p150, np.zeros((1, 64, 32, 128)), np.zeros((1, 1, 512, 128)), np.ones((1, 64, 32, 1)), 0,
            cfg(k_chunk_size=512, head_group_size=0))  # fmt: skip
    with pytest.raises(ttnn.MeshnnValueError, match="batch 1"):
        run(p150, np.zeros((2, 4, 64, 32)), np.zeros((2, 1, 128, 32)), np.ones((2, 4, 64, 1)))
    with pytest.raises(ttnn.MeshnnValueError, match="single-head"):
        run(p150, q, np.zeros((1, 2, 128, 32)), w)
    with pytest.raises(ttnn.MeshnnValueError, match="q must be BFLOAT16 or BFLOAT8_B"):
        ttnn.experimental.indexer_score(put(p150, q, ttnn.float32), put(p150, k), put(p150, w))
    wormhole = ttnn.open_mesh_device(ttnn.MeshShape(1, 1), system="n150")
    try:
        with pytest.raises(ttnn.MeshnnValueError, match="Blackhole"):
            run(wormhole, q, k, w)
    finally:
        ttnn.close_mesh_device(wormhole)
