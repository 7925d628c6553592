"""``ttnn.transformer`` and its ``ttnn.experimental`` relatives: the fused ops of a TTNN
transformer model, each one MeshWorkload that computes in float32 and rounds once into its output
dtype.  By family:

- :mod:`~meshnn.ops.transformer.attention`: ``scaled_dot_product_attention``;
- :mod:`~meshnn.ops.transformer.heads`: ``split_query_key_value_and_split_heads``,
  ``concatenate_heads``, ``nlp_create_qkv_heads``, ``nlp_concat_heads``;
- :mod:`~meshnn.ops.transformer.rotary`: ``rotary_embedding``;
- :mod:`~meshnn.ops.transformer.checks`: the checks they share;
- :mod:`~meshnn.ops.transformer.namespaces`: the ``ttnn.transformer`` / ``ttnn.experimental``
  module objects.

May import (each module): every layer below the ops and the ops' launch, checks, outputs, values
and config modules.
"""
