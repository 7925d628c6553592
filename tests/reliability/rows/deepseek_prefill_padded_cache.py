"""Bad calls of ``ttnn.experimental.deepseek_prefill.update_padded_kv_cache`` / ``zero_padded_kv_cache``
(stop 52): tt-metal's refusals of layouts, dtypes, layers and slots, the axis, the KV length and the
pad window."""

from __future__ import annotations

import meshnn as ttnn

from ..cases import TYPE, VALUE, Case


def rows() -> list[Case]:
    def update(cache, x, slot=0, layer=0, layers=1, kv=0, axis=1):
        return ttnn.experimental.deepseek_prefill.update_padded_kv_cache(cache, x, slot, layer, layers, kv, axis)

    def zero(cache, valid=0, chunk=128, axis=1, pad=32, layers=1):
        return ttnn.experimental.deepseek_prefill.zero_padded_kv_cache(cache, 0, 0, layers, valid, chunk, axis, pad)

    def one_head(e):  # a [1, 1, 32, 32] bfloat8_b cache: a view of e.bfp8 (nothing allocated)
        return e.bfp8.reshape([1, 1, 32, 32])

    up = "experimental.deepseek_prefill.update_padded_kv_cache"
    zp = "experimental.deepseek_prefill.zero_padded_kv_cache"
    return [
        Case(up, "a ROW_MAJOR cache", lambda e: update(e.rm, e.heads), VALUE, "cache must be TILE"),
        Case(up, "an input of another dtype", lambda e: update(e.heads, one_head(e)), VALUE, "dtype must match"),
        Case(up, "a rank-3 input", lambda e: update(e.a, e.a2), VALUE, "cache must be 4D"),
        Case(up, "num_layers 0", lambda e: update(e.heads, e.heads, layers=0), VALUE, "num_layers"),
        Case(up, "layer_idx past the layers", lambda e: update(e.heads, e.heads, layer=1), VALUE, "layer_idx"),
        Case(up, "slot_idx past the slots", lambda e: update(e.heads, e.heads, slot=1), VALUE, "slot_idx"),
        Case(up, "cluster_axis 2", lambda e: update(e.heads, e.heads, axis=2), VALUE, "cluster_axis"),
        Case(up, "kv_actual_global 16", lambda e: update(e.heads, e.heads, kv=16), VALUE, "kv_actual_global"),
        Case(up, "a str slot_idx", lambda e: update(e.heads, e.heads, slot="0"), TYPE, "slot_idx"),
        Case(up, "a host input", lambda e: update(e.heads, e.host), VALUE, "input"),
        Case(zp, "a cache of two heads", lambda e: zero(e.heads), VALUE, "num-heads"),
        Case(zp, "pad_align 0", lambda e: zero(one_head(e), pad=0), VALUE, "pad_align"),
        Case(zp, "a chunk not split over the axis", lambda e: zero(one_head(e), chunk=6), VALUE, "chunk_size_global"),
        Case(zp, "valid_global past the cache", lambda e: zero(one_head(e), valid=4096), VALUE, "valid_global"),
        Case(zp, "a negative valid_global", lambda e: zero(one_head(e), valid=-1), VALUE, "valid_global"),
    ]  # fmt: skip
