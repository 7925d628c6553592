"""Float32 copies of decoded bfloat16 weights, in the blocks the float32 products read.

On a CPU without fast bfloat16 products (:func:`~meshnn.ops.operands.bf16_products`), and for a
weight too large to widen whole, a product reads its bfloat16 weight as float32 a block at a time
(:func:`~meshnn.ops.matmul_kernel._wide_tiles`, ``_wide_matmul``): each block widened exactly
into a scratch block, then multiplied.  :class:`Blocks` gives a product those blocks; when the
weight has a :class:`~meshnn.ops.decoded.Decoded` memo, the widened blocks are kept beside it
(its ``wide``) within a bound, so a weight read at every decode step is widened once, not at every
step.  The blocks are the same either way: each a C-contiguous float32 tensor of the same shape
holding ``w[span]`` exactly, so the product reads the same operands and its bits do not depend on
what is kept (eager and replayed steps, memos on and off).

Kept blocks hang on their Decoded memo, so they go with it: anything that may change the bytes
drops the memo (a write, a program writing the buffer, a free), and with it its blocks; an
in-place patch of the memo's values drops them (:meth:`~meshnn.ops.decoded.Decoded.patch`).

Bounded: at most ``MESHNN_WIDE_BYTES`` (default 256 MiB; ``0`` turns them off) of float32 blocks on
all weights together.  As with the Decoded memos, a model reads its weights in the same order
every step: when the bound is reached a new weight's blocks are not kept (widened at each use)
rather than pushing out a weight the next step needs; blocks unused while ``STALE_FACTOR`` times as
many others were asked for make room, least recently used first.

May import: :mod:`meshnn.host`, :mod:`meshnn.ops.decoded` and :mod:`meshnn.ops.memo`.
"""

from __future__ import annotations

import functools
import itertools
import math
import weakref
from typing import Any

from meshnn.host.interrupts import passes_interrupts
from meshnn.ops.decoded import STALE_FACTOR, Bounded, Decoded
from meshnn.ops.memo import bytes_from_env

WIDE_BYTES_ENV = "MESHNN_WIDE_BYTES"

MIN_WIDE_BYTES = 64 << 10
"""Smaller weights (float32 bytes of all their blocks) are widened at each use."""


class WideCache(Bounded):
    """The bound on kept float32 blocks: :meth:`get` finds a memo's blocks for a product's key,
    :meth:`put` keeps new ones when they fit.  Counted: the blocks' bytes; an entry is
    ``[memo ref, bytes, tick of its last use]``, by id of its Decoded memo."""

    def get(self, memo: Decoded, key: tuple) -> Any:
        """``memo``'s kept blocks for a product of ``key`` (a tuple of them, views of one flat
        float32 tensor), or None."""
        kept = memo.wide
        with self._lock:
            self._tick += 1  # (every ask counts toward the stale span)
            if kept is None or kept[0] != key:
                self.misses += 1
                return None
            self.hits += 1
            entry = self._held.get(id(memo))
            if entry is not None:
                entry[2] = self._tick
                self._held.move_to_end(id(memo))
        return kept[2]

    def has_room(self, size: int) -> bool:
        """Whether ``size`` bytes of blocks may be kept (after dropping stale ones); a refusal of
        blocks large enough to keep is counted."""
        if size < MIN_WIDE_BYTES:
            return False
        with self._lock:
            if self._bytes + size > self.limit:
                self._drop_stale(size)
            if self._bytes + size <= self.limit:
                return True
            self.refused += 1
            return False

    def put(self, memo: Decoded, key: tuple, flat: Any, blocks: tuple = ()) -> bool:
        """Keep ``flat`` (float32, every block filled) and ``blocks`` (its views, one a block) as
        ``memo``'s blocks for ``key``, in place of any it had; False (nothing kept) when the bound
        has no room."""
        size = flat.numel() * flat.element_size()
        with self._lock:
            self.discard(memo)
            if not self.has_room(size):
                return False
            self._tick += 1
            key_id = id(memo)
            self._held[key_id] = [weakref.ref(memo, self._gone(key_id)), size, self._tick]
            self._bytes += size
            memo.wide = (key, flat, blocks)
        return True

    def discard(self, memo: Decoded) -> None:
        """Drop ``memo``'s blocks, if it has any (its values changed in place)."""
        with self._lock:
            entry = self._held.pop(id(memo), None)
            if entry is not None and entry[0]() is memo:
                self._bytes -= entry[1]
            memo.wide = None

    def _drop_stale(self, size: int) -> None:
        """Drop blocks, least recently used first, that went unused for the stale span."""
        span = STALE_FACTOR * len(self._held)
        while self._held and self._bytes + size > self.limit:
            key_id = next(iter(self._held))
            memo_ref, held, tick = self._held[key_id]
            memo = memo_ref()
            if memo is not None and self._tick - tick <= span:
                return
            del self._held[key_id]
            self._bytes -= held
            if memo is not None:
                memo.wide = None

    def _gone(self, key_id: int):
        @passes_interrupts
        def callback(_ref: weakref.ref) -> None:  # the memo was dropped: its blocks went with it
            with self._lock:
                entry = self._held.pop(key_id, None)
                if entry is not None:
                    self._bytes -= entry[1]

        return callback

    def clear(self) -> None:
        """Drop every kept block."""
        with self._lock:
            while self._held:
                _, (memo_ref, _, _) = self._held.popitem(last=False)
                memo = memo_ref()
                if memo is not None:
                    memo.wide = None
            self._bytes = 0


def wide_limit_from_env() -> int:
    """The bound in bytes: ``MESHNN_WIDE_BYTES`` when set (a non-negative integer; 0 turns kept
    blocks off), else 256 MiB."""
    return bytes_from_env(WIDE_BYTES_ENV, 256 << 20)


WIDE = WideCache(wide_limit_from_env())
"""The kept float32 blocks of every mesh of this process, within one bound."""


class Blocks:
    """The float32 blocks of a bfloat16 operand ``w`` for one product: block ``i`` is
    ``w[spans[i]]`` (of shape ``shapes[i]``) widened exactly, a C-contiguous tensor.  Taken from
    ``memo``'s kept blocks for ``key`` when it has them; else widened now, into new blocks kept once
    the product is :meth:`done` (when ``memo`` is given and the bound has room), or into one scratch
    block reused for each (the product must read a block before asking for the next)."""

    __slots__ = ("_blocks", "_fill", "_flat", "_key", "_memo", "_spans", "_w")

    def __init__(self, torch: Any, w: Any, spans: tuple, shapes: tuple, memo: Decoded | None, key: tuple) -> None:
        self._w, self._spans, self._memo, self._key = w, spans, memo, key
        kept = WIDE.get(memo, key) if memo is not None and WIDE.limit else None
        self._fill = kept is None
        if kept is not None:
            self._blocks, self._flat = kept, None
            return
        offsets = _offsets(shapes)
        if memo is not None and WIDE.limit and WIDE.has_room(offsets[-1] * 4):
            self._flat = torch.empty(offsets[-1], dtype=torch.float32)  # (kept by done())
            starts = offsets[:-1]
        else:
            self._memo = None
            self._flat = torch.empty(max((math.prod(s) for s in shapes), default=0), dtype=torch.float32)
            starts = (0,) * len(shapes)  # every block in one scratch
        self._blocks = tuple(
            self._flat[start : start + math.prod(shape)].view(shape)
            for start, shape in zip(starts, shapes, strict=True)
        )

    def __getitem__(self, i: int) -> Any:
        block = self._blocks[i]
        if self._fill:
            block.copy_(self._w[self._spans[i]])
        return block

    def done(self) -> None:
        """The product read every block: keep new ones with the memo (within the bound)."""
        if self._fill and self._memo is not None:
            WIDE.put(self._memo, self._key, self._flat, self._blocks)


@functools.lru_cache(maxsize=256)
def _offsets(shapes: tuple) -> tuple[int, ...]:
    """Where each block of ``shapes`` starts in one flat tensor holding them in turn, then its end."""
    return tuple(itertools.accumulate((math.prod(shape) for shape in shapes), initial=0))
