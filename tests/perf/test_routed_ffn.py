"""unified_routed_expert_ffn (meshnn/perf/routed_ffn.py): three M x K x N products of tiles over the
11x8 grid at LoFi, the weights streamed once per 64-row chunk of x."""

from __future__ import annotations

import pytest

from meshnn.perf import OpDesc, OpFamily, TensorDesc, machine, predict
from meshnn.perf.routed_ffn import CORES, predict_unified_ffn

P150 = machine("p150")


def ffn(tokens: int, emb: int = 7168, hidden: int = 2048) -> OpDesc:
    x = TensorDesc((tokens, emb))
    gate, down, table = TensorDesc((emb, hidden)), TensorDesc((hidden, emb)), TensorDesc((1, 256))
    return OpDesc(OpFamily.MOE_COMPUTE, (x, gate, gate, down, table, table), (x,),
                  op_code="UnifiedRoutedExpertFfnDeviceOperation")  # fmt: skip


def test_compute_is_three_products_over_the_grid_at_lofi():
    p = predict(ffn(2048), "p150", traced=True)
    assert p.cores == CORES == 88
    assert p.fidelity is not None and p.fidelity.name == "LoFi"
    assert p.flops == pytest.approx(3 * 2.0 * 2048 * 7168 * 2048)
    more = predict_unified_ffn(ffn(4096), P150)
    assert more.compute_ns == pytest.approx(2 * predict_unified_ffn(ffn(2048), P150).compute_ns, rel=0.01)
