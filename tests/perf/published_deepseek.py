"""Published kernel times of DeepSeek-V3's ops and of the minimal matmul, and the model's value for each.

None of these set a constant (but MLA's q_norm, :mod:`tests.perf.published_deepseek_mla`): all are checks.
Sources (the 2026-06 tree):

- RING = tests/ttnn/nightly/unit_tests/operations/experimental/test_moe_mm.py and test_mla_wo.py's
  ``SHAPE2TIME`` (the device kernel time their ``*_perf.py`` twins assert a run stays under, one layer on
  one Wormhole chip): ceilings, not measurements, so not figures: :func:`ceilings` lists them apart.
- MINIMAL = tests/ttnn/nightly/unit_tests/operations/experimental/test_minimal_matmul.py::test_performance
  and test_minimal_matmul_split.py::test_performance_split: the kernel's math utilisation,
  ``2 M K N / (core_count x 2048 / fidelity_div flops a cycle)`` over the device kernel time (Blackhole's
  cycles at 1.3 GHz), asserted at 0.582 +- 0.02 on Wormhole and 0.895 +- 0.02 on Blackhole: the time
  range those bounds allow.  The run: bfloat16 in DRAM, HiFi2, float32 accumulation, packer L1
  accumulation, an 8x8 grid, blocks of 8 tiles (subblocks 2x2).
- MLA's single-op targets on a TG: :mod:`tests.perf.published_deepseek_mla`.
- DeepSeek's fused-op modules' kernel targets: :mod:`tests.perf.published_deepseek_modules`.
"""

from __future__ import annotations

from collections.abc import Callable

from meshnn.perf import BufferType, MatmulConfig, MatmulProgram, MemoryLayout, OpDesc, OpFamily, TensorDesc, predict

from . import published_deepseek_mla, published_deepseek_modules
from .figure import Figure

RING = "tt-metal tests/ttnn/nightly/unit_tests/operations/experimental/test_{}.py SHAPE2TIME (a ceiling)"
MINIMAL = "tt-metal tests/ttnn/nightly/unit_tests/operations/experimental/test_minimal_matmul{}.py ({})"
GROUP = "deepseek ops"
HS, WS = MemoryLayout.HEIGHT_SHARDED, MemoryLayout.WIDTH_SHARDED
L1, DRAM = BufferType.L1, BufferType.DRAM


def _us(desc: OpDesc, system: str) -> float:
    return predict(desc, system, traced=True).kernel_ns / 1e3


def matmul_wo() -> OpDesc:
    """One layer of ``experimental.deepseek.mla.matmul_wo`` as ``ttnn.perf_capture`` records it: x copied to
    each of the 12 bank cores ([32, 16384] each), the bfloat8_b weight's 12 bank shards of 44 x 4 tile rows
    of 224 columns, the output [32, 896] over 7 collectors."""
    x = TensorDesc((12, 32, 16384), buffer=L1, memory=HS)
    w = TensorDesc((12, 44 * 4 * 32, 224), "BFLOAT8_B", buffer=DRAM, memory=HS)
    out = TensorDesc((32, 896), buffer=L1, memory=WS)
    return OpDesc(OpFamily.MATMUL, (x, w), (out,), op_code="MatmulWODeviceOperation")


def moe_gate_mm() -> OpDesc:
    """One layer of ``experimental.deepseek.moe.moe_gate_mm``: x ([32, 7168]) on each bank core, the bfloat16
    weight's bank shards of 77 tile rows of 64 columns, a [32, 32] output tile a core."""
    x = TensorDesc((12, 32, 7168), buffer=L1, memory=HS)
    w = TensorDesc((12, 77 * 32, 64), buffer=DRAM, memory=HS)
    out = TensorDesc((32, 384), buffer=L1, memory=WS)
    return OpDesc(OpFamily.MATMUL, (x, w), (out,), op_code="MoEGateMMDeviceOperation")


GATE_NOTE = (
    "the model counts the receivers' read of their 153 bfloat16 weight tiles at a bank's share of the DRAM-sharded "
    "rate (14.1 us), their 152 multiplies beside it, the launch and the tail's four one-tile hops, sigmoid and bias "
    "(1.3 us): 17.4 us, under the 27 us ceiling; the test publishes only the ceiling, not the measured time"
)


def _ideal_ns(m: int, k: int, n: int, blackhole: bool) -> float:
    """The tests' ``perf_model``: 64 cores at 2048 / 2 flops a cycle (HiFi2), Blackhole at 1.3 GHz."""
    ns = 2 * m * k * n / (2 * 8 * 16 * 16 / 2 * 64)
    return ns / 1.3 if blackhole else ns


def minimal_matmul(m: int, k: int, n: int) -> OpDesc:
    """The tests' minimal matmul as ``ttnn.perf_capture`` records it (tests/perf/test_bank_ring.py checks):
    its 2-D multicast program on the config's 8x8 grid (``dm_in0_sender`` / ``dm_in1_sender_out`` send
    along rows and columns), bfloat16 in DRAM, HiFi2, float32 and L1 accumulation."""
    a, b, out = TensorDesc((1, 1, m, k)), TensorDesc((1, 1, k, n)), TensorDesc((1, 1, m, n))
    config = MatmulConfig(MatmulProgram.MULTICAST_2D, (8, 8), packer_l1_acc=True, fp32_acc=True)
    return OpDesc(OpFamily.MATMUL, (a, b), (out,), op_code="MinimalMatmulDeviceOperation", fidelity="HiFi2",
                  core_grid=(8, 8), matmul=config)  # fmt: skip


def _minimal_figures() -> list[Figure]:
    out = []
    cases = [("", "test_performance", 1, (4096, 4096, 4096))]
    for chunks, shape in ((1, (4096,) * 3), (2, (4096,) * 3), (3, (4096, 4096, 6144)), (6, (4096, 4096, 6144)),
                          (3, (9472, 5120, 3840))):  # fmt: skip
        cases.append(("_split", f"test_performance_split chunks={chunks}", chunks, shape))
    for system, util, blackhole in (("n150", 0.582, False), ("p150", 0.895, True)):
        for suffix, test, chunks, (m, k, n) in cases:
            ideal = _ideal_ns(m, k, n, blackhole) / 1e3
            name = f"minimal_matmul{suffix} {m}x{k}x{n}" + (f" {chunks} chunks" if suffix else "") + f" {system}"
            out.append(
                Figure(name, MINIMAL.format(suffix, test), ideal / (util + 0.02), ideal / (util - 0.02), "us",
                       lambda m=m, k=k, n=n, s=system: _us(minimal_matmul(m, k, n), s), group="matmul")
            )  # fmt: skip
    return out


Ceiling = tuple[str, str, float, Callable[[], float]]


def ceilings() -> list[Ceiling]:
    """The bank-ring ops' CI ceilings (name, source, ceiling in us, model in us): ``SHAPE2TIME`` is what
    the ``*_perf.py`` tests assert a run stays under, not a measured time, so it bounds the model from
    above only (as :func:`tests.perf.published_ccl_ci.ceilings`); ``GATE_NOTE`` says what the gate's
    model counts."""
    return [
        ("matmul_wo 32x16384x896 bfloat8_b, one layer (n150)", RING.format("mla_wo"), 65.0,
         lambda: _us(matmul_wo(), "n150")),
        ("moe_gate_mm 32x7168x256 + top-8 routing, one layer (n150)", RING.format("moe_mm"), 27.0,
         lambda: _us(moe_gate_mm(), "n150")),
    ]  # fmt: skip


def figures() -> list[Figure]:
    """Every figure of this module: the minimal matmuls, MLA's linears, the fused-op modules."""
    out = _minimal_figures()
    out += published_deepseek_mla.figures() + published_deepseek_modules.figures()
    return out


if __name__ == "__main__":
    for f in figures():
        print(f"{f.name:<66} {f.low:>9.2f}-{f.high:<9.2f} {f.value():>9.2f} {100 * f.error():+7.1f}%")
