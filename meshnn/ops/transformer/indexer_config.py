"""``ttnn.IndexerScoreProgramConfig``: the work-unit knobs of ``ttnn.experimental.indexer_score``
(tt-metal 2026-06, ``indexer_score_device_operation_types.hpp``), and the checks tt-metal makes of them.

- ``q_chunk_size`` (elements, default 32): query rows a work unit covers (``QC`` = it / 32 tiles);
- ``k_chunk_size`` (elements, default 32): key columns a work unit covers (``KC`` = it / 32 tiles);
- ``head_group_size`` (heads, default 1; 0 = every head): heads resident in L1 at once (``HB``);
  fewer than all streams the heads in groups.
They change how the cores split the work and, through the head chunks the compute sums before it
adds them into its L1 accumulator (:func:`head_chunk`), the rounding of the score.  Keyword-only and
assignable (nanobind's ``def_rw``), each a ``size_t``: an int >= 0 (a bool or a negative int is a TypeError).

May import: :mod:`meshnn.errors`.
"""

from __future__ import annotations

from dataclasses import dataclass

from meshnn.errors import MeshnnTypeError, MeshnnValueError

TILE = 32
SIZE_T_MAX = 2**64 - 1
BF16_TILE, FP32_TILE, BFP8_TILE = 2048, 4096, 1088
"""Bytes of a 32x32 tile of bfloat16, float32 and bfloat8_b (its 64 exponent bytes with it)."""
MASK_TILES = 2
"""The causal mask's tiles (the diagonal's strict upper -inf and a full -inf tile)."""
QK_BATCH_CAP = 32
"""The most heads a chunk holds when a work unit covers more than one query tile row (``QC > 1``)."""
_FIELDS = ("q_chunk_size", "k_chunk_size", "head_group_size")


def _size_t(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= SIZE_T_MAX:
        raise MeshnnTypeError(f"IndexerScoreProgramConfig: {name} must be an unsigned int (size_t), got {value!r}")
    return int(value)


@dataclass(kw_only=True)
class IndexerScoreProgramConfig:
    """``ttnn.IndexerScoreProgramConfig(*, q_chunk_size=32, k_chunk_size=32, head_group_size=1)``
    (see the module's text); a field set later is checked as when made."""

    q_chunk_size: int = 32
    k_chunk_size: int = 32
    head_group_size: int = 1

    def __setattr__(self, name: str, value: object) -> None:
        if name not in _FIELDS:
            raise MeshnnTypeError(f"IndexerScoreProgramConfig has no field {name!r}")
        object.__setattr__(self, name, _size_t(name, value))


def head_group(config: IndexerScoreProgramConfig, heads: int) -> int:
    """``HB``: the heads resident at once (``head_group_size``, 0 meaning all ``heads``)."""
    return heads if config.head_group_size == 0 else config.head_group_size


def head_chunk(config: IndexerScoreProgramConfig, heads: int) -> int:
    """The heads the compute multiplies into one destination-register sum before adding it to the
    L1 accumulator (``qk_batch_heads``): the head group, capped at 32 when ``QC > 1``."""
    group = head_group(config, heads)
    return group if config.q_chunk_size // TILE == 1 else min(group, QK_BATCH_CAP)


def check_config(op: str, config: IndexerScoreProgramConfig, shape: tuple[int, ...], t: int, start: int) -> None:
    """tt-metal's checks of ``config`` and ``chunk_start_idx`` ``start`` for q of ``shape``
    ``[B, Hi, Sq, D]`` and ``t`` keys, in its order (validate, then the program factory's)."""
    _, heads, sq, d = shape
    if sq % TILE or t % TILE or d % TILE:
        raise MeshnnValueError(f"ttnn.{op}: Sq {sq}, T {t}, D {d} must be tile-aligned")
    if start % TILE:
        raise MeshnnValueError(f"ttnn.{op}: chunk_start_idx {start} must be tile-aligned")
    if start + sq > t:
        raise MeshnnValueError(f"ttnn.{op}: chunk window [{start}, {start}+{sq}) exceeds T={t} (chunk_start_idx)")
    q_chunk, k_chunk = config.q_chunk_size, config.k_chunk_size
    if q_chunk % TILE or k_chunk % TILE:
        raise MeshnnValueError(
            f"ttnn.{op}: q_chunk_size {q_chunk} / k_chunk_size {k_chunk} must be tile-aligned (program_config)"
        )
    qc, kc, group = q_chunk // TILE, k_chunk // TILE, head_group(config, heads)
    if qc == 0 or (sq // TILE) % qc:
        raise MeshnnValueError(f"ttnn.{op}: q_chunk_size {q_chunk} must divide Sq {sq} (program_config)")
    if kc == 0 or kc > t // TILE:
        raise MeshnnValueError(f"ttnn.{op}: k_chunk_size {k_chunk} out of range (T={t}) (program_config)")
    if group == 0 or heads % group:
        raise MeshnnValueError(f"ttnn.{op}: head_group_size {group} must divide Hi {heads} (program_config)")
    chunk = head_chunk(config, heads)
    if group % chunk:
        raise MeshnnValueError(
            f"ttnn.{op}: head_group {group} not divisible by qk_batch_heads {chunk} (QC>1 with HB>32); reduce "
            "head_group_size or q_chunk_size (program_config)"
        )


def circular_buffer_bytes(config: IndexerScoreProgramConfig, shape: tuple[int, ...], q_bfp8: bool, k_bfp8: bool) -> int:
    """Bytes of the circular buffers the program makes on each core for q of ``shape`` ``[B, Hi, Sq, D]``
    (its bfloat16 accumulators: ``fp32_dest_acc_en`` is refused): q (two groups when streaming), k (two
    chunks), the gates, the mask, the head chunk's scores (a whole k chunk of them on the fast path), the
    output strip and the accumulator strip."""
    heads, dt = shape[1], shape[3] // TILE
    qc, kc, group = config.q_chunk_size // TILE, config.k_chunk_size // TILE, head_group(config, heads)
    chunk = head_chunk(config, heads)
    streaming = group < heads
    q_tile, k_tile = (BFP8_TILE if bfp8 else BF16_TILE for bfp8 in (q_bfp8, k_bfp8))
    columns = kc if kc >= 2 and chunk == heads and not streaming else 1
    tiles = (2 if streaming else 1) * group * qc * dt * q_tile + 2 * kc * dt * k_tile
    tiles += (heads * qc + MASK_TILES + columns * chunk + 2 * kc + max(2 * kc, qc * kc)) * BF16_TILE
    return tiles
