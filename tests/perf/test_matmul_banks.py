"""The DRAM banks' service of a matmul's one-tile reads on Blackhole (meshnn.perf.matmul_banks)."""

from __future__ import annotations

import pytest

from meshnn.device.arch import Arch
from meshnn.perf import MatmulConfig, OpDesc, OpFamily, TensorDesc, predict
from meshnn.perf.matmul import chosen_config
from meshnn.perf.matmul_banks import BANK_TRANSFER_BYTES_PER_CYCLE, bank_transfer_efficiency, tile_reads_extra_ns
from meshnn.perf.model import machine


def _desc(dtype: str, m: int = 640, k: int = 1408, n: int = 1408) -> OpDesc:
    a, b, out = TensorDesc((1, 1, m, k), dtype), TensorDesc((1, 1, k, n), dtype), TensorDesc((1, 1, m, n), dtype)
    return OpDesc(OpFamily.MATMUL, (a, b), (out,), fidelity="LoFi", matmul=MatmulConfig())


def test_efficiency_meets_tt_npe_points_and_is_monotonic():
    points = BANK_TRANSFER_BYTES_PER_CYCLE[Arch.BLACKHOLE]
    for size, rate in points:
        assert bank_transfer_efficiency(Arch.BLACKHOLE, size) == pytest.approx(rate / 60.9)
    sizes = [64, 256, 576, 1088, 2048, 3000, 16384, 65536]
    values = [bank_transfer_efficiency(Arch.BLACKHOLE, s) for s in sizes]
    assert values == sorted(values) and values[-1] == 1.0
    assert bank_transfer_efficiency(Arch.WORMHOLE_B0, 576) is None


def test_bfloat4_tiles_read_at_the_banks_tile_rate_on_p150():
    p150 = machine("p150")
    desc = chosen_config(_desc("BFLOAT4_B"), p150)
    inputs = sum(t.nbytes for t in desc.inputs)
    rate = p150.system.dram_sharded_bytes_per_s * bank_transfer_efficiency(Arch.BLACKHOLE, 576)
    assert 225e9 < rate < 240e9  # 576 B: between tt-npe's 512 B and 1 KB points
    assert tile_reads_extra_ns(desc, p150, readers=20) > 0
    assert tile_reads_extra_ns(desc, p150, readers=8) == 0  # no more readers than banks: the figure's own case
    assert predict(desc, p150).memory_ns >= inputs / rate * 1e9 * 0.999


@pytest.mark.parametrize("dtype", ["BFLOAT16", "BFLOAT8_B"])
def test_larger_tiles_keep_their_rate(dtype):
    p150 = machine("p150")
    desc = chosen_config(_desc(dtype), p150)
    assert tile_reads_extra_ns(desc, p150, readers=20) == 0


def test_wormhole_unchanged():
    n150 = machine("n150")
    desc = chosen_config(_desc("BFLOAT4_B", 512, 512, 512), n150)
    assert tile_reads_extra_ns(desc, n150, readers=64) == 0
