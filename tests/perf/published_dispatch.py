"""Program dispatch and trace gaps (tt-metal's program-dispatch microbenchmark), host <-> device
transfers (:mod:`tests.perf.published_transfer`) and conv2d's device times
(:mod:`tests.perf.published_conv`), beside the model.

tt-metal: tests/tt_metal/tt_metal/perf_microbenchmark/dispatch/test_pgm_dispatch.cpp times a traced
replay of 10,000 programs back to back on one chip (``set_kernels_nullified``: every kernel is
empty unless told to spin ``KERNEL_RUN_TIME`` cycles), per program, for kernel binaries of 256 B to
12 KiB (its argument), one core or the whole grid (8x7 on Wormhole, 11x9 on Blackhole), with CBs,
runtime args, semaphores and kernel groups; goldens pgm_dispatch_golden.json (Wormhole) and
pgm_dispatch_blackhole_golden.json (2026-05-15), the mean of their two repetitions here.

The model (:mod:`meshnn.perf.program_dispatch`): each program is the dispatcher's work for what it
carries (:func:`program`, from the benchmark's ``TestInfo``), prepared while the kernel before runs;
a program starts when both that work and the kernel before (plus, on Wormhole, the launch's copy of the
NCRISC binary into its instruction RAM, and the traced gap, ``op_to_op_traced_ns``, fitted to the Galaxy
decoder's measured gaps) are done
(:func:`~meshnn.perf.program_dispatch.replay_ns`).  The rows whose kernels spin 1,000 cycles or more
check the gap; the rows of empty kernels time the dispatch work itself: ``FITTED`` names the rows the
dispatcher's rates were fitted to, every other row is a check.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from meshnn.perf.hardware import arch_perf
from meshnn.perf.program_dispatch import (
    KERNEL_CONFIG_BYTES,
    DispatchCore,
    Kernel,
    ProgramDispatch,
    describe_program,
    replay_ns,
)

from . import published_conv, published_transfer
from .figure import Figure

SOURCE = "tt-metal: tests/tt_metal/tt_metal/perf_microbenchmark/dispatch/"
FILES = {"WH": "pgm_dispatch_golden.json", "BH": "pgm_dispatch_blackhole_golden.json"}
ARCH = {"WH": "wormhole_b0", "BH": "blackhole"}
SIZES = (256, 512, 1024, 2048, 4096, 8192)
CYCLES = (0, 1000, 2000, 3000, 4000, 5000, 10000)
GRID = {"WH": (8, 7), "BH": (11, 9)}  # test_pgm_dispatch.cpp get_core_count: the worst-case harvested grid
SHADOW_GROUPS = {"WH": 7, "BH": 10}  # the shadow rows' kernel groups: get_core_count's last column index

SPINNING: dict[str, dict[str, tuple[float, ...]]] = {
    # us per program; "cycles/..." by KERNEL_RUN_TIME (CYCLES), the rest by kernel bytes (SIZES)
    "WH": {
        "cycles/brisc_only_all_processors": (1.567, 1.792, 2.808, 3.820, 4.834, 5.862, 10.931),
        "cycles/brisc_only_left_processors_subdevices": (1.567, 1.646, 2.660, 3.681, 4.690, 5.713, 10.807),
        "10000_kernel_all_cores_all_processors_32_cbs": (11.560, 11.564, 11.566, 11.578, 11.597, 11.881),
        "5000_kernel_all_cores_all_processors_32_cbs": (6.489, 6.488, 6.493, 6.497, 6.520, 6.801),
        "kernel_groups_4_shadow": (44.518, 44.522, 44.693, 45.181, 46.121, 91.738),
        "kernel_groups_5_shadow": (45.295, 45.304, 45.500, 46.087, 47.225, 95.780),
    },
    "BH": {
        "cycles/brisc_only_all_processors": (1.282, 1.504, 2.251, 2.996, 3.741, 4.471, 8.175),
        "cycles/brisc_only_left_processors_subdevices": (1.289, 1.501, 2.251, 2.996, 3.737, 4.468, 8.172),
        "10000_kernel_all_cores_all_processors_32_cbs": (8.372, 8.369, 8.348, 8.349, 8.358, 8.358),
        "5000_kernel_all_cores_all_processors_32_cbs": (4.658, 4.660, 4.655, 4.657, 4.644, 4.647),
        "kernel_groups_4_shadow": (33.706, 33.705, 33.713, 33.714, 33.714, 76.072),
        "kernel_groups_5_shadow": (34.539, 34.551, 34.541, 34.539, 34.528, 81.066),
    },
}

EMPTY: dict[str, dict[str, float]] = {
    # us per program of empty kernels at 1 KiB binaries (256 B to 8 KiB: within 1.5% of it)
    "WH": {
        "brisc_only": 1.570,
        "ncrisc_only": 1.570,
        "trisc_only": 1.570,
        "brisc_trisc_only": 1.570,
        "all_processors": 1.571,
        "all_processors_all_cores": 1.567,
        "all_processors_all_cores_1cb": 2.017,
        "all_processors_all_cores_32cb": 2.049,
        "all_processors_all_cores_1cb_8g": 5.310,
        "all_processors_all_cores_32cb_8g": 5.483,
        "all_processors_all_cores_1cb_1sem": 2.021,
        "all_processors_1_core_1_rta": 1.826,
        "one_processor_all_cores_128_rta": 3.864,
        "one_processors_all_cores_1_rta": 3.283,
        "all_processors_1_core_1_crta": 1.828,
        "all_processors_1_core_128_crta": 1.888,
        "all_processors_all_cores_1_rta": 3.275,
        "all_processors_all_cores_32_rta": 3.704,
        "all_processors_all_cores_128_rta": 7.380,
        "all_processors_all_cores_1_crta": 2.027,
        "all_processors_all_cores_32_crta": 2.039,
        "all_processors_all_cores_128_crta": 2.102,
        "sems_1_core_1_processor": 1.826,
        "sems_all_cores_1_processor": 2.036,
        "maxed_config_params": 7.683,
        "kernel_groups": 4.512,
        "kernel_groups_1_rta": 7.821,
        "kernel_groups_128_rta": 10.166,
        "kernel_groups_1_cb": 5.270,
        "kernel_groups_32_cb": 5.296,
        "eth_dispatch": 2.315,
    },
    "BH": {
        "brisc_only": 1.279,
        "ncrisc_only": 1.293,
        "trisc_only": 1.286,
        "brisc_trisc_only": 1.291,
        "all_processors": 1.296,
        "all_processors_all_cores": 1.281,
        "all_processors_all_cores_1cb": 1.662,
        "all_processors_all_cores_32cb": 1.696,
        "all_processors_all_cores_1cb_8g": 4.627,
        "all_processors_all_cores_32cb_8g": 4.702,
        "all_processors_all_cores_1cb_1sem": 1.670,
        "all_processors_1_core_1_rta": 1.499,
        "one_processor_all_cores_128_rta": 4.901,
        "one_processors_all_cores_1_rta": 4.621,
        "all_processors_1_core_1_crta": 1.508,
        "all_processors_1_core_128_crta": 1.537,
        "all_processors_all_cores_1_rta": 4.610,
        "all_processors_all_cores_32_rta": 4.789,
        "all_processors_all_cores_128_rta": 5.664,
        "all_processors_all_cores_1_crta": 1.673,
        "all_processors_all_cores_32_crta": 1.674,
        "all_processors_all_cores_128_crta": 1.700,
        "sems_1_core_1_processor": 1.499,
        "sems_all_cores_1_processor": 1.677,
        "maxed_config_params": 6.078,
        "kernel_groups": 4.270,
        "kernel_groups_1_rta": 8.653,
        "kernel_groups_128_rta": 9.832,
        "kernel_groups_1_cb": 4.963,
        "kernel_groups_32_cb": 4.955,
    },
}

BIG_BINARIES: dict[str, dict[str, float]] = {
    # us per program of empty kernels at 12 KiB binaries (the goldens' largest size), the rows with and without an
    # NCRISC kernel: checks of the launch's copy into Wormhole's NCRISC instruction RAM (launch_copy_ns)
    "WH": {"ncrisc_only": 1.862, "all_processors": 1.849, "all_processors_all_cores": 1.844, "brisc_trisc_only": 1.575},
    "BH": {"ncrisc_only": 1.294, "all_processors": 1.290, "all_processors_all_cores": 1.300},
}

FITTED = frozenset(
    {
        "brisc_only",  # DispatchRates.program_ns
        "all_processors_1_core_1_rta",  # unicast_command_ns
        "all_processors_all_cores_1_rta",  # per_core_ns
        "all_processors_all_cores_1cb",  # multicast_ns
        "one_processor_all_cores_128_rta",  # write_bytes_per_ns
        "eth_dispatch",  # eth_program_ns
    }
)
"""The empty rows :data:`meshnn.perf.program_dispatch.RATES` was fitted to (both arches; see its sources)."""


@dataclass(frozen=True)
class Bench:
    """One row's ``TestInfo`` in test_pgm_dispatch.cpp: processors, grid, CBs, args, semaphores, groups."""

    brisc: bool = True
    ncrisc: bool = True
    trisc: bool = True
    all_cores: bool = False
    left_column: bool = False
    cbs: int = 0
    cb_groups: int = 1
    args: int = 0
    common_args: int = 0
    sems: int = 0
    kernel_groups: int = 1
    eth: bool = False


_NO_NC = {"ncrisc": False, "trisc": False}
BENCH: dict[str, Bench] = {
    "brisc_only": Bench(**_NO_NC),
    "ncrisc_only": Bench(brisc=False, trisc=False),
    "trisc_only": Bench(brisc=False, ncrisc=False),
    "brisc_trisc_only": Bench(ncrisc=False),
    "all_processors": Bench(),
    "all_processors_all_cores": Bench(all_cores=True),
    "all_processors_all_cores_1cb": Bench(all_cores=True, cbs=1),
    "all_processors_all_cores_32cb": Bench(all_cores=True, cbs=32),
    "all_processors_all_cores_1cb_8g": Bench(all_cores=True, cbs=1, cb_groups=8),
    "all_processors_all_cores_32cb_8g": Bench(all_cores=True, cbs=32, cb_groups=8),
    "all_processors_all_cores_1cb_1sem": Bench(all_cores=True, cbs=1, sems=1),
    "all_processors_1_core_1_rta": Bench(args=1),
    "one_processor_all_cores_128_rta": Bench(all_cores=True, args=128, **_NO_NC),
    "one_processors_all_cores_1_rta": Bench(all_cores=True, args=1, **_NO_NC),
    "all_processors_1_core_1_crta": Bench(common_args=1),
    "all_processors_1_core_128_crta": Bench(common_args=128),
    "all_processors_all_cores_1_rta": Bench(all_cores=True, args=1),
    "all_processors_all_cores_32_rta": Bench(all_cores=True, args=32),
    "all_processors_all_cores_128_rta": Bench(all_cores=True, args=128),
    "all_processors_all_cores_1_crta": Bench(all_cores=True, common_args=1),
    "all_processors_all_cores_32_crta": Bench(all_cores=True, common_args=32),
    "all_processors_all_cores_128_crta": Bench(all_cores=True, common_args=128),
    "sems_1_core_1_processor": Bench(sems=4, **_NO_NC),
    "sems_all_cores_1_processor": Bench(all_cores=True, sems=4, **_NO_NC),
    "maxed_config_params": Bench(all_cores=True, cbs=32, args=128, sems=4),
    "kernel_groups": Bench(all_cores=True, kernel_groups=8),
    "kernel_groups_1_rta": Bench(all_cores=True, args=1, kernel_groups=8),
    "kernel_groups_128_rta": Bench(all_cores=True, args=128, kernel_groups=8),
    "kernel_groups_1_cb": Bench(all_cores=True, cbs=1, kernel_groups=8),
    "kernel_groups_32_cb": Bench(all_cores=True, cbs=32, kernel_groups=8),
    "eth_dispatch": Bench(eth=True, **_NO_NC),
    # the spinning rows
    "brisc_only_all_processors": Bench(all_cores=True, **_NO_NC),
    "brisc_only_left_processors_subdevices": Bench(left_column=True, **_NO_NC),
    "10000_kernel_all_cores_all_processors_32_cbs": Bench(all_cores=True, cbs=32),
    "5000_kernel_all_cores_all_processors_32_cbs": Bench(all_cores=True, cbs=32),
    "kernel_groups_4_shadow": Bench(all_cores=True),
    "kernel_groups_5_shadow": Bench(all_cores=True),
}


def program(arch: str, bench: Bench, kernel_bytes: int = 1024, kernel_groups: int | None = None) -> ProgramDispatch:
    """What a row's program asks of the dispatcher on ``arch`` ("WH" / "BH")
    (:func:`~meshnn.perf.program_dispatch.describe_program`): its cores and groups, every enabled kernel's args
    (4 B each), the CB groups' configs and each processor's binary of ``kernel_bytes``."""
    columns, rows = GRID[arch]
    enabled = {Kernel.BRISC: bench.brisc, Kernel.NCRISC: bench.ncrisc, Kernel.COMPUTE: bench.trisc}
    return describe_program(
        cores=columns * rows if bench.all_cores else rows if bench.left_column else 1,
        kernels=frozenset(k for k, on in enabled.items() if on),
        kernel_groups=kernel_groups or bench.kernel_groups,
        args_per_kernel=bench.args,
        common_args_per_kernel=bench.common_args,
        cbs=bench.cbs,
        cb_ranges=bench.cb_groups,
        semaphores=bench.sems,
        binary_bytes=kernel_bytes,
        dispatch_core=DispatchCore.ETH if bench.eth else DispatchCore.TENSIX,
    )


def _programs(arch: str, row: str, argument: int) -> list[tuple[ProgramDispatch, int]]:
    """The programs of one iteration of ``row`` at ``argument`` (its cycles or binary size), each with its
    kernel cycles."""
    bench = BENCH[row.removeprefix("cycles/")]
    if row.startswith("cycles/"):
        return [(program(arch, bench, 256), argument)]
    if row.endswith("_shadow"):  # one 40,000-cycle kernel, then 4 or 5 empty ones, all on every group
        one = program(arch, bench, argument, kernel_groups=SHADOW_GROUPS[arch])
        # two programs (the slow kernel's and the fast one's binaries): a worker's config ring holds both or
        # sends them again every run
        one = replace(one, binaries_cached=2 * one.binary_bytes_per_core <= KERNEL_CONFIG_BYTES)
        return [(one, 40000)] + [(one, 0)] * int(row.split("_")[2])
    if row in EMPTY[arch]:
        return [(program(arch, bench, argument), 0)]
    return [(program(arch, bench, argument), int(row.split("_")[0]))]


def traced_us(arch: str, programs: list[tuple[ProgramDispatch, int]]) -> float:
    """The model's time of one iteration of a traced replay of ``programs`` (each with its kernel cycles), us."""
    perf = arch_perf(ARCH[arch])
    return replay_ns([(p, perf.cycles_ns(c)) for p, c in programs], perf) / 1e3


def dispatch_figures() -> list[Figure]:
    """The spinning rows (checks of the traced gap and of the dispatch work behind it) and the empty rows
    (the dispatch work alone; :data:`FITTED` names the fitted ones)."""
    out = []
    for arch, rows in SPINNING.items():
        for row, values in rows.items():
            arguments = CYCLES if row.startswith("cycles/") else SIZES
            for argument, us in zip(arguments, values, strict=True):
                unit = "cycles" if row.startswith("cycles/") else "B kernels"
                name = f"{arch} traced program {row.removeprefix('cycles/')}, {argument} {unit}"
                model = lambda a=arch, r=row, n=argument: traced_us(a, _programs(a, r, n))  # noqa: E731
                out.append(Figure(name, SOURCE + FILES[arch], us, us, "us", model, group="dispatch"))
        for row, us in EMPTY[arch].items():
            name = f"{arch} traced program, empty kernels: {row}"
            model = lambda a=arch, r=row: traced_us(a, _programs(a, r, 1024))  # noqa: E731
            fitted = row in FITTED
            out.append(Figure(name, SOURCE + FILES[arch], us, us, "us", model, fitted=fitted, group="dispatch"))
        for row, us in BIG_BINARIES[arch].items():
            name = f"{arch} traced program, empty kernels: {row}, 12288 B kernels"
            model = lambda a=arch, r=row: traced_us(a, _programs(a, r, 12288))  # noqa: E731
            out.append(Figure(name, SOURCE + FILES[arch], us, us, "us", model, group="dispatch"))
    return out


def figures() -> list[Figure]:
    """This module's figures: dispatch, host transfers, conv2d."""
    return [*dispatch_figures(), *published_transfer.figures(), *published_conv.figures()]
