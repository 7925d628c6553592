"""What tt-metal's dispatcher does for one program, and the time it takes (ns), Wormhole and Blackhole.

A program reaches the cores as a sequence of commands that the prefetcher reads (traced: from the trace
buffer in DRAM) and the dispatcher core carries out one after the other (tt-metal:
tt_metal/impl/program/dispatch.cpp ``assemble_device_commands`` and ``write_program_command_sequence``;
tt_metal/impl/dispatch/kernels/cq_dispatch.cpp):

- a preamble (the write offsets), then the unique runtime args: one ``CQ_DISPATCH_CMD_WRITE_PACKED``
  per kernel group, a unicast NoC write of its own to every core of the group (``process_write_packed``
  issues them back to back, no barrier between unicasts), each the kernels' args of that core;
- the program config: circular-buffer configs, semaphores and common runtime args batched by destination
  range into multicast writes (``BatchedTransferGenerator``, ``process_write_packed_large``), and before
  every multicast that is not linked to the one before, a NoC write barrier (tt-metal's workaround for
  multicast path-reservation hangs): each destination range costs a multicast round trip;
- kernel binaries, unless the worker's kernel-config ring still holds them from the program's last run
  (``simple_trace_allocator.cpp``: a traced program whose binaries are cached sends a wait barrier instead);
- the launch message, one multicast per kernel group (``process_write_packed`` with multicast sub-commands,
  a barrier before each), and the go signal, sent when the previous program's cores have all reported done.

A program is described by :func:`describe_program` (its cores, kernels and kernel groups, runtime args, CBs,
semaphores, binary size) or as a :class:`ProgramDispatch` (what the dispatcher writes); :func:`program_dispatch_ns`
times it on Wormhole or Blackhole.

All of it but the go signal is done while the previous program's kernels run (the launch-message ring holds
``LAUNCH_MSG_BUFFER_ENTRIES - 1`` programs ahead: tt_metal/hw/inc/hostdev/dev_msgs.h), so a traced program
takes ``max(dispatch, previous kernel + traced gap)`` (:func:`replay_ns`): the dispatch work bounds a replay
only when the kernels are shorter than it (empty kernels: tt-metal's program-dispatch microbenchmark,
tests/perf/published_dispatch.py).

Whole ops (:mod:`meshnn.perf.model`, :class:`~meshnn.perf.recorder.Recorder`) do not add this cost: a traced
op is timed its kernel plus the traced gap, which the dispatcher's run-ahead keeps where the kernels before
are long enough.  Checked on the one published set of real ops' dispatch times: the Llama-70B Galaxy decoder
(tt-metal models/demos/llama3_70b_galaxy/tests/decoder_perf_targets_6u.json) gives each op's dispatch alone
(non-overlapped-dispatch-time, 3.4 to 23.5 us) and its traced gap (0.6 to 1.0 us); replayed by
:func:`replay_gaps_ns` every op's gap is the traced gap (tests/perf/test_program_dispatch.py), where six of the
sixteen would wait 1.4 to 7.1 us if each were prepared behind the kernel before it alone.  An op description
has no runtime-arg, CB or kernel-group counts to build a :class:`ProgramDispatch` from, and the traced gap was
fitted on that decoder's measured gaps, which already hold what the run-ahead leaves.

The rates: five figures an arch (and Wormhole's Ethernet dispatcher's) fitted to named rows of that
microbenchmark's goldens (tests/tt_metal/tt_metal/perf_microbenchmark/dispatch/pgm_dispatch_golden.json and
pgm_dispatch_blackhole_golden.json, empty kernels, 1 KiB binaries; ``DispatchRates.sources`` names them),
and the prefetcher's read of the trace from DRAM at one core's DRAM read rate
(:attr:`ArchPerf.dram_activation_bytes_per_cycle`, fitted on matmul readers, not on these rows).
"""

from __future__ import annotations

import enum
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from meshnn.device.arch import Arch
from meshnn.errors import MeshnnValueError
from meshnn.perf.hardware import ArchPerf, arch_perf

LAUNCH_MSG_BUFFER_ENTRIES = 8
"""tt-metal: tt_metal/hw/inc/hostdev/dev_msgs.h ``launch_msg_buffer_num_entries``; a program's launch message
is written at most this many less one programs ahead of the one running."""

KERNEL_CONFIG_BYTES = 69 * 1024
"""tt-metal: tt_metal/llrt/hal/tt-1xx/{wormhole,blackhole}/*_hal_tensix.cpp: a worker's default kernel-config
ring (runtime args, CB and semaphore configs, cached kernel binaries of the programs in flight), bytes."""

L1_ALIGNMENT = 16
"""Bytes: each unicast sub-command's data, and each transfer of a batched multicast, is padded to it."""

SUB_CMD_BYTES = 4
"""Bytes of one ``CQDispatchWritePackedUnicastSubCmd`` (its core's NoC address): tt-metal
tt_metal/impl/dispatch/kernels/cq_commands.hpp."""

COMMAND_BYTES = 32
"""Bytes of one command in the trace: the prefetcher's relay command and the dispatcher's command, 16 B each
(``CQ_DISPATCH_CMD_SIZE``, cq_commands.hpp)."""

MOVER_BYTES_PER_CYCLE = 8 * 16 / 11
"""Wormhole's mover (the Tensix tile's copy engine, the only writer of NCRISC's instruction RAM) copying L1 to L1 or
to that RAM: eight 16-byte reads and eight writes every 11 cycles, measured without L1 port contention
(tt-isa-documentation: WormholeB0/TensixTile/Mover.md, "Performance"), bytes a cycle."""


class DispatchCore(enum.Enum):
    """Where the dispatcher runs (tt-metal ``DispatchCoreType``)."""

    TENSIX = "worker"
    ETH = "eth"


@dataclass(frozen=True)
class ProgramDispatch:
    """What one program asks the dispatcher to write.

    ``cores``: Tensix cores running its kernels; ``kernel_groups``: distinct sets of kernels (one launch
    message multicast each), at least 1 and at most ``cores``; ``rta_bytes_per_core``: unique runtime
    args of one core, all its kernels together (0: none); ``config_ranges``: destination core ranges of
    the program config (CBs, semaphores, common runtime args; 0 when the program has none), each one
    multicast; ``config_bytes``: the bytes of one such range's config (its CB configs, 16 B each,
    semaphores, 16 B each, and common args); ``binary_bytes_per_core``: kernel binaries a core holds
    (the sum over its processors); ``binaries_cached`` False: the workers' config ring cannot keep them
    beside another program's, so they are sent again whenever another program ran before (:func:`replay_ns`);
    ``ncrisc_binary_bytes``: the NCRISC kernel's binary (0: the program runs no NCRISC kernel), which a
    Wormhole worker copies into NCRISC's instruction RAM at every launch (:func:`launch_copy_ns`)."""

    cores: int = 1
    kernel_groups: int = 1
    rta_bytes_per_core: int = 0
    config_ranges: int = 0
    config_bytes: int = 0
    binary_bytes_per_core: int = 0
    binaries_cached: bool = True
    dispatch_core: DispatchCore = DispatchCore.TENSIX
    ncrisc_binary_bytes: int = 0

    def __post_init__(self) -> None:
        if self.cores < 1 or not 1 <= self.kernel_groups <= self.cores:
            raise MeshnnValueError(
                f"ProgramDispatch needs 1 <= kernel_groups <= cores, got {self.kernel_groups} groups on {self.cores}"
            )
        counts = (
            self.rta_bytes_per_core,
            self.config_ranges,
            self.config_bytes,
            self.binary_bytes_per_core,
            self.ncrisc_binary_bytes,
        )
        if min(counts) < 0:
            raise MeshnnValueError(f"ProgramDispatch: byte counts and ranges are never negative, got {counts}")

    def trace_bytes(self) -> int:
        """Bytes of the program's commands in the trace buffer, which the prefetcher reads from DRAM."""
        total = 4 * COMMAND_BYTES
        if self.rta_bytes_per_core:
            data = math.ceil(self.rta_bytes_per_core / L1_ALIGNMENT) * L1_ALIGNMENT
            total += self.kernel_groups * COMMAND_BYTES + self.cores * (SUB_CMD_BYTES + data)
        total += self.config_ranges * (COMMAND_BYTES + self.config_bytes)
        total += self.kernel_groups * COMMAND_BYTES
        return total


class Kernel(enum.Enum):
    """A Tensix kernel of a program: on BRISC, on NCRISC, or the compute kernel (three TRISC binaries, one set
    of runtime args)."""

    BRISC = "brisc"
    NCRISC = "ncrisc"
    COMPUTE = "compute"

    @property
    def binaries(self) -> int:
        """The processors (each its own binary) the kernel runs on."""
        return 3 if self is Kernel.COMPUTE else 1


ALL_KERNELS = frozenset(Kernel)
CB_CONFIG_BYTES = 16
"""A circular buffer's config in the program config: address, size, pages, page size (4 words)."""
SEMAPHORE_BYTES = 16
"""A semaphore's word in the program config, L1-aligned."""


def describe_program(
    *,
    cores: int,
    kernels: frozenset[Kernel] = ALL_KERNELS,
    kernel_groups: int = 1,
    args_per_kernel: int = 0,
    common_args_per_kernel: int = 0,
    cbs: int = 0,
    cb_ranges: int = 1,
    semaphores: int = 0,
    binary_bytes: int = 0,
    dispatch_core: DispatchCore = DispatchCore.TENSIX,
) -> ProgramDispatch:
    """A :class:`ProgramDispatch` from a program as its factory makes it: ``cores`` running ``kernels`` (on each
    core, in ``kernel_groups`` groups), each kernel's unique runtime args on every core and common runtime args
    (``args_per_kernel``, ``common_args_per_kernel``: 4-byte words), ``cbs`` circular buffers on each of
    ``cb_ranges`` core ranges, ``semaphores`` on the program's cores, and ``binary_bytes`` a processor's binary.

    The semaphores and common args travel with the first CB range's configs (tt-metal batches the config by
    destination range); each further CB range is a multicast of its own."""
    if not kernels:
        raise MeshnnValueError("describe_program: a program runs at least one kernel")
    if min(args_per_kernel, common_args_per_kernel, cbs, semaphores, binary_bytes) < 0 or cb_ranges < 1:
        raise MeshnnValueError("describe_program: counts are never negative and a CB range count is at least 1")
    common = len(kernels) * math.ceil(4 * common_args_per_kernel / L1_ALIGNMENT) * L1_ALIGNMENT
    shared = semaphores * SEMAPHORE_BYTES + common
    return ProgramDispatch(
        cores=cores,
        kernel_groups=kernel_groups,
        rta_bytes_per_core=len(kernels) * 4 * args_per_kernel,
        config_ranges=cb_ranges if cbs else 1 if shared else 0,
        config_bytes=cbs * CB_CONFIG_BYTES + shared,
        binary_bytes_per_core=binary_bytes * sum(k.binaries for k in kernels),
        dispatch_core=dispatch_core,
        ncrisc_binary_bytes=binary_bytes if Kernel.NCRISC in kernels else 0,
    )


@dataclass(frozen=True)
class DispatchRates:
    """The dispatcher's costs on one architecture (ns; bytes per ns), with their sources."""

    program_ns: float  # a program with one kernel group: preamble, launch message, go signal, the cores' done
    eth_program_ns: float | None  # the same from a dispatcher on an Ethernet core (None: no figure)
    unicast_command_ns: float  # one packed unicast write command: the command and its first core's write
    per_core_ns: float  # each further core of a packed unicast write
    multicast_ns: float  # one multicast write after its barrier (a config range, a kernel group's launch message)
    write_bytes_per_ns: float  # the dispatcher's written data
    sources: dict[str, str] = field(default_factory=dict, compare=False)


GOLDEN = "tt-metal: tests/tt_metal/tt_metal/perf_microbenchmark/dispatch/pgm_dispatch{}_golden.json"
_FIT = "fitted: {} {} (us a program, the mean of its two repetitions at 1 KiB binaries)"


def _sources(golden: str, rows: dict[str, str]) -> dict[str, str]:
    return {name: _FIT.format(golden, row) for name, row in rows.items()}


_ROWS = {
    "program_ns": "brisc_only_trace 1.570 (WH) / 1.279 (BH): one core, one processor, nothing but the program",
    "eth_program_ns": "eth_dispatch 2.315 (the same program dispatched from an Ethernet core; Wormhole only)",
    "unicast_command_ns": "all_processors_1_core_1_rta less brisc_only_trace (one write_packed to one core)",
    "per_core_ns": "all_processors_all_cores_1_rta less all_processors_1_core_1_rta, over the further cores",
    "multicast_ns": "all_processors_all_cores_1cb less brisc_only_trace (one CB config multicast to the grid)",
    "write_bytes_per_ns": "one_processor_all_cores_128_rta less all_processors_all_cores_1_rta: 496 B more a core "
    "(512 B of args against one 16 B write)",
}

RATES: dict[Arch, DispatchRates] = {
    Arch.WORMHOLE_B0: DispatchRates(
        program_ns=1570.0,
        eth_program_ns=2315.0,
        unicast_command_ns=256.0,
        per_core_ns=26.35,
        multicast_ns=447.0,
        write_bytes_per_ns=47.16,
        sources=_sources(GOLDEN.format(""), _ROWS),
    ),
    Arch.BLACKHOLE: DispatchRates(
        program_ns=1279.0,
        eth_program_ns=None,
        unicast_command_ns=220.0,
        per_core_ns=31.74,
        multicast_ns=383.0,
        write_bytes_per_ns=168.7,
        sources={
            **_sources(GOLDEN.format("_blackhole"), _ROWS),
            "eth_program_ns": "none: the Blackhole golden has no eth_dispatch row (test_pgm_dispatch.cpp registers "
            "it for Wormhole only)",
        },
    ),
}


def dispatch_rates(arch: Arch | str) -> DispatchRates:
    """The dispatcher's rates of ``arch`` (an :class:`Arch` or its value)."""
    return RATES[arch if isinstance(arch, Arch) else Arch(arch)]


def _perf(arch: Arch | str | ArchPerf) -> ArchPerf:
    return arch if isinstance(arch, ArchPerf) else arch_perf(arch)


def fetch_ns(program: ProgramDispatch, arch: Arch | str | ArchPerf) -> float:
    """The prefetcher's read of ``program``'s commands from the trace buffer in DRAM (ns): one core reading
    DRAM pages, at :attr:`ArchPerf.dram_activation_bytes_per_cycle`."""
    perf = _perf(arch)
    return perf.cycles_ns(program.trace_bytes() / perf.dram_activation_bytes_per_cycle)


def binary_write_ns(program: ProgramDispatch, arch: Arch | str | ArchPerf) -> float:
    """Writing the kernel binaries (ns): each kernel group's binaries one multicast to its cores (a barrier
    before each, as any unlinked multicast: :attr:`DispatchRates.multicast_ns`), their bytes streamed at the
    NoC link's rate (:attr:`ArchPerf.noc_bytes_per_cycle`)."""
    perf = _perf(arch)
    rates = dispatch_rates(perf.arch)
    groups_bytes = program.kernel_groups * program.binary_bytes_per_core
    return program.kernel_groups * rates.multicast_ns + perf.cycles_ns(groups_bytes / perf.noc_bytes_per_cycle)


def launch_copy_ns(program: ProgramDispatch, arch: Arch | str | ArchPerf) -> float:
    """The worker's copy of the NCRISC kernel into NCRISC's instruction RAM at each launch (ns): Wormhole only
    (its NCRISC runs its kernel from a 16 KiB core-local instruction RAM that only the mover writes; Blackhole's
    NCRISC runs from L1).  tt-metal's NCRISC firmware (tt_metal/hw/firmware/src/tt-1xx/ncrisc.cc) starts the
    mover on the binary as soon as BRISC signals a new launch message, sets up its circular buffers meanwhile,
    and waits for the copy before it halts for BRISC to restart it in the instruction RAM; BRISC (brisc.cc,
    ``start_ncrisc_kernel_run``) waits for that before it runs its own kernel.  So the copy, at the mover's rate
    (:data:`MOVER_BYTES_PER_CYCLE`), lies between a core's previous program and its next kernel.  What part of it
    the NCRISC's own circular-buffer setup hides has no figure, so it is counted whole."""
    perf = _perf(arch)
    if perf.arch is not Arch.WORMHOLE_B0 or not program.ncrisc_binary_bytes:
        return 0.0
    return perf.cycles_ns(math.ceil(program.ncrisc_binary_bytes / 16) * 16 / MOVER_BYTES_PER_CYCLE)


def command_ns(program: ProgramDispatch, arch: Arch | str | ArchPerf) -> float:
    """The dispatcher's own work for ``program`` (ns), the commands carried out one after another.  From an
    Ethernet core: its own program figure, every other cost a Tensix dispatcher's (the one Ethernet row, a
    bare program, splits nothing else)."""
    perf = _perf(arch)
    rates = dispatch_rates(perf.arch)
    total = rates.program_ns
    if program.dispatch_core is DispatchCore.ETH:
        if rates.eth_program_ns is None:
            raise MeshnnValueError(f"no figure of a program dispatched from an Ethernet core on {perf.arch.value}")
        total = rates.eth_program_ns
    total += (program.kernel_groups - 1) * rates.multicast_ns  # one launch-message multicast a group
    if program.rta_bytes_per_core:
        further = program.cores - program.kernel_groups
        total += program.kernel_groups * rates.unicast_command_ns + further * rates.per_core_ns
        data = math.ceil(program.rta_bytes_per_core / L1_ALIGNMENT) * L1_ALIGNMENT
        total += program.cores * max(0, data - L1_ALIGNMENT) / rates.write_bytes_per_ns
    if program.config_ranges:
        write = rates.unicast_command_ns if program.cores == 1 else rates.multicast_ns
        total += program.config_ranges * (write + program.config_bytes / rates.write_bytes_per_ns)
    return total


def program_dispatch_ns(program: ProgramDispatch, arch: Arch | str | ArchPerf, *, send_binaries: bool = False) -> float:
    """The time the dispatch of ``program`` takes when nothing hides it (ns): the dispatcher's commands, or
    the prefetcher's read of them from DRAM when that is slower (the two are pipelined); with
    ``send_binaries``, its kernel binaries written too (:func:`binary_write_ns`)."""
    binaries = binary_write_ns(program, arch) if send_binaries else 0.0
    return max(command_ns(program, arch), fetch_ns(program, arch)) + binaries


def _play(steps: Sequence[tuple[float, float, bool]], perf: ArchPerf) -> tuple[list[float], list[float]]:
    """Each step's go and end (ns) for ``steps`` of (dispatch ns, kernel ns, waits for the one before to end
    before it is prepared), as :func:`replay_ns` describes."""
    ahead = LAUNCH_MSG_BUFFER_ENTRIES - 1
    prepared, goes, ends = 0.0, [], []
    for i, (dispatch, kernel_ns, waits) in enumerate(steps):
        start = prepared
        if i >= ahead:
            start = max(start, goes[i - ahead])
        if waits and ends:
            start = max(start, ends[-1])
        prepared = start + dispatch
        goes.append(max(prepared, ends[-1] if ends else 0.0))
        ends.append(goes[-1] + kernel_ns + perf.op_to_op_traced_ns)
    return goes, ends


def replay_ns(
    programs: Sequence[tuple[ProgramDispatch, float]], arch: Arch | str | ArchPerf, *, repeats: int = 2
) -> float:
    """A traced replay of ``programs`` ((program, kernel ns) in order; equal entries are runs of the same
    program) played ``repeats`` times back to back: the time of the last play (ns), once the dispatcher's
    pipeline is full.

    The dispatcher prepares each program (:func:`program_dispatch_ns`) as soon as it has prepared the one
    before and the launch-message ring has room (at most ``LAUNCH_MSG_BUFFER_ENTRIES - 1`` programs ahead of
    the one running).  A program whose binaries the workers' config ring cannot keep (``binaries_cached``
    False) and that follows another program waits for that one to finish, then sends its binaries; a
    program's go signal waits for the program before to finish; a program ends its kernel, the launch's copy of
    its NCRISC binary on Wormhole (:func:`launch_copy_ns`) and the traced gap
    (:attr:`ArchPerf.op_to_op_traced_ns`) after its go."""
    perf = _perf(arch)
    sequence = list(programs) * max(1, repeats)
    steps = []
    for i, (program, kernel_ns) in enumerate(sequence):
        resend = not program.binaries_cached and i > 0 and sequence[i - 1] != sequence[i]
        kernel_ns += launch_copy_ns(program, perf)
        steps.append((program_dispatch_ns(program, perf, send_binaries=resend), kernel_ns, resend))
    _, ends = _play(steps, perf)
    first = len(sequence) - len(programs)
    return ends[-1] - (ends[first - 1] if first else 0.0)


def replay_gaps_ns(
    dispatch_and_kernels: Sequence[tuple[float, float]], arch: Arch | str | ArchPerf, *, repeats: int = 2
) -> list[float]:
    """Each program's gap in a traced replay of programs given as (dispatch ns, kernel ns), played ``repeats``
    times (the last play's, ns): from the end of the kernel before to its own kernel's start.  It is the traced
    gap wherever the dispatcher prepared the program behind the kernels before, more where it could not."""
    perf = _perf(arch)
    steps = [(d, k, False) for d, k in dispatch_and_kernels] * max(1, repeats)
    goes, ends = _play(steps, perf)
    first = len(steps) - len(dispatch_and_kernels)
    gaps = []
    for i in range(first, len(steps)):
        previous_kernel_end = ends[i - 1] - perf.op_to_op_traced_ns if i else 0.0
        gaps.append(goes[i] - previous_kernel_end)
    return gaps
