"""Flash decode (scaled_dot_product_attention_decode) as tt-metal's program ran it before its 2025-04
rewrite: the program of PERF.md's 64K-context rows (2025-02-20) and of the FlashDecode report's chart.

tt-metal ``ttnn/cpp/ttnn/operations/transformer/sdpa_decode`` from the flash-decode refactors of 2024-12
to #20912 (2025-04-25, "16x32 tiles and removing copy_blocks"; read at 3b28664ab1, 2025-03-03):

- the factory (``sdpa_decode_program_factory.cpp``) gives each (user, kv head) pair
  ``min(cores, max_cores_per_head_batch x pairs) / pairs`` cores; the pair's K chunks are dealt to them
  (``rt_args_common.hpp``: ``get_runtime_args``), the extra chunks to the last cores;
- each core runs ``flash_attention_loop`` (``compute_common.hpp``) over its chunks: per chunk two
  matmuls and twelve block operations (the scale, the row maximum's reduce and its running maximum,
  subtract-exp, the row sum's reduce, the exp of the maxima's difference, the sum's and the
  accumulator's rescale, two adds, two copies), each a separate call on the one tile row of q's heads:
  :data:`CALLS_PER_CHUNK`; a call's set-up (its init and data-format reconfigurations, the circular
  buffers' handshakes, a destination acquire and release a tile) is :attr:`DecodeLatency.call_cycles`,
  beyond its tiles' work (:func:`meshnn.perf.decode_ops.chunk_cycles`);
- the reducer core of a pair waits (``writer_decode_all.cpp``: ``noc_semaphore_wait``) until every
  other core has written its partial output and statistics, then merges them **one after another**
  (``sdpa_flash_decode.cpp``: thirteen block operations a worker, :data:`CALLS_PER_MERGE`), so each
  core beyond the first adds a merge after the slowest core's chunks.

A core's reads do not bind (reader_decode_all.cpp): it waits for its reads every
``(512 / active cores) x 1152 / q tile bytes`` tiles (18 at 16 cores with a bfloat16 q) and at each chunk's
end, so a 256-position chunk of a 128-wide bfloat8_b head is 4 waits and 64 tiles, about 4k cycles against
the chunk's 13k of calls and tiles; a paged cache (tt_transformers' 32-position blocks) costs a page-table
read a core and an L1 look-up a tile row.  The chip's DRAM still bounds the whole read (the model's
interleaved rate), which the chart's curves past their knees meet within 8% where all cores read.

Since #20912 the program's block operations were fused and merged differently (and since #37004 of
2026-02-20 the merges run as a tree): :func:`meshnn.perf.decode_ops.predict_sdpa_decode` times today's
program; an op desc carrying ``(PROGRAM_ATTRIBUTE, DecodeProgram.SERIAL_MERGE.value)`` is timed as this
one (:func:`with_program` marks a recorded step's decode attention so).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING

from meshnn.perf.desc import OpDesc, OpFamily

if TYPE_CHECKING:
    from meshnn.perf.recorder import Recorder

PROGRAM_ATTRIBUTE = "sdpa_decode_program"
"""The op-desc attribute naming the flash-decode program a figure ran (absent: today's)."""


class DecodeProgram(Enum):
    """Which of tt-metal's flash-decode programs times an op."""

    SERIAL_MERGE = "2025-02"  # before #20912 (2025-04-25): a call a block operation, merges one after another


CALLS_PER_CHUNK = 14
"""Calls a K chunk takes on its core in ``flash_attention_loop`` (compute_common.hpp, 2025-03): the QK and
the output matmuls, mul_block_bcast_scalar_inplace, reduce_c (max), max_block_inplace,
sub_exp_block_bcast_cols_inplace, reduce_c (sum), sub_exp_block, mul_block_inplace,
mul_block_bcast_cols_inplace, two add_block_inplace, two copy_block."""

FIRST_CHUNK_SAVED_CALLS = 5
"""A core's first chunk has no running statistics to rescale: one copy_block in place of the six calls that
rescale and add (max_block_inplace, sub_exp_block, mul_block_inplace, mul_block_bcast_cols_inplace, two
add_block_inplace)."""

FINAL_CALLS = 3
"""The reducer's last calls (sdpa_flash_decode.cpp): recip_block_inplace of the sum, mul_block_bcast_cols_inplace
of the output by it, copy_block to the output buffer."""

CALLS_PER_MERGE = 13
"""Calls the reducer makes for each other core (sdpa_flash_decode.cpp, 2025-03): two copy_block of the
partial output and sum, max_block, two sub_exp_block, two mul_block_inplace, add_block, two
mul_block_bcast_cols_inplace, add_block_inplace, two copy_block."""


@dataclass(frozen=True, slots=True)
class DecodeLatency:
    """The fitted figure of this program; ``sources`` names its origin."""

    call_cycles: float  # one block-operation call's set-up on a core, beyond its tiles
    sources: dict[str, str] = field(default_factory=dict, compare=False)


FLASH_DECODE_CHART = (
    "tt-metal tech_reports/FlashAttention/FlashDecode.md, figure 5 (images/FlashDecode/flash_decode128k.png)"
)

SERIAL_MERGE = DecodeLatency(
    call_cycles=648.0,
    sources={
        "call_cycles": f"fitted: {FLASH_DECODE_CHART} (2024-12-06; Llama-3.1-8B's shape, batch 1, 4 q heads, 1 kv "
        "head of 128, bfloat8_b cache, chunks of 512 past position 1024, HiFi4, on a T3000 chip): its T3K "
        "64-core curve rises 9.25 us a core until every core holds a chunk (124 us at 5.5K positions, 601 us at "
        "31.9K: 26.4K positions, 52 more cores): a merge, 13 calls and the partial's tiles (824 cycles), 648 "
        "cycles a call; checked by the T3K 16-core curve's slope past its knee (21.5 us a chunk a core: "
        "modelled 21.3), the chart's other curves at 64K and PERF.md's 64K rows (tests/perf/published_flash_decode.py, "
        "benchmarks/perf_model.py); Blackhole takes the same cycles",
    },
)


def merge_cycles(partial_cycles: float) -> float:
    """Cycles the reducer spends on one other core's result: its calls and the partial's tiles."""
    return CALLS_PER_MERGE * SERIAL_MERGE.call_cycles + partial_cycles


def chunk_call_cycles(chunks: int) -> float:
    """The set-up cycles of the calls of one (user, kv head) pair's ``chunks`` K chunks on its core, with the
    reducer's final calls."""
    calls = CALLS_PER_CHUNK * chunks - FIRST_CHUNK_SAVED_CALLS + FINAL_CALLS
    return max(calls, 0) * SERIAL_MERGE.call_cycles


def program_of(desc: OpDesc) -> DecodeProgram | None:
    """The program ``desc`` is marked to have run, None for today's."""
    value = dict(desc.attributes).get(PROGRAM_ATTRIBUTE)
    return None if value is None else DecodeProgram(value)


def marked(desc: OpDesc, program: DecodeProgram) -> OpDesc:
    """``desc`` marked as run by ``program`` when it is a decode attention, else as it is."""
    if desc.family is not OpFamily.SDPA_DECODE:
        return desc
    return desc.with_attribute(PROGRAM_ATTRIBUTE, program.value)


def with_program(recorder: Recorder, program: DecodeProgram, *, traced: bool) -> Recorder:
    """``recorder``'s ops re-timed (all traced or all eager) with its decode attention run by ``program``."""
    return recorder.retimed(traced=traced, rewrite=lambda desc: marked(desc, program))
