"""meshnn.perf.program_dispatch: the dispatcher's work for one program, from what the program carries,
and a traced replay of programs (the published rows themselves: tests/perf/published_dispatch.py)."""

from __future__ import annotations

import pytest

from meshnn.errors import MeshnnValueError
from meshnn.perf.hardware import BLACKHOLE, WORMHOLE_B0
from meshnn.perf.program_dispatch import (
    LAUNCH_MSG_BUFFER_ENTRIES,
    MOVER_BYTES_PER_CYCLE,
    RATES,
    DispatchCore,
    Kernel,
    ProgramDispatch,
    binary_write_ns,
    command_ns,
    describe_program,
    dispatch_rates,
    fetch_ns,
    launch_copy_ns,
    program_dispatch_ns,
    replay_gaps_ns,
    replay_ns,
)

ARCHS = [WORMHOLE_B0, BLACKHOLE]


@pytest.mark.parametrize("perf", ARCHS, ids=lambda p: p.arch.value)
def test_a_bare_program_costs_the_program_figure_at_any_core_count(perf):
    rates = dispatch_rates(perf.arch)
    assert program_dispatch_ns(ProgramDispatch(), perf) == rates.program_ns
    assert program_dispatch_ns(ProgramDispatch(cores=64), perf) == rates.program_ns  # go and launch: multicast


@pytest.mark.parametrize("perf", ARCHS, ids=lambda p: p.arch.value)
def test_unique_args_cost_a_command_a_group_and_a_write_a_further_core(perf):
    rates = dispatch_rates(perf.arch)
    one = program_dispatch_ns(ProgramDispatch(cores=1, rta_bytes_per_core=16), perf)
    assert one == pytest.approx(rates.program_ns + rates.unicast_command_ns)
    many = program_dispatch_ns(ProgramDispatch(cores=40, rta_bytes_per_core=16), perf)
    assert many == pytest.approx(one + 39 * rates.per_core_ns)
    bigger = command_ns(ProgramDispatch(cores=40, rta_bytes_per_core=16 + 160), perf)
    assert bigger == pytest.approx(many + 40 * 160 / rates.write_bytes_per_ns)
    groups = command_ns(ProgramDispatch(cores=40, kernel_groups=4, rta_bytes_per_core=16), perf)
    # three more launch-message multicasts, three more commands in place of three further cores' writes
    extra = 3 * (rates.multicast_ns + rates.unicast_command_ns - rates.per_core_ns)
    assert groups == pytest.approx(many + extra)


@pytest.mark.parametrize("perf", ARCHS, ids=lambda p: p.arch.value)
def test_each_config_range_is_a_multicast_and_one_core_a_unicast(perf):
    rates = dispatch_rates(perf.arch)
    grid = command_ns(ProgramDispatch(cores=64, config_ranges=3, config_bytes=512), perf)
    assert grid == pytest.approx(rates.program_ns + 3 * (rates.multicast_ns + 512 / rates.write_bytes_per_ns))
    single = command_ns(ProgramDispatch(cores=1, config_ranges=1, config_bytes=64), perf)
    assert single == pytest.approx(rates.program_ns + rates.unicast_command_ns + 64 / rates.write_bytes_per_ns)


def test_the_prefetchers_read_bounds_a_program_of_many_bytes_on_wormhole():
    """Wormhole's one-core DRAM read (12 B a cycle) is slower than the dispatcher's writes for 56 cores of
    1.5 KiB args: the prefetcher's read of the trace bounds it; Blackhole's (40 B a cycle) does not."""
    heavy = ProgramDispatch(cores=56, rta_bytes_per_core=1536)
    assert fetch_ns(heavy, WORMHOLE_B0) > command_ns(heavy, WORMHOLE_B0)
    assert program_dispatch_ns(heavy, WORMHOLE_B0) == fetch_ns(heavy, WORMHOLE_B0)
    assert fetch_ns(heavy, WORMHOLE_B0) == pytest.approx(heavy.trace_bytes() / 12.0)
    assert program_dispatch_ns(heavy, BLACKHOLE) == command_ns(heavy, BLACKHOLE)


@pytest.mark.parametrize("perf", ARCHS, ids=lambda p: p.arch.value)
def test_binaries_sent_again_are_a_multicast_a_group_and_their_bytes(perf):
    program = ProgramDispatch(cores=56, kernel_groups=7, binary_bytes_per_core=40960, binaries_cached=False)
    rates = dispatch_rates(perf.arch)
    expected = 7 * rates.multicast_ns + perf.cycles_ns(7 * 40960 / perf.noc_bytes_per_cycle)
    assert binary_write_ns(program, perf) == pytest.approx(expected)
    sent = program_dispatch_ns(program, perf, send_binaries=True)
    assert sent == pytest.approx(program_dispatch_ns(program, perf) + expected)


@pytest.mark.parametrize("perf", ARCHS, ids=lambda p: p.arch.value)
def test_a_replay_is_the_dispatch_or_the_kernel_and_gap_whichever_is_longer(perf):
    program = ProgramDispatch(cores=56, rta_bytes_per_core=512)
    dispatch = program_dispatch_ns(program, perf)
    assert replay_ns([(program, 0.0)], perf) == pytest.approx(dispatch)
    long_kernel = 3 * dispatch
    assert replay_ns([(program, long_kernel)], perf) == pytest.approx(long_kernel + perf.op_to_op_traced_ns)
    # more programs than the launch-message ring holds behind one long kernel: those past the ring could not
    # be prepared while it ran, so the replay is longer than the kernel and a gap a program, and shorter than
    # the kernel and a full dispatch a program
    behind = [(program, 100 * dispatch)] + [(program, 0.0)] * (2 * LAUNCH_MSG_BUFFER_ENTRIES)
    replay = replay_ns(behind, perf)
    all_ahead = 100 * dispatch + len(behind) * perf.op_to_op_traced_ns
    assert all_ahead + dispatch < replay < 100 * dispatch + len(behind) * dispatch
    unbounded = [(program, 100 * dispatch)] + [(program, 0.0)] * (LAUNCH_MSG_BUFFER_ENTRIES - 2)
    assert replay_ns(unbounded, perf) == pytest.approx(100 * dispatch + len(unbounded) * perf.op_to_op_traced_ns)


def test_rates_have_sources_and_no_ethernet_figure_on_blackhole():
    for rates in RATES.values():
        assert set(rates.sources) == {
            "program_ns",
            "eth_program_ns",
            "unicast_command_ns",
            "per_core_ns",
            "multicast_ns",
            "write_bytes_per_ns",
        }
    eth = ProgramDispatch(dispatch_core=DispatchCore.ETH)
    assert program_dispatch_ns(eth, WORMHOLE_B0) == RATES[WORMHOLE_B0.arch].eth_program_ns
    with pytest.raises(MeshnnValueError, match="Ethernet"):
        program_dispatch_ns(eth, BLACKHOLE)


@pytest.mark.parametrize(
    "kwargs", [{"cores": 0}, {"cores": 4, "kernel_groups": 5}, {"kernel_groups": 0}, {"rta_bytes_per_core": -4}]
)
def test_an_impossible_program_is_refused(kwargs):
    with pytest.raises(MeshnnValueError, match="ProgramDispatch"):
        ProgramDispatch(**kwargs)


# tt-metal models/demos/llama3_70b_galaxy/tests/decoder_perf_targets_6u.json, "decoder": each op's
# non-overlapped-dispatch-time (its op-to-op latency with TT_METAL_KERNELS_EARLY_RETURN=1: the dispatch
# alone), kernel_duration and traced op_to_op (ns), in the decoder's call order (tt/llama_decoder.py:
# attention norm, llama_attention.forward_decode, ff norm, llama_mlp.forward)
GALAXY_DECODER = [
    ("RMS_0", 8567, 16720, 771),
    ("QKV_MM", 5368, 7082, 759),
    ("LlamaReduceScatterCreateHeads", 8438, 8011, 868),
    ("RotaryEmbeddingLlamaFusedQK", 3412, 2234, 1002),
    ("PagedUpdateCache", 4170, 4452, 737),
    ("SDPA", 8528, 8063, 625),
    ("AllGatherConcat", 11378, 8412, 602),
    ("DO_MM", 5826, 7701, 599),
    ("AllReduceAsync_DO", 6556, 13300, 706),
    ("RMS_1", 7375, 16346, 740),
    ("Matmul_FF3_ReduceScatter_FF1", 23457, 17498, 723),
    ("ReduceScatter_FF3", 7398, 7219, 698),
    ("AllGatherAsync_Binary_Mult", 4532, 7084, 646),
    ("Binary_Mult_Silu", 5580, 2374, 717),
    ("FF2_MM", 5812, 13973, 652),
    ("AllReduceAsync_FF2", 6640, 13441, 729),
]


def test_the_galaxy_decoder_prepares_every_op_behind_the_kernels_before():
    """The decoder's ops take 3.4 to 23.5 us of dispatch each, more than the kernel before them for six
    (1.4 to 7.1 us of gap if each were prepared behind its predecessor's kernel alone), yet their traced gaps
    measure 0.6 to 1.0 us: the dispatcher runs up to seven programs ahead, and replayed so every op's gap is
    the traced gap.  So a whole-op prediction of a traced run adds no dispatch to these ops."""
    perf = WORMHOLE_B0
    steps = [(dispatch, kernel) for _, dispatch, kernel, _ in GALAXY_DECODER]
    gaps = replay_gaps_ns(steps, perf, repeats=3)
    assert gaps == pytest.approx([perf.op_to_op_traced_ns] * len(steps))
    assert max(measured for *_, measured in GALAXY_DECODER) < 1100
    behind_one = [max(0.0, steps[i][0] - steps[i - 1][1]) for i in range(len(steps))]
    assert sum(b > 1100 for b in behind_one) == 6


def test_a_dispatch_longer_than_the_kernels_before_it_shows_in_the_gap():
    perf = WORMHOLE_B0
    gaps = replay_gaps_ns([(2000.0, 1000.0), (80000.0, 60000.0)], perf, repeats=3)
    assert gaps[0] == pytest.approx(perf.op_to_op_traced_ns)  # prepared behind the 60 us kernel
    assert gaps[1] > 10000.0  # 80 us of dispatch behind 61 us of kernels and gaps


def test_a_program_described_as_its_factory_makes_it():
    program = describe_program(
        cores=64,
        kernels=frozenset({Kernel.BRISC, Kernel.COMPUTE}),
        kernel_groups=2,
        args_per_kernel=10,
        common_args_per_kernel=3,
        cbs=5,
        cb_ranges=2,
        semaphores=2,
        binary_bytes=2048,
    )
    assert (program.cores, program.kernel_groups, program.rta_bytes_per_core) == (64, 2, 2 * 10 * 4)
    # two CB ranges; the semaphores (16 B each) and each kernel's 12 B of common args (padded to 16) on the first
    assert (program.config_ranges, program.config_bytes) == (2, 5 * 16 + 2 * 16 + 2 * 16)
    assert program.binary_bytes_per_core == 2048 * (1 + 3)  # BRISC's binary and the three TRISCs'
    bare = describe_program(cores=1, semaphores=1)
    assert (bare.config_ranges, bare.config_bytes, bare.rta_bytes_per_core) == (1, 16, 0)
    assert describe_program(cores=8).config_ranges == 0


@pytest.mark.parametrize("kwargs", [{"kernels": frozenset()}, {"cbs": -1}, {"cb_ranges": 0}, {"args_per_kernel": -2}])
def test_an_impossible_description_is_refused(kwargs):
    with pytest.raises(MeshnnValueError, match="describe_program"):
        describe_program(cores=4, **kwargs)


def test_a_wormhole_launch_copies_the_ncrisc_binary_into_its_instruction_ram():
    with_ncrisc = describe_program(cores=56, binary_bytes=8192)
    assert with_ncrisc.ncrisc_binary_bytes == 8192
    copy = launch_copy_ns(with_ncrisc, WORMHOLE_B0)
    assert copy == pytest.approx(WORMHOLE_B0.cycles_ns(8192 / MOVER_BYTES_PER_CYCLE))  # 704 cycles at 11.6 B a cycle
    assert launch_copy_ns(with_ncrisc, BLACKHOLE) == 0.0  # Blackhole's NCRISC runs from L1
    without = describe_program(cores=56, kernels=frozenset({Kernel.BRISC, Kernel.COMPUTE}), binary_bytes=8192)
    assert launch_copy_ns(without, WORMHOLE_B0) == 0.0
    # on the kernel's path: a long kernel's replay grows by the copy, and only on Wormhole
    long_kernel = 50000.0
    for perf, extra in ((WORMHOLE_B0, copy), (BLACKHOLE, 0.0)):
        replay = replay_ns([(with_ncrisc, long_kernel)], perf)
        assert replay == pytest.approx(long_kernel + extra + perf.op_to_op_traced_ns)
    with pytest.raises(MeshnnValueError):
        ProgramDispatch(ncrisc_binary_bytes=-1)
