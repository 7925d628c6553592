"""The DeepSeek decode ops of stop 53 in the performance model: each run under ``ttnn.perf_capture``
is recorded with its family and tt-metal's device-operation name, and timed (a positive kernel
time), none skipped."""

from __future__ import annotations

import numpy as np
import torch

import meshnn as ttnn
from meshnn.ops.costs import ESTIMATED
from meshnn.perf.desc import OpFamily

from .test_deepseek_decode_ring import TILE, _mem, _put

HS, WS, L1, DRAM = (
    ttnn.TensorMemoryLayout.HEIGHT_SHARDED,
    ttnn.TensorMemoryLayout.WIDTH_SHARDED,
    ttnn.BufferType.L1,
    ttnn.BufferType.DRAM,
)


def test_each_op_is_recorded_and_timed():
    dev = ttnn.open_device(device_id=0)
    moe, mla = ttnn.experimental.deepseek.moe, ttnn.experimental.deepseek.mla
    try:
        banks = dev.get_optimal_dram_bank_to_logical_worker_assignment(ttnn.NOC.NOC_0)
        dram = [ttnn.CoreCoord(i, 0) for i in range(12)]
        wx = _put(dev, torch.zeros(12, 32, 16384), _mem(HS, L1, banks, (32, 16384)))
        ww = _put(dev, torch.zeros(12, 44 * 4 * TILE, 224), _mem(HS, DRAM, dram, (44 * 4 * TILE, 224)), ttnn.bfloat8_b)
        grid = dev.compute_with_storage_grid_size()
        taken = {(c.x, c.y) for c in banks}
        free = [ttnn.CoreCoord(i, j) for j in range(grid.y - 1, -1, -1) for i in range(grid.x - 1, -1, -1)
                if (i, j) not in taken][:7]  # fmt: skip
        wout = _put(dev, torch.zeros(32, 896), _mem(WS, L1, free, (32, 128)))
        with ttnn.perf_capture() as second:
            mla.matmul_wo(wx, w_tensor=ww, output_tensor=wout, layer_id=0)
        for t in (wx, ww, wout):
            ttnn.deallocate(t)
        core = [ttnn.CoreCoord(0, 0)]
        face = _mem(HS, L1, core, (32, 32))
        x, b = _put(dev, torch.rand(1, 16, 16), face), _put(dev, torch.rand(1, 16, 16), face)
        ids = _put(dev, torch.arange(256).reshape(1, 16, 16), face, ttnn.uint16)
        o, oi = _put(dev, torch.zeros(1, 32, 32), face), _put(dev, torch.zeros(1, 32, 32), face, ttnn.uint16)
        scores = ttnn.from_torch(torch.rand(1, 1, 32, 256), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=dev)
        gx = _put(dev, torch.zeros(12, 32, 7168), _mem(HS, L1, banks, (32, 7168)))
        gw = _put(dev, torch.zeros(12, 77 * TILE, 64), _mem(HS, DRAM, dram, (77 * TILE, 64)))
        gout = _put(dev, torch.zeros(32, 12 * TILE), _mem(WS, L1, banks, (32, 32)))
        with ttnn.perf_capture() as capture:
            gates = {"bias_tensor": b, "input_indices_tensor": ids, "output_tensor": o, "output_indices_tensor": oi}
            moe.deepseek_moe_gate(x, **gates)
            moe.generalized_moe_gate(x, **gates, topk=6)
            ttnn.experimental.deepseek_grouped_gate(scores, scores)
            moe.moe_gate_mm(gx, w_tensor=gw, output_tensor=gout, layer_id=0, column_id=0)
        records = [*capture.recorder(dev).records, *second.recorder(dev).records]
        assert not capture.skipped and not second.skipped
        assert [(r.desc.family, r.desc.op_code) for r in records] == [
            (OpFamily.REDUCTION, "DeepseekMoeGateDeviceOperation"),
            (OpFamily.REDUCTION, "GeneralizedMoeGateDeviceOperation"),
            (OpFamily.REDUCTION, "DeepseekGroupedGateDeviceOperation"),
            (OpFamily.MATMUL, "MoEGateMMDeviceOperation"),
            (OpFamily.MATMUL, "MatmulWODeviceOperation"),
        ]
        assert all(np.isfinite(r.prediction.total_ns) and r.prediction.total_ns > 0 for r in records)
        assert not any(ESTIMATED in r.desc.attributes for r in records)
    finally:
        ttnn.close_device(dev)
