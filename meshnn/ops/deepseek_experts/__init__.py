"""DeepSeek-V3 prefill's ops on one expert's tokens (``ttnn.experimental.deepseek_prefill.*``), by
what they hold:

- :mod:`~meshnn.ops.deepseek_experts.expert_slices`: ``extract`` / ``insert``, an expert's tile rows
  copied out of / into the dispatch buffer at the offsets its device's tables name;
- :mod:`~meshnn.ops.deepseek_experts.token_casts`: ``per_token_cast_to_fp8`` / ``per_token_cast_back``,
  float8_e4m3 with one float32 scale per 128-element block of a token;
- :mod:`~meshnn.ops.deepseek_experts.expert_ffn`: ``routed_expert_ffn`` / ``unified_routed_expert_ffn``,
  one expert's SwiGLU feed-forward over its first tokens.

May import (each module): every layer below the ops and the ops' launch, checks, outputs, values
and config modules.
"""
