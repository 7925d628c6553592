"""Program dispatch and trace gaps (tt-metal's program-dispatch microbenchmark), host <-> device
transfers (:mod:`tests.perf.published_transfer`) and conv2d's device times
(:mod:`tests.perf.published_conv`), beside the model.

tt-metal: tests/tt_metal/tt_metal/perf_microbenchmark/dispatch/test_pgm_dispatch.cpp times a traced
replay of 10,000 programs back to back on one chip (``set_kernels_nullified``: every kernel is
empty unless told to spin ``KERNEL_RUN_TIME`` cycles), per program, for kernel binaries of 256 B to
12 KiB (its argument), one core or the whole grid (7x8 on Wormhole, 11x9 on Blackhole), with CBs,
runtime args, semaphores and kernel groups; goldens pgm_dispatch_golden.json (Wormhole) and
pgm_dispatch_blackhole_golden.json (2026-05-15), the mean of their two repetitions here.

What the model says about such a run: a traced op starts ``op_to_op_traced_ns`` (0.72 us, fitted to
the Galaxy decoder's measured gaps) after the one before it ends.  The rows whose kernels spin for
1,000 cycles or more check that gap (each program is its cycles plus the gap); the rows of empty
kernels time what the dispatcher does per program when no kernel hides it, which the model does not
have (every op it times has a kernel of 2 us or more: ``op_launch_ns``), shown outside the claim.
"""

from __future__ import annotations

from meshnn.perf.hardware import arch_perf
from meshnn.perf.model import op_to_op_ns

from . import published_conv, published_transfer
from .figure import Figure

SOURCE = "tt-metal: tests/tt_metal/tt_metal/perf_microbenchmark/dispatch/"
FILES = {"WH": "pgm_dispatch_golden.json", "BH": "pgm_dispatch_blackhole_golden.json"}
ARCH = {"WH": "wormhole_b0", "BH": "blackhole"}
SIZES = (256, 512, 1024, 2048, 4096, 8192)
CYCLES = (0, 1000, 2000, 3000, 4000, 5000, 10000)

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
        "brisc_only_trace": 1.570,
        "all_processors_all_cores_trace": 1.567,
        "all_processors_all_cores_1cb": 2.017,
        "all_processors_all_cores_32cb": 2.049,
        "all_processors_all_cores_1cb_8g": 5.310,
        "all_processors_1_core_1_rta": 1.826,
        "all_processors_all_cores_1_rta": 3.275,
        "all_processors_all_cores_128_rta": 7.380,
        "all_processors_all_cores_128_crta": 2.102,
        "sems_all_cores_1_processor_trace": 2.036,
        "maxed_config_params_trace": 7.683,
        "kernel_groups_trace": 4.512,
        "kernel_groups_128_rta_trace": 10.166,
        "eth_dispatch": 2.315,
    },
    "BH": {
        "brisc_only_trace": 1.279,
        "all_processors_all_cores_trace": 1.281,
        "all_processors_all_cores_1cb": 1.662,
        "all_processors_all_cores_32cb": 1.696,
        "all_processors_all_cores_1cb_8g": 4.627,
        "all_processors_1_core_1_rta": 1.499,
        "all_processors_all_cores_1_rta": 4.610,
        "all_processors_all_cores_128_rta": 5.664,
        "all_processors_all_cores_128_crta": 1.700,
        "sems_all_cores_1_processor_trace": 1.677,
        "maxed_config_params_trace": 6.078,
        "kernel_groups_trace": 4.270,
        "kernel_groups_128_rta_trace": 9.832,
    },
}

_EMPTY_WHY = (
    "empty kernels (set_kernels_nullified): what remains is the dispatcher's own work per program (its launch "
    "message and go signal to the cores, their done count back; each core's unique runtime args a NoC write of "
    "their own, CB configs and each kernel group's launch message on top), 1.3 to 10 us here, which bounds a "
    "replay when no kernel outlasts it; the model has no per-program dispatch cost (it prepares behind the kernel "
    "before: the spinning rows from 1,000 cycles and the shadow rows, met) and gives an empty program only the gap"
)
_BIG_BINARIES = (
    "8 KiB kernel binaries on all cores: the 8 KiB shadow rows take twice the 4 KiB ones (the five programs' "
    "binaries no longer fit the prefetcher's ring buffer, so each is fetched again and not prepared behind the "
    "slow kernel) and the 5,000-cycle row with 32 CBs 0.3 us more: the model has no kernel binary sizes"
)


def traced_us(arch: str, kernel_cycles: tuple[int, ...]) -> float:
    """The model's time of a traced replay of programs whose kernels spin ``kernel_cycles`` (each after
    the one before it, as ``Recorder.retimed(traced=True)`` times them), us."""
    perf = arch_perf(arch)
    total, previous = 0.0, None
    for cycles in kernel_cycles:
        kernel = perf.cycles_ns(cycles)
        total += op_to_op_ns(perf, traced=True, previous_kernel_ns=previous) + kernel
        previous = kernel
    return total / 1e3


def _programs(row: str, argument: int) -> tuple[int, ...]:
    """The kernel cycles of one iteration of ``row`` at ``argument`` (its cycles or binary size)."""
    if row.startswith("cycles/"):
        return (argument,)
    if row.endswith("_shadow"):  # one 40,000-cycle kernel, then 4 or 5 empty ones
        return (40000,) + (0,) * int(row.split("_")[2])
    return (int(row.split("_")[0]),)


def _spinning_why(arch: str, row: str, argument: int) -> str:
    if row.startswith("cycles/") and argument == 0:
        return _EMPTY_WHY
    if argument == 8192 and (row.endswith("_shadow") or (arch == "WH" and row.startswith("5000_"))):
        return _BIG_BINARIES
    return ""


def dispatch_figures() -> list[Figure]:
    """The spinning rows (checks of the traced gap) and the empty rows (outside the claim)."""
    out = []
    for arch, rows in SPINNING.items():
        for row, values in rows.items():
            arguments = CYCLES if row.startswith("cycles/") else SIZES
            for argument, us in zip(arguments, values, strict=True):
                unit = "cycles" if row.startswith("cycles/") else "B kernels"
                name = f"{arch} traced program {row.removeprefix('cycles/')}, {argument} {unit}"

                programs = _programs(row, argument)

                def model(a=ARCH[arch], p=programs) -> float:
                    return traced_us(a, p)

                why = _spinning_why(arch, row, argument)
                out.append(Figure(name, SOURCE + FILES[arch], us, us, "us", model, not why, why, group="dispatch"))
        for row, us in EMPTY[arch].items():
            name = f"{arch} traced program, empty kernels: {row.removesuffix('_trace')}"
            model = lambda a=ARCH[arch]: traced_us(a, (0,))  # noqa: E731
            out.append(Figure(name, SOURCE + FILES[arch], us, us, "us", model, False, _EMPTY_WHY, group="dispatch"))
    return out


def figures() -> list[Figure]:
    """This module's figures: dispatch, host transfers, conv2d."""
    return [*dispatch_figures(), *published_transfer.figures(), *published_conv.figures()]
