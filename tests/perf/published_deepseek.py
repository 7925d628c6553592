"""Published kernel times of DeepSeek-V3's ops and of the minimal matmul, and the model's value for each.

None of these set a constant: all are checks.  Sources (the 2026-06 tree):

- RING = tests/ttnn/nightly/unit_tests/operations/experimental/test_moe_mm.py and test_mla_wo.py's
  ``SHAPE2TIME`` (the device kernel time their ``*_perf.py`` twins assert a run stays under, one layer on
  one Wormhole chip: the figure is a ceiling, taken as the value).
- MINIMAL = tests/ttnn/nightly/unit_tests/operations/experimental/test_minimal_matmul.py::test_performance
  and test_minimal_matmul_split.py::test_performance_split: the kernel's math utilisation,
  ``2 M K N / (core_count x 2048 / fidelity_div flops a cycle)`` over the device kernel time (Blackhole's
  cycles at 1.3 GHz), asserted at 0.582 +- 0.02 on Wormhole and 0.895 +- 0.02 on Blackhole: the time
  range those bounds allow.  The run: bfloat16 in DRAM, HiFi2, float32 accumulation, packer L1
  accumulation, an 8x8 grid, blocks of 8 tiles (subblocks 2x2).
- MLA = models/demos/deepseek_v3/tests/fused_op_unit_tests/mla_deepseek_perf_and_pcc_tests.py
  (``perf_target_us``, the device kernel time of ``MatmulDeviceOperation`` averaged over a traced run,
  asserted within 3%) of mla/test_linear_deepseek.py's calls: ``ttnn.linear`` with no program config
  (ttnn's own choice), bfloat16 activations in L1 and weights DRAM-interleaved, on one chip of a
  Galaxy (TG).  meshnn runs each call under ``ttnn.perf_capture`` and times what it records.

The fused-op modules' ``DEVICE_PERF_TARGETS_US`` (rms_norm, embedding, lm_head, mlp...) are not here: each
is the sum, over op codes, of a module's ops averaged across a mesh's devices, which these figures would
have to rebuild op by op.
"""

from __future__ import annotations

import functools

from meshnn.perf import BufferType, MatmulConfig, MatmulProgram, MemoryLayout, OpDesc, OpFamily, TensorDesc, predict

from .figure import Figure

RING = "tt-metal tests/ttnn/nightly/unit_tests/operations/experimental/test_{}.py SHAPE2TIME (a ceiling)"
MINIMAL = "tt-metal tests/ttnn/nightly/unit_tests/operations/experimental/test_minimal_matmul{}.py ({})"
MLA = "tt-metal models/demos/deepseek_v3/tests/fused_op_unit_tests/mla_deepseek_perf_and_pcc_tests.py (TG)"
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


GATE_MISS = (
    "the model counts the receivers' read of their 153 bfloat16 weight tiles at a bank's share of the DRAM-sharded "
    "rate (14.1 us), their 152 multiplies beside it, the launch and the tail's four one-tile hops, sigmoid and bias "
    "(1.3 us): 17.4 us; the tail's own SFPU sorts (compute.cpp: top-2 sums, the collector's top-4 of the 8 groups, "
    "each receiver's top-8, the collector's 4-tile merge; top2_sum_sfpu.h, top4_sfpu.h, top8_sfpu.h, "
    "top8_merge_sfpu.h) and the transposes between them are not counted, and the figure is only a ceiling"
)


def _ideal_ns(m: int, k: int, n: int, blackhole: bool) -> float:
    """The tests' ``perf_model``: 64 cores at 2048 / 2 flops a cycle (HiFi2), Blackhole at 1.3 GHz."""
    ns = 2 * m * k * n / (2 * 8 * 16 * 16 / 2 * 64)
    return ns / 1.3 if blackhole else ns


def minimal_matmul(m: int, k: int, n: int) -> OpDesc:
    """The tests' minimal matmul: as a 2-D multicast program on the 8x8 grid (``dm_in0_sender`` /
    ``dm_in1_sender_out`` send along rows and columns), bfloat16 in DRAM, HiFi2, float32 and L1 accumulation."""
    a, b, out = TensorDesc((1, 1, m, k)), TensorDesc((1, 1, k, n)), TensorDesc((1, 1, m, n))
    config = MatmulConfig(MatmulProgram.MULTICAST_2D, (8, 8), packer_l1_acc=True, fp32_acc=True)
    return OpDesc(OpFamily.MATMUL, (a, b), (out,), op_code="MinimalMatmulDeviceOperation", fidelity="HiFi2",
                  matmul=config)  # fmt: skip


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


LINEARS = {
    "wq_kv_a": ((1, 1, 32, 896), (896, 2112), "width_sharded_7x4", "width_sharded", 31.5),
    "wq_b": ((1, 1, 32, 1536), (1536, 3072), "width_sharded_8x2", "interleaved", 62.5),
    "wkv_b1": ((1, 16, 32, 128), (128, 512), "interleaved", "interleaved", 39.3),
    "wkv_b2": ((1, 128, 4, 512), (512, 128), "interleaved", "interleaved", 190.7),
    "wo": ((1, 1, 32, 16384), (16384, 896), "interleaved", "width_sharded_7x4", 259.56),
}
"""mla/test_linear_deepseek.py's cases: input, weight, input and output memory, and the perf target (us)."""


@functools.cache
def _device():
    import meshnn as ttnn

    return ttnn.open_device(device_id=0)


def _memory(ttnn, device, kind: str):
    if kind == "width_sharded_7x4":
        grid = ttnn.CoreRangeSet({ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(3, 6))})
        spec = ttnn.ShardSpec(grid, [32, 32], ttnn.ShardOrientation.ROW_MAJOR)
    elif kind == "width_sharded_8x2":
        grid = ttnn.num_cores_to_corerangeset(16, device.compute_with_storage_grid_size(), row_wise=True)
        spec = ttnn.ShardSpec(grid, [32, 96], ttnn.ShardOrientation.ROW_MAJOR)
    elif kind == "width_sharded":
        return ttnn.L1_WIDTH_SHARDED_MEMORY_CONFIG
    else:
        return ttnn.L1_MEMORY_CONFIG
    return ttnn.MemoryConfig(ttnn.TensorMemoryLayout.WIDTH_SHARDED, ttnn.BufferType.L1, spec)


@functools.cache
def linear_desc(case: str) -> OpDesc:
    """What meshnn records of test_linear_deepseek.py's ``ttnn.linear`` call ``case``."""
    import numpy as np

    import meshnn as ttnn

    shape, weight, src, dst, _ = LINEARS[case]
    device = _device()
    rng = np.random.default_rng(0)
    put = dict(dtype=ttnn.bfloat16, device=device, layout=ttnn.TILE_LAYOUT)
    x = ttnn.from_torch(rng.standard_normal(shape, dtype=np.float32), memory_config=ttnn.L1_MEMORY_CONFIG, **put)
    w = ttnn.from_torch(rng.standard_normal(weight, dtype=np.float32), memory_config=ttnn.DRAM_MEMORY_CONFIG, **put)
    if src.startswith("width_sharded"):
        x = ttnn.to_memory_config(x, _memory(ttnn, device, src))
    with ttnn.perf_capture(traced=True) as capture:
        y = ttnn.linear(x, w, memory_config=_memory(ttnn, device, dst), dtype=ttnn.bfloat16)
    for t in (x, w, y):
        ttnn.deallocate(t)
    (record,) = capture.recorder(device).records
    return record.desc


PLAIN = (
    "ttnn picks the plain multi-core program here (matmul_program_config.cpp's create_simple_matmul_program_config: "
    "Mt from a's rows without the batch, {mt} tile, Nt {nt}: one output block, a 1x1 core range, an L1-interleaved "
    "output: no multicast config), whose reader fetches every output tile's K tiles of both operands, the weight "
    "again for each of the {b} batches ({wmb} MB of weight reads against the model's {once} KB once); the model "
    "times that program as its default, the weight read once; re-reads alone do not fit the two figures either "
    "(39.3 and 190.7 us for 8x the reads), so no model of the program's per-tile round trips is added from them"
)
MCAST_1D = (
    "the 1-D program that multicasts in0 (ttnn's choice, as the model's: {cores} cores, each streaming its columns "
    "of the DRAM-interleaved bfloat16 weight, {mb} MB), measured at {rate} GB/s where the model gives the weight "
    "Wormhole's interleaved rate (its 64-reader figure, kept whatever the readers: traffic.interleaved_rate) at "
    "the Galaxy's DRAM scale; the three 1-D figures imply 113-151 GB/s but not as a function of the reader count "
    "(16 cores read faster than 28), so the readers' share is not modelled from them"
)
LINEAR_MISS = {
    "wq_kv_a": MCAST_1D.format(cores=28, mb=3.8, rate=120),
    "wq_b": MCAST_1D.format(cores=16, mb=9.4, rate=151),
    "wkv_b1": PLAIN.format(mt=1, nt=16, b=16, wmb=2.1, once=131),
    "wkv_b2": PLAIN.format(mt=1, nt=4, b=128, wmb=16.8, once=131),
    "wo": MCAST_1D.format(cores=28, mb=29.4, rate=113),
}


def figures() -> list[Figure]:
    """Every figure of this module: the bank-ring ops, the minimal matmuls, MLA's linears."""
    out = [
        Figure("matmul_wo 32x16384x896 bfloat8_b, one layer (n150)", RING.format("mla_wo"), 65.0, 65.0, "us",
               lambda: _us(matmul_wo(), "n150"), group=GROUP),
        Figure("moe_gate_mm 32x7168x256 + top-8 routing, one layer (n150)", RING.format("moe_mm"), 27.0, 27.0, "us",
               lambda: _us(moe_gate_mm(), "n150"), covered=False, why_not=GATE_MISS, group=GROUP),
    ]  # fmt: skip
    out += _minimal_figures()
    for case, (*_, target) in LINEARS.items():
        why = LINEAR_MISS[case]
        out.append(
            Figure(f"MLA linear {case} (ttnn.linear, auto config, TG chip)", MLA, target, target, "us",
                   lambda c=case: _us(linear_desc(c), "galaxy"), covered=not why, why_not=why, group=GROUP)
        )  # fmt: skip
    return out


if __name__ == "__main__":
    for f in figures():
        print(f"{f.name:<66} {f.low:>9.2f}-{f.high:<9.2f} {f.value():>9.2f} {100 * f.error():+7.1f}%")
