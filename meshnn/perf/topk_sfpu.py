"""The SFPU work of ``ttnn.topk``'s compute kernels, counted in instructions.

Counted from the loops of tt-metal's topk kernels (reduction/topk/device/kernels/compute: topk.cpp, the
single-core program; topk_local.cpp and topk_final.cpp, the multi-core one; topk_common_funcs.hpp) and of
the SFPU calls they make (tt-llk: tt_llk_wormhole_b0/common/inc/sfpu/ckernel_sfpu_topk.h).  Every SFPU call
works on a pair of tiles in the destination registers, one face column at a time: two faces of two columns,
:data:`FACE_COLUMNS` passes, each its loads, compare-and-swaps, transposes, no-ops and stores.  A count
here is those instructions; the unpacks, transposes and packs between the calls are not counted (their
cycles go into the fitted cost of an instruction, :attr:`OpLatency.topk_instruction_cycles`).

- ``topk_local_sort`` to ``end_phase``: a bitonic sort of each 64-value column, phases 0 to ``end_phase``
  (phase p: p + 1 compare steps), :data:`SORT_PHASE_INSTRUCTIONS` a face column.
- ``topk_merge``: one compare step between two sorted runs, eight values a load / swap / store.
- ``topk_rebuild``: the steps that re-sort a merged run, phase ``log2(k) - 1`` of the sort.

The single-core kernel inserts each tile into the kept ``k`` (ceil(k / 32) tiles): for each tile after
the first pair, one full sort (phase 5) a kept tile.  A multi-core local core sorts its tiles in pairs (to
phase ``log2(k) - 1`` for k up to 64), then runs ``log2(tiles)`` rounds, each merging pairs of runs and
rebuilding the survivors; the final core runs the rounds alone on the local cores' results.
"""

from __future__ import annotations

import math

FACE_COLUMNS = 4  # 2 faces x 2 columns of a tile pair, one pass each
SORT_PHASE_INSTRUCTIONS = (92, 96, 116, 120, 210, 304)  # phases 0..5 of topk_local_sort, a face column
"""Phase 0-3: four groups of 16 values, each a 16-value load (8), the phase's network (7, 8, 13 and twice
7 instructions) and a store (8); phase 4: its step 5 (two 16-value load / 2 swaps / store rounds and their
address increments: 90) and steps 4 to 1 as in phase 3 (120); phase 5: its step 6 (94), step 5 (90) and
steps 4 to 1 (120)."""
STEPS_4_TO_1 = 120  # the last four steps of a phase of 4 or more: four groups of 8 + 14 + 8
STEP_N = {5: 90, 6: 94}  # a long-distance step of a phase of 4 or more (steps 5 and 6)
MERGE_GROUP = 9  # topk_merge: 8 values loaded (4), swapped (1), stored (4)
SMALL_REBUILD_GROUP = {1: 28, 2: 32, 3: 34}  # topk_rebuild below phase 4: a 16-value group
SINGLE_CORE_END_PHASE = 5  # topk.cpp: each insertion sorts the whole 64 values


def sort_instructions(end_phase: int) -> int:
    """``topk_local_sort`` of a tile pair through phase ``end_phase`` (0 to 5)."""
    if not 0 <= end_phase < len(SORT_PHASE_INSTRUCTIONS):
        raise ValueError(f"topk_local_sort runs phases 0 to 5, not to {end_phase}")
    return FACE_COLUMNS * sum(SORT_PHASE_INSTRUCTIONS[: end_phase + 1])


def merge_instructions(k: int, m_iter: int) -> int:
    """``topk_merge`` of a tile pair at round ``m_iter``: max(64 >> m, 2 min(k, 32)) values a face column,
    eight at a time."""
    k_max = min(k, 32)
    values = max(64 >> m_iter, 2 * k_max)
    return FACE_COLUMNS * (values // 8) * MERGE_GROUP


def rebuild_instructions(k: int, m_iter: int, skip_second: bool) -> int:
    """``topk_rebuild`` of a tile pair (or of one tile, ``skip_second``) after round ``m_iter``: phase
    log2(k) - 1 of the sort; from phase 4 its steps over the whole 64 values, below in 16-value groups."""
    phase = int(math.log2(k)) - 1
    if phase >= 4:
        return FACE_COLUMNS * (sum(STEP_N[s] for s in range(phase + 1, 4, -1)) + STEPS_4_TO_1)
    values = max(64 >> (m_iter + 1), 2 * k) >> int(skip_second)
    return FACE_COLUMNS * math.ceil(values / 16) * SMALL_REBUILD_GROUP[max(phase, 1)]


def bitonic_instructions(tiles: int, k: int, *, presort: bool) -> int:
    """A multi-core core's SFPU instructions for a row of ``tiles`` tiles: (``presort``: a local core) the
    pair sorts, then floor(log2(tiles)) rounds as topk_common_funcs.hpp runs them: each round merges the
    pairs of runs it finds inside the row, halves the runs and rebuilds them two tiles at a time (one
    where a single run of a single tile is left)."""
    per_seq = math.ceil(k / 32)
    pairs = max((2 * 32) // k, 2)
    total = math.ceil(tiles / 2) * sort_instructions(int(math.log2(k)) - 1 if k <= 64 else 5) if presort else 0
    runs = tiles * 32 // k
    for m in range(int(math.log2(tiles)) if tiles > 1 else 0):
        dist = ((1 << m) * k) >> 5
        merges = 0
        for i in range(0, runs, pairs):
            for t in range(per_seq):
                left = ((i * (1 << m) * k) >> 5) + t
                right = left + dist if dist else left + 1
                if left >= tiles or right >= tiles:
                    break
                merges += 1
        runs >>= 1
        single = tiles == 1 or (runs == 1 and per_seq == 1)
        pairs = 2 if pairs == 2 else pairs >> 1
        kept = sum(
            1
            for idx in range(0, runs, max(pairs >> 1, 1))
            for t in range(per_seq)
            if ((idx * (1 << (m + 1)) * k) >> 5) + t < tiles
        )
        rebuilds = kept if single else kept // 2
        total += merges * merge_instructions(k, m) + rebuilds * rebuild_instructions(k, m, single)
    return total


def insertion_instructions(tiles: int, k: int) -> int:
    """The single-core kernel's SFPU instructions for a row of ``tiles`` tiles: every tile after the first
    pair sorted into each of the ceil(k / 32) kept tiles (the first pair: one sort)."""
    kept = math.ceil(k / 32)
    return max(1, (tiles - 1) * kept) * sort_instructions(SINGLE_CORE_END_PHASE)
