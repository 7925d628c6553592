"""Published kernel times of prefill-sized ops (one user's 128-token prompt), and the model's value.

Source: PREFILL = tt-metal models/demos/llama3_70b_galaxy/tests/perf_targets/prefill_128.json (the
2026-06 tree; added 2025-07; PREFILL_4K: prefill_4096.json, the same layer at 4096 tokens): the
device kernel time of every op of one Llama-3.1-70B decoder layer's
prefill of 128 tokens on a Galaxy (batch 1), as tests/test_prefill_device_perf.py measures it.  The
shapes are llama_attention.py's forward_prefill on a device of the 8x4 mesh: 8 q heads and 1 kv head
of 128 (num_devices_per_group = n_kv_heads = 8), the fused QKV row in bfloat8_b (ccl_dtype), q and k
cast to bfloat16 for the rotary embedding and back to bfloat8_b for the cache and attention.
"""

from __future__ import annotations

from meshnn.perf import OpDesc, OpFamily, TensorDesc, predict

from .figure import Figure

PREFILL = "tt-metal models/demos/llama3_70b_galaxy/tests/perf_targets/prefill_128.json (70B on a Galaxy, 128 tokens)"
PREFILL_4K = (
    "tt-metal models/demos/llama3_70b_galaxy/tests/perf_targets/prefill_4096.json (the same layer, 4096 tokens)"
)
GROUP = "prefill ops"
Q8, K8 = TensorDesc((1, 8, 128, 128), "BFLOAT8_B"), TensorDesc((1, 1, 128, 128), "BFLOAT8_B")
Q, K = TensorDesc((1, 8, 128, 128)), TensorDesc((1, 1, 128, 128))
ROTATION = (TensorDesc((1, 1, 128, 128)), TensorDesc((1, 1, 128, 128)), TensorDesc((1, 1, 32, 32)))
ROTARY = "RotaryEmbeddingLlamaDeviceOperation"
ROTARY_MISS = (
    "the program runs on 4 cores (batch x sequence tiles: rotary_embedding_llama_program_factory.cpp) and the "
    "model gives each tile its tile multiply, two multiplies and an add; measured, the call costs about 12 us "
    "beyond its tiles (1 head, 4 tiles a core: 14.2 us), which the model has no term for (the kernel re-initialises "
    "the math engine for each of its four operations on every row of tiles, and reads cos / sin per row)"
)


def us(desc: OpDesc) -> float:
    return predict(desc, "galaxy", mesh_shape=(8, 4), traced=True).kernel_ns / 1e3


def typecast(source: TensorDesc, dest: TensorDesc) -> OpDesc:
    return OpDesc(OpFamily.TYPECAST, (source,), (dest,))


def rotary(x: TensorDesc) -> OpDesc:
    return OpDesc(OpFamily.BINARY, (x, *ROTATION), (x,), op_code=ROTARY)


def prefill_figures() -> list[Figure]:
    """The prefill ops' figures: checks (typecasts) and misses shown with why."""
    rows = [  # name, published us, op, why outside the claim ("" for a check)
        ("typecast q bfloat8_b -> bfloat16 (8 heads)", 4.378, typecast(Q8, Q), ""),
        ("typecast k bfloat8_b -> bfloat16 (1 head)", 2.092, typecast(K8, K), ""),
        ("typecast k bfloat16 -> bfloat8_b (1 head)", 2.037, typecast(K, K8), ""),
        ("typecast q bfloat16 -> bfloat8_b (8 heads)", 3.906, typecast(Q, Q8), ""),
        ("rotary_embedding_llama q (8 heads)", 30.278, rotary(Q), ROTARY_MISS),
        ("rotary_embedding_llama k (1 head)", 14.203, rotary(K), ROTARY_MISS),
    ]
    figures = [
        Figure(
            f"70B prefill 128: {name}", PREFILL, pub, pub, "us", lambda d=desc: us(d),
            covered=not why, why_not=why, group=GROUP,
        )
        for name, pub, desc, why in rows
    ]  # fmt: skip
    return figures + heads_figures()


def create_heads(tokens: int) -> OpDesc:
    qkv = TensorDesc((1, 1, tokens, 1280), "BFLOAT8_B")
    q, kv = TensorDesc((1, 8, tokens, 128), "BFLOAT8_B"), TensorDesc((1, 1, tokens, 128), "BFLOAT8_B")
    return OpDesc(OpFamily.COPY, (qkv,), (q, kv, kv), op_code="NlpCreateHeadsDeviceOperation")


def concat_heads(tokens: int) -> OpDesc:
    """The layer's SDPA output, put back side by side: bfloat8_b, as the SDPA ran on q typecast to
    bfloat8_b and returns q's dtype (llama3_70b_galaxy/tt/llama_attention.py as of the perf targets'
    date, 2025-07; ring-distributed SDPA, whose output holds a quarter of the sequence, came in 2025-09)."""
    heads, out = TensorDesc((1, 8, tokens, 128), "BFLOAT8_B"), TensorDesc((1, 1, tokens, 1024), "BFLOAT8_B")
    return OpDesc(OpFamily.COPY, (heads,), (out,), op_code="NLPConcatHeadsDeviceOperation")


def heads_figures() -> list[Figure]:
    """nlp_create_qkv_heads / nlp_concat_heads (meshnn.perf.heads): 4 cores of tiles read one at a time
    at 128 tokens (the concat fitted the round trip), the whole grid at 4096."""
    rows = [  # name, source, published us, op, fitted, why outside the claim
        ("70B prefill 128: nlp_create_qkv_heads 8 + 1 + 1 heads", PREFILL, 21.994, create_heads(128), False, ""),
        ("70B prefill 128: nlp_concat_heads 8 heads", PREFILL, 17.667, concat_heads(128), True, ""),
        ("70B prefill 4096: nlp_create_qkv_heads 8 + 1 + 1 heads", PREFILL_4K, 63.63, create_heads(4096), False, ""),
        ("70B prefill 4096: nlp_concat_heads 8 heads", PREFILL_4K, 49.77, concat_heads(4096), False, ""),
    ]
    return [
        Figure(
            name, source, pub, pub, "us", lambda d=desc: us(d), covered=not why, why_not=why, fitted=fitted,
            group=GROUP,
        )
        for name, source, pub, desc, fitted, why in rows
    ]  # fmt: skip
