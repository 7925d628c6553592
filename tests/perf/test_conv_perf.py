"""conv2d timed as the matmul its program computes: rows = output pixels, K = the weight's rows (a prepared
weight) or in-channels x kh x kw (a raw one), the window rows built in L1, the input read once."""

from __future__ import annotations

import pytest
import torch

import meshnn as ttnn
from meshnn.perf import BufferType, MatmulConfig, OpDesc, OpFamily, TensorDesc, predict
from meshnn.perf.conv import implicit_matmul, is_conv, predict_conv
from meshnn.perf.matmul import predict_matmul
from meshnn.perf.systems import machine

N150 = machine("n150", (1, 1))


def conv(x: TensorDesc, weight: TensorDesc, out: TensorDesc) -> OpDesc:
    return OpDesc(OpFamily.MATMUL, (x, weight), (out,), op_code="Conv2dDeviceOperation", fidelity="HiFi2")


def test_the_implicit_matmul_has_a_row_per_output_pixel_and_the_window_as_k():
    x, w, out = TensorDesc((1, 32, 32, 64)), TensorDesc((1, 1, 576, 128), "BFLOAT8_B"), TensorDesc((1, 1, 1024, 128))
    desc = conv(x, w, out)
    assert is_conv(desc) and not is_conv(OpDesc(OpFamily.MATMUL, (x, w), (out,)))
    window, weight, given = implicit_matmul(desc).inputs
    assert window.shape == (1, 1, 1024, 576) and window.buffer is BufferType.L1 and window.dtype == "BFLOAT16"
    assert weight is w and given is x  # the input is still read once
    raw = implicit_matmul(conv(x, TensorDesc((128, 64, 3, 3), "BFLOAT8_B"), out)).inputs
    assert raw[0].shape == (1, 1, 1024, 576) and raw[1].shape == (1, 1, 576, 128) and raw[1].dtype == "BFLOAT8_B"


def test_a_conv_is_timed_with_all_its_multiplies():
    x, w, out = TensorDesc((1, 32, 32, 64)), TensorDesc((1, 1, 576, 128), "BFLOAT8_B"), TensorDesc((1, 1, 1024, 128))
    p = predict_conv(conv(x, w, out), N150)
    assert p.flops == 2.0 * 1024 * 576 * 128
    as_given = predict_matmul(OpDesc(OpFamily.MATMUL, (x, w), (out,), fidelity="HiFi2", matmul=MatmulConfig()), N150)
    assert as_given.flops < p.flops / 100  # a matmul of the tensors as given: 32 rows, K 64
    assert predict(conv(x, w, out), N150).kernel_ns == pytest.approx(p.kernel_ns)


def test_a_captured_conv2d_is_timed_as_its_implicit_matmul(open_mesh):
    mesh = open_mesh((1, 1))
    x = ttnn.from_torch(torch.randn(1, 32, 32, 64), dtype=ttnn.bfloat16, device=mesh)
    w = ttnn.from_torch(torch.randn(128, 64, 3, 3), dtype=ttnn.bfloat16)
    with ttnn.perf_capture() as capture:
        ttnn.conv2d(
            input_tensor=x, weight_tensor=w, device=mesh, in_channels=64, out_channels=128, batch_size=1,
            input_height=32, input_width=32, kernel_size=(3, 3), padding=(1, 1),
        )  # fmt: skip
    (record,) = capture.recorder(mesh).records
    assert record.desc.op_code == "Conv2dDeviceOperation"
    assert record.prediction.flops == 2.0 * 1024 * 576 * 128  # 32 x 32 pixels, 64 channels x 3 x 3, 128 out
