"""A 2-D matmul program's senders on Blackhole (meshnn/perf/matmul.py: multicast_flush_cycles): tt-metal's
in0 and in1 sender kernels call ``noc_async_writes_flushed()`` after each block's multicast under
ARCH_BLACKHOLE only, so a Blackhole sender waits for every block it multicast to leave before it reads
the next; a Wormhole sender does not."""

from __future__ import annotations

import dataclasses

import pytest

from meshnn.perf import MathFidelity, MatmulConfig, MatmulProgram, OpDesc, OpFamily, TensorDesc, machine, predict
from meshnn.perf.matmul import (
    activation_stream_cycles,
    chosen_config,
    in1_sender_cycles,
    multicast_flush_cycles,
    sender_read_cycles,
)
from meshnn.perf.systems import Machine

from . import published_gemm_split as split

N150, P150 = machine("n150"), machine("p150")


def without_flush(m: Machine) -> Machine:
    """``m`` with senders that do not wait for their multicasts (Wormhole's kernels)."""
    arch = dataclasses.replace(m.system.arch, sender_flushes_multicast=False)
    return dataclasses.replace(m, system=dataclasses.replace(m.system, arch=arch))


def mm(m: int, k: int, n: int, dtype: str, config: MatmulConfig | None = None) -> OpDesc:
    a, b, out = TensorDesc((1, 1, m, k), dtype), TensorDesc((1, 1, k, n), dtype), TensorDesc((1, 1, m, n), dtype)
    return OpDesc(OpFamily.MATMUL, (a, b), (out,), fidelity=MathFidelity.LoFi, matmul=config or MatmulConfig())


def test_only_blackhole_senders_flush_their_multicasts():
    assert P150.system.arch.sender_flushes_multicast and not N150.system.arch.sender_flushes_multicast
    assert multicast_flush_cycles(N150, 100, 576) == 0.0
    assert multicast_flush_cycles(P150, 100, 576) == pytest.approx(100 * 576 / P150.system.arch.noc_bytes_per_cycle)


@pytest.mark.parametrize("dtype", ["BFLOAT16", "BFLOAT8_B", "BFLOAT4_B"])
def test_a_2d_in1_sender_reads_then_flushes_each_tile_it_multicasts(dtype):
    """The in1 sender of a 2-D program reads its per_core_N columns x K tiles at one core's rate and, on
    Blackhole, waits for each block's multicast to leave: the NoC link's rate over the same bytes."""
    desc = chosen_config(mm(640, 1408, 1408, dtype), P150)
    assert desc.matmul is not None and desc.matmul.program is MatmulProgram.MULTICAST_2D
    tiles, tile = desc.matmul.per_core_n * 44, desc.inputs[1].tile_bytes  # 4 columns x 44 K tiles
    read = sender_read_cycles(P150, tiles, tile)
    assert in1_sender_cycles(desc, P150, 44) == pytest.approx(read + tiles * tile / 60.9)
    assert in1_sender_cycles(desc, without_flush(P150), 44) == pytest.approx(read)
    wh = chosen_config(mm(1024, 1024, 1024, dtype), N150)
    assert in1_sender_cycles(wh, N150, 32) == pytest.approx(sender_read_cycles(N150, 4 * 32, tile))


def test_the_flush_is_a_2d_senders_not_a_1d_multicasts():
    """A 1-D program's in0 multicast is timed as the sender waiting for its writes to land already
    (in0_multicast_cycles): the flush is not added to its stream again."""
    one_d = mm(32, 4096, 4096, "BFLOAT16", MatmulConfig(MatmulProgram.MULTICAST_1D, (11, 10), 1, 4))
    two_d = mm(640, 4096, 4096, "BFLOAT16", MatmulConfig(MatmulProgram.MULTICAST_2D, (11, 10), 2, 4))
    assert activation_stream_cycles(one_d, P150, 1, 128) == activation_stream_cycles(one_d, without_flush(P150), 1, 128)
    flush = multicast_flush_cycles(P150, 2 * 128, 2048)
    assert activation_stream_cycles(two_d, P150, 20, 128) == pytest.approx(
        activation_stream_cycles(two_d, without_flush(P150), 20, 128) + flush
    )


def test_the_flush_meets_the_2_row_bfloat4_b_math_threads_and_leaves_large_blocks_alone():
    """GEMM_FLOPS' P150 2-row bfloat4_b blocks (2x4, 2x8 tiles a core on both grids): their math thread
    was 11-23% above the model's tile multiplies, fill and launch; with the senders' flush (no constant
    fitted) each is within 15%.  Blocks of 4 rows and more are bound by their multiplies: unchanged."""
    small = [("p150", (640, 1408, 1408)), ("p150", (640, 1408, 2816))]
    small += [("p150_13x10", (640, 1664, 1664)), ("p150_13x10", (640, 1664, 3328))]
    for system, size in small:
        row = next(r for r in split.two_d_rows(system) if r[0] == "BFLOAT4_B" and r[1] == size)
        measured = split.math_thread_ns(row)
        assert abs(split.model_math_thread_ns(system, row) / measured - 1) <= 0.15, (system, size)
    large = chosen_config(mm(2560, 4224, 4224, "BFLOAT4_B"), P150)
    assert predict(large, P150).kernel_ns == pytest.approx(predict(large, without_flush(P150)).kernel_ns)
    # the flush lengthens the 2-row blocks' in1 stream by more than a tenth; since the banks serve bfloat4_b tiles
    # at their per-transfer rate (meshnn.perf.matmul_banks) the row's DRAM side is as long, and binds it
    two_row = chosen_config(mm(640, 1408, 2816, "BFLOAT4_B"), P150)
    flushed, plain = (in1_sender_cycles(two_row, m, 44) for m in (P150, without_flush(P150)))
    assert flushed > 1.1 * plain
    assert predict(two_row, P150).kernel_ns >= predict(two_row, without_flush(P150)).kernel_ns
