"""The block-float kernels in torch's operations: the shared exponents and sign-magnitude codes of
blocks of float32 values, and the values of codes, any strides, bit for bit the integer rules of
:mod:`meshnn.formats.block_float` (the few blocks float32 arithmetic does not cover are redone by
them).  The caller hands torch in; meshnn never imports it for this.

Part of the ``formats`` layer; imports ``meshnn.formats.block_float``.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from meshnn.formats.block_float import BLOCK_VALUES, _rare_pack_blocks, _redo_block_rows

TORCH_CHUNK_VALUES = 1 << 19
"""Values per step when torch does the arithmetic: each torch call is split over its threads, so
a call must be long enough to pay for that (measured best on a 2-core machine with 2 MiB of L2
per core: 1 << 18 to 1 << 19).  A thread's packer then keeps 7 MiB of scratch, its unpacker 3."""


def read_only_tensor(torch: Any, array: np.ndarray) -> Any:
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
    with torch's operations, exactly as ``block_float._codes`` gives them.

    ``shared``: uint32 (...), C-contiguous, gets each block's biased exponent E.  ``codes``: int8
    (..., 16), any non-negative strides, gets ``sign << W | magnitude`` per value.  ``scratch``
    (4 bytes a value: uint32 or int32), ``spare`` (int8, a value each) and ``divisor`` (uint32, a
    block each): flat C-contiguous scratch at least that long.

    The largest magnitude of a block is found by a max pooling over the magnitudes' bits read as
    float32 (non-negative bit patterns order as their integers do; a NaN pattern, E == 255,
    wins, and its block is redone): measured faster than an integer ``amax`` over rows of 16.

    The arithmetic (see ``bfp_tiles.BfpPacker._float_codes``): ``t = trunc(v / 2**(max(E, 24) - 150))``,
    an integer below 2**24 in magnitude, clamped to ``±(2**W - 1) * 2**(24 - W)``; then
    ``t + 1.5 * 2**(47 - W)`` rounds, in float32, to the nearest multiple of ``2**(24 - W)``,
    ties to even (the spacing of float32 there), so its bits end in the rounded code
    ``r = RNE(t * 2**(W - 24))`` as an 8-bit two's-complement number (the low bits of
    ``2**22 + r``): the conversion to int8 keeps just those.  Blocks with 1 <= E <= 23 or
    E == 255 are redone by ``block_float._codes``.
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
        source = torch.from_numpy(values) if values.flags.writeable else read_only_tensor(torch, values)
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
    code = read_only_tensor(torch, codes)
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
