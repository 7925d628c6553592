"""The bfloat16 and block-float bit formats of ttnn, bit-exact with ttnn 0.81.1 and vectorised.

bfloat16
    float32 -> bfloat16 rounds to nearest, ties to even, on the upper 16 bits (ml_dtypes does the
    rounding); subnormals are rounded, not flushed; overflow gives inf; **every NaN becomes
    0x7FC0** (positive, payload dropped).  bfloat16 -> float32 is ``bits << 16`` (NaNs kept).

Block floats (bfloat8_b = BFP8, bfloat4_b = BFP4, and the bfp_utils-only BFP2)
    A block is 16 consecutive values of a tile in face order: one face row.  It shares one
    exponent byte, the largest biased float32 exponent in the block (inf/NaN count as 255).  Each
    value becomes a code ``sign << W | magnitude`` with W = 7, 3, 1 magnitude bits: values with
    biased exponent 0 (zeros and subnormals) give 0; otherwise the 24-bit mantissa with its
    leading 1 is shifted right by ``shared - own exponent`` (no sticky bits), rounded to nearest
    even to W bits and clamped to ``2**W - 1`` (no carry into the exponent); the sign is cleared
    when the magnitude is 0.  A packed tile is the exponent section (one byte per block, zero
    padded up to 16 bytes) and then the codes, little-endian in uint32 words with element 0 in
    the low bits (4 codes a word for BFP8, 8 for BFP4, 16 for BFP2).
    Decoding: magnitude 0 gives +-0 (code 0x80 is -0.0); else the magnitude is normalised to its
    leading 1 (a shift of s), exponent ``shared - s``, fraction the remaining bits; a negative
    exponent gives +0.0.

The packers work chunk by chunk (about 64 Ki values), so every intermediate stays in the cache.
When the program uses torch, chunks of ``TORCH_BFP_MIN_VALUES`` or more are packed and unpacked
with torch's operations instead (the same arithmetic, on torch's threads; checked once to give
numpy's bits, :func:`_torch_bfp_agrees`), on larger chunks (``TORCH_CHUNK_VALUES``).
"""

from __future__ import annotations

import enum
import functools
import math
import sys
import warnings
from typing import Any

import ml_dtypes
import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.tensor.dtypes import DataType, bfp_exponent_section_size

BFLOAT16_NAN = 0x7FC0
"""The one NaN pattern ttnn's float32 -> bfloat16 conversion produces."""

BLOCK_VALUES = 16
"""Values that share one exponent: one face row."""

CHUNK_VALUES = 1 << 16
"""Values processed per step by the block-float packers (sized for a 2 MiB L2 cache)."""

TORCH_CHUNK_VALUES = 1 << 19
"""Values per step when torch does the arithmetic: each torch call is split over its threads, so
a call must be long enough to pay for that (measured best on a 2-core machine with 2 MiB of L2
per core: 1 << 18 to 1 << 19).  A thread's packer then keeps 7 MiB of scratch, its unpacker 3."""

TORCH_BFP_MIN_VALUES = 1 << 16
"""Chunks of fewer values are packed and unpacked with numpy (a torch call costs more than it saves)."""

_EXP_A_REBIAS = 127 - 15  # float32 bias to the 5-bit exponent bias of the exp_a variant


class BlockFloatFormat(enum.Enum):
    """A block-float format, valued by its magnitude bits per value (the sign is one more)."""

    BFP8 = 7
    BFP4 = 3
    BFP2 = 1

    @property
    def magnitude_bits(self) -> int:
        return self.value

    @property
    def code_bits(self) -> int:
        """Bits per packed value: sign and magnitude."""
        return self.value + 1

    @property
    def codes_per_byte(self) -> int:
        return 8 // self.code_bits

    @classmethod
    def of(cls, dtype: DataType) -> BlockFloatFormat:
        """The format of a block-float ``DataType`` (BFLOAT8_B -> BFP8, BFLOAT4_B -> BFP4)."""
        if dtype is DataType.BFLOAT8_B:
            return cls.BFP8
        if dtype is DataType.BFLOAT4_B:
            return cls.BFP4
        raise MeshnnValueError(f"{dtype} is not a block-float format")

    def tile_size(self, values_per_tile: int) -> int:
        """Bytes of one packed tile of ``values_per_tile`` values (exponents, then codes)."""
        _check_values_per_tile(values_per_tile)
        blocks = values_per_tile // BLOCK_VALUES
        return bfp_exponent_section_size(blocks) + values_per_tile // self.codes_per_byte


def _check_values_per_tile(values_per_tile: int) -> None:
    if values_per_tile <= 0 or values_per_tile % BLOCK_VALUES:
        raise MeshnnValueError(f"a block-float tile holds whole blocks of {BLOCK_VALUES} values, got {values_per_tile}")


# --- bfloat16 -----------------------------------------------------------------------------------


def _ml_dtypes_nans_are_canonical() -> bool:
    """Whether ml_dtypes turns every float32 NaN into 0x7FC0 or 0xFFC0 (checked, not assumed)."""
    nan_bits = np.array([0x7F800001, 0x7FC00000, 0x7FFFFFFF, 0xFF800001, 0xFFC12345], np.uint32)
    with np.errstate(invalid="ignore"):
        converted = nan_bits.view(np.float32).astype(ml_dtypes.bfloat16).view(np.uint16)
    return set(converted.tolist()) <= {0x7FC0, 0xFFC0}


_CANONICAL_NANS = _ml_dtypes_nans_are_canonical()


def quiet_bfloat16_nans(bits: np.ndarray, produced: int | None = None) -> None:
    """Rewrite, in place, every NaN of bfloat16 ``bits`` (uint16, C-contiguous) into ttnn's one
    NaN, 0x7FC0.  ``produced``: the only non-canonical NaN pattern the producing cast makes (None:
    the ml_dtypes cast's)."""
    if not bits.flags.c_contiguous:
        raise MeshnnValueError("quiet_bfloat16_nans rewrites in place and needs a C-contiguous array")
    flat = bits.reshape(-1)
    step = 1 << 20
    mask = np.empty(min(step, flat.size), bool)
    for start in range(0, flat.size, step):
        part = flat[start : start + step]
        found = mask[: part.size]
        if produced is not None:
            np.equal(part, produced, out=found)
        elif _CANONICAL_NANS:
            np.equal(part, 0xFFC0, out=found)
        else:
            np.greater(part & 0x7FFF, 0x7F80, out=found)
        if found.any():
            np.putmask(part, found, BFLOAT16_NAN)


TORCH_CAST_MIN_VALUES = 1 << 14
"""Below this many values the ml_dtypes cast is used (a torch call costs more than it saves)."""


@functools.cache
def _torch_cast_nan() -> int | None:
    """The one NaN pattern torch's float32 -> bfloat16 cast makes, if torch (already imported by
    the program: meshnn never imports it for this) rounds every other value exactly as ml_dtypes
    does; None when torch is absent or differs.  Checked once, on values that include every class
    of input: zeros, subnormals, ties to even, the largest finite values, infinities and NaNs."""
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    rng = np.random.default_rng(0)
    special = np.array(
        [0, 0x80000000, 1, 0x807FFFFF, 0x00008000, 0x00018000, 0x3F808000, 0x3F818000, 0x7F7FFFFF, 0x7F7F8000,
         0x7F800000, 0xFF800000, 0x7F800001, 0x7FC00000, 0xFFFFFFFF, 0xFFC12345, 0x7FBFFFFF],
        np.uint32,
    )  # fmt: skip
    bits = np.concatenate([np.tile(special, 64), rng.integers(0, 2**32, 1 << 14, dtype=np.uint64).astype(np.uint32)])
    values = bits.view(np.float32)
    try:
        got = torch.from_numpy(values.copy()).to(torch.bfloat16).view(torch.int16).numpy().view(np.uint16)
    except Exception:  # any failure means: do not use torch
        return None
    with np.errstate(invalid="ignore"):
        want = values.astype(ml_dtypes.bfloat16).view(np.uint16)
    nan = np.isnan(values)
    patterns = set(np.unique(got[nan]).tolist()) - {BFLOAT16_NAN}
    if np.any(got[~nan] != want[~nan]) or len(patterns) > 1:
        return None
    return patterns.pop() if patterns else BFLOAT16_NAN


def _torch_cast_into(out: np.ndarray, values: np.ndarray) -> bool:
    """Cast float32 ``values`` into bfloat16 bits ``out`` (same shape, any non-negative strides)
    with torch when it is in use and verified; False when it was not used."""
    if values.size < TORCH_CAST_MIN_VALUES or "torch" not in sys.modules:
        return False
    nan = _torch_cast_nan()
    if nan is None or not out.flags.c_contiguous or any(st < 0 for st in values.strides):
        return False
    torch = sys.modules["torch"]
    target = torch.from_numpy(out.view(np.int16)).view(torch.bfloat16)
    with warnings.catch_warnings():  # a read-only source is only read
        warnings.simplefilter("ignore", UserWarning)
        source = torch.from_numpy(values)
    target.copy_(source)
    if nan != BFLOAT16_NAN:
        quiet_bfloat16_nans(out, produced=nan)
    return True


def float32_to_bfloat16_bits(values: np.ndarray, *, out: np.ndarray | None = None) -> np.ndarray:
    """bfloat16 bits (uint16, ``values``' shape) of float32 ``values`` (any strides), as ttnn
    rounds them.  ``out``: C-contiguous uint16 of ``values``' shape.

    The cast is ml_dtypes', or torch's when the program uses torch and torch was checked to round
    bit for bit the same (:func:`_torch_cast_nan`): torch's copies run on several threads and
    tilize in the same pass."""
    if values.dtype != np.float32:
        raise MeshnnTypeError(f"float32_to_bfloat16_bits takes float32 values, got {values.dtype}")
    if out is None:
        out = np.empty(values.shape, np.uint16)
    if _torch_cast_into(out, values):
        return out
    with np.errstate(invalid="ignore"):  # NaN -> bfloat16 NaN is wanted, not an error
        np.copyto(out.view(ml_dtypes.bfloat16), values, casting="unsafe")
    quiet_bfloat16_nans(out)
    return out


def bfloat16_bits_to_float32(bits: np.ndarray, *, out: np.ndarray | None = None) -> np.ndarray:
    """float32 values of bfloat16 ``bits`` (uint16): exactly ``bits << 16``, NaN payloads kept."""
    if out is None:
        out = np.empty(bits.shape, np.float32)
    np.left_shift(bits.view(np.uint16), 16, dtype=np.uint32, out=out.view(np.uint32))
    return out


def round_to_bfloat16(values: np.ndarray, *, in_place: bool = False) -> np.ndarray:
    """float32 ``values`` (C-contiguous) rounded to bfloat16 as ttnn rounds them, still float32:
    exactly ``bfloat16_bits_to_float32(float32_to_bfloat16_bits(values))`` (nearest, ties to
    even; every NaN becomes 0x7FC0).  The high 16 bits of each result are its bfloat16 bits.
    ``in_place``: round ``values`` itself (it must be writable) and return it."""
    if values.dtype != np.float32 or not values.flags.c_contiguous:
        raise MeshnnTypeError("round_to_bfloat16 takes C-contiguous float32 values")
    if not values.size:
        return values if in_place else values.copy()
    # First, as a NaN's sum below can carry into an infinity or a zero: where the NaNs are (the
    # maximum is NaN when any value is; one read, no mask written, in the common case of none).
    nan = np.isnan(values) if np.isnan(np.maximum.reduce(values, axis=None)) else None
    bits = values.view(np.uint32)
    carry = np.right_shift(bits, 16)
    carry &= 1
    carry += 0x7FFF  # round half to even: 0x7FFF, plus 1 when the kept part is odd
    out = np.add(bits, carry, out=bits if in_place else carry)
    out &= 0xFFFF0000
    if nan is not None:
        out[nan] = BFLOAT16_NAN << 16
    return out.view(np.float32)


# --- block floats: the torch kernels ------------------------------------------------------------


def torch_for(n_values: int) -> Any | None:
    """torch, to pack or unpack a chunk of ``n_values`` on its threads: when the program uses torch
    (meshnn never imports it for this), the chunk has ``TORCH_BFP_MIN_VALUES`` or more, and torch
    was checked to give numpy's bits (:func:`_torch_bfp_agrees`); else None (numpy does it)."""
    torch = sys.modules.get("torch")
    if n_values < TORCH_BFP_MIN_VALUES or torch is None or not _torch_bfp_agrees(torch):
        return None
    return torch


def _torch_choice(use_torch: bool | None, n_values: int) -> Any | None:
    """The torch to pack or unpack ``n_values`` with, per a packer's ``use_torch``; None: numpy."""
    if use_torch is None:
        return torch_for(n_values)
    return sys.modules.get("torch") if use_torch else None


@functools.cache
def _torch_bfp_agrees(torch: Any) -> bool:
    """Whether ``torch`` (the imported module) packs and unpacks bit for bit as numpy does,
    checked once on every kind of block (random bit patterns: ordinary, zero, subnormal,
    small-exponent, inf and NaN values)."""
    rng = np.random.default_rng(0)
    bits = rng.integers(0, 2**32, 1 << 14, dtype=np.uint64).astype(np.uint32)
    exps = np.clip(rng.integers(-8, 264, bits.size // BLOCK_VALUES).repeat(BLOCK_VALUES), 0, 255).astype(np.uint32)
    bits = (bits & 0x807FFFFF) | (exps << 23)
    tiles = bits.view(np.float32).reshape(-1, 256)
    try:
        for fmt in BlockFloatFormat:
            packed = [pack_bfp(tiles, fmt, use_torch=choice) for choice in (False, True)]
            values = [unpack_bfp(packed[0], fmt, 256, use_torch=choice) for choice in (False, True)]
            if not np.array_equal(*packed) or not np.array_equal(values[0].view(np.uint32), values[1].view(np.uint32)):
                return False
    except Exception:  # any failure means: do not use torch
        return False
    return True


# --- block floats: packing ----------------------------------------------------------------------


class BfpPacker:
    """Packs float32 tiles, each in face order, into block-float tiles.

    It owns scratch buffers for ``chunk_tiles`` tiles, so use one packer per thread.
    """

    def __init__(
        self,
        fmt: BlockFloatFormat,
        values_per_tile: int,
        *,
        exp_a: bool = False,
        chunk_values: int = CHUNK_VALUES,
        use_torch: bool | None = None,
    ) -> None:
        """``use_torch``: None lets :func:`torch_for` decide per chunk; False packs with numpy
        only; True with torch whenever the program has imported it."""
        _check_values_per_tile(values_per_tile)
        self.fmt = fmt
        self.values_per_tile = values_per_tile
        self.exp_a = exp_a
        self.use_torch = use_torch
        self.tile_size = fmt.tile_size(values_per_tile)
        self.chunk_tiles = max(1, chunk_values // values_per_tile)
        count = self.chunk_tiles * values_per_tile
        self._tiles = np.empty(count, np.float32)
        self._exps = np.empty(count, np.uint32)
        self._scaled = np.empty(count, np.float32)
        self._codes = np.empty((2, count), np.int8)
        self._shared = np.empty(count // BLOCK_VALUES, np.uint32)
        self._scale = np.empty(count // BLOCK_VALUES, np.uint32)

    @functools.cached_property
    def _limits(self) -> np.ndarray:
        """``±(2**W - 1)`` for every value of a chunk (made at the first numpy chunk): numpy's
        minimum / maximum against an array are several times faster than against a scalar."""
        limits = np.empty((2, self._tiles.size), np.float32)
        limits[0] = (1 << self.fmt.magnitude_bits) - 1
        limits[1] = -limits[0]
        return limits

    def tiles_buffer(self, n_tiles: int) -> np.ndarray:
        """Scratch for ``n_tiles`` (at most ``chunk_tiles``) float32 tiles, shape (n, values)."""
        return self._tiles[: n_tiles * self.values_per_tile].reshape(n_tiles, self.values_per_tile)

    def pack_into(self, tiles: np.ndarray, out: np.ndarray) -> None:
        """Pack ``tiles`` (n x values float32, C-contiguous, n <= chunk_tiles) into ``out``
        (n x tile_size uint8; rows may be a slice of a larger array)."""
        n_tiles = tiles.shape[0]
        bits = tiles.view(np.uint32).reshape(-1)
        blocks = bits.size // BLOCK_VALUES
        exp_bytes = bfp_exponent_section_size(blocks // n_tiles)
        code_bytes = out[:, exp_bytes:]
        torch = None if self.exp_a else _torch_choice(self.use_torch, bits.size)
        in_place = torch is not None and self.fmt.codes_per_byte == 1  # torch writes the code bytes itself
        if self.exp_a:
            shared, wide = _exp_a_codes(bits, self.fmt.magnitude_bits)
            codes = wide.astype(np.uint8)
        else:
            shared = self._shared[:blocks]
            codes = code_bytes.view(np.int8) if in_place else self._codes[0, : bits.size]
            self._float_codes(torch, bits, shared, codes)
        np.copyto(out[:, : blocks // n_tiles], shared.reshape(n_tiles, -1), casting="unsafe")
        out[:, blocks // n_tiles : exp_bytes] = 0
        if not in_place:
            _write_codes(codes.view(np.uint8), self.fmt, code_bytes)

    def _float_codes(self, torch: Any | None, bits: np.ndarray, shared: np.ndarray, codes: np.ndarray) -> None:
        """Shared exponents (into ``shared``, uint32) and sign-magnitude codes (into ``codes``,
        int8, one per value: flat, or (tiles, values) with torch) of float32 ``bits`` in float32
        arithmetic (numpy's, or ``torch``'s when given), exactly as :func:`_codes`.

        With ``E`` the block's shared exponent, ``m = trunc(v * 2**(150 - E))`` is ±(the 24-bit
        mantissa shifted right by ``E - e`` without sticky bits: a power-of-two scaling is exact)
        and ``RNE(m * 2**(W - 24))`` its rounding to W bits, clamped to ``±(2**W - 1)``.  That
        holds for every block with ``24 <= E <= 254``, and for ``E == 0`` (zeros and subnormals:
        they scale below 1, so to 0, as they must; E is raised to 24 for the scale).  The other
        blocks (small normal values, where a subnormal's absent leading 1 matters, and inf/NaN)
        are redone by :func:`_codes`."""
        if torch is not None:
            n_tiles = codes.shape[0] if codes.ndim == 2 else 1
            by_block = (n_tiles, -1, BLOCK_VALUES)
            torch_block_codes(
                torch,
                bits.view(np.float32).reshape(by_block),
                self.fmt.magnitude_bits,
                shared.reshape(n_tiles, -1),
                codes.reshape(by_block, copy=False),
                self._exps,
                self._codes[1],
                self._scale,
            )
            return
        self._numpy_float_codes(bits, shared, codes)
        rare = _rare_pack_blocks(shared, self._scale[: shared.size])
        if rare.size:
            _redo_blocks(bits, self.fmt.magnitude_bits, rare, codes)

    def _numpy_float_codes(self, bits: np.ndarray, shared: np.ndarray, codes: np.ndarray) -> None:
        """:meth:`_float_codes`' arithmetic with numpy (the rare blocks not yet redone)."""
        width = self.fmt.magnitude_bits
        n = bits.size
        exps, scaled, spare = self._exps[:n], self._scaled[:n], self._codes[1, :n]
        np.right_shift(bits, 23, out=exps)
        np.bitwise_and(exps, 0xFF, out=exps)
        _block_max(exps, shared)
        scale = self._scale[: shared.size]  # float32 bits of 2**(150 - max(E, 24)), always normal
        np.maximum(shared, 24, out=scale)
        np.subtract(150 + 127, scale, out=scale)
        np.left_shift(scale, 23, out=scale)
        with np.errstate(invalid="ignore", over="ignore"):  # inf / NaN: their blocks are redone
            # a (blocks, 16) broadcast runs a short inner loop per block: repeating the scale is faster
            np.multiply(bits.view(np.float32), np.repeat(scale.view(np.float32), BLOCK_VALUES), out=scaled)
            np.trunc(scaled, out=scaled)
            np.multiply(scaled, np.float32(2.0 ** (width - 24)), out=scaled)
            limits = self._limits[:, :n]
            np.minimum(scaled, limits[0], out=scaled)  # clamp: no carry into the exponent
            np.maximum(scaled, limits[1], out=scaled)
            np.rint(scaled, out=scaled)  # round half to even; the clamp before it changes nothing
            np.copyto(codes, scaled, casting="unsafe")  # an integer in [-(2**W - 1), 2**W - 1]
        _to_sign_magnitude(codes, width, spare)


def _rare_pack_blocks(shared: np.ndarray, scratch: np.ndarray) -> np.ndarray:
    """Numbers (in C order) of the blocks whose shared exponent E (``shared``, uint32) the float32
    arithmetic does not cover: 1 <= E <= 23 and E == 255.  ``scratch``: uint32 of ``shared``'s size.
    In the common case of none, two reductions tell so and no mask is made."""
    flat, spare = shared.reshape(-1), scratch.reshape(-1)[: shared.size]
    np.subtract(flat, 1, out=spare)  # E - 1, which wraps to 2**32 - 1 for E == 0
    if not flat.size or (spare.min() >= 23 and flat.max() < 255):
        return np.empty(0, np.intp)
    return np.flatnonzero((spare < 23) | (flat == 255))


def _read_only_ok(torch: Any, array: np.ndarray) -> Any:
    """``torch.from_numpy(array)`` without the warning for a read-only array (it is only read)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return torch.from_numpy(array)


def torch_block_codes(
    torch: Any,
    values: np.ndarray,
    width: int,
    shared: np.ndarray,
    codes: np.ndarray,
    scratch: np.ndarray,
    spare: np.ndarray,
    divisor: np.ndarray,
) -> None:
    """Shared exponents and sign-magnitude codes of float32 ``values`` (..., 16): one block per
    row of 16, any non-negative strides, e.g. a block of rows of a row-major matrix, not tilized)
    with torch's operations, exactly as :func:`_codes` gives them.

    ``shared``: uint32 (...), C-contiguous, gets each block's biased exponent E.  ``codes``: int8
    (..., 16), any non-negative strides, gets ``sign << W | magnitude`` per value.  ``scratch``
    (4 bytes a value: uint32 or int32), ``spare`` (int8, a value each) and ``divisor`` (uint32, a
    block each): flat C-contiguous scratch at least that long.

    The largest magnitude of a block is found by a max pooling over the magnitudes' bits read as
    float32 (non-negative bit patterns order as their integers do; a NaN pattern, E == 255,
    wins, and its block is redone): measured faster than an integer ``amax`` over rows of 16.

    The arithmetic (see :meth:`BfpPacker._float_codes`): ``t = trunc(v / 2**(max(E, 24) - 150))``,
    an integer below 2**24 in magnitude, clamped to ``±(2**W - 1) * 2**(24 - W)``; then
    ``t + 1.5 * 2**(47 - W)`` rounds, in float32, to the nearest multiple of ``2**(24 - W)``,
    ties to even (the spacing of float32 there), so its bits end in the rounded code
    ``r = RNE(t * 2**(W - 24))`` as an 8-bit two's-complement number (the low bits of
    ``2**22 + r``): the conversion to int8 keeps just those.  Blocks with 1 <= E <= 23 or
    E == 255 are redone by :func:`_codes`.
    """
    _TorchBlockCoder(torch, values.shape, width, shared, codes, scratch, spare, divisor).run(values)


class _TorchBlockCoder:
    """:func:`torch_block_codes` for chunks of one shape: the torch views of the scratch are made
    once, so a chunk costs its arithmetic and a few calls (a packer keeps one per chunk shape)."""

    def __init__(
        self,
        torch: Any,
        shape: tuple[int, ...],
        width: int,
        shared: np.ndarray,
        codes: np.ndarray,
        scratch: np.ndarray,
        spare: np.ndarray,
        divisor: np.ndarray,
    ) -> None:
        n = math.prod(shape)
        as_torch = torch.from_numpy
        self.torch, self.width = torch, width
        self.shared, self.codes = shared, codes
        self.magnitudes = as_torch(scratch.reshape(-1)[:n].view(np.int32)).view(shape)
        self.scaled = self.magnitudes.view(torch.float32)  # the magnitudes, once done with
        row = shape[-2] * BLOCK_VALUES if len(shape) > 1 else BLOCK_VALUES
        self.pooled = self.scaled.view(-1, 1, row)
        self.scale = divisor.reshape(-1)[: shared.size].reshape(shared.shape)  # bits of 2**(max(E, 24) - 150)
        self.divisor = as_torch(self.scale.view(np.float32)).unsqueeze(-1)
        self.code = as_torch(codes)
        self.sign = as_torch(spare.reshape(-1)[:n]).view(shape)
        self.limit = float(((1 << width) - 1) << (24 - width))
        self.magic = 1.5 * 2.0 ** (47 - width)
        self.sign_bit = (1 << width) - (256 if width == 7 else 0)  # 1 << W as an int8

    def run(self, values: np.ndarray) -> None:
        """Shared exponents and codes of ``values`` (this coder's shape, any non-negative strides)."""
        torch, shared, scale = self.torch, self.shared, self.scale
        source = torch.from_numpy(values) if values.flags.writeable else _read_only_ok(torch, values)
        torch.bitwise_and(source.view(torch.int32), 0x7FFFFFFF, out=self.magnitudes)
        peaks = torch.nn.functional.max_pool1d(self.pooled, BLOCK_VALUES)
        np.right_shift(peaks.view(torch.int32).numpy().reshape(shared.shape), 23, out=shared, casting="unsafe")
        np.maximum(shared, 24, out=scale)
        np.subtract(scale, 150 - 127, out=scale)
        np.left_shift(scale, 23, out=scale)
        scaled = self.scaled
        torch.div(source, self.divisor, rounding_mode="trunc", out=scaled)
        scaled.clamp_(-self.limit, self.limit)  # no carry into the exponent (NaN stays NaN: its block is redone)
        scaled.add_(self.magic)
        code = self.code
        code.copy_(self.magnitudes)  # int32 -> int8 keeps the low byte: the two's-complement code r
        # Sign-magnitude: |r| | (r & 1 << W).  A negative r = -m (0 < m < 2**W) is 256 - m as a
        # byte, which has bit W set (and bit 7); a non-negative r has neither.
        torch.bitwise_and(code, self.sign_bit, out=self.sign)
        code.abs_()
        code.bitwise_or_(self.sign)
        rare = _rare_pack_blocks(shared, scale)
        if rare.size:
            _redo_block_rows(values, self.width, rare, self.codes)


def _redo_block_rows(values: np.ndarray, width: int, blocks: np.ndarray, codes: np.ndarray) -> None:
    """Recompute, by the integer rules of :func:`_codes`, the codes (``codes``, int8 (..., 16))
    of the blocks numbered ``blocks`` (C order over the leading dims) of ``values`` (..., 16)."""
    where = np.unravel_index(blocks, values.shape[:-1])
    bits = values.view(np.uint32)[where].reshape(-1)
    work = np.empty((4, bits.size), np.uint32)
    limits = np.empty((2, bits.size), np.uint32)
    limits[0], limits[1] = 31, (1 << width) - 1
    _codes(bits, width, np.empty(blocks.size, np.uint32), work, limits)
    codes[where] = work[0].reshape(-1, BLOCK_VALUES).astype(np.uint8).view(np.int8)


def _block_max(values: np.ndarray, out: np.ndarray) -> None:
    """The maximum of each run of BLOCK_VALUES consecutive ``values``, into ``out``."""
    by_block = values.reshape(-1, BLOCK_VALUES)
    np.maximum(by_block[:, 0], by_block[:, 1], out=out)
    for column in range(2, BLOCK_VALUES):
        np.maximum(out, by_block[:, column], out=out)


def _to_sign_magnitude(codes: np.ndarray, width: int, spare: np.ndarray) -> None:
    """Rewrite, in place, two's-complement int8 ``codes`` (|code| < 2**width) as sign-magnitude
    codes ``sign << width | magnitude`` (a zero magnitude has no sign); ``spare``: int8 scratch."""
    np.right_shift(codes, 7, out=spare)  # -1 for negative codes, else 0
    np.bitwise_xor(codes, spare, out=codes)
    np.subtract(codes, spare, out=codes)  # |code|
    np.bitwise_and(spare, np.int8(1 << width) if width < 7 else np.int8(-128), out=spare)
    np.bitwise_or(codes, spare, out=codes)


def _redo_blocks(bits: np.ndarray, width: int, blocks: np.ndarray, codes: np.ndarray) -> None:
    """Recompute the codes of the blocks numbered ``blocks`` with the integer rules of
    :func:`_codes` (the blocks the float32 arithmetic does not cover)."""
    values = bits.reshape(-1, BLOCK_VALUES)[blocks].reshape(-1)
    work = np.empty((4, values.size), np.uint32)
    limits = np.empty((2, values.size), np.uint32)
    limits[0], limits[1] = 31, (1 << width) - 1
    _codes(values, width, np.empty(blocks.size, np.uint32), work, limits)
    lead = (*codes.shape[:-1], codes.shape[-1] // BLOCK_VALUES)  # codes may be rows of a larger array
    by_block = codes.reshape(*lead, BLOCK_VALUES, copy=False)
    by_block[np.unravel_index(blocks, lead)] = work[0].reshape(-1, BLOCK_VALUES).astype(np.uint8).view(np.int8)


def _codes(bits: np.ndarray, width: int, shared: np.ndarray, work: np.ndarray, limits: np.ndarray) -> None:
    """Shared exponents (into ``shared``) and sign-magnitude codes (into ``work[0]``) of the
    float32 ``bits``, 16 values a block; ``work`` is 4 scratch rows of ``bits.size`` uint32 and
    ``limits`` two rows holding 31 and ``2**width - 1``."""
    codes, exps, shift, tmp = work
    np.right_shift(bits, 23, out=exps)
    np.bitwise_and(exps, 0xFF, out=exps)
    by_block = exps.reshape(-1, BLOCK_VALUES)
    np.maximum(by_block[:, 0], by_block[:, 1], out=shared)
    for column in range(2, BLOCK_VALUES):
        np.maximum(shared, by_block[:, column], out=shared)
    np.subtract(np.repeat(shared, BLOCK_VALUES), exps, out=shift)
    np.minimum(shift, limits[0], out=shift)  # a mantissa has 24 bits: any shift past 23 gives 0
    np.bitwise_and(bits, 0x7FFFFF, out=codes)
    np.bitwise_or(codes, 0x800000, out=codes)
    if shared.min() < 24:  # only then can a subnormal's (absent) leading 1 survive the shift
        np.multiply(codes, exps != 0, out=codes)
    np.right_shift(codes, shift, out=codes)
    dropped = 24 - width
    np.right_shift(codes, dropped, out=tmp)  # round to nearest even: add half - 1 + lowest kept bit
    np.bitwise_and(tmp, 1, out=tmp)
    np.add(tmp, (1 << (dropped - 1)) - 1, out=tmp)
    np.add(codes, tmp, out=codes)
    np.right_shift(codes, dropped, out=codes)
    np.minimum(codes, limits[1], out=codes)  # clamp: no carry into the exponent
    # The sign moves to bit `width`; `codes + 2**width - 1` has that bit iff the magnitude is > 0.
    np.right_shift(bits, 31 - width, out=tmp)
    np.add(codes, (1 << width) - 1, out=shift)
    np.bitwise_and(tmp, shift, out=tmp)
    np.bitwise_and(tmp, 1 << width, out=tmp)
    np.bitwise_or(codes, tmp, out=codes)


def _exp_a_codes(bits: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray]:
    """The exp_a variant (5-bit shared exponent, bias 15): biased exponents below 0 become 0 with
    an empty fraction, above 31 become 31 with a full fraction; zero tests use the float32
    exponent.  Rarely used, so written for clarity rather than speed."""
    word = bits.astype(np.int64).reshape(-1, BLOCK_VALUES)
    float_exp = (word >> 23) & 0xFF
    rebiased = float_exp - _EXP_A_REBIAS
    fraction = np.where(rebiased < 0, 0, np.where(rebiased > 31, 0x7FFFFF, word & 0x7FFFFF))
    exps = np.clip(rebiased, 0, 31)
    shared = exps.max(axis=1)
    mantissa = (fraction | 0x800000) >> np.minimum(shared[:, None] - exps, 31)
    dropped = 24 - width
    magnitude = (mantissa + (1 << (dropped - 1)) - 1 + ((mantissa >> dropped) & 1)) >> dropped
    magnitude = np.where(float_exp == 0, 0, np.minimum(magnitude, (1 << width) - 1))
    sign = ((word >> 31) & 1) << width
    codes = np.where(magnitude != 0, magnitude | sign, 0)
    return shared.astype(np.uint32), codes.reshape(-1).astype(np.uint32)


def _write_codes(codes: np.ndarray, fmt: BlockFloatFormat, out: np.ndarray) -> None:
    """Pack codes (uint8, one per value) into bytes, element 0 in the low bits of each byte."""
    per_byte = fmt.codes_per_byte
    n_tiles = out.shape[0]
    if per_byte == 1:
        np.copyto(out, codes.reshape(n_tiles, -1))
        return
    grouped = codes.reshape(n_tiles, -1, per_byte)
    np.copyto(out, grouped[..., 0])
    for position in range(1, per_byte):
        np.bitwise_or(out, np.left_shift(grouped[..., position], position * fmt.code_bits), out=out)


def pack_bfp(
    tiles: np.ndarray,
    fmt: BlockFloatFormat,
    *,
    exp_a: bool = False,
    use_torch: bool | None = None,
    chunk_values: int = CHUNK_VALUES,
) -> np.ndarray:
    """Packed block-float bytes (n_tiles x tile_size uint8) of float32 ``tiles`` (n_tiles x
    values, each tile in face order); ``use_torch`` and ``chunk_values`` as for :class:`BfpPacker`."""
    tiles = _as_float32_tiles(tiles)
    packer = BfpPacker(fmt, tiles.shape[1], exp_a=exp_a, use_torch=use_torch, chunk_values=chunk_values)
    out = np.empty((tiles.shape[0], packer.tile_size), np.uint8)
    for start in range(0, tiles.shape[0], packer.chunk_tiles):
        chunk = tiles[start : start + packer.chunk_tiles]
        buffer = packer.tiles_buffer(chunk.shape[0])
        np.copyto(buffer, chunk)
        packer.pack_into(buffer, out[start : start + chunk.shape[0]])
    return out


def _as_float32_tiles(tiles: np.ndarray) -> np.ndarray:
    if not isinstance(tiles, np.ndarray) or tiles.ndim != 2:
        raise MeshnnTypeError("block-float tiles must be a 2-D numpy array (n_tiles x values)")
    if tiles.dtype == np.uint32:
        return tiles.view(np.float32)
    if tiles.dtype != np.float32:
        raise MeshnnTypeError(f"block-float packing takes float32 values, got {tiles.dtype}")
    return tiles


# --- block floats: unpacking --------------------------------------------------------------------


@functools.cache
def _decode_table(fmt: BlockFloatFormat) -> np.ndarray:
    """float32 bits of every (shared exponent, code) pair, indexed ``shared << code_bits | code``."""
    width = fmt.magnitude_bits
    shared = np.arange(256, dtype=np.int64)[:, None]
    code = np.arange(1 << fmt.code_bits, dtype=np.int64)[None, :]
    sign = (code >> width) << 31
    magnitude = code & ((1 << width) - 1)
    leading = np.frexp(np.maximum(magnitude, 1))[1] - 1  # position of the leading 1
    shift = (width - 1) - leading
    exponent = shared - shift
    fraction = ((magnitude << shift) & ((1 << (width - 1)) - 1)) << (23 - (width - 1))
    value = np.where(exponent < 0, 0, sign | (exponent << 23) | fraction)
    table = np.where(magnitude == 0, sign, value).astype(np.uint32).reshape(-1)
    table.flags.writeable = False
    return table


def torch_block_values(
    torch: Any,
    codes: np.ndarray,
    width: int,
    scale: np.ndarray,
    out: np.ndarray,
    work: np.ndarray,
    floats: np.ndarray,
) -> None:
    """Decode sign-magnitude ``codes`` (int8 (..., 16), one block per row of 16, any
    non-negative strides) into float32 ``out`` (same shape, any non-negative strides) with
    torch's operations: ``±magnitude * 2**(E - 127 - (W - 1))``, ``scale`` (uint32 (...),
    C-contiguous) holding the bits of each block's power of two.  Exact (as the decoding rules)
    for blocks with ``W <= E <= 254``, the code ``1 << W`` (-0.0) included; the caller redoes the
    others through the table.  ``work``: int8 (2, n) and ``floats``: float32 (n,) C-contiguous
    scratch, n = ``codes.size`` or more.

    The magnitude and sign become a two's-complement int8 ``c = (m ^ s) - s`` (s = 0 or -1), so
    one conversion and one multiplication by the block scale give the value; a code with sign
    and no magnitude gives +0.0 there, and is set to -0.0 afterwards (such codes are rare: the
    packer never makes them)."""
    n = codes.size
    as_torch = torch.from_numpy
    code = _read_only_ok(torch, codes)
    sign = as_torch(work[0, :n]).view(codes.shape)
    signed = as_torch(work[1, :n]).view(codes.shape)
    if width == 7:
        torch.bitwise_right_shift(code, 7, out=sign)  # -1 where the sign is set, else 0
        negative = codes.min() == -128  # 0x80: a sign and no magnitude (a fast check, rarely true)
        torch.bitwise_and(code, (1 << width) - 1, out=signed)
    else:
        torch.bitwise_left_shift(code, 7 - width, out=signed)  # the sign in bit 7
        torch.bitwise_right_shift(signed, 7, out=sign)
        negative = signed.min() == -128  # sign and no magnitude: checked now, signed is reused
        torch.bitwise_and(code, (1 << width) - 1, out=signed)
    torch.bitwise_xor(signed, sign, out=signed)
    torch.sub(signed, sign, out=signed)
    as_float = as_torch(floats[:n]).view(codes.shape)
    as_float.copy_(signed)
    block_scale = as_torch(scale.view(np.float32)).unsqueeze(-1)
    torch.mul(as_float, block_scale, out=as_torch(out))
    if negative:  # those codes are -0.0
        out[codes == np.int8(-128 if width == 7 else 1 << width)] = -0.0


class BfpUnpacker:
    """Unpacks block-float tiles into float32 tiles in face order; one per thread (owns scratch)."""

    def __init__(
        self,
        fmt: BlockFloatFormat,
        values_per_tile: int,
        *,
        chunk_values: int = CHUNK_VALUES,
        use_torch: bool | None = None,
    ) -> None:
        """``use_torch`` as for :class:`BfpPacker`."""
        _check_values_per_tile(values_per_tile)
        self.fmt = fmt
        self.use_torch = use_torch
        self.values_per_tile = values_per_tile
        self.tile_size = fmt.tile_size(values_per_tile)
        self.chunk_tiles = max(1, chunk_values // values_per_tile)
        count = self.chunk_tiles * values_per_tile
        self._values = np.empty(count, np.float32)
        self._codes = np.empty((3, count), np.int8)
        self._scale = np.empty(count // BLOCK_VALUES, np.uint32)
        self._table = _decode_table(fmt)

    def values_buffer(self, n_tiles: int) -> np.ndarray:
        """Scratch for ``n_tiles`` (at most ``chunk_tiles``) decoded tiles, shape (n, values)."""
        return self._values[: n_tiles * self.values_per_tile].reshape(n_tiles, self.values_per_tile)

    def unpack_into(self, packed: np.ndarray, out: np.ndarray) -> None:
        """Decode ``packed`` (n x tile_size uint8) into ``out``: float32 whose elements in C order
        are the n tiles' values in face order, e.g. (n, values), or the tile view of a block of
        a larger array (any strides; its last dimension a whole number of blocks).

        A code is ``±magnitude * 2**(E - 127 - (W - 1))`` for shared exponent E: exact float32
        arithmetic whenever ``W <= E <= 254`` (every result is then a normal float, bit for bit
        what the decoding rules give, code 0x80 included: ``0 * -1`` is -0.0).  The blocks with
        E < W (a result would need an exponent below 1) or E == 255 go through the table of
        :func:`_decode_table`.  With torch the last multiplication writes ``out`` (whatever its
        strides); numpy decodes into scratch that is then copied to a strided ``out``."""
        n_tiles = packed.shape[0]
        n = n_tiles * self.values_per_tile
        if out.dtype != np.float32 or out.size != n or out.shape[-1] % BLOCK_VALUES:
            raise MeshnnValueError(f"BfpUnpacker.unpack_into needs {n} float32 values out, in whole blocks")
        blocks = self.values_per_tile // BLOCK_VALUES
        width = self.fmt.magnitude_bits
        codes, spare = self._codes[0, :n], self._codes[1, :n]
        self._split_codes(packed[:, bfp_exponent_section_size(blocks) :], codes.view(np.uint8))
        shared = packed[:, :blocks]
        scale = self._scale[: n // BLOCK_VALUES].reshape(n_tiles, blocks)
        np.subtract(shared, width - 1, out=scale, dtype=np.uint32)  # wraps for E < W - 1: redone below
        np.left_shift(scale, 23, out=scale)
        torch = _torch_choice(self.use_torch, n)
        direct = out.flags.c_contiguous or (torch is not None and min(out.strides) >= 0)
        if not direct:
            torch = None  # numpy decodes into the values buffer, then it is copied to ``out``
        values = out if direct else self.values_buffer(n_tiles)
        if torch is not None:
            target = values.reshape(*values.shape[:-1], -1, BLOCK_VALUES, copy=False)
            work, floats = self._codes[1:, :n], self._values[:n]
            torch_block_values(
                torch, codes.reshape(target.shape), width, scale.reshape(target.shape[:-1]), target, work, floats
            )
        else:
            self._numpy_values(codes, spare, scale.reshape(-1), values.reshape(-1))
        rare = np.flatnonzero((shared < width) | (shared == 255))
        if rare.size:
            self._table_blocks(packed, rare, values)
        if not direct:
            np.copyto(out, values.reshape(out.shape))

    def _numpy_values(self, codes: np.ndarray, spare: np.ndarray, scale: np.ndarray, values: np.ndarray) -> None:
        """``±magnitude * scale`` of sign-magnitude int8 ``codes`` (clobbered, as ``spare``) with
        ``scale`` the float32 bits of each block's power of two, into flat float32 ``values``."""
        width = self.fmt.magnitude_bits
        sign = codes if width == 7 else np.left_shift(codes, 7 - width, out=spare)  # the sign in bit 7
        np.right_shift(sign, 7, out=spare)  # -1 where it is set (an arithmetic shift of int8), else 0
        np.bitwise_or(spare, 1, out=spare)  # -1 or +1
        np.bitwise_and(codes, np.int8((1 << width) - 1), out=codes)  # the magnitude
        np.copyto(values, codes)
        np.multiply(values, spare, out=values)
        with np.errstate(over="ignore", invalid="ignore"):  # only in the blocks redone by the table
            np.multiply(values, np.repeat(scale.view(np.float32), BLOCK_VALUES), out=values)

    def _split_codes(self, code_bytes: np.ndarray, codes: np.ndarray) -> None:
        """One code per uint8 of ``codes`` from the packed code bytes (element 0 in the low bits)."""
        per_byte, bits = self.fmt.codes_per_byte, self.fmt.code_bits
        if per_byte == 1:
            np.copyto(codes.reshape(code_bytes.shape), code_bytes)
            return
        split = codes.reshape(*code_bytes.shape, per_byte)
        for position in range(per_byte):
            np.right_shift(code_bytes, position * bits, out=split[..., position])
            np.bitwise_and(split[..., position], (1 << bits) - 1, out=split[..., position])

    def _table_blocks(self, packed: np.ndarray, rare: np.ndarray, values: np.ndarray) -> None:
        """Decode the blocks numbered ``rare`` (over all tiles of ``packed``) through the table,
        into ``values`` (as :meth:`unpack_into`'s ``out``)."""
        blocks = self.values_per_tile // BLOCK_VALUES
        codes = np.empty(values.size, np.uint8)
        self._split_codes(packed[:, bfp_exponent_section_size(blocks) :], codes)
        by_block = codes.reshape(-1, BLOCK_VALUES)[rare].astype(np.uint16)
        shared = packed[:, :blocks].reshape(-1)[rare].astype(np.uint16)
        index = np.bitwise_or(by_block, shared[:, None] << self.fmt.code_bits)
        lead = (*values.shape[:-1], values.shape[-1] // BLOCK_VALUES)
        in_blocks = values.view(np.uint32).reshape(*lead, BLOCK_VALUES, copy=False)
        in_blocks[np.unravel_index(rare, lead)] = self._table[index]


def unpack_bfp(
    packed: np.ndarray, fmt: BlockFloatFormat, values_per_tile: int, *, use_torch: bool | None = None
) -> np.ndarray:
    """float32 tiles (n_tiles x values, face order) of packed block-float ``packed`` (n_tiles x
    tile_size uint8, or the same bytes flat); ``use_torch`` as for :class:`BfpPacker`."""
    if not isinstance(packed, np.ndarray) or packed.dtype != np.uint8:
        raise MeshnnTypeError("packed block-float data must be a uint8 numpy array")
    unpacker = BfpUnpacker(fmt, values_per_tile, use_torch=use_torch)
    if packed.size % unpacker.tile_size:
        raise MeshnnValueError(
            f"{packed.size} bytes is not a whole number of {unpacker.tile_size}-byte {fmt.name} tiles"
        )
    packed = packed.reshape(-1, unpacker.tile_size)
    out = np.empty((packed.shape[0], values_per_tile), np.float32)
    for start in range(0, packed.shape[0], unpacker.chunk_tiles):
        chunk = packed[start : start + unpacker.chunk_tiles]
        unpacker.unpack_into(chunk, out[start : start + chunk.shape[0]])
    return out


# --- block floats: whole rows of tiles, with torch -------------------------------------------------


def _code_words(fmt: BlockFloatFormat) -> tuple[np.dtype, int]:
    """The word a block's packed codes (16 codes: 16, 8 or 4 bytes) are moved in (raw bytes:
    ``V16``, or int64 / int32, never a float type), and how many words a block takes."""
    block_bytes = BLOCK_VALUES // fmt.codes_per_byte
    word = np.dtype(f"V{block_bytes}") if block_bytes > 8 else np.dtype(f"<i{block_bytes}")
    return word, 1


class _TileGeometry:
    """Where a row-major block of tile rows puts its values in TTNN tiles (faces not transposed,
    face rows of 16 values, so every block of 16 values is 16 consecutive values of a matrix row).

    A chunk is ``k`` tile rows of ``c`` tiles each: a (k, tile_height, c * tile_width) block of a
    matrix.  Its blocks of 16 values, in row-major order, are indexed (k, face-grid row, face row,
    tile, face-grid column); in tile order (k, tile, face-grid row, face-grid column, face row)."""

    def __init__(self, fmt: BlockFloatFormat, tile_shape: tuple[int, int], face_height: int) -> None:
        height, width = tile_shape
        if width % BLOCK_VALUES or height % face_height:
            raise MeshnnValueError(f"a {tile_shape} tile with {face_height}-row faces is not rows of whole blocks")
        self.fmt = fmt
        self.tile_height, self.tile_width, self.face_height = height, width, face_height
        self.face_rows, self.face_cols = height // face_height, width // BLOCK_VALUES
        self.values_per_tile = height * width
        self.blocks_per_tile = self.values_per_tile // BLOCK_VALUES
        self.exp_bytes = bfp_exponent_section_size(self.blocks_per_tile)
        self.tile_size = fmt.tile_size(self.values_per_tile)
        self.word, self.block_words = _code_words(fmt)

    def row_order(self, k: int, c: int) -> tuple[int, ...]:
        """Shape of a chunk's per-block items in row-major order (the last axis: items a block)."""
        return (k, self.face_rows, self.face_height, c, self.face_cols)

    def tile_order(self, k: int, c: int) -> tuple[int, ...]:
        return (k, c, self.face_rows, self.face_cols, self.face_height)

    def code_words(self, tiles: np.ndarray, k: int, c: int) -> np.ndarray | None:
        """The code section of ``tiles`` (k * c packed tiles, uint8 rows) as words, in tile order
        (k, c, face-grid row, face-grid column, face row, words a block); None when ``tiles``'
        rows cannot be viewed so (unaligned)."""
        codes = tiles[:, self.exp_bytes :]
        if codes.ctypes.data % self.word.itemsize or tiles.strides[-1] != 1 or tiles.strides[0] % self.word.itemsize:
            return None
        words = codes.view(self.word)
        return words.reshape(*self.tile_order(k, c), self.block_words, copy=False)

    def exponents(self, tiles: np.ndarray, k: int, c: int) -> np.ndarray:
        """The shared-exponent bytes of ``tiles`` in tile order (k, c, grid row, grid column, face row)."""
        return tiles[:, : self.blocks_per_tile].reshape(self.tile_order(k, c), copy=False)


class BfpRowPacker:
    """Packs rows of tiles of a row-major float32 matrix into block-float tiles with torch, without
    tilizing the float32 values first: the codes are computed in the matrix's own order (each block
    of 16 values is contiguous there) and only the code bytes (a quarter of the bytes, or less) and
    exponents are moved into tile order, a block's codes at a time, as whole words.

    For tiles whose faces are not transposed.  It owns scratch for ``chunk_tiles`` tiles, so use
    one per thread."""

    def __init__(
        self, fmt: BlockFloatFormat, tile_shape: tuple[int, int], face_height: int, *, chunk_values: int
    ) -> None:
        self.geometry = _TileGeometry(fmt, tile_shape, face_height)
        self.fmt = fmt
        self.tile_size = self.geometry.tile_size
        self.chunk_tiles = max(1, chunk_values // self.geometry.values_per_tile)
        count = self.chunk_tiles * self.geometry.values_per_tile
        self._scratch = np.empty(count, np.int32)
        self._codes = np.empty((2, count), np.int8)
        self._shared = np.empty(count // BLOCK_VALUES, np.uint32)
        self._divisor = np.empty(count // BLOCK_VALUES, np.uint32)
        self._packed = np.empty(count // fmt.codes_per_byte, np.uint8)
        self._coders: dict[tuple[int, ...], _TorchBlockCoder] = {}  # by chunk shape (a packer has a few)

    def pack_rows(self, torch: Any, rows: np.ndarray, out: np.ndarray) -> None:
        """Pack ``rows``, float32 (k, tile_height, c * tile_width) with non-negative strides (k tile
        rows of c tiles, k * c <= chunk_tiles), into ``out``: (k * c, tile_size) uint8, C-contiguous
        rows (may be rows of a larger array), the tiles in TTNN order (row by row)."""
        geo = self.geometry
        k, height, width = rows.shape
        c = width // geo.tile_width
        n = rows.size
        if height != geo.tile_height or width % geo.tile_width or out.shape != (k * c, self.tile_size):
            raise MeshnnValueError(f"BfpRowPacker.pack_rows: {rows.shape} rows do not fill {out.shape} tiles")
        by_block = (k, height, width // BLOCK_VALUES, BLOCK_VALUES)
        shared = self._shared[: n // BLOCK_VALUES].reshape(by_block[:-1])
        codes = self._codes[0, :n].reshape(by_block)
        width_bits = self.fmt.magnitude_bits
        blocks = rows.reshape(by_block, copy=False)
        coder = self._coders.get(by_block)
        if coder is None:
            coder = self._coders[by_block] = _TorchBlockCoder(
                torch, by_block, width_bits, shared, codes, self._scratch, self._codes[1], self._divisor
            )
        coder.run(blocks)
        exponents = geo.exponents(out, k, c)
        np.copyto(exponents, shared.reshape(geo.row_order(k, c)).transpose(0, 3, 1, 4, 2), casting="unsafe")
        if geo.exp_bytes > geo.blocks_per_tile:
            out[:, geo.blocks_per_tile : geo.exp_bytes] = 0
        code_bytes = self._code_bytes(torch, codes.reshape(k, height, width))
        words = code_bytes.view(geo.word).reshape(*geo.row_order(k, c), geo.block_words)
        in_tiles = words.transpose(0, 3, 1, 4, 2, 5)
        target = geo.code_words(out, k, c)
        if target is None:
            np.copyto(out[:, geo.exp_bytes :].reshape(k, c, -1), _as_code_rows(in_tiles, k, c))
            return
        np.copyto(target, in_tiles)  # raw words: numpy moves them as bytes

    def _code_bytes(self, torch: Any, codes: np.ndarray) -> np.ndarray:
        """The packed code bytes (element 0 in the low bits) of one-a-byte ``codes``, row order."""
        per_byte = self.fmt.codes_per_byte
        if per_byte == 1:
            return codes.view(np.uint8)
        bits = self.fmt.code_bits
        grouped = torch.from_numpy(codes.view(np.uint8)).view(*codes.shape[:-1], -1, per_byte)
        packed = self._packed[: codes.size // per_byte].reshape(*codes.shape[:-1], -1)
        result = torch.from_numpy(packed)
        result.copy_(grouped[..., 0])
        for position in range(1, per_byte):
            result.bitwise_or_(torch.bitwise_left_shift(grouped[..., position], position * bits))
        return packed


def _as_code_rows(in_tiles: np.ndarray, k: int, c: int) -> np.ndarray:
    """Words in tile order (k, c, ..., words) as the (k, c, code bytes) of each tile."""
    return np.ascontiguousarray(in_tiles).view(np.uint8).reshape(k, c, -1)


class BfpRowUnpacker:
    """Unpacks block-float tiles into rows of tiles of a row-major float32 matrix with torch, the
    reverse of :class:`BfpRowPacker`: the code bytes are moved (as words) out of tile order and
    decoded in the matrix's order, straight into it.  One per thread (owns scratch)."""

    def __init__(
        self, fmt: BlockFloatFormat, tile_shape: tuple[int, int], face_height: int, *, chunk_values: int
    ) -> None:
        self.geometry = _TileGeometry(fmt, tile_shape, face_height)
        self.fmt = fmt
        self.tile_size = self.geometry.tile_size
        self.chunk_tiles = max(1, chunk_values // self.geometry.values_per_tile)
        count = self.chunk_tiles * self.geometry.values_per_tile
        self._codes = np.empty((3, count), np.int8)
        self._floats = np.empty(count, np.float32)
        self._exps = np.empty(count // BLOCK_VALUES, np.uint8)
        self._scale = np.empty(count // BLOCK_VALUES, np.uint32)
        self._packed = np.empty(count // fmt.codes_per_byte, np.uint8)
        self._table = _decode_table(fmt)

    def unpack_rows(self, torch: Any, packed: np.ndarray, out: np.ndarray) -> None:
        """Decode ``packed`` ((k * c, tile_size) uint8, tiles in TTNN order) into ``out``: float32
        (k, tile_height, c * tile_width), any non-negative strides (e.g. tile rows of a block of
        a larger matrix).  Values as :meth:`BfpUnpacker.unpack_into` gives them, bit for bit."""
        geo = self.geometry
        k, height, width = out.shape
        c = width // geo.tile_width
        n = out.size
        if height != geo.tile_height or width % geo.tile_width or packed.shape != (k * c, self.tile_size):
            raise MeshnnValueError(f"BfpRowUnpacker.unpack_rows: {packed.shape} tiles do not fill {out.shape}")
        by_block = (k, height, width // BLOCK_VALUES, BLOCK_VALUES)
        codes = self._codes[0, :n].reshape(by_block)
        self._gather_codes(torch, packed, codes, k, c)
        exps = self._exps[: n // BLOCK_VALUES].reshape(geo.row_order(k, c))
        tiled = _read_only_ok(torch, geo.exponents(packed, k, c))
        torch.from_numpy(exps).copy_(tiled.permute(0, 2, 4, 1, 3))  # torch's permuted copy: faster here
        shared = exps.reshape(by_block[:-1])
        width_bits = self.fmt.magnitude_bits
        scale = self._scale[: n // BLOCK_VALUES].reshape(by_block[:-1])
        np.subtract(shared, width_bits - 1, out=scale, dtype=np.uint32)  # wraps for E < W - 1: redone below
        np.left_shift(scale, 23, out=scale)
        target = out.reshape(by_block, copy=False)
        torch_block_values(torch, codes, width_bits, scale, target, self._codes[1:], self._floats)
        rare = np.flatnonzero((shared < width_bits) | (shared == 255))
        if rare.size:
            where = np.unravel_index(rare, by_block[:-1])
            index = (shared[where].astype(np.uint16)[:, None] << self.fmt.code_bits) | codes[where].view(np.uint8)
            target.view(np.uint32)[where] = self._table[index]

    def _gather_codes(self, torch: Any, packed: np.ndarray, codes: np.ndarray, k: int, c: int) -> None:
        """One code a byte, in row order, into ``codes`` (k, tile height, blocks a row, 16)."""
        geo = self.geometry
        per_byte = self.fmt.codes_per_byte
        code_bytes = codes.view(np.uint8) if per_byte == 1 else self._packed[: codes.size // per_byte]
        words = code_bytes.view(geo.word).reshape(*geo.row_order(k, c), geo.block_words)
        in_tiles = words.transpose(0, 3, 1, 4, 2, 5)
        source = geo.code_words(packed, k, c)
        if source is None:
            source = np.ascontiguousarray(packed[:, geo.exp_bytes :]).view(geo.word).reshape(in_tiles.shape)
        np.copyto(words, source.transpose(0, 2, 4, 1, 3, 5))  # raw words: numpy moves them as bytes
        if per_byte == 1:
            return
        bits = self.fmt.code_bits
        split = torch.from_numpy(codes.view(np.uint8).reshape(-1, per_byte))
        whole = torch.from_numpy(code_bytes)
        for position in range(per_byte):
            part = split[:, position]
            torch.bitwise_right_shift(whole, position * bits, out=part)
            part.bitwise_and_((1 << bits) - 1)
