"""Tenstorrent's published op-level figures and the model's value for each.

Every figure names its source.  GEMM = tt-metal tech_reports/GEMM_FLOPS/GEMM_FLOPS.md (TFLOPs =
2*M*K*N over the host-timed op, traced unless marked eager); CCL = tt-metal tech_reports/CCLs/
results/SUMMARY_<arch>_bfloat16_*.md (device kernel time of one collective, traced); DRAM = tt-metal
tech_reports/Saturating_DRAM_bandwidth/*.md and tests/device_perf_tests/dram_bandwidth/
test_dram_bandwidth.py.  A figure given as a range counts as met anywhere inside it; its error is
the distance to the nearer end.  Model-level figures (tokens/s) are not here: they are held out.

``python -m tests.perf.published`` prints the table of every figure, the model's value and error.
"""

from __future__ import annotations

from types import ModuleType

from meshnn.perf import (
    BufferType,
    MathFidelity,
    MatmulConfig,
    MatmulProgram,
    MemoryLayout,
    OpDesc,
    OpFamily,
    TensorDesc,
    Topology,
    machine,
    predict,
)
from meshnn.perf.systems import Machine, SystemPerf

from . import (
    published_ccl,
    published_ccl_ci,
    published_ccl_dated,
    published_ccl_full,
    published_ccl_large,
    published_deepseek,
    published_dispatch,
    published_flash_decode,
    published_galaxy_decoder,
    published_galaxy_units,
    published_gemm_manual,
    published_gemm_manual_split,
    published_gemm_oob,
    published_gemm_oob_p150,
    published_gemm_oob_p150_13,
    published_gemm_split,
    published_sdxl,
)
from .figure import Figure
from .published_ccl import BH_GALAXY
from .published_decode import bandwidth_figures, decode_figures
from .published_prefill import prefill_figures
from .published_sdpa import flash_figures

GEMM = "tt-metal tech_reports/GEMM_FLOPS/GEMM_FLOPS.md"
DRAM_TEST = "tt-metal tests/device_perf_tests/dram_bandwidth/test_dram_bandwidth.py (CI expectation, +-3%)"
DRAM_WH = "tt-metal tech_reports/Saturating_DRAM_bandwidth/Saturating_DRAM_bandwidth.md"
F = MathFidelity
L1, DRAM = BufferType.L1, BufferType.DRAM


def gemm_tflops(
    system, m, k, n, dtype, fidelity, grid, *, in0_l1=False, default=False, traced=True, manual=False
) -> float:
    """TFLOPs of one matmul as GEMM_FLOPS measures it (host-timed: kernel plus the gap before it); ``manual``: a
    row of the manually tuned tables, whose K blocks the benchmark sets (``published_gemm_manual.in0_block_w``)."""
    where = (L1, MemoryLayout.BLOCK_SHARDED) if in0_l1 else (DRAM, MemoryLayout.INTERLEAVED)
    a = TensorDesc((1, 1, m, k), dtype, buffer=where[0], memory=where[1])
    b = TensorDesc((1, 1, k, n), dtype)
    out = TensorDesc((1, 1, m, n), dtype, buffer=where[0], memory=where[1])
    inner = published_gemm_manual.in0_block_w(grid, dtype, m, k, n) if manual else None
    config = MatmulConfig() if default else MatmulConfig(MatmulProgram.MULTICAST_2D, grid, in0_block_w=inner)
    desc = OpDesc(OpFamily.MATMUL, (a, b), (out,), fidelity=fidelity, matmul=config)
    p = predict(desc, system, traced=traced)
    if not traced:  # the table averages back-to-back calls: the host overlaps the previous kernel
        p = predict(desc, system, traced=False, previous_kernel_ns=p.kernel_ns)
    return 2.0 * m * k * n / p.total_ns / 1e3


def decode_matmul_gbps(system, mesh, k, n, weight_dtype, fidelity) -> float:
    """Achieved DRAM GB/s of a DRAM-sharded decode matmul (32 rows, activations in L1)."""
    a = TensorDesc((1, 1, 32, k), buffer=L1, memory=MemoryLayout.WIDTH_SHARDED)
    w = TensorDesc((1, 1, k, n), weight_dtype, memory=MemoryLayout.WIDTH_SHARDED)
    out = TensorDesc((1, 1, 32, n), buffer=L1, memory=MemoryLayout.WIDTH_SHARDED)
    config = MatmulConfig(MatmulProgram.DRAM_SHARDED)
    p = predict(OpDesc(OpFamily.MATMUL, (a, w), (out,), fidelity=fidelity, matmul=config), system, mesh_shape=mesh)
    return p.dram_bytes_per_s / 1e9


def dram_copy_us(source: TensorDesc, dest: TensorDesc, grid) -> float:
    p = predict(OpDesc(OpFamily.COPY, (source,), (dest,), core_grid=grid), "n150")
    return p.kernel_ns / 1e3


_n150, _p150 = "n150", "p150"
_bf16, _bfp8, _bfp4 = "BFLOAT16", "BFLOAT8_B", "BFLOAT4_B"
_MANUAL = [
    ("N150 BF16 HiFi4 16384^3 ~54 TF", _n150, 16384, 16384, 16384, _bf16, F.HiFi4, (8, 8), False, 54.26),
    ("N150 BF16 HiFi2 16384^3", _n150, 16384, 16384, 16384, _bf16, F.HiFi2, (8, 8), False, 85.36),
    ("N150 BFP8 HiFi2 16384^3 ~100-102 TF", _n150, 16384, 16384, 16384, _bfp8, F.HiFi2, (8, 8), False, 102.44),
    ("N150 BFP8 LoFi 16384^3 ~163 TF", _n150, 16384, 16384, 16384, _bfp8, F.LoFi, (8, 8), False, 163.19),
    ("N150 BFP4 LoFi 16384^3 ~197-200 TF", _n150, 16384, 16384, 16384, _bfp4, F.LoFi, (8, 8), False, 199.72),
    ("N150 BF16 HiFi2 8192^3 DRAM", _n150, 8192, 8192, 8192, _bf16, F.HiFi2, (8, 8), False, 81.13),
    ("N150 BF16 HiFi2 4096^3 DRAM", _n150, 4096, 4096, 4096, _bf16, F.HiFi2, (8, 8), False, 68.45),
    ("N150 BFP8 LoFi 4096^3 DRAM", _n150, 4096, 4096, 4096, _bfp8, F.LoFi, (8, 8), False, 140.53),
    ("N150 BF16 HiFi2 2048^3 L1", _n150, 2048, 2048, 2048, _bf16, F.HiFi2, (8, 8), True, 76.64),
    ("N150 BF16 HiFi4 1024^3 L1", _n150, 1024, 1024, 1024, _bf16, F.HiFi4, (8, 8), True, 45.72),
    ("N150 BF16 HiFi2 1024^3 L1", _n150, 1024, 1024, 1024, _bf16, F.HiFi2, (8, 8), True, 57.58),
    ("N150 BF16 HiFi2 512^3 L1", _n150, 512, 512, 512, _bf16, F.HiFi2, (8, 8), True, 21.40),
    ("N150 BF16 HiFi4 512^3 L1", _n150, 512, 512, 512, _bf16, F.HiFi4, (8, 8), True, 21.05),
    ("N150 BFP8 HiFi2 512^3 L1", _n150, 512, 512, 512, _bfp8, F.HiFi2, (8, 8), True, 24.87),
    ("N150 BFP8 LoFi 512^3 L1", _n150, 512, 512, 512, _bfp8, F.LoFi, (8, 8), True, 23.88),
    ("N150 BFP4 LoFi 512^3 L1", _n150, 512, 512, 512, _bfp4, F.LoFi, (8, 8), True, 26.86),
    ("P150 BF16 HiFi4 2560x4224x4224 ~142 TF", _p150, 2560, 4224, 4224, _bf16, F.HiFi4, (11, 10), True, 142.42),
    ("P150 BF16 HiFi2 2560x4224x4224 ~268 TF", _p150, 2560, 4224, 4224, _bf16, F.HiFi2, (11, 10), True, 267.99),
    ("P150 BFP8 HiFi2 3840x4224x5632 ~274 TF", _p150, 3840, 4224, 5632, _bfp8, F.HiFi2, (11, 10), True, 274.33),
    ("P150 BFP8 LoFi 3840x4224x5632 ~527 TF", _p150, 3840, 4224, 5632, _bfp8, F.LoFi, (11, 10), True, 526.97),
    ("P150 BFP4 LoFi 10240x11264^2 ~542 TF", _p150, 10240, 11264, 11264, _bfp4, F.LoFi, (11, 10), False, 541.95),
    ("P150 BF16 HiFi4 5120x5632^2 DRAM", _p150, 5120, 5632, 5632, _bf16, F.HiFi4, (11, 10), False, 136.39),
    ("P150 BF16 HiFi2 640x704x704 L1", _p150, 640, 704, 704, _bf16, F.HiFi2, (11, 10), True, 54.47),
    ("P150 BFP4 LoFi 640x704x704 L1", _p150, 640, 704, 704, _bfp4, F.LoFi, (11, 10), True, 59.89),
    ("P150 13x10 BFP4 LoFi 3840x4992x6656 L1", _p150, 3840, 4992, 6656, _bfp4, F.LoFi, (13, 10), True, 626.46),
]
"""The manual traced rows named by hand (most set constants): (name, system, M, K, N, dtype, fidelity,
grid, in0 in L1, TFLOPs)."""


def _gemm_figures() -> list[Figure]:
    fitted = (
        "16384^3",
        "4096^3 DRAM",
        "2048^3 L1",
        "512^3",
        "~142",
        "~268",
        "~274",
        "~527",
        "~542",
        "5632^2",
        "640x704",
    )
    out = []
    for name, system, m, k, n, dtype, fid, grid, in0_l1, tf in _MANUAL:

        def model(s=system, m=m, k=k, n=n, d=dtype, f=fid, g=grid, l1=in0_l1):
            return gemm_tflops(s, m, k, n, d, f, g, in0_l1=l1, manual=True)

        fit = any(mark in name for mark in fitted)
        out.append(Figure(name, f"{GEMM}, manual traced table", tf, tf, "TFLOPs", model, fitted=fit, group="matmul"))
    return out


def _manual_table_figures(name: str, system: str | SystemPerf) -> list[Figure]:
    """The traced rows of GEMM_FLOPS.md's manually tuned table of ``name`` (:mod:`tests.perf.published_gemm_manual`)
    that no manual figure above already names; ``system`` times them."""
    grid, named = published_gemm_manual.GRIDS[name], {(r[2], r[3], r[4], r[5], r[6], r[8]) for r in _MANUAL}
    label, source, out = name.upper().replace("_", " "), published_gemm_manual.SOURCES[name], []
    for dtype, fid, (m, k, n), in0_l1, tf, why in published_gemm_manual.rows(name):
        if (m, k, n, dtype, fid, in0_l1) in named:
            continue

        def model(m=m, k=k, n=n, d=dtype, f=fid, l1=in0_l1):
            return gemm_tflops(system, m, k, n, d, f, grid, in0_l1=l1, manual=True)

        where = "L1" if in0_l1 else "DRAM"
        figure_name = f"{label} manual {m}x{k}x{n} {dtype} {fid.name} {where} (traced)"
        out.append(Figure(figure_name, source, tf, tf, "TFLOPs", model, not why, why, group="matmul"))
    return out


def _oob_figures() -> list[Figure]:
    src = f"{GEMM}, out-of-box (auto config) N150 table"
    rows = [  # name, m, k, n, dtype, fidelity, traced, published TFLOPs, fitted
        ("N150 out-of-box 4096^3 BF16 HiFi2 ~68 TF", 4096, 4096, 4096, "BFLOAT16", F.HiFi2, True, 68.43, False),
        (
            "N150 out-of-box 3072x4096x4096 BFP8 LoFi ~138 TF (eager)",
            3072,
            4096,
            4096,
            "BFLOAT8_B",
            F.LoFi,
            False,
            138.42,
            False,
        ),
        ("N150 out-of-box 512^3 BF16 HiFi2 (eager, host-bound)", 512, 512, 512, "BFLOAT16", F.HiFi2, False, 5.47, True),
    ]
    return [
        Figure(
            name,
            src,
            tf,
            tf,
            "TFLOPs",
            lambda m=m, k=k, n=n, d=d, f=f, t=traced: gemm_tflops("n150", m, k, n, d, f, None, default=True, traced=t),
            fitted=fit,
            group="matmul",
        )
        for name, m, k, n, d, f, traced, tf, fit in rows
    ]


def _oob_table_figures(system: str | SystemPerf, table: ModuleType, label: str = "") -> list[Figure]:
    """A GEMM_FLOPS.md out-of-box table of ``system`` (``table``: its module, e.g.
    :mod:`tests.perf.published_gemm_oob` for the N150's rows not already figures,
    :mod:`tests.perf.published_gemm_oob_p150` for the P150's 11x10 grid,
    :mod:`tests.perf.published_gemm_oob_p150_13` for its 13x10 one): each row timed on the program
    ttnn picks given no program config; ``label`` names the system in the figures (default: its name)."""
    out = []
    for dtype, fid, traced, (m, k, n), tf in table.rows():

        def model(m=m, k=k, n=n, d=dtype, f=fid, t=traced):
            return gemm_tflops(system, m, k, n, d, f, None, default=True, traced=t)

        mode = "traced" if traced else "eager"
        name = f"{(label or str(system)).upper()} out-of-box {m}x{k}x{n} {dtype} {fid.name} ({mode})"
        why = table.why(dtype, traced, (m, k, n))
        fit = table.fitted(dtype, fid, traced, (m, k, n))
        out.append(Figure(name, table.SOURCE, tf, tf, "TFLOPs", model, not why, why, fit, group="matmul"))
    return out


def _math_thread_figures(system: str) -> list[Figure]:
    """The math thread's time of every traced 2-D row of a GEMM_FLOPS out-of-box table: its host-timed
    time x host / device utilisation (:mod:`tests.perf.published_gemm_split`), beside the model's kernel
    less its output drain.  The BF16 rows that set the drain rate count as fitted."""
    out = []
    for row in published_gemm_split.two_d_rows(system):
        dtype, (m, k, n), *_ = row
        measured = published_gemm_split.math_thread_ns(row) / 1e3
        why = published_gemm_split.MISSED[system].get((dtype, (m, k, n)), "")
        fit = dtype == "BFLOAT16" and (m, k, n) in published_gemm_split.FIT.get(system, ())

        def model(s=system, r=row) -> float:
            return published_gemm_split.model_math_thread_ns(s, r) / 1e3

        name = f"{system.upper().replace('_', ' ')} out-of-box {m}x{k}x{n} {dtype} (traced): math thread"
        source = f"{published_gemm_split.SOURCE}, device utilisation"
        out.append(Figure(name, source, measured, measured, "us", model, not why, why, fit, group="matmul"))
    return out


def _dram_test_figure(mib: int, gibps: int, shape: tuple[int, ...], sharded: bool) -> Figure:
    """A DRAM read of ``mib`` MiB of uint32 into L1 that tt-metal's CI expects at ``gibps`` GiB/s:
    interleaved over the 8x8 grid, or sharded one bank per reader (12x1)."""
    kind = "sharded" if sharded else "interleaved"
    memory = MemoryLayout.HEIGHT_SHARDED if sharded else MemoryLayout.INTERLEAVED
    source = TensorDesc(shape, "UINT32", memory=memory)
    dest = TensorDesc(shape, "UINT32", buffer=L1, memory=memory if sharded else MemoryLayout.WIDTH_SHARDED)
    us = 1e9 * mib / (gibps * 1024) / 1e3
    name = f"WH DRAM {kind} {mib} MiB read to L1 at {gibps} GiB/s"
    grid = (12, 1) if sharded else (8, 8)
    return Figure(name, DRAM_TEST, us, us, "us", lambda: dram_copy_us(source, dest, grid), fitted=True, group="DRAM")


def _dram_figures() -> list[Figure]:
    llama = "Llama3-70B decode matmul, T3000 device"
    rng = (239.0, 260.0)
    return [
        _dram_test_figure(40, 200, (1, 1, 5120, 2048), sharded=False),
        _dram_test_figure(80, 200, (1, 1, 10240, 2048), sharded=False),
        _dram_test_figure(6, 230, (12, 1, 128, 1024), sharded=True),
        _dram_test_figure(12, 230, (12, 1, 256, 1024), sharded=True),
        *[
            Figure(
                f"{llama}: {k}x{n} 239-260 GB/s",
                f"{DRAM_WH}: Llama3-70 decode 239-260 GB/s at 12 GT/s",
                *rng,
                "GB/s",
                lambda k=k, n=n: decode_matmul_gbps("t3k", (1, 8), k, n, "BFLOAT8_B", F.HiFi2),
                group="DRAM",
            )
            for k, n in ((8192, 1280), (1024, 8192), (8192, 3584), (3584, 8192))
        ],
        *[
            Figure(
                f"Mixtral8x7B decode expert matmul {k}x{n} 243-261 GB/s",
                f"{DRAM_WH}: Mixtral8x7b decode 243-261 GB/s at 12 GT/s",
                243.0,
                261.0,
                "GB/s",
                lambda k=k, n=n: decode_matmul_gbps("t3k", (1, 8), k, n, "BFLOAT8_B", F.HiFi2),
                group="DRAM",
            )
            for k, n in ((4096, 14336), (14336, 4096))
        ],
    ]


def _ccl_figures() -> list[Figure]:
    """Every row of the CCL report (:mod:`tests.perf.published_ccl`): fitted rows marked, the rows
    outside the claim with why."""
    out = []
    for arch, m in (("WH", machine("t3k", (1, 8))), ("BH", Machine(BH_GALAXY, (1, 8)))):
        for family, n, topology, size, us in published_ccl.rows(arch):

            def model(f=family, m=m, n=n, t=topology, s=size):
                return published_ccl.ccl_us(f, m, n, t, s)

            name = f"{arch} {family.name.lower()} N={n} {topology.value} T={size} B"
            why = published_ccl.MISSES.get((arch, family, n, topology, size), "")
            fit = published_ccl.fitted(arch, family, n, topology, size)
            src = published_ccl.source(arch, n, topology)
            figure = Figure(
                name, src, us, us, "us", model, covered=not why, why_not=why, fitted=fit, group="collectives"
            )
            out.append(figure)
    return out


def _ccl_full_figures() -> list[Figure]:
    """The FULL tables' rows the SUMMARY ones leave out (:mod:`tests.perf.published_ccl_full`)."""
    machines = {"WH": machine("t3k", (1, 8)), "BH": Machine(BH_GALAXY, (1, 8))}
    out = []
    for arch, family, n, topology, buffer, size, us in published_ccl_full.rows():

        def model(f=family, m=machines[arch], n=n, t=topology, s=size, b=buffer):
            return published_ccl.ccl_us(f, m, n, t, s, b)

        where = "" if buffer is BufferType.DRAM else " L1"
        name = f"{arch} {family.name.lower()} N={n} {topology.value}{where} T={size} B (FULL)"
        why = published_ccl_full.MISSES.get((arch, family, n, topology, buffer, size), "")
        fit = published_ccl_full.fitted(arch, family, n, topology, size)
        src = published_ccl_full.source(arch)
        out.append(
            Figure(name, src, us, us, "us", model, covered=not why, why_not=why, fitted=fit, group="collectives")
        )
    return out


def _back_to_back_figures() -> list[Figure]:
    """FULL_wormhole's eight calls back to back, timed as a recorder times them (each call behind
    another on the same devices: no launch skew); one all_gather row a topology set ``launch_skew_ns``."""
    out = []
    for family, n, topology, size, us in published_ccl_full.back_to_back_rows():

        def b2b(f=family, n=n, t=topology, s=size):
            mesh = machine(machine("t3k", (1, 8)), (1, n))
            return published_ccl_full.back_to_back_us(lambda m: published_ccl.ccl_desc(f, n, t, s), mesh)

        name = f"WH {family.name.lower()} N={n} {topology.value} T={size} B, 8 back to back (FULL)"
        fitted = (family, n, topology, size) in published_ccl_full.BACK_TO_BACK_FITTED
        why = published_ccl_full.BACK_TO_BACK_MISSES.get((family, n, topology, size), "")
        src = published_ccl_full.source("WH")
        out.append(Figure(name, src, us, us, "us", b2b, not why, why, fitted, group="collectives"))
    return out


def _ring_speedup(family: OpFamily) -> float:
    t3k = machine("t3k", (1, 8))
    line = published_ccl.ccl_us(family, t3k, 8, Topology.LINEAR, 1 << 30)
    return line / published_ccl.ccl_us(family, t3k, 8, Topology.RING, 1 << 30)


def _ring_figures() -> list[Figure]:
    src = "tt-metal tech_reports/CCLs/CCL_bandwidth.md: on Wormhole rings run 1.5 to 1.8 times faster than lines"
    fams = (OpFamily.ALL_GATHER, OpFamily.REDUCE_SCATTER, OpFamily.ALL_REDUCE)
    return [
        Figure(
            f"WH 8-device ring vs line speed-up, {f.name.lower()}",
            src,
            1.5,
            1.8,
            "x",
            lambda f=f: _ring_speedup(f),
            group="collectives",
        )
        for f in fams
    ]


def figures() -> list[Figure]:
    """Every published op-level figure here: those the model covers, then the known misses."""
    every = [*_gemm_figures(), *_oob_figures(), *_dram_figures(), *bandwidth_figures(), *_ccl_figures()]
    every += [*_ccl_full_figures(), *_back_to_back_figures(), *published_ccl_large.figures()]
    every += [*_oob_table_figures("n150", published_gemm_oob), *_oob_table_figures("p150", published_gemm_oob_p150)]
    every += [*_oob_table_figures(published_gemm_oob_p150_13.P150_13X10, published_gemm_oob_p150_13, "p150 13x10")]
    every += [*_math_thread_figures("n150"), *_math_thread_figures("p150"), *_math_thread_figures("p150_13x10")]
    every += [*_manual_table_figures("n150", "n150"), *_manual_table_figures("p150", "p150")]
    every += [*_manual_table_figures("p150_13x10", published_gemm_oob_p150_13.P150_13X10)]
    every += published_gemm_manual_split.figures()
    every += [*_ring_figures(), *decode_figures(), *prefill_figures(), *flash_figures()]
    every += [*published_galaxy_units.figures(), *published_sdxl.figures()]
    every += published_dispatch.figures()
    every += [*published_ccl_ci.figures(), *published_ccl_dated.figures()]
    every += published_deepseek.figures()
    every += published_flash_decode.figures()
    every += published_galaxy_decoder.figures()
    return [f for f in every if f.covered] + [f for f in every if not f.covered]


def by_family() -> list[tuple[str, int, int, float, int]]:
    """Per group: (group, fitted figures, checked figures, largest checked |error|, figures outside
    the claim), in the README's order."""
    out = []
    every = figures()
    for group in dict.fromkeys(f.group for f in every):
        mine = [f for f in every if f.group == group]
        covered = [f for f in mine if f.covered]
        checked = [abs(f.error()) for f in covered if not f.fitted]
        out.append(
            (group, sum(f.fitted for f in covered), len(checked), max(checked, default=0.0), len(mine) - len(covered))
        )
    return out


def main() -> None:
    print(f"{'figure':<66} {'published':>14} {'model':>11} {'error':>7}  unit  (* fitted)")
    for f in figures():
        pub = f"{f.low:g}" if f.low == f.high else f"{f.low:g}-{f.high:g}"
        mark = "" if f.covered else f"  ({f.why_not})"
        star = "*" if f.fitted else " "
        print(f"{star}{f.name:<65} {pub:>14} {f.value():>11.2f} {100 * f.error():>+6.1f}%  {f.unit}{mark}")
    print("\n| family | fitted | checked | largest checked error | outside the claim |")
    print("| --- | --: | --: | --: | --: |")
    for group, fitted, checked, worst, misses in by_family():
        print(f"| {group} | {fitted} | {checked} | {100 * worst:.1f}% | {misses} |")


if __name__ == "__main__":
    main()
