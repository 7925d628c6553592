"""``meshnn perf``'s capture of the routing / top-k ops of tt-metal 2026-06 (topk_router_gpt,
topk_large_indices, indexer_score): each is timed by its own model (its device-operation name, not a
copy's estimate) with a positive kernel time on the cores its program uses."""

from __future__ import annotations

import torch

import meshnn as ttnn
from meshnn.perf import OpDesc, TensorDesc, predict
from meshnn.perf.desc import OpFamily
from meshnn.perf.routing_topk import visible_tiles


def _records(mesh, run):
    with ttnn.perf_capture() as capture:
        run()
    return [r for rec in capture.recorders for r in rec.records]


def test_router_is_timed_on_its_twelve_cores():
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 1), system="n150")
    try:
        put = lambda t: ttnn.from_torch(t, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh)  # noqa: E731
        x, w, b = put(torch.zeros(32, 2880)), put(torch.zeros(2880, 128)), put(torch.zeros(32, 128))
        (record,) = _records(mesh, lambda: ttnn.experimental.topk_router_gpt(x, weight_tensor=w, bias_tensor=b))
        assert record.desc.op_code == "TopkRouterGptDeviceOperation" and record.prediction.cores == 12
        assert record.prediction.kernel_ns > 0 and record.prediction.dram_bytes >= 2880 * 128 * 2
    finally:
        ttnn.close_mesh_device(mesh)


def test_large_indices_and_indexer_are_timed_by_their_models():
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 1), system="p150")
    try:
        rows = ttnn.from_torch(torch.zeros(64, 4096), dtype=ttnn.bfloat16, device=mesh)
        put = lambda t: ttnn.from_torch(t, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh)  # noqa: E731
        q, k, w = put(torch.zeros(1, 4, 64, 128)), put(torch.zeros(1, 1, 256, 128)), put(torch.zeros(1, 4, 64, 1))

        def run():
            ttnn.experimental.topk_large_indices(rows, k=512)
            ttnn.experimental.indexer_score(q, k, w, chunk_start_idx=128)

        large, indexer = _records(mesh, run)
        assert large.desc.op_code == "TopkLargeIndicesDeviceOperation" and large.prediction.cores == 64
        assert indexer.desc.op_code == "IndexerScoreDeviceOperation"
        assert indexer.desc.fidelity is ttnn.MathFidelity.HiFi2  # the op's default, recorded
        assert large.prediction.kernel_ns > 0 and indexer.prediction.kernel_ns > 0
    finally:
        ttnn.close_mesh_device(mesh)


def test_the_indexer_model_grows_with_the_visible_window():
    assert visible_tiles(2, 8, 6) == 7 + 8 and visible_tiles(2, 8, 0) == 1 + 2

    def desc(t: int) -> OpDesc:
        q, k = TensorDesc((1, 16, 640, 128)), TensorDesc((1, 1, t, 128))
        out = TensorDesc((1, 1, 640, t))
        inputs = (q, k, TensorDesc((1, 16, 640, 32)))
        return OpDesc(OpFamily.REDUCTION, inputs, (out,), op_code="IndexerScoreDeviceOperation")

    short, long = predict(desc(2048), "p150"), predict(desc(56320), "p150")
    assert 0 < short.kernel_ns < long.kernel_ns
