"""meshnn.perf.rs_matmul: ``llama_rs_matmul``'s one program timed as its parts compose (the first product, then the
second beside the scatter of the first; or one product beside an earlier tensor's scatter), one launch."""

from __future__ import annotations

import dataclasses

import pytest

from meshnn.perf import CollectiveConfig, OpDesc, OpFamily, TensorDesc, Topology, machine, predict
from meshnn.perf.collectives import predict_collective
from meshnn.perf.ring_matmul import predict_ring_matmul
from meshnn.perf.rs_matmul import OP_CODE, OPERANDS, SCATTER_CODE, is_rs_matmul, operands, parts
from tests.perf.published_galaxy_units import B8, F, W, ring_matmul

M = machine("galaxy", (8, 4))
CONFIG = CollectiveConfig(Topology.LINEAR, cluster_axis=1, num_links=4)


def _fused(products: int, k: int = 2048) -> OpDesc:
    product = ring_matmul(k, 3840, (B8, B8, B8), F.HiFi2, True)
    (a, w), out = product.inputs, product.outputs[0]
    scattered = TensorDesc((1, 1, 32, 960), B8, **W)
    scatter_input = out if products == 2 else dataclasses.replace(out, dtype="BFLOAT16")  # an earlier tensor
    return OpDesc(
        OpFamily.REDUCE_SCATTER, (a, *[w] * products, scatter_input), (*[out] * products, scattered),
        op_code=OP_CODE, fidelity=F.HiFi2, matmul=product.matmul, collective=CONFIG,
    )  # fmt: skip


def test_two_products_the_second_beside_the_scatter():
    desc = _fused(2)
    assert is_rs_matmul(desc)
    matmuls, scatter = parts(desc)
    assert len(matmuls) == 2 and scatter.op_code == SCATTER_CODE and scatter.inputs == desc.inputs[-1:]
    first, second = (predict_ring_matmul(m, M).kernel_ns for m in matmuls)
    rs = predict_collective(scatter, M).kernel_ns
    launch = M.system.arch.op_launch_ns
    assert predict(desc, M, traced=True).kernel_ns == pytest.approx(first + max(second, rs) - launch)
    assert predict(desc, M, traced=True).kernel_ns < first + second + rs - launch  # overlapped, not summed


def test_one_product_beside_an_earlier_scatter():
    desc = _fused(1)
    assert is_rs_matmul(desc)
    (matmul,), scatter = parts(desc)
    assert scatter.inputs[0].dtype == "BFLOAT16"  # the earlier tensor, not the product
    expected = max(predict_ring_matmul(matmul, M).kernel_ns, predict_collective(scatter, M).kernel_ns)
    assert predict(desc, M, traced=True).kernel_ns == pytest.approx(expected)


def test_not_fused_without_its_parts():
    desc = _fused(2)
    assert not is_rs_matmul(dataclasses.replace(desc, collective=None))
    assert not is_rs_matmul(dataclasses.replace(desc, matmul=None))
    assert not is_rs_matmul(dataclasses.replace(desc, inputs=desc.inputs[-1:]))  # the scatter's tensors alone


def test_operands_put_the_products_before_the_scatters_tensors():
    desc = _fused(2)
    a, w, _, product = desc.inputs
    scattered = desc.outputs[-1]
    attrs = {OPERANDS: ((a, w, w), (product, product))}
    assert operands(attrs, (product,), (scattered,)) == (desc.inputs, desc.outputs)
    assert operands({}, (product,), (scattered,)) == ((product,), (scattered,))  # no products recorded
