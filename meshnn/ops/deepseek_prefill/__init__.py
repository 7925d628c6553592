"""``ttnn.experimental.deepseek_prefill``: DeepSeek-V3's prefill ops (tt-metal 2026-06), a module per op
(its MoE routing: the experts' token counts and offsets, the grouped top-k gate, dispatch, combine and
the post-combine reduce)."""
