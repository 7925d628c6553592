"""The ``ttnn.transformer`` and ``ttnn.experimental`` namespaces: module objects holding the ops
meshnn has under those names; any other name raises :class:`NotImplementedByMeshnn` naming it
(``transformer.<name>`` / ``experimental.<name>``).

May import: :mod:`meshnn.errors`, :mod:`meshnn.ops.config` and the modules of the ops they hold
(transformer ops, collectives, fast_reduce_nc, minimal_matmul).
"""

from __future__ import annotations

import types

from meshnn.errors import NotImplementedByMeshnn
from meshnn.ops.ccl.all_gather_async import all_gather_async, all_gather_async_reversed
from meshnn.ops.ccl.all_gather_matmul import all_gather_matmul_async
from meshnn.ops.ccl.all_reduce_async import all_reduce_async
from meshnn.ops.ccl.reduce_scatter_async import reduce_scatter_minimal_async
from meshnn.ops.config import SDPAProgramConfig
from meshnn.ops.fast_reduce import fast_reduce_nc
from meshnn.ops.minimal_matmul import minimal_matmul
from meshnn.ops.transformer.attention import scaled_dot_product_attention
from meshnn.ops.transformer.attention_chunked import chunked_scaled_dot_product_attention
from meshnn.ops.transformer.attention_decode import (
    paged_scaled_dot_product_attention_decode,
    scaled_dot_product_attention_decode,
)
from meshnn.ops.transformer.attention_ring import ring_distributed_scaled_dot_product_attention
from meshnn.ops.transformer.heads import (
    concatenate_heads,
    nlp_concat_heads,
    nlp_create_qkv_heads,
    split_query_key_value_and_split_heads,
)
from meshnn.ops.transformer.heads_decode import nlp_concat_heads_decode, nlp_create_qkv_heads_decode
from meshnn.ops.transformer.paged_cache import paged_fill_cache, paged_fused_update_cache, paged_update_cache
from meshnn.ops.transformer.rotary import rotary_embedding
from meshnn.ops.transformer.rotary_llama import rotary_embedding_llama, rotary_embedding_llama_fused_qk


class OpNamespace(types.ModuleType):
    """``ttnn.transformer`` / ``ttnn.experimental``: the ops meshnn has under that name; any other
    name raises :class:`NotImplementedByMeshnn` naming it."""

    def __getattr__(self, name: str) -> object:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        raise NotImplementedByMeshnn(f"{self.__name__.removeprefix('meshnn.')}.{name}")


def _namespace(name: str, doc: str, **ops: object) -> OpNamespace:
    module = OpNamespace(f"meshnn.{name}", doc)
    for key, value in ops.items():
        setattr(module, key, value)
    return module


transformer = _namespace(
    "transformer",
    "ttnn.transformer: fused attention ops.",
    scaled_dot_product_attention=scaled_dot_product_attention,
    split_query_key_value_and_split_heads=split_query_key_value_and_split_heads,
    concatenate_heads=concatenate_heads,
    SDPAProgramConfig=SDPAProgramConfig,
    scaled_dot_product_attention_decode=scaled_dot_product_attention_decode,
    paged_scaled_dot_product_attention_decode=paged_scaled_dot_product_attention_decode,
    chunked_scaled_dot_product_attention=chunked_scaled_dot_product_attention,
    ring_distributed_scaled_dot_product_attention=ring_distributed_scaled_dot_product_attention,
)
experimental = _namespace(
    "experimental",
    "ttnn.experimental: the experimental ops meshnn has.",
    rotary_embedding=rotary_embedding,
    concatenate_heads=concatenate_heads,
    nlp_create_qkv_heads=nlp_create_qkv_heads,
    nlp_concat_heads=nlp_concat_heads,
    rotary_embedding_llama=rotary_embedding_llama,
    rotary_embedding_llama_fused_qk=rotary_embedding_llama_fused_qk,
    nlp_create_qkv_heads_decode=nlp_create_qkv_heads_decode,
    nlp_concat_heads_decode=nlp_concat_heads_decode,
    paged_update_cache=paged_update_cache,
    paged_fused_update_cache=paged_fused_update_cache,
    paged_fill_cache=paged_fill_cache,
    all_gather_async=all_gather_async,  # the asynchronous collectives and their kin (issue 22)
    all_gather_async_reversed=all_gather_async_reversed,
    reduce_scatter_minimal_async=reduce_scatter_minimal_async,
    all_reduce_async=all_reduce_async,
    all_gather_matmul_async=all_gather_matmul_async,
    fast_reduce_nc=fast_reduce_nc,
    minimal_matmul=minimal_matmul,
)
