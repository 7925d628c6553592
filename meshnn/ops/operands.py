"""The operands of a running kernel's matrix products: an input's values as a torch tensor,
bfloat16 (exact for the dtypes whose values are all bfloat16 values,
:data:`~meshnn.ops.decoded.BF16_EXACT`) or float32 (``wide``: for a product whose float32 result is
kept), taken from the buffer's memo when it has one and kept as a
:class:`~meshnn.ops.decoded.Decoded` memo when decoded here (a weight: decoded once, its bytes let
go when the memo can stand for them: :mod:`meshnn.ops.decoded_bytes`).

:func:`operand` gives ``(k, *spec.shape)`` values; :func:`operand_sides` a column-parallel
weight's ``k`` matrices side by side, ``(K, k * N)``, for one product with an input that is the
same on every device; :func:`streamed_sides` the same matrix decoded a block of columns at a time
when the bound will not keep it.  All give the same values, bit for bit, whether they come from a
memo or from the bytes (memos only save time).

May import: the byte formats, the host threads, :mod:`meshnn.mesh`, :mod:`meshnn.tensor` (the
spec), :mod:`meshnn.ops.memo`, :mod:`meshnn.ops.decoded`, :mod:`meshnn.ops.decoded_bytes` and
:mod:`meshnn.ops.values`.
"""

from __future__ import annotations

import math
import os
import sys
from typing import Any

import numpy as np

from meshnn.formats.bfp_bf16 import unpack_bf16_rows
from meshnn.formats.block_float import BlockFloatFormat
from meshnn.formats.codec import decode
from meshnn.formats.layout import Layout
from meshnn.host.threads import each_chunk
from meshnn.mesh.slab import EQUAL_ROWS
from meshnn.ops.decoded import DECODED, Decoded
from meshnn.ops.decoded_bytes import keep
from meshnn.ops.memo import BOUND_ROWS, bound_rows, known_values
from meshnn.ops.values import decoded_floats
from meshnn.tensor.spec import TensorSpec


def bf16_torch() -> Any | None:
    """torch, when the program imported it and its bfloat16 products round as meshnn rounds
    (checked once: :func:`_rounds_to_nearest_even`); else None (numpy's float32 products run)."""
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    agrees = _CHECKED.get(id(torch))
    if agrees is None:
        agrees = _CHECKED[id(torch)] = _rounds_to_nearest_even(torch)
    return torch if agrees else None


_CHECKED: dict[int, bool] = {}


def bf16_products(torch: Any) -> bool:
    """Whether this torch multiplies bfloat16 matrices at speed on this CPU: where its oneDNN has
    bfloat16 kernels (x86 with AVX-512, AMX, or Arm with bfloat16 instructions).  Elsewhere (an
    x86 CPU with AVX2 alone) ATen falls back to a scalar loop: measured on an AMD EPYC, a
    ``[32, 2048] @ [2048, 2048]`` bfloat16 product took 5.9 s against 27 ms in float32.  There a
    product with bfloat16 sums is a float32 product of the same (exactly widened) values, rounded
    once to bfloat16: the same arithmetic (float32 sums rounded to nearest, ties to even), summed in
    another order.  Decided once a process (the CPU does not change), so eager and replayed
    products agree bit for bit.  ``MESHNN_BF16_PRODUCTS=0`` / ``1`` overrides it."""
    found = _FAST.get(id(torch))
    if found is None:
        found = _FAST[id(torch)] = _fast_bf16(torch)
    return found


_FAST: dict[int, bool] = {}


def _fast_bf16(torch: Any) -> bool:
    """:func:`bf16_products`' answer, from the environment or torch's own check of its CPU."""
    forced = os.environ.get("MESHNN_BF16_PRODUCTS", "")
    if forced in ("0", "1"):
        return forced == "1"
    check = getattr(getattr(torch.ops, "mkldnn", None), "_is_mkldnn_bf16_supported", None)
    try:
        return bool(check()) if check is not None else True
    except (RuntimeError, AttributeError):
        return True


def _rounds_to_nearest_even(torch: Any) -> bool:
    """Whether torch's bfloat16 ``matmul`` rounds its float32 sums to the nearest bfloat16, ties
    to even (products whose exact sums are ties, halfway values and carries), as meshnn rounds."""
    one, tie, ulp = 1.0, 2.0**-8, 2.0**-7
    x = torch.tensor([[one, tie], [one + ulp, tie], [one, 3 * tie], [-one - ulp, -tie]], dtype=torch.bfloat16)
    w = torch.tensor([[1.0], [1.0]], dtype=torch.bfloat16)
    want = [one, one + 2 * ulp, one + 2 * ulp, -one - 2 * ulp]
    try:
        got = torch.matmul(x, w).float().flatten().tolist()
    except RuntimeError:
        return False
    return got == want


def _as_torch(torch: Any, array: np.ndarray, wide: bool = False) -> Any:
    """``array`` (float32, any non-negative strides, possibly read-only, bfloat16 values) as a
    torch float32 (``wide``) or bfloat16 tensor (exact: the high halves of the values are their
    bfloat16 bits).  numpy does it: a single-threaded pass costs no waiting on torch's threads."""
    if array.ndim and array.strides[0] == 0 and array.shape[0] > 1:
        return _as_torch(torch, array[:1], wide).expand(*array.shape)
    if wide:
        return torch.from_numpy(np.array(array, np.float32, order="C"))
    bits = np.right_shift(np.ascontiguousarray(array, np.float32).view(np.uint32), 16).astype(np.uint16)
    return torch.from_numpy(bits.view(np.int16)).view(torch.bfloat16)


def _in_dtype(torch: Any, decoded: Decoded, wide: bool) -> Any:
    """A Decoded memo's values in the dtype asked for (widened or narrowed exactly, if need be:
    :meth:`Decoded.in_dtype`)."""
    return decoded.in_dtype(torch.float32 if wide else torch.bfloat16)


def operand(
    rows: np.ndarray, spec: TensorSpec, torch: Any, *, wide: bool = False, kept: bool = True, let_go: bool = True
) -> Any:
    """``(k, *spec.shape)`` bfloat16 (float32 if ``wide``) values of a running kernel's input
    ``rows`` (``spec.dtype`` one of ``BF16_EXACT``): from its buffer's memo (a Decoded one as it
    is, a float32 one converted), else decoded from the bytes and, when ``kept`` (a weight, a
    cache: read again) and the bound allows, kept as a Decoded memo (its bytes let go when they
    can be and ``let_go``: see :func:`~meshnn.ops.decoded_bytes.keep`)."""
    bound = bound_rows(rows) if BOUND_ROWS else None
    k = rows.shape[0]
    if bound is not None:
        decoded = DECODED.get(bound.buffer, spec)
        if decoded is not None:
            return _rows_of(decoded, _in_dtype(torch, decoded, wide), k, bound.first)
        known = known_values(rows, spec)
        if known is not None:
            return _as_torch(torch, known, wide)
    values = torch.empty((k, *spec.shape), dtype=torch.float32 if wide else torch.bfloat16)
    _from_bytes(rows, spec, torch, values)
    if kept and bound is not None and bound.keep and (not bound.first or bound.buffer.memo is EQUAL_ROWS):
        keep(bound.buffer, rows, spec, values, sides=False, let_go=let_go)  # (first: every device holds its bytes)
    return values


def _rows_of(decoded: Decoded, values: Any, k: int, first: bool) -> Any:
    """A Decoded memo's ``values`` (its own, or in another dtype) for ``k`` rows of its buffer
    (the first device's only when ``first``)."""
    if decoded.equal_rows:
        return values.expand(k, *values.shape[1:])
    stacked = decoded.stacked(_devices(decoded), values)
    return stacked[:1] if first else stacked


def _devices(decoded: Decoded) -> int:
    """How many devices' values a Decoded memo holds."""
    if decoded.sides:
        return decoded.values.shape[1] // decoded.spec.shape[-1]
    return decoded.values.shape[0]


def operand_sides(rows: np.ndarray, spec: TensorSpec, torch: Any, *, wide: bool = False) -> Any:
    """A weight's ``k`` matrices ``(K, N)`` (its ``(k, K, N)`` values) side by side, as one
    C-contiguous ``(K, k * N)`` bfloat16 (float32 if ``wide``) matrix: its buffer's memo in that
    layout, or made from its values (and kept in that layout when the buffer keeps a memo)."""
    bound = bound_rows(rows) if BOUND_ROWS else None
    k = rows.shape[0]
    values = None
    if bound is not None:
        decoded = DECODED.get(bound.buffer, spec)
        if decoded is not None and decoded.sides:
            return _in_dtype(torch, decoded, wide)
        if decoded is not None:
            values = decoded.stacked(k, _in_dtype(torch, decoded, wide))
        elif (known := known_values(rows, spec)) is not None:
            values = _as_torch(torch, known, wide)
    big_k, n = spec.shape[-2], spec.shape[-1]
    if values is not None:
        sides = values.permute(1, 0, 2).contiguous().reshape(big_k, k * n)
    else:  # decoded from the bytes straight into the side-by-side layout
        sides = torch.empty((big_k, k * n), dtype=torch.float32 if wide else torch.bfloat16)
        _from_bytes(rows, spec, torch, sides.view(big_k, k, n).permute(1, 0, 2))
    if bound is not None and bound.keep and not bound.first:
        keep(bound.buffer, rows, spec, sides, sides=True)
    return sides


def streamed_sides(rows: np.ndarray, spec: TensorSpec, torch: Any) -> StreamedSides | None:
    """A column-parallel block-float weight that the bound will not keep decoded (no memo, and
    no room for one once stale memos made room), as :class:`StreamedSides`: its side-by-side
    matrix decoded a block of columns at a time as a product asks for it, never whole (an 8B
    model's LM head would take 1 GB of bfloat16 at each use).  None when the weight has a memo,
    would be kept, or is not 32 x 32 tiles of a block float without padding: then
    :func:`operand_sides`.  Its values are exactly :func:`operand_sides`' values."""
    bound = bound_rows(rows) if BOUND_ROWS else None
    shape = tuple(spec.shape)
    if bound is None or bound.first or rows.shape[0] < 2 or len(shape) < 2 or math.prod(shape[:-2]) != 1:
        return None
    if not spec.dtype.is_block_float or spec.layout is not Layout.TILE or spec.tile.tile_shape != (32, 32):
        return None
    if spec.explicit_padded_shape is not None or tuple(spec.padded_shape) != shape or shape[-2] % 32 or shape[-1] % 32:
        return None
    if type(bound.buffer.memo) is Decoded or known_values(rows, spec) is not None:
        return None  # (values at hand)
    size = rows.shape[0] * math.prod(shape) * 2  # (its bfloat16 values: what a memo would count first)
    if bound.keep and DECODED.make_room(size):
        return None  # (kept once decoded: operand_sides)
    if bound.buffer.has_deferred_write():
        bound.buffer.settle()
    return StreamedSides(torch, rows, spec)


class StreamedSides:
    """The ``(K, k * N)`` side-by-side bfloat16 matrix of a weight's ``k`` shards ``(K, N)``, 32 x
    32 block-float tiles in ``rows``, decoded from the bytes a block of whole columns at a time:
    indexing it ``[row span, column span]`` (as :func:`~meshnn.ops.matmul_kernel._wide_tiles`
    asks for its tiles, a column block's tiles in turn) decodes that column span once, for all
    rows, and serves its tiles from it (scratch of ``K`` x the span's width, bfloat16).  Read-only."""

    __slots__ = ("_block", "_columns", "_rows", "_spec", "_torch", "shape")

    def __init__(self, torch: Any, rows: np.ndarray, spec: TensorSpec) -> None:
        self._torch, self._rows, self._spec = torch, rows, spec
        self.shape = (spec.shape[-2], rows.shape[0] * spec.shape[-1])
        self._columns: tuple[int, int] | None = None
        self._block: Any = None

    def dim(self) -> int:
        return 2

    def numel(self) -> int:
        return self.shape[0] * self.shape[1]

    def __getitem__(self, index: tuple[slice, slice]) -> Any:
        row_span, column_span = index
        columns = (column_span.start or 0, self.shape[1] if column_span.stop is None else column_span.stop)
        if columns != self._columns:
            self._block, self._columns = self._decode(*columns), columns
        return self._block[row_span]

    def _decode(self, first: int, stop: int) -> Any:
        """Columns ``first:stop`` of the side-by-side matrix (a multiple of 32 each), every row,
        decoded from the tiles of the shards they cover."""
        torch, spec = self._torch, self._spec
        big_k, n = spec.shape[-2], spec.shape[-1]
        tile_size = spec.tile.get_tile_size(spec.dtype)
        fmt = BlockFloatFormat.of(spec.dtype)
        block = torch.empty((big_k, stop - first), dtype=torch.bfloat16)
        bits = block.view(torch.int16).numpy().view(np.uint16)
        for device in range(first // n, -(-stop // n)):
            low, high = max(first, device * n) - device * n, min(stop, (device + 1) * n) - device * n
            grid = self._rows[device, : big_k * n // 1024 * tile_size].reshape(big_k // 32, n // 32, tile_size)
            tiles = np.ascontiguousarray(grid[:, low // 32 : high // 32]).reshape(-1, tile_size)
            out = bits[:, device * n + low - first : device * n + high - first]
            if not unpack_bf16_rows(tiles, fmt, out):  # (a block the fast decoder leaves to the reference one)
                values = decode(tiles.reshape(-1), spec.dtype, Layout.TILE, (big_k, high - low), tile=spec.tile)
                out[...] = np.right_shift(values.astype(np.float32, copy=False).view(np.uint32), 16)
        return block


DECODE_CHUNK_VALUES = 1 << 22
"""Values decoded at a time into an operand (float32 scratch of 16 MiB, not the weight's)."""


def _from_bytes(rows: np.ndarray, spec: TensorSpec, torch: Any, out: Any) -> None:
    """Decode ``rows`` into ``out`` (a ``(k, *spec.shape)`` bfloat16 or float32 tensor, any
    strides): a TILE tensor without padding a block of tile rows at a time, the blocks shared out
    over the host threads (block floats straight to bfloat16: :func:`unpack_bf16_rows`; the
    float32 scratch of anything else stays small), anything else whole."""
    bound = bound_rows(rows) if BOUND_ROWS else None
    if bound is not None and bound.buffer.has_deferred_write():
        bound.buffer.settle()
    shape, wide = tuple(spec.shape), out.dtype == torch.float32
    height, width = spec.tile.tile_shape
    plain = spec.layout is Layout.TILE and len(shape) >= 2 and spec.explicit_padded_shape is None
    if not plain or tuple(spec.padded_shape) != shape or shape[-2] % height or shape[-1] % width or 0 in shape:
        out.copy_(_as_torch(torch, decoded_floats(rows, spec), wide))
        return
    n, matrix_rows = shape[-1], int(np.prod(shape[:-1]))
    tile_size = spec.tile.get_tile_size(spec.dtype)
    row_bytes = (n // width) * tile_size  # a tile row of the 2-D view
    step = max(1, DECODE_CHUNK_VALUES // (height * n))
    flat = out.reshape(out.shape[0], matrix_rows, n)
    target = flat.numpy() if wide else flat.view(torch.int16).numpy().view(np.uint16)
    fmt = BlockFloatFormat.of(spec.dtype) if spec.dtype.is_block_float and spec.tile.tile_shape == (32, 32) else None
    chunks = [(d, r) for d in range(rows.shape[0]) for r in range(0, matrix_rows // height, step)]

    def work(chunk: tuple[int, int]) -> None:
        device, first = chunk
        count = min(step, matrix_rows // height - first)
        raw = rows[device, first * row_bytes : (first + count) * row_bytes]
        part = target[device, first * height : (first + count) * height]
        bits = np.empty(part.shape, np.uint16) if wide else part
        if fmt is None or not unpack_bf16_rows(raw.reshape(-1, tile_size), fmt, bits):
            values = decode(np.ascontiguousarray(raw), spec.dtype, Layout.TILE, (count * height, n), tile=spec.tile)
            if wide:
                part[...] = values
                return
            bits[...] = np.right_shift(values.astype(np.float32, copy=False).view(np.uint32), 16)
        if wide:
            part[...] = np.left_shift(bits.astype(np.uint32), 16).view(np.float32)

    each_chunk(torch, chunks, work)
