"""Block-float tiles packed and unpacked: float32 tiles in face order <-> packed tiles
(:class:`BfpPacker` / :func:`pack_bfp`, :class:`BfpUnpacker` / :func:`unpack_bfp`).

The packers work chunk by chunk (about 64 Ki values), so every intermediate stays in the cache.
When the program uses torch, chunks of ``TORCH_BFP_MIN_VALUES`` or more are packed and unpacked
with torch's kernels (:mod:`meshnn.formats.bfp_torch`: the same arithmetic, on torch's threads;
checked once to give numpy's bits, :func:`_torch_bfp_agrees`), on larger chunks
(``TORCH_CHUNK_VALUES``).

Part of the ``formats`` layer; imports ``meshnn.errors`` and ``meshnn.formats`` (dtypes,
block_float, bfp_torch).
"""

from __future__ import annotations

import functools
import sys
from typing import Any

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.bfp_torch import torch_block_codes, torch_block_values
from meshnn.formats.block_float import (
    BLOCK_VALUES,
    CHUNK_VALUES,
    BlockFloatFormat,
    _block_max,
    _check_values_per_tile,
    _decode_table,
    _exp_a_codes,
    _rare_pack_blocks,
    _redo_blocks,
    _to_sign_magnitude,
    _write_codes,
)
from meshnn.formats.dtypes import bfp_exponent_section_size

TORCH_BFP_MIN_VALUES = 1 << 16
"""Chunks of fewer values are packed and unpacked with numpy (a torch call costs more than it saves)."""


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
        arithmetic (numpy's, or ``torch``'s when given), exactly as ``block_float._codes``.

        With ``E`` the block's shared exponent, ``m = trunc(v * 2**(150 - E))`` is ±(the 24-bit
        mantissa shifted right by ``E - e`` without sticky bits: a power-of-two scaling is exact)
        and ``RNE(m * 2**(W - 24))`` its rounding to W bits, clamped to ``±(2**W - 1)``.  That
        holds for every block with ``24 <= E <= 254``, and for ``E == 0`` (zeros and subnormals:
        they scale below 1, so to 0, as they must; E is raised to 24 for the scale).  The other
        blocks (small normal values, where a subnormal's absent leading 1 matters, and inf/NaN)
        are redone by ``block_float._codes``."""
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
        ``block_float._decode_table``.  With torch the last multiplication writes ``out`` (whatever its
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
