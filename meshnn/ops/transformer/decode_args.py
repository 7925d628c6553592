"""The checks of a decode attention's q, k and v (``scaled_dot_product_attention_decode`` and its paged and
MLA forms): where each may live, their dtypes, and the dims they agree on, tt-metal's messages.

May import: :mod:`meshnn.errors`, :mod:`meshnn.device`, :mod:`meshnn.formats`, :mod:`meshnn.tensor`, the ops'
checks and the transformer ops' checks and attention module.
"""

from __future__ import annotations

from meshnn.device.buffer import BufferType, TensorMemoryLayout
from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.ops.checks import device_input
from meshnn.ops.transformer.attention import SDPA_DTYPES
from meshnn.ops.transformer.checks import tile_input
from meshnn.tensor.tensor import Tensor


def decode_qkv(op: str, q: object, k: object, v: object) -> dict[str, Tensor]:
    """q, k and v of a decode attention, checked: on device, of the SDPA dtypes, k and v TILE in DRAM, q in
    DRAM or height-sharded."""
    named = {
        "input_tensor_q": device_input(op, "input_tensor_q", q),
        "input_tensor_k": tile_input(op, "input_tensor_k", k, SDPA_DTYPES),
        "input_tensor_v": tile_input(op, "input_tensor_v", v, SDPA_DTYPES),
    }
    if named["input_tensor_q"].dtype not in SDPA_DTYPES:
        raise MeshnnTypeError(f"ttnn.{op}: Unsupported data type {named['input_tensor_q'].dtype.name}.")
    config = named["input_tensor_q"].spec.memory_config
    if config.is_sharded() and config.memory_layout is not TensorMemoryLayout.HEIGHT_SHARDED:
        raise MeshnnValueError(f"ttnn.{op}: Q tensor memory layout must be HEIGHT_SHARDED when sharded")
    if not config.is_sharded() and config.buffer_type is not BufferType.DRAM:
        raise MeshnnValueError(
            f"ttnn.{op}: Q tensor buffer type must be DRAM when not sharded but got {config.buffer_type.name}"
        )
    for name in ("input_tensor_k", "input_tensor_v"):
        if named[name].spec.memory_config.buffer_type is not BufferType.DRAM:
            raise MeshnnValueError(f"ttnn.{op}: {name} buffer type must be DRAM")
    return named


def decode_dims(
    op: str, named: dict[str, Tensor], paged: bool, share_cache: bool = False, v_width: int = 0
) -> tuple[int, int, int, int, int]:
    """``(users, q heads, kv heads, rows per user or block, d)``, checked: unpaged, the caches hold one
    batch per user, or (``share_cache``) one batch every user reads; ``v_width`` (MLA's values tensor): V
    is K's shape but ``v_width`` wide."""
    q, k, v = named["input_tensor_q"], named["input_tensor_k"], named["input_tensor_v"]
    if len(q.shape) != 4 or q.shape[0] != 1:
        raise MeshnnValueError(
            f"ttnn.{op}: Q tensor batch size must be 1 for decode mode: [1, users, heads, d], got {list(q.shape)}"
        )
    v_shape = (*tuple(v.padded_shape)[:3], k.padded_shape[3]) if v_width and v.padded_shape[3] == v_width else None
    if len(k.shape) != 4 or tuple(k.padded_shape) != (v_shape or tuple(v.padded_shape)):
        raise MeshnnValueError(f"ttnn.{op}: K {list(k.shape)} and V {list(v.shape)} must be alike 4-D caches")
    _, users, heads, d = tuple(q.shape)
    kv_heads = k.shape[1]
    if k.padded_shape[3] != q.padded_shape[3]:
        raise MeshnnValueError(
            f"ttnn.{op}: K tensor hidden dimension ({k.shape[3]}) must equal Q tensor hidden dimension ({d})"
        )
    if not paged and share_cache:
        for name, t in (("K", k), ("V", v)):
            if t.shape[0] != 1:
                raise MeshnnValueError(
                    f"ttnn.{op}: Share cache expects {name} to have batch size of 1, but got {t.shape[0]} (share_cache)"
                )
    elif not paged and k.shape[0] != users:
        raise MeshnnValueError(f"ttnn.{op}: K tensor batch size ({k.shape[0]}) must equal B ({users}) (input_tensor_k)")
    if kv_heads > 1:
        if q.dtype is not DataType.BFLOAT16:
            raise MeshnnTypeError(f"ttnn.{op}: GQA expects BFLOAT16 input tensor, but got {q.dtype.name}")
        if heads % kv_heads:
            raise MeshnnValueError(
                f"ttnn.{op}: GQA expects Q to have a multiple of K heads, but got {heads} and {kv_heads}"
            )
    return users, heads, kv_heads, k.padded_shape[2], d
