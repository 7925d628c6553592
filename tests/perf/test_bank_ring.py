"""DeepSeek's DRAM-bank ring matmuls (``matmul_wo``, ``moe_gate_mm``) are timed from what their kernels do: 12
bank cores, each streaming one layer's block of its own bank, the product's real flops (the generic matmul
took the captured tensors, every bank's shard stacked, for a batched product: several times the flops on 7 or 2
cores, 85 and 100 us on an N150)."""

from __future__ import annotations

import numpy as np
import pytest

import meshnn as ttnn
from meshnn.perf import OpFamily, predict
from meshnn.perf.bank_ring import GATE_RECEIVER_TILES, WO_K_TILES_PER_BANK, WO_N_TILES

from .published_deepseek import ceilings, matmul_wo, minimal_matmul, moe_gate_mm

TILE = 32


def _mem(layout, buffer, coords, shard):
    cores = ttnn.CoreRangeSet([ttnn.CoreRange(c, c) for c in coords])
    return ttnn.MemoryConfig(layout, buffer, ttnn.ShardSpec(cores, shard, ttnn.ShardOrientation.ROW_MAJOR))


def _put(dev, values, config):
    return ttnn.from_torch(values, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=dev, memory_config=config)


def test_matmul_wo_is_the_banks_stream_of_one_layer():
    p = predict(matmul_wo(), "n150", traced=True)
    assert p.flops == 2 * 32 * 16384 * 896
    assert p.cores == 12
    assert p.dram_bytes == sum(WO_K_TILES_PER_BANK) * WO_N_TILES * 1088  # bfloat8_b tiles, one layer
    busiest_ns = max(WO_K_TILES_PER_BANK) * WO_N_TILES * 1088 / (267e9 / 12) * 1e9  # a bank's share of 267 GB/s
    assert p.memory_ns == busiest_ns
    assert 0.85 * 65_000 <= p.kernel_ns <= 65_000  # test_mla_wo.py's ceiling, met within 15%


def test_moe_gate_mm_reads_the_receivers_tiles_and_adds_its_routing_tail():
    p = predict(moe_gate_mm(), "n150", traced=True)
    assert p.flops == 2 * 32 * 7168 * 256
    assert p.cores == 12
    assert p.memory_ns == GATE_RECEIVER_TILES * 2048 / (267e9 / 12) * 1e9
    assert p.fixed_ns > 2000.0  # the launch and the tail after the multiplies
    assert p.kernel_ns < 27_000  # under test_moe_mm.py's ceiling (the generic matmul's 100 us was not)


def test_a_captured_run_is_timed_by_the_ring_model():
    dev = ttnn.open_device(device_id=0)
    HS, WS, L1, DRAM = (ttnn.TensorMemoryLayout.HEIGHT_SHARDED, ttnn.TensorMemoryLayout.WIDTH_SHARDED,
                        ttnn.BufferType.L1, ttnn.BufferType.DRAM)  # fmt: skip
    try:
        banks = dev.get_optimal_dram_bank_to_logical_worker_assignment(ttnn.NOC.NOC_0)
        dram = [ttnn.CoreCoord(i, 0) for i in range(12)]
        gx = _put(dev, np.zeros((12, 32, 7168), np.float32), _mem(HS, L1, banks, (32, 7168)))
        rows = 2 * 77 * TILE  # two layers
        gw = _put(dev, np.zeros((12, rows, 64), np.float32), _mem(HS, DRAM, dram, (rows, 64)))
        gout = _put(dev, np.zeros((32, 12 * TILE), np.float32), _mem(WS, L1, banks, (32, 32)))
        with ttnn.perf_capture(traced=True) as capture:
            ttnn.experimental.deepseek.moe.moe_gate_mm(gx, w_tensor=gw, output_tensor=gout, layer_id=1, column_id=0)
        (record,) = capture.recorder(dev).records
        assert record.desc.family is OpFamily.MATMUL and record.desc.op_code == "MoEGateMMDeviceOperation"
        captured = predict(record.desc, "n150", traced=True)
        assert captured.kernel_ns == predict(moe_gate_mm(), "n150", traced=True).kernel_ns  # one layer, whatever L
        assert captured.flops == 2 * 32 * 7168 * 256
    finally:
        ttnn.close_device(dev)


def test_the_minimal_matmul_is_timed_on_its_configs_grid():
    """``experimental.minimal_matmul`` (and ``_split``) record their ``MinimalMatmulConfig``: the model times the
    program on its grid (on a P150's 13x10 grid an 8x8 config took the whole grid: 1.9 ms for 1.0 at 4096^3),
    as tests/perf/published_deepseek.py's figures describe it."""
    dev = ttnn.open_device(device_id=0)
    try:
        x = ttnn.from_torch(np.ones((256, 256), np.float32), dtype=ttnn.bfloat16, device=dev, layout=ttnn.TILE_LAYOUT)
        kernel = ttnn.init_device_compute_kernel_config(
            dev.arch(), math_fidelity=ttnn.MathFidelity.HiFi2, fp32_dest_acc_en=True, packer_l1_acc=True
        )
        config = ttnn.MinimalMatmulConfig(
            M_block_size=8, K_block_size=8, N_block_size=8, subblock_h=2, subblock_w=2,
            compute_with_storage_grid_size=ttnn.CoreCoord(8, 8),
        )  # fmt: skip
        with ttnn.perf_capture(traced=True) as capture:
            ttnn.experimental.minimal_matmul(x, x, compute_kernel_config=kernel, config=config)
            ttnn.experimental.minimal_matmul_split(x, x, chunks=2, compute_kernel_config=kernel, config=config)
        recorded = [r.desc for r in capture.recorder(dev).records if r.desc.family is OpFamily.MATMUL]
        figure = minimal_matmul(256, 256, 256)
        assert len(recorded) == 2
        for desc in recorded:
            assert (desc.matmul, desc.core_grid, desc.fidelity) == (figure.matmul, figure.core_grid, figure.fidelity)
    finally:
        ttnn.close_device(dev)


@pytest.mark.parametrize("ceiling", ceilings(), ids=[c[0] for c in ceilings()])
def test_the_bank_ring_ops_are_under_their_ci_ceilings(ceiling):
    """A ceiling bounds the model from above only (it is not a measured time): within the figures' 15%."""
    name, source, target, model = ceiling
    assert "SHAPE2TIME" in source and target > 0
    assert 0 < model() <= target * 1.15, f"{name}: ceiling {target:g} us, model {model():.3g} us"
