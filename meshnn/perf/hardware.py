"""The hardware figures of the performance model: one table per chip architecture, each figure with
its source, and calibrated constants marked as fitted with the published measurements they fit.

Units are in the names: ``_hz``, ``_ns``, ``_bytes_per_s`` (bytes per second, decimal GB = 1e9),
``_bytes_per_cycle``, ``_cycles``.  Sources: "tt-metal:" is github.com/tenstorrent/tt-metal at the
path given; "tt-npe:", "tt-mlir:", "tt-train:" likewise; the research notes that gathered them are
the project's reference/device-time-anchors.md.  Only op-level measurements are fitted here
(matmul FLOPs tables, DRAM bandwidth benchmarks); the collective figures fitted to the CCL bandwidth
report are in :mod:`meshnn.perf.fabric`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields

from meshnn.device.arch import Arch

GEMM = "tt-metal: tech_reports/GEMM_FLOPS/GEMM_FLOPS.md"
CCL = "tt-metal: tech_reports/CCLs/CCL_bandwidth.md and results/SUMMARY_{arch}_bfloat16_*.md"
DRAM_WH = "tt-metal: tech_reports/Saturating_DRAM_bandwidth/Saturating_DRAM_bandwidth.md"
MATMUL_SENDERS = (
    "tt-metal: ttnn/cpp/ttnn/operations/matmul/device/kernels/dataflow/reader_bmm_tile_layout_in0_sender_padding.cpp "
    "and reader_bmm_tile_layout_in1_sender_writer_padding.cpp"
)
DRAM_BH = "tt-metal: tech_reports/Saturating_DRAM_bandwidth/Saturating_DRAM_bandwidth_Blackhole.md"
NPE = "tt-npe: tt_npe/cpp/include/device_models/{wormhole_b0,blackhole}.hpp"
PERF_MD = "tt-metal: models/tt_transformers/PERF.md"
HOST = "meshnn.perf.host.TT_TRANSFORMERS"


@dataclass(frozen=True, slots=True)
class ArchPerf:
    """The time figures of one chip architecture; ``sources`` names where each came from."""

    arch: Arch
    clock_hz: float
    lofi_cycles_per_tile: int  # one 32x32x32 tile multiply at LoFi; x phases at higher fidelity
    operand_bytes_per_cycle: float  # fitted: cost of feeding a tile multiply its operands
    row_subblock_unpack_bytes_per_cycle: float | None  # fitted: in1 tiles unpacked for one-row subblocks
    dram_activation_bytes_per_cycle: float  # fitted: one core's read rate from DRAM (in0 / in1 senders)
    multicast_byte_dests_per_cycle: float  # fitted: a multicast of B bytes to D cores takes B x D / this
    fpu_eltwise_cycles_per_tile: int  # an FPU add / mul of two tiles at LoFi
    reduce_cycles_per_tile: int
    sfpu_elements_per_cycle: int
    packer_bytes_per_cycle: float  # the four packers' writes from the dest registers to L1, together
    packer_accumulate_bytes_per_cycle: float  # the same packers adding into L1 (L1 += datum), together
    dram_spec_bytes_per_s: float
    dram_sharded_bytes_per_s: float  # one reader per bank, bank-adjacent
    dram_interleaved_bytes_per_s: float  # pages spread over all banks, readers anywhere
    dram_interleaved_readers: int  # the reader cores the interleaved figure was measured with
    dram_page_write_bytes_per_s: float | None  # fitted: DRAM-interleaved pages written one at a time
    noc_bytes_per_cycle: float  # achievable on one NoC link with 2 KB transfers
    noc_transfer_efficiency: tuple[tuple[int, float], ...]  # (transfer bytes, fraction of the above)
    eth_line_rate_bytes_per_s: float  # per link per direction, as the links run today
    eth_payload_efficiency: float
    hop_latency_1d_ns: float
    hop_latency_2d_ns: float
    op_launch_ns: float  # device-side fixed cost of any op
    matmul_fill_ns: float  # fitted: multicast matmul pipeline fill on top of the launch
    matmul_drain_bytes_per_s: float  # fitted: a 2-D matmul's DRAM output written after its math (DRAM writes)
    op_to_op_traced_ns: float
    host_dispatch_ns: float  # host cost of one eager op on one device (Python + C++ dispatch)
    host_dispatch_per_device_ns: float  # fitted: what each further device of the op adds to it
    num_dram_banks: int
    sender_flushes_multicast: bool  # a 2-D matmul's senders wait for each block's multicast to leave
    sources: dict[str, str] = field(default_factory=dict, compare=False)

    def cycles_ns(self, cycles: float) -> float:
        return cycles * 1e9 / self.clock_hz

    def source(self, name: str) -> str:
        return self.sources[name]

    def dispatch_ns(self, devices: int = 1) -> float:
        """The host's time to dispatch one eager op to ``devices`` devices (ns): one op's Python and
        C++ work, then its commands written to each device's queue."""
        return self.host_dispatch_ns + self.host_dispatch_per_device_ns * (max(1, devices) - 1)

    def missing_sources(self) -> list[str]:
        """Figures without a source (a test keeps this empty)."""
        return [f.name for f in fields(self) if f.name not in ("arch", "sources") and f.name not in self.sources]


_COMMON_SOURCES = {
    "lofi_cycles_per_tile": f"{GEMM}: cycles per 32x32x32 tile LoFi 16, HiFi2 32, HiFi3 48, HiFi4 64",
    "fpu_eltwise_cycles_per_tile": "tt-metal: tech_reports/matrix_engine/matrix_engine.md: eltwise mul "
    "0.128 TFLOPS LoFi per core at 1 GHz = 128 elements/cycle -> 8 cycles a tile (x fidelity for mul)",
    "reduce_cycles_per_tile": "tt-metal: tech_reports/matrix_engine/matrix_engine.md: reduce 16x16 per "
    "cycle (0.512 TFLOPS LoFi) -> 2 cycles a tile",
    "sfpu_elements_per_cycle": "tt-train: roofline/roofline.py: SFPU 32 FLOPs per core-cycle",
    "eth_payload_efficiency": f"{CCL}: framing efficiency ~96% across useful payload sizes",
    "packer_bytes_per_cycle": "tt-isa-documentation (github.com/jasondavies/tt-isa-documentation): WormholeB0/"
    "TensixTile/L1.md: four packers, each theoretically one 128-bit write to L1 a cycle (64 B a cycle together); "
    "Blackhole taken as the same (its Tensix tile has the same four packers; no figure of their rate found)",
    "packer_accumulate_bytes_per_cycle": "tt-isa-documentation: WormholeB0/TensixTile/L1.md: each packer one 128-bit "
    "non-atomic accumulate every two cycles (32 B a cycle for the four; an atomic one takes five cycles), the "
    "read-modify-write of tt-metal's packer_l1_acc; Blackhole taken as the same",
    "op_to_op_traced_ns": "fitted: the median op-to-op gap of the 16 traced decoder ops of tt-metal models/demos/"
    "llama3_70b_galaxy/tests/decoder_perf_targets_6u.json (599 to 1002 ns, median 720); Llama TG decoder perf "
    "targets 630-840 ns (tt-metal PR #22868); the LLM tech report (tech_reports/LLMs): 'single-digit microseconds'",
    "op_launch_ns": "fitted: residual of tt-metal tests/device_perf_tests/dram_bandwidth/"
    "test_dram_bandwidth.py DRAM-sharded 6 MiB / 12 MiB expectations over streaming at the sharded rate",
    "matmul_fill_ns": f"fitted per arch: {GEMM} smallest traced manual rows, residual over compute and DRAM, less "
    "the traced op-to-op gap: Wormhole the five N150 512^3 rows (4,680 ns: their mean error 0; the figure fitted "
    "jointly with the P150 rows, 5,980 ns, left all five 8-12% slow), Blackhole the two P150 640x704x704 rows "
    "(5,980 ns, the joint figure: +1.6% and -0.6%)",
}


_SHARED = {
    "lofi_cycles_per_tile": 16,
    "fpu_eltwise_cycles_per_tile": 8,
    "reduce_cycles_per_tile": 2,
    "sfpu_elements_per_cycle": 32,
    "packer_bytes_per_cycle": 64.0,
    "packer_accumulate_bytes_per_cycle": 32.0,
    "eth_payload_efficiency": 0.96,
    "op_launch_ns": 2000.0,
    "op_to_op_traced_ns": 720.0,
}
"""The figures Wormhole and Blackhole share (the same Tensix engines, the same fits); their sources
are in ``_COMMON_SOURCES``."""

_BY_ARCH: dict[str, tuple[object, object]] = {  # figure: (Wormhole B0, Blackhole)
    "clock_hz": (1.0e9, 1.35e9),
    "matmul_fill_ns": (4680.0, 5980.0),
    "operand_bytes_per_cycle": (140.0, 400.0),
    "row_subblock_unpack_bytes_per_cycle": (54.0, None),
    "dram_activation_bytes_per_cycle": (12.0, 40.0),
    "matmul_drain_bytes_per_s": (77.4e9, 343.4e9),
    "multicast_byte_dests_per_cycle": (1300.0, 2600.0),
    "dram_spec_bytes_per_s": (288e9, 512e9),
    "dram_sharded_bytes_per_s": (267e9, 500e9),
    "dram_interleaved_bytes_per_s": (214.7e9, 344e9),
    "dram_interleaved_readers": (64, 8),
    "dram_page_write_bytes_per_s": (86.6e9, None),
    "noc_bytes_per_cycle": (30.0, 60.9),
    "noc_transfer_efficiency": (
        ((128, 5.5 / 30), (512, 18 / 30), (2048, 1.0)),
        ((128, 5.5 / 60.9), (512, 18 / 60.9), (2048, 57.7 / 60.9), (16384, 1.0)),
    ),
    "eth_line_rate_bytes_per_s": (12.5e9, 25e9),
    "hop_latency_1d_ns": (711.0, 515.0),
    "hop_latency_2d_ns": (874.0, 619.0),
    "host_dispatch_ns": (49000.0, 21000.0),
    "host_dispatch_per_device_ns": (2750.0, 2750.0),
    "num_dram_banks": (12, 8),
    "sender_flushes_multicast": (False, True),
}
"""The figures that differ between the two architectures, side by side; their sources follow."""

_WH_SOURCES = {
    "clock_hz": f"{GEMM}: 'At 1GHz (WH), this is 4 TFLOPS per matrix engine'",
    "operand_bytes_per_cycle": f"fitted: {GEMM} N150 manual traced 16384^3 rows (BF16 HiFi4 54.26, BF16 "
    "HiFi2 85.36, BFP8 HiFi2 102.44, BFP8 LoFi 163.19, BFP4 LoFi 199.72 TFLOPs): one constant, all within 5%",
    "dram_page_write_bytes_per_s": "fitted: tt-metal models/demos/llama3_70b_galaxy/tests/perf_targets/"
    "prefill_4096.json, typecast of q bfloat8_b -> bfloat16 (84.97 us; 101 GB/s on the Galaxy's 14 GT/s DRAM, "
    "86.6 at 12), whose unary writer flushes each page before the next (writer_unary_interleaved_start_id.cpp); "
    "checked on k's (-3%); beside the 2-D matmul's output drain, 77.4 GB/s, fitted on N150 matmuls",
    "row_subblock_unpack_bytes_per_cycle": f"fitted: {GEMM} N150 manual traced 2048^3 BF16 HiFi2 L1 row (76.64 "
    "TFLOPs; a sharded output, so one-row subblocks: test_benchmark.py's get_subblock_sizes, ttnn's matmul "
    "validation); checked on the table's other BF16 HiFi2 and BFP8 LoFi L1 rows it moves (+0.6% to +6.2%)",
    "dram_activation_bytes_per_cycle": f"fitted: {GEMM} N150 manual all-DRAM rows 4096^3 (BF16 HiFi2 68.45, "
    "BFP8 LoFi 140.53 TFLOPs) against the L1-sharded rows of the same table (the in0 senders' unhidden read); "
    "also the rate of a 2-D program's in1 sender, unfitted there (checked by the out-of-box table's rows and "
    "the Llama prefill times of PERF.md); a 2 KB (bfloat16) tile's rate: a sender reads a NoC read a tile, the "
    f"smaller block-float tiles at the lower per-transfer rate of {NPE}",
    "matmul_drain_bytes_per_s": f"fitted: {GEMM} N150 out-of-box traced BF16 rows of ttnn's 2-D program (512^3 to "
    "2048x3072x3072, blocks that fit L1 whole): their host-timed time less their math thread's (TRISC1) time, from "
    "the table's host and device utilisation columns, less the traced gap: output bytes over that drain, 77.4 GB/s "
    "(tests/perf/published_gemm_split.py); the BFP8 and BFP4 rows' drains are checks (72-99 GB/s)",
    "multicast_byte_dests_per_cycle": f"fitted: {GEMM} N150 out-of-box traced BF16 512x1024x1024 and 512x1024x2048 "
    "(115.2 and 140.7 us: the same in0 and per-core work, multicast to 32 and to 64 cores; 1 MiB to 32 more cores "
    "in 25.5 us); the BFP8 and BFP4 pairs and the eager rows are checks",
    "dram_spec_bytes_per_s": f"{DRAM_WH}: spec 288 GB/s at 12 GT/s (336 at 14 GT/s)",
    "dram_sharded_bytes_per_s": f"{DRAM_WH}: DRAM u-benchmark 267 GB/s at 12 GT/s",
    "dram_interleaved_bytes_per_s": "tt-metal: tests/device_perf_tests/dram_bandwidth/test_dram_bandwidth.py: "
    "40/80 MiB DRAM-interleaved read expected at 200 GiB/s (1e9*MiB/(GBps*1024) ns) = 214.7 GB/s",
    "dram_interleaved_readers": "tt-metal: tests/device_perf_tests/dram_bandwidth/test_dram_bandwidth.py: the "
    "interleaved figure is an 8x8 grid's cores reading the tensor (to_memory_config onto a width-sharded 8x8 "
    "grid, 4 KB uint32 tiles)",
    "noc_bytes_per_cycle": f"{NPE}: WH NoC link 30 B/cycle achievable (32 B/cycle word)",
    "noc_transfer_efficiency": f"{NPE}: WH per-transfer bandwidth 128 B -> 5.5, 512 B -> 18, 2 KB -> 30 B/cycle",
    "eth_line_rate_bytes_per_s": f"{CCL}: Wormhole 100 Gbps = 12.5 GB/s per link per direction",
    "hop_latency_1d_ns": f"{CCL}: per-hop latency WH 711 ns (1D fabric)",
    "hop_latency_2d_ns": f"{CCL}: per-hop latency WH 874 ns (2D fabric)",
    "host_dispatch_ns": f"fitted: {GEMM} N150 out-of-box 512^3 non-traced rows (49.05, 48.46, 50.13 us per op, "
    "host-bound: traced the same ops take 12-20 us)",
    "num_dram_banks": "meshnn.device.arch.WORMHOLE_B0 (12 banks = 6 channels x 2)",
    "sender_flushes_multicast": f"{MATMUL_SENDERS}: the flush is compiled for Blackhole only",
    "host_dispatch_per_device_ns": f"fitted with {HOST}'s prefill_ns: {PERF_MD} Llama-3.2-1B and 3B times to "
    "first token on N150, N300 and T3000 (benchmarks/perf_model.py; the 8B, 70B and Mistral-7B rows are checks). "
    "What it stands for: the host writes an op's command sequence into each device's issue queue in turn "
    "(tt-metal: tt_metal/distributed/fd_mesh_command_queue.cpp, write_program_cmds_to_subgrid loops "
    "write_program_command_sequence over the devices of the workload)",
}

_BH_SOURCES = {
    "clock_hz": "BH asic_fmax 1350 MHz: docs.tenstorrent.com tt-system-firmware tt_blackhole_configuration; "
    f"{GEMM}: 'At 1.35GHz (BH), this is 5.4 TFLOPS per matrix engine'",
    "dram_page_write_bytes_per_s": "none: no published Blackhole figure of a typecast or other unary op "
    "writing to DRAM (its writes take the interleaved rate, as its reads)",
    "row_subblock_unpack_bytes_per_cycle": f"none: {GEMM} P150 (11x10) manual traced L1 rows (one-row subblocks) "
    "give BF16 HiFi2 36 cycles a multiply on the math thread, BFP8 LoFi 19: the unpack does not bound them",
    "operand_bytes_per_cycle": f"fitted: {GEMM} P150 (11x10) manual traced peaks (BF16 HiFi4 142.42, BF16 HiFi2 "
    "267.99, BFP8 HiFi2 274.33, BFP8 LoFi 526.97, BFP4 LoFi 541.95 TFLOPs): one constant, all within 3%",
    "matmul_drain_bytes_per_s": f"fitted as Wormhole's: {GEMM} P150 (11x10) out-of-box traced BF16 rows of the 2-D "
    "program (640x704x704 to 2560x4224x4224): 343.4 GB/s; per row 249 to 480 GB/s, rising with the output (a large "
    "output's writes overlap more of the math)",
    "multicast_byte_dests_per_cycle": f"Wormhole's figure scaled by the NoC word (64 B a cycle on Blackhole, 32 "
    f"on Wormhole: {NPE}); no Blackhole out-of-box 1-D figure checks it",
    "dram_spec_bytes_per_s": f"{DRAM_BH}: 8 GDDR6 banks, 512 GB/s theoretical",
    "dram_sharded_bytes_per_s": f"{DRAM_BH}: 500 GB/s with one bank-adjacent reader per bank",
    "dram_activation_bytes_per_cycle": f"fitted: {GEMM} P150 (11x10) manual traced all-DRAM rows "
    "(5120x5632x5632 BF16 HiFi4 136.39 / BF16 HiFi2 239.48 / BFP8 HiFi2 259.92, 10240x11264^2 BFP4 541.95)",
    "dram_interleaved_bytes_per_s": f"{DRAM_BH}: arbitrary reader placement caps at 344 GB/s (67%)",
    "dram_interleaved_readers": f"{DRAM_BH}: the 344 GB/s is eight readers, one a bank on arbitrary cores (16 KB "
    "packets, two reads in flight: 31.8 B/cycle each; the same eight bank-adjacent reach 500 GB/s): their "
    "overlapping routes, not the banks, cap it",
    "noc_bytes_per_cycle": f"{NPE}: BH NoC link 60.9 B/cycle achievable (64 B/cycle word)",
    "noc_transfer_efficiency": f"{NPE}: BH 2 KB -> 57.7, 16 KB -> 60.9 B/cycle; below 2 KB the WH figures",
    "eth_line_rate_bytes_per_s": f"{CCL}: 400 Gbps = 50 GB/s rated, 'Blackhole links currently run at half "
    "their rated speed' -> 25 GB/s per link per direction",
    "hop_latency_1d_ns": f"{CCL}: per-hop latency BH 515 ns (1D fabric)",
    "hop_latency_2d_ns": f"{CCL}: per-hop latency BH 619 ns (2D fabric)",
    "host_dispatch_ns": f"fitted: {GEMM} P150 out-of-box 640x704x704 non-traced rows (16.81, 21.26, 25.57 us)",
    "num_dram_banks": "meshnn.device.arch.BLACKHOLE (8 GDDR6 banks)",
    "sender_flushes_multicast": f"{MATMUL_SENDERS}: under ARCH_BLACKHOLE each sender calls "
    "noc_async_writes_flushed() after a block's multicast and before it sets the receivers' flag (since 2024-09: "
    "NoC latency above L1 latency could let the block change before the write is issued)",
    "host_dispatch_per_device_ns": "Wormhole's figure (the same host code writes each device's queue; no "
    "published multi-chip Blackhole eager figure to fit)",
}


def _arch_table(arch: Arch, column: int, sources: dict[str, str]) -> ArchPerf:
    """One architecture's table: the shared figures and its column of ``_BY_ARCH``."""
    own = {name: pair[column] for name, pair in _BY_ARCH.items()}
    return ArchPerf(arch=arch, **_SHARED, **own, sources={**_COMMON_SOURCES, **sources})  # type: ignore[arg-type]


WORMHOLE_B0 = _arch_table(Arch.WORMHOLE_B0, 0, _WH_SOURCES)
BLACKHOLE = _arch_table(Arch.BLACKHOLE, 1, _BH_SOURCES)

ARCHS: dict[Arch, ArchPerf] = {WORMHOLE_B0.arch: WORMHOLE_B0, BLACKHOLE.arch: BLACKHOLE}


def arch_perf(arch: Arch | str) -> ArchPerf:
    """The figures of ``arch`` (an :class:`Arch` or its value, ``"wormhole_b0"`` / ``"blackhole"``)."""
    return ARCHS[arch if isinstance(arch, Arch) else Arch(arch)]
