"""Bad calls of the tail of ttnn names tt-metal's tree calls (stop 49): ``pad_to_tile_shape``,
``experimental.nlp_kv_cache_load_slice``, ``experimental.create_qkv_heads`` (and its separate-tensors
form), ``experimental.isin``, ``experimental.padded_slice``."""

from __future__ import annotations

import meshnn as ttnn

from ..cases import DEAD, L1_MC, TYPE, VALUE, Case


def rows() -> list[Case]:
    pad = ttnn.pad_to_tile_shape
    load = ttnn.experimental.nlp_kv_cache_load_slice
    kv = "experimental.nlp_kv_cache_load_slice"
    qkv, sep = ttnn.experimental.create_qkv_heads, ttnn.experimental.create_qkv_heads_from_separate_tensors
    isin = ttnn.experimental.isin
    ps = ttnn.experimental.padded_slice
    return [
        Case(
            "experimental.padded_slice",
            "three starts",
            lambda e: ps(e.heads, [0, 0, 0], [1, 2, 32, 32], memory_config=L1_MC),
            VALUE,
            "padded_slice_start",
        ),
        Case(
            "experimental.padded_slice",
            "an interleaved output",
            lambda e: ps(e.heads, [0] * 4, [1, 2, 32, 32], memory_config=L1_MC),
            VALUE,
            "memory_config",
        ),
        Case("experimental.isin", "two dtypes", lambda e: isin(e.a, e.a_bf16), TYPE, "test_elements"),
        Case("experimental.isin", "invert a string", lambda e: isin(e.a, e.a2, invert="yes"), TYPE, "invert"),
        Case("experimental.isin", "elements deallocated", lambda e: isin(e.freed, e.a), DEAD, "elements"),
        Case("experimental.create_qkv_heads", "interleaved input", lambda e: qkv(e.heads, num_heads=1), VALUE, "BLOCK"),
        Case(
            "experimental.create_qkv_heads",
            "a float head count",
            lambda e: qkv(e.heads, num_heads=1.0),
            TYPE,
            "TILE|BLOCK|num_heads",
        ),
        Case(
            "experimental.create_qkv_heads_from_separate_tensors",
            "interleaved kv input",
            lambda e: sep(e.heads, e.heads, num_heads=1),
            VALUE,
            "BLOCK",
        ),
        Case("experimental.create_qkv_heads", "input deallocated", lambda e: qkv(e.freed, num_heads=1), DEAD, "input"),
        Case(kv, "row-major input", lambda e: load(e.rm, seq_len_start=0, seq_len_end=32), VALUE, "TILE"),
        Case(kv, "a float start", lambda e: load(e.heads, seq_len_start=0.0, seq_len_end=32), TYPE, "seq_len_start"),
        Case(kv, "end past the cache", lambda e: load(e.heads, seq_len_start=0, seq_len_end=64), VALUE, "seq_len_end"),
        Case(kv, "a part tile", lambda e: load(e.heads, seq_len_start=0, seq_len_end=16), VALUE, "multiples of 32"),
        Case(kv, "input deallocated", lambda e: load(e.freed, seq_len_start=0, seq_len_end=32), DEAD, "input_tensor"),
        Case("pad_to_tile_shape", "three dims", lambda e: pad([1, 2, 3]), TYPE, "unpadded_shape"),
        Case("pad_to_tile_shape", "a negative dim", lambda e: pad([1, 2, -3, 4]), TYPE, "unpadded_shape"),
    ]
