"""A layer_norm / rms_norm on an interleaved input is timed as its program's reader waits
(meshnn.perf.norm_reader): a row's blocks of input tiles each waited for, a row-major gamma read one
64 B stick a tile, each waited for, once a core; the distributed halves wait on every tile.  DeepSeek's
rms_norm targets (16 and 48 tiles a row, 11.45 and 27.32 us) were 4.8 and 10.3 us before it."""

from __future__ import annotations

import math

import numpy as np
import pytest

import meshnn as ttnn
from meshnn.perf import BufferType, Layout, MemoryLayout, OpDesc, OpFamily, TensorDesc, arch_perf, predict
from meshnn.perf.latency import op_latency
from meshnn.perf.norm_reader import (
    FITTED_PAGE_BYTES,
    FP32_ACC,
    POST,
    PRE,
    bank_cycles,
    block_size,
    is_interleaved_norm,
    reader_cycles,
    tail_cycles,
)
from meshnn.perf.traffic import transfer_efficiency

WH = arch_perf("wormhole_b0")
TRIP = op_latency("wormhole_b0").tile_round_trip_cycles


def _wait(size: int, page: int = 2048) -> float:
    """A DRAM read of ``size`` bytes in pages of ``page`` issued and waited for, as the module counts it: the
    fitted round trip, its page's bank time in place of the fitted bfloat8_b tile's, the transfer."""
    bank = bank_cycles(WH, min(size, page)) - bank_cycles(WH, FITTED_PAGE_BYTES)
    return TRIP + bank + size / (WH.noc_bytes_per_cycle * transfer_efficiency(WH, size))


def _norm(rows: int, width: int, *, gamma: Layout | None = Layout.ROW_MAJOR, **config: object) -> OpDesc:
    x = TensorDesc((1, 1, rows, width))
    weights = ()
    if gamma is Layout.ROW_MAJOR:
        weights = (TensorDesc((1, 1, width // 32, 32), layout=Layout.ROW_MAJOR),)
    elif gamma is Layout.TILE:
        weights = (TensorDesc((1, 1, 32, width), logical_shape=(1, 1, 1, width)),)
    return OpDesc(OpFamily.NORM, (x, *weights), (x,), fidelity="HiFi4", **config)  # type: ignore[arg-type]


def test_a_row_major_gamma_costs_a_round_trip_a_stick():
    stick, tile = _norm(32, 1536), _norm(32, 1536, gamma=Layout.TILE)
    blocks = math.ceil(48 / 8)
    block = _wait(8 * 2048)
    assert reader_cycles(stick, WH, 1) == pytest.approx(blocks * block + 48 * _wait(64))
    assert reader_cycles(tile, WH, 1) == pytest.approx(2 * blocks * block)
    assert reader_cycles(_norm(32, 1536, gamma=None), WH, 1) == blocks * block


def test_gamma_is_read_once_a_core_and_the_input_every_row():
    one, two = reader_cycles(_norm(32, 512), WH, 1), reader_cycles(_norm(32, 512), WH, 2)
    assert two - one == pytest.approx(2 * _wait(8 * 2048))  # a second row: its 2 input blocks, no gamma again


def test_the_deepseek_norms_are_met_by_the_reader_not_the_compute():
    """Checks (nothing fitted on them): 11.448 and 27.317 us measured, both within 15% (+4.5%, +8.7%)."""
    for width, measured in ((512, 11.448), (1536, 27.317)):
        p = predict(_norm(32, width), "galaxy", mesh_shape=(8, 4), traced=True)
        assert p.cores == 1 and p.memory_ns > p.compute_ns
        assert p.memory_ns == WH.cycles_ns(reader_cycles(_norm(32, width), WH, 1))
        assert p.drain_ns == WH.cycles_ns(tail_cycles(_norm(32, width), WH, p.fidelity))
        assert abs(p.kernel_ns / 1e3 / measured - 1) < 0.15


def test_fp32_accumulation_halves_the_blocks_and_sharded_inputs_run_another_program():
    assert block_size(_norm(32, 512)) == 8
    assert block_size(_norm(32, 512, attributes=(FP32_ACC,))) == 4
    fp32 = reader_cycles(_norm(32, 512, attributes=(FP32_ACC,)), WH, 1)
    assert fp32 == pytest.approx(4 * _wait(4 * 2048) + 16 * _wait(64))
    x = TensorDesc((1, 1, 32, 1536), buffer=BufferType.L1, memory=MemoryLayout.WIDTH_SHARDED)
    assert not is_interleaved_norm(OpDesc(OpFamily.NORM, (x,), (x,), core_grid=(2, 8)))
    assert not is_interleaved_norm(OpDesc(OpFamily.NORM, (x,), (x,), op_code="GroupNormDeviceOperation"))


def test_the_distributed_halves_wait_on_every_tile():
    x, stats = TensorDesc((1, 1, 128, 896)), TensorDesc((1, 1, 128, 256))
    gamma = TensorDesc((1, 1, 28, 32), layout=Layout.ROW_MAJOR)
    pre = OpDesc(OpFamily.NORM, (x,), (TensorDesc((1, 1, 128, 32)),), op_code=PRE)
    post = OpDesc(OpFamily.NORM, (x, stats, gamma), (x,), op_code=POST)
    assert block_size(pre) == block_size(post) == 1
    assert reader_cycles(pre, WH, 1) == pytest.approx(28 * _wait(2048))
    assert reader_cycles(post, WH, 1) == pytest.approx(_wait(8 * 2048) + 28 * _wait(2048) + 28 * _wait(64))


def test_a_read_takes_its_own_pages_bank_time():
    """The round trip was fitted on 1088 B pages: a 64 B stick is served sooner, a 2 KB tile later, at the
    bank's share of the DRAM's spec rate (288 GB/s over 12 banks on Wormhole: 24 B a cycle)."""
    assert bank_cycles(WH, 2048) == pytest.approx(2048 / 24)
    assert _wait(64, 64) < TRIP < _wait(2048)


def test_a_captured_rms_norm_carries_its_accumulation_and_gets_a_positive_time(open_mesh):
    mesh = open_mesh((1, 1))
    rng = np.random.default_rng(5)
    x = ttnn.from_torch(rng.standard_normal((1, 1, 32, 512)).astype(np.float32), dtype=ttnn.bfloat16,
                        layout=ttnn.TILE_LAYOUT, device=mesh)  # fmt: skip
    w = ttnn.from_torch(rng.standard_normal((1, 1, 16, 32)).astype(np.float32), dtype=ttnn.bfloat16,
                        layout=ttnn.ROW_MAJOR_LAYOUT, device=mesh)  # fmt: skip
    config = ttnn.WormholeComputeKernelConfig(math_fidelity=ttnn.MathFidelity.HiFi4, fp32_dest_acc_en=True)
    with ttnn.perf_capture() as capture:
        ttnn.rms_norm(x, epsilon=1e-5, weight=w, compute_kernel_config=config)
        ttnn.rms_norm(x, epsilon=1e-5, weight=w)
    fp32, plain = capture.recorder(mesh).records
    assert FP32_ACC in fp32.desc.attributes and FP32_ACC not in plain.desc.attributes
    assert is_interleaved_norm(plain.desc) and plain.desc.inputs[1].layout is Layout.ROW_MAJOR
    assert fp32.prediction.kernel_ns > plain.prediction.kernel_ns > 0  # 4 input blocks a row, not 2
