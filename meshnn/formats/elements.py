"""The elements of each dtype: logical values <-> the stored elements of a ttnn host buffer.

Element rules (golden ``typecast.json``, all four ttnn paths agree):

- float -> bfloat16: round to nearest even, every NaN -> 0x7FC0 (see ``bfloat16``).  numpy
  ``ml_dtypes.bfloat16`` input is a bit pass-through (what ``from_torch`` of a torch.bfloat16 does).
- float -> int32: truncate toward zero; out of range, NaN and inf -> INT32_MIN.
- float -> uint32: truncate; values in [-2**31, 2**32) wrap modulo 2**32 (-1.5 -> 0xFFFFFFFF);
  the rest, NaN and inf -> 0x80000000.
- float -> uint16 / uint8 / int8: the int32 result, clamped to the type's range (so out-of-int32,
  NaN and inf give 0 for unsigned, -128 for int8).
- integer/bool -> integer: wraps modulo the target width (numpy ``astype``).
- integer -> float32: nearest float32; integer -> bfloat16: through float32, then as a float.
- float -> fp8_e4m3: |x| < 2**-6 (fp8 subnormals) -> signed 0; else nearest even, saturating to
  +-448 (0x7E / 0xFE, no inf); NaN -> 0x7F.  fp8 -> float32 is exact.
- bfloat8_b / bfloat4_b: the block-float model of ``block_float`` applied to the float32 values
  (bfloat16 input is widened exactly first, so ``from_torch(torch.bfloat16)`` rounds twice); they
  have no per-element storage, they are packed in tiles (``bfp_chunks``).

Part of the ``formats`` layer; imports ``meshnn.errors`` and ``meshnn.formats`` (dtypes, bfloat16).
"""

from __future__ import annotations

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.bfloat16 import bfloat16_bits_to_float32, float32_to_bfloat16_bits
from meshnn.formats.dtypes import DataType, bfloat16_dtype, is_bfloat16

FP8_E4M3_MAX = 448.0
FP8_E4M3_MIN_NORMAL = 2.0**-6
FP8_E4M3_NAN = 0x7F

_INT32_MIN = -(2**31)

# numpy inputs ttnn 0.81.1 cannot import for a bfloat16 target ("parse_py_tensor: ndarray_import
# failed"); the bfloat16-based block floats are held to the same rule.
_NOT_FOR_BFLOAT_TARGETS = frozenset(np.dtype(t) for t in (np.float64, np.float16, np.int16, np.int64, np.uint64))
_BFLOAT_TARGETS = (DataType.BFLOAT16, DataType.BFLOAT8_B, DataType.BFLOAT4_B)


def check_input(values: object, dtype: DataType) -> np.ndarray:
    if not isinstance(values, np.ndarray):
        raise MeshnnTypeError(
            f"expected a numpy array, got {type(values).__name__}; convert it first "
            f"(np.asarray(...) for lists, tensor.numpy() for torch, bfloat16 viewed as ml_dtypes.bfloat16)"
        )
    source = values.dtype
    if not is_bfloat16(source) and source.kind not in "fiub":
        raise MeshnnTypeError(f"cannot convert numpy {source} data to {dtype}")
    if dtype in _BFLOAT_TARGETS and source in _NOT_FOR_BFLOAT_TARGETS:
        raise MeshnnTypeError(
            f"numpy {source} input cannot be converted to {dtype}: cast it first, e.g. "
            f"values.astype(np.float32) (ttnn refuses it too: parse_py_tensor: ndarray_import failed.)"
        )
    return values


def _is_float(values: np.ndarray) -> bool:
    return is_bfloat16(values.dtype) or values.dtype.kind == "f"


def to_float32(values: np.ndarray) -> np.ndarray:
    """float32 values (exact for bfloat16; the input itself when it is already float32)."""
    if is_bfloat16(values.dtype):
        return bfloat16_bits_to_float32(values.view(np.uint16))
    return values.astype(np.float32, copy=False)


def _float32_to_int32(values: np.ndarray) -> np.ndarray:
    truncated = np.trunc(values)
    in_range = (truncated >= -(2.0**31)) & (truncated < 2.0**31)
    return np.where(in_range, truncated, _INT32_MIN).astype(np.int32)


def _float32_to_uint32(values: np.ndarray) -> np.ndarray:
    truncated = np.trunc(values)
    in_range = (truncated >= -(2.0**31)) & (truncated < 2.0**32)
    return np.where(in_range, truncated, 2.0**31).astype(np.int64).astype(np.uint32)


def _float32_to_fp8_bits(values: np.ndarray) -> np.ndarray:
    flushed = np.where(
        np.abs(values) < FP8_E4M3_MIN_NORMAL,
        np.copysign(np.float32(0), values),
        np.clip(values, -FP8_E4M3_MAX, FP8_E4M3_MAX),
    )
    import ml_dtypes  # at first use: see bfloat16_dtype

    with np.errstate(invalid="ignore"):
        bits = flushed.astype(ml_dtypes.float8_e4m3fn).view(np.uint8)
    bits[np.isnan(values)] = FP8_E4M3_NAN
    return bits


def to_storage(values: np.ndarray, dtype: DataType) -> np.ndarray:
    """The stored elements (``dtype.storage_dtype``, ``values``' shape, a new array) of ``values``."""
    if dtype is DataType.FLOAT32:
        return np.array(to_float32(values), dtype=np.float32, copy=True, order="C")
    if dtype is DataType.BFLOAT16:
        if is_bfloat16(values.dtype):
            return np.array(values.view(np.uint16), copy=True, order="C")
        return float32_to_bfloat16_bits(to_float32(values))
    if dtype is DataType.FP8_E4M3:
        return _float32_to_fp8_bits(to_float32(values))
    if dtype.is_block_float:
        raise MeshnnValueError(f"{dtype} has no per-element storage; it is packed in tiles")
    target = dtype.storage_dtype
    if not _is_float(values):
        return values.astype(target, order="C")
    floats = to_float32(values)
    if dtype is DataType.UINT32:
        return _float32_to_uint32(floats)
    as_int32 = _float32_to_int32(floats)
    if dtype is DataType.INT32:
        return as_int32
    limits = np.iinfo(target)
    return np.clip(as_int32, limits.min, limits.max).astype(target)


def pad_element(pad_value: float, dtype: DataType) -> np.generic:
    """``pad_value`` (a float, as ttnn's C++ takes it) converted to one stored element."""
    return to_storage(np.array([pad_value], np.float32), dtype)[0]


def from_storage(elements: np.ndarray, dtype: DataType) -> np.ndarray:
    """Stored elements as the values ``to_numpy`` gives (may be a view of ``elements``)."""
    if dtype is DataType.BFLOAT16:
        return elements.view(bfloat16_dtype())
    if dtype is DataType.FP8_E4M3:
        import ml_dtypes  # at first use: see bfloat16_dtype

        return elements.view(ml_dtypes.float8_e4m3fn).astype(np.float32)
    return elements


def as_bytes(elements: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(elements).reshape(-1).view(np.uint8)
