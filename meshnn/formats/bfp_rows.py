"""Block-float tiles packed from, and unpacked into, rows of tiles of a row-major float32 matrix
with torch (:class:`BfpRowPacker`, :class:`BfpRowUnpacker`), without tilizing the float32 values:
the codes are computed in the matrix's own order and only the code bytes and exponents move
between that order and the tiles'.  For tiles whose faces are not transposed.

Part of the ``formats`` layer; imports ``meshnn.errors`` and ``meshnn.formats`` (dtypes,
block_float, bfp_torch).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from meshnn.errors import MeshnnValueError
from meshnn.formats.bfp_torch import _TorchBlockCoder, read_only_tensor, torch_block_values
from meshnn.formats.block_float import BLOCK_VALUES, BlockFloatFormat, _decode_table
from meshnn.formats.dtypes import bfp_exponent_section_size


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
        a larger matrix).  Values as ``bfp_tiles.BfpUnpacker.unpack_into`` gives them, bit for bit."""
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
        tiled = read_only_tensor(torch, geo.exponents(packed, k, c))
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
