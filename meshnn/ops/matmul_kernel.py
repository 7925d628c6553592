"""The kernel of ``ttnn.matmul`` / ``ttnn.linear``: every device's product, one call over the slab.

Two arithmetics, chosen by the operands' dtypes alone (never by what a memo holds, so the bytes
are the same with memos on and off, eager and replayed):

- both operands of a dtype whose values are all bfloat16 values (bfloat16, bfloat8_b,
  bfloat4_b) and torch present: torch's ``matmul`` on the values exactly as stored
  (:mod:`meshnn.ops.operands`: a weight decoded once and kept).  A bfloat16 output with no bias
  or activation is torch's bfloat16 product (float32 sums rounded to nearest, ties to even, as
  meshnn rounds: checked once).  So is a block-float output (bfloat8_b, bfloat4_b) with no bias or
  activation whose destination register holds 16-bit values (``fp32_dest_acc_en`` off, ttnn's
  default for every output but float32): the device packs its output from those bfloat16 values,
  so the product is rounded to bfloat16 first, then into the block-float format.  Where torch's
  bfloat16 products are slow (a CPU without oneDNN's bfloat16 kernels:
  :func:`~meshnn.ops.operands.bf16_products`) those are float32 products of the same values,
  rounded once to bfloat16, the weight kept in bfloat16 and widened a block of columns at a time
  (:func:`_wide_matmul`: keeping float32 copies too would triple a model's weights in host memory).  Any other
  output takes a float32 product of the same values (the weight kept as float32 values; one too
  large for that, :data:`WIDE_WHOLE_BYTES`, kept in bfloat16 and widened a block of columns at a
  time: :func:`_wide_matmul`), whose result is then rounded into the output format;
- otherwise numpy's float32 ``matmul`` (a float32 row-major output straight into its slab), its
  result rounded to bfloat16 first where the destination register's format asks it (above).

Either way, a column-parallel product (x the same on every device, the weight sharded by columns)
is ONE product of x with the weight shards side by side, chosen by comparing x's values.  On the
float32 route, such a weight that the decoded bound will not keep is decoded from its bytes a
block of columns at a time as the product reads its tiles (:class:`~meshnn.ops.operands.StreamedSides`:
the same values, never a whole bfloat16 copy at each use).

May import: :mod:`meshnn.mesh`, :mod:`meshnn.tensor` and the ops' memo, decoded, operands,
shared_rows and values modules.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from meshnn.formats.bfloat16 import round_to_bfloat16
from meshnn.formats.dtypes import DataType
from meshnn.host import omp
from meshnn.mesh.coord import MeshCoordinate
from meshnn.ops.decoded import BF16_EXACT, Decoded
from meshnn.ops.memo import BOUND_ROWS, bound_rows, relaid_memo
from meshnn.ops.operands import bf16_products, bf16_torch, operand, operand_sides, streamed_sides
from meshnn.ops.shared_rows import same_values_on_every_device
from meshnn.ops.values import logical_values, write_values
from meshnn.ops.wide import Blocks
from meshnn.tensor.spec import TensorSpec


class Product:
    """The kernel of one matmul: the operands' values (the weights decoded once), multiplied by
    one of the paths of the module docstring, then the bias added and the activation applied
    before the output is written."""

    __slots__ = ("act", "bf16", "columns", "direct", "has_bias", "packs_bf16", "shape", "spec", "specs", "transposes")
    # columns: the one-product path may be taken; direct: the output is float32 row-major;
    # bf16: both operands hold bfloat16 values; packs_bf16: a block-float output packed from a
    # 16-bit destination register (the product rounded to bfloat16 before the output's format)

    def __init__(
        self,
        specs: list[TensorSpec],
        spec: TensorSpec,
        shape: tuple[int, ...],
        *,
        transposes: tuple[bool, bool],
        act: object,
        paths: tuple[bool, bool],
        fp32_dest: bool = False,
    ) -> None:
        self.specs, self.spec, self.shape, self.transposes = specs, spec, shape, transposes
        self.act, self.has_bias = act, len(specs) > 2
        self.columns, self.direct = paths
        self.bf16 = specs[0].dtype in BF16_EXACT and specs[1].dtype in BF16_EXACT
        plain = not self.has_bias and act is None
        self.packs_bf16 = plain and not fp32_dest and spec.dtype.is_block_float

    def __call__(
        self, in_rows: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]
    ) -> None:
        torch = bf16_torch() if self.bf16 else None
        if torch is not None:
            self._torch_product(torch, in_rows, out_rows)
            return
        specs = self.specs
        x = logical_values(in_rows[0], specs[0])
        w = logical_values(in_rows[1], specs[1])  # weights: decoded once
        if self.columns and x.shape[0] > 1 and x.dtype == w.dtype == np.float32 and same_values_on_every_device(x):
            result = self._dest(_one_product(x, w, in_rows[1], specs[1])).reshape((x.shape[0], *self.shape))
            self._finish(result, in_rows, out_rows, owned=True)  # a transposed view of the product, ours alone
            return
        x, w = self._stacked(x, w)
        if self.direct and not self.has_bias and self.act is None and _into_slab(x, w, out_rows[0], self.spec):
            return
        result = np.matmul(x, w)
        self._finish(self._dest(result).reshape((result.shape[0], *self.shape)), in_rows, out_rows)

    def _dest(self, result: np.ndarray) -> np.ndarray:
        """A float32 product as the destination register holds it: rounded to bfloat16 (to
        nearest, ties to even) when the output is packed from 16-bit values, else as it is."""
        return _rounded(result) if self.packs_bf16 else result

    def _torch_product(self, torch: Any, in_rows: list[np.ndarray], out_rows: list[np.ndarray]) -> None:
        """The product on torch's operands (see the module docstring): bfloat16 ones for a
        bfloat16 output or one packed from bfloat16 values, float32 ones for a float32 result (a
        very large weight widened in blocks)."""
        specs = self.specs
        bf16_sums = self.packs_bf16 or (self.spec.dtype is DataType.BFLOAT16 and not self.has_bias and self.act is None)
        final = bf16_sums and self.spec.dtype is DataType.BFLOAT16
        narrow = bf16_sums and bf16_products(torch)  # (else float32 sums, rounded below)
        wide = not narrow
        x = operand(in_rows[0], specs[0], torch, wide=wide, kept=False)  # (an activation: read once)
        k = x.shape[0]
        blocks = wide and (bf16_sums or math.prod(specs[1].shape) * in_rows[1].shape[0] * 4 > WIDE_WHOLE_BYTES)
        product, wide = (_wide_matmul, False) if blocks else (_matmul, wide)  # (wide: the weight's dtype now)
        if self.columns and k > 1 and _same_rows(torch, x):
            streamed = streamed_sides(in_rows[1], specs[1], torch) if blocks else None  # (a weight not kept)
            w = streamed or operand_sides(in_rows[1], specs[1], torch, wide=wide)  # (K, k * N)
            rows = x[0].reshape(-1, w.shape[0])
            memo = _decoded_of(in_rows[1], specs[1]) if blocks and streamed is None else None
            with omp.wide(rows.shape[0] * w.numel()):
                array = _numpy(torch, product(torch, rows, w, memo, ("sides",)))  # (M, k * N)
            result = array.reshape(rows.shape[0], k, -1).transpose(1, 0, 2).reshape((k, *self.shape))
        else:
            w = operand(in_rows[1], specs[1], torch, wide=wide)
            x, w = _stacked_torch(x, w, self.transposes)
            memo = _decoded_of(in_rows[1], specs[1]) if blocks else None
            with omp.wide(x.numel() * w.shape[-1]):
                result = _numpy(torch, product(torch, x, w, memo, self.transposes)).reshape((k, *self.shape))
        if bf16_sums and not narrow:
            result = _rounded(result)
        if final:
            write_values(out_rows[0], result, self.spec, exact=True, owned=True)
            return
        self._finish(result, in_rows, out_rows, owned=True)

    def _stacked(self, x: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Both operands transposed as asked, of one rank (rank-1 ones as matrices), float32."""
        transpose_a, transpose_b = self.transposes
        if transpose_a:
            x = np.swapaxes(x, -1, -2)
        if transpose_b:
            w = np.swapaxes(w, -1, -2)
        if x.ndim == 2:  # rank-1 operands: the stacked device axis is the batch
            x = x[:, None, :]
        if w.ndim == 2:
            w = w[:, :, None]
        x, w = _align_batch(x, w)
        return x.astype(np.float32, copy=False), w.astype(np.float32, copy=False)

    def _finish(
        self, result: np.ndarray, in_rows: list[np.ndarray], out_rows: list[np.ndarray], *, owned: bool = False
    ) -> None:
        if self.has_bias:
            bias = logical_values(in_rows[2], self.specs[2])
            if bias.ndim >= 3 and bias.shape[-2] not in (1, result.shape[-2]):
                bias = bias[..., :1, :]  # a one-tile-row bias: ttnn's kernel adds its first row to every row
            result = result + _expand(bias, result.ndim)
            owned = False
        if self.act is not None:
            result = self.act(result)  # type: ignore[operator]
            owned = False
        write_values(out_rows[0], result, self.spec, owned=owned)


def _rounded(result: np.ndarray) -> np.ndarray:
    """A float32 product rounded to bfloat16 values, to nearest, ties to even: in place when it is
    a writable C-order array (ours alone), else in a copy."""
    owned = result.flags.c_contiguous and result.flags.writeable
    return round_to_bfloat16(result if owned else np.ascontiguousarray(result), in_place=True)


def _same_rows(torch: Any, x: Any) -> bool:
    """Whether the stacked ``(k, ...)`` operand ``x`` is bit for bit the same on every device (at
    once when it is one row expanded; else compared by numpy, on this thread alone)."""
    if x.shape[0] < 2 or x.stride(0) == 0:
        return True
    bits = x.reshape(x.shape[0], -1).view(torch.int16 if x.dtype == torch.bfloat16 else torch.int32).numpy()
    return bool((bits[1:] == bits[:1]).all())


WIDE_WHOLE_BYTES = 3 << 29
"""A weight whose float32 values (all local devices) would take more than this (1.5 GiB: an 8B
model's LM head, 2.1 GB) is never widened whole: :func:`_wide_matmul` widens it in blocks."""

WIDE_CHUNK_VALUES = 1 << 22
"""Weight values widened to float32 at a time by :func:`_wide_matmul` (16 MiB of scratch)."""


def _matmul(torch: Any, x: Any, w: Any, memo: Decoded | None = None, tag: tuple = ()) -> Any:
    """torch's product of operands of one dtype: bfloat16 (float32 sums rounded once to bfloat16)
    or float32 (the weight's values kept so, or widened whole)."""
    return torch.matmul(x, w)


def _decoded_of(rows: np.ndarray, spec: TensorSpec) -> Decoded | None:
    """The Decoded memo of the buffer behind a running kernel's input ``rows`` (the values its
    operand was just read from), or None."""
    bound = bound_rows(rows) if BOUND_ROWS else None
    memo = bound.buffer.memo if bound is not None else None
    return memo if type(memo) is Decoded and (memo.spec is spec or memo.spec == spec) else None


def _wide_matmul(torch: Any, x: Any, w: Any, memo: Decoded | None = None, tag: tuple = ()) -> Any:
    """The float32 product of float32 ``x`` and bfloat16 ``w`` (``(..., K, N)``, any strides): w's
    values widened exactly to float32 a block of ``WIDE_CHUNK_VALUES // K`` columns at a time
    (:class:`~meshnn.ops.wide.Blocks`: kept with ``memo``, w's Decoded memo, for a product of
    ``tag`` when the bound allows, else into one scratch block), each block's product written
    into its columns of the result (2-D products when there is one matrix).  The blocks depend
    on the shapes alone (never on what a memo holds), so the bits do too; no float32 copy of a
    weight is made whole unless kept."""
    if w.dim() > 2 and math.prod(w.shape[:-2]) == 1 and math.prod(x.shape[:-2]) == 1:
        flat = _wide_matmul(torch, x.reshape(x.shape[-2:]), w.reshape(w.shape[-2:]), memo, tag)
        return flat.reshape(*torch.broadcast_shapes(x.shape[:-2], w.shape[:-2]), *flat.shape)
    if w.dim() == 2 and x.dim() == 2:
        return _wide_tiles(torch, x, w, memo, tag)
    n, per_column = w.shape[-1], max(1, w[..., :1].numel())
    width = max(32, WIDE_CHUNK_VALUES // per_column // 32 * 32)
    batch = torch.broadcast_shapes(x.shape[:-2], w.shape[:-2])
    out = torch.empty((*batch, x.shape[-2], n), dtype=torch.float32)
    spans, shapes = _column_blocks(tuple(w.shape), width)
    blocks = Blocks(torch, w, spans, shapes, memo, ("columns", tag, tuple(w.shape)))
    for i, first in enumerate(range(0, n, width)):
        block = blocks[i]
        if out.dim() == 2:
            torch.matmul(x, block, out=out[:, first : first + block.shape[-1]])
        else:
            out[..., first : first + block.shape[-1]] = torch.matmul(x, block)
    blocks.done()
    return out


WIDE_TILE_COLUMNS = 2048
"""Columns of a tile :func:`_wide_tiles` widens (its rows read from memory in runs of 4 KiB)."""

WIDE_TILE_VALUES = 1 << 18
"""Values of a tile :func:`_wide_tiles` widens (1 MiB of float32 scratch: in the CPU's cache when
its product reads it)."""


def _wide_tiles(torch: Any, x: Any, w: Any, memo: Decoded | None = None, tag: tuple = ()) -> Any:
    """``x @ w`` for float32 ``x`` ``(M, K)`` and bfloat16 ``w`` ``(K, N)``: w widened a tile of
    rows and columns at a time (``WIDE_TILE_VALUES``, at most ``WIDE_TILE_COLUMNS`` wide), each
    tile's product added into its columns of the result, the tiles of a column block in order
    of their rows.  Measured on an AVX2 EPYC, weights read from memory as a model's step reads
    them, 7 to 32% cheaper than widening whole column blocks (an ``8192 x 2048`` weight 32 -> 22 ms):
    the weight is read in long runs and its widened tile is read back from the cache.  The float32
    sums are added in an order set by the shapes alone, so the bits do not depend on what a memo
    holds (and an eager step and its replay agree).  Each tile is a C-contiguous float32 block
    (:class:`~meshnn.ops.wide.Blocks`): with ``memo`` (w's Decoded memo) the tiles are kept, within
    their bound, and a later product of ``tag`` reads them instead of widening w again."""
    big_k, n = w.shape
    if big_k == 0 or n == 0:
        return torch.zeros((x.shape[0], n), dtype=torch.float32)  # (an empty sum is zero)
    out = torch.empty((x.shape[0], n), dtype=torch.float32)
    width = min(WIDE_TILE_COLUMNS, n)
    rows = min(big_k, max(32, WIDE_TILE_VALUES // width // 32 * 32))
    spans, shapes = _tiles(big_k, n, rows, width)
    tiles = Blocks(torch, w, spans, shapes, memo, ("tiles", tag, tuple(w.shape)))
    for i, (span_rows, span_columns) in enumerate(spans):
        tile = tiles[i]
        part = out[:, span_columns]
        if span_rows.start == 0:
            torch.mm(x[:, : tile.shape[0]], tile, out=part)
        else:
            part.addmm_(x[:, span_rows], tile)
    tiles.done()
    return out


@functools.lru_cache(maxsize=256)
def _tiles(big_k: int, n: int, rows: int, width: int) -> tuple[tuple, tuple]:
    """:func:`_wide_tiles`' tiles of a ``(big_k, n)`` weight: their spans (rows, columns), the
    tiles of a column block in order of their rows, and their shapes."""
    spans = tuple(
        (slice(top, min(top + rows, big_k)), slice(first, min(first + width, n)))
        for first in range(0, n, width)
        for top in range(0, big_k, rows)
    )
    return spans, tuple((s[0].stop - s[0].start, s[1].stop - s[1].start) for s in spans)


@functools.lru_cache(maxsize=256)
def _column_blocks(shape: tuple[int, ...], width: int) -> tuple[tuple, tuple]:
    """:func:`_wide_matmul`'s blocks of whole columns of a weight of ``shape``: their spans and
    shapes."""
    n = shape[-1]
    spans = tuple((..., slice(first, min(first + width, n))) for first in range(0, n, width))
    return spans, tuple((*shape[:-1], min(width, n - first)) for first in range(0, n, width))


def _numpy(torch: Any, product: Any) -> np.ndarray:
    """``product`` (bfloat16 or float32) as a float32 numpy array of its own (C order): a bfloat16
    one widened by numpy (its bits the high halves), a float32 one as torch holds it."""
    if product.dtype == torch.float32:
        return product.contiguous().numpy()
    bits = product.contiguous().view(torch.int16).numpy().view(np.uint16)
    return np.left_shift(bits.astype(np.uint32), 16).view(np.float32)


def _stacked_torch(x: Any, w: Any, transposes: tuple[bool, bool]) -> tuple[Any, Any]:
    """:meth:`Product._stacked` for torch tensors (bfloat16 kept)."""
    transpose_a, transpose_b = transposes
    if transpose_a:
        x = x.transpose(-1, -2)
    if transpose_b:
        w = w.transpose(-1, -2)
    if x.dim() == 2:
        x = x[:, None, :]
    if w.dim() == 2:
        w = w[:, :, None]
    while x.dim() < w.dim():
        x = x.unsqueeze(1)
    while w.dim() < x.dim():
        w = w.unsqueeze(1)
    return x, w


def _into_slab(x: np.ndarray, w: np.ndarray, out: np.ndarray, spec: TensorSpec) -> bool:
    """Multiply float32 row-major operands straight into the output rows ``out``, when they are
    its contiguous elements; False (nothing done) otherwise."""
    natural = (*np.broadcast_shapes(x.shape[:-2], w.shape[:-2]), x.shape[-2], w.shape[-1])
    target = out[:, : spec.compute_packed_buffer_size_bytes()].view(np.float32)
    if target.size == int(np.prod(natural)) and target.flags.c_contiguous:
        np.matmul(x, w, out=target.reshape(natural))
        return True
    return False


def _one_product(x: np.ndarray, w: np.ndarray, w_rows: np.ndarray, w_spec: TensorSpec) -> np.ndarray:
    """``x @ w`` of every device as one matrix product, for x ``(k, ..., K)`` the same on every
    device and ``w`` ``(k, K, N)``: ``x[0] @ [w_0 | w_1 | ... | w_k-1]`` is each device's product
    side by side, for one call of BLAS on the whole width instead of k narrower ones.  The shards
    side by side are ``w`` transposed to ``(K, k, N)``; that copy is made once, when ``w`` comes
    from its buffer's memo, whose values then stay in that layout (:func:`relaid_memo`)."""
    k, big_k, n = w.shape
    side_by_side = w.transpose(1, 0, 2)
    if not side_by_side.flags.c_contiguous:
        side_by_side = np.ascontiguousarray(side_by_side)
        side_by_side.flags.writeable = False
        relaid_memo(w_rows, w_spec, side_by_side.transpose(1, 0, 2))
    rows = x[0].reshape(-1, big_k)
    product = rows @ side_by_side.reshape(big_k, k * n)
    return product.reshape(rows.shape[0], k, n).transpose(1, 0, 2)


def _align_batch(x: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Give both stacked operands the same rank, device axis first."""
    while x.ndim < w.ndim:
        x = x[:, None]
    while w.ndim < x.ndim:
        w = w[:, None]
    return x, w


def _expand(values: np.ndarray, ndim: int) -> np.ndarray:
    while values.ndim < ndim:
        values = values.reshape(values.shape[0], 1, *values.shape[1:])
    return values
