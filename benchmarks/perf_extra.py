"""Part (e) of ``perf_model.py``: PERF.md's whole-model figures that no other part checks (tt-metal
models/tt_transformers/PERF.md of 2026-06; each row's date from ``git blame``), all checks, none fitted.

- Its "Llama 3 model precision and math fidelity" tables: Llama-3.2-1B on an N300 under twelve
  ``precision_cfg`` / ``fidelity_cfg`` settings (#17872, 2025-03-17), the same model and system under
  each, so they check how the model answers to the weights' dtypes and the matmuls' fidelities.  Their
  decode figures are checks; their times to first token are printed beside them but are not checks:
  they time the prefill of 2025-03-17's code, which the same day's performance row puts at 54 ms for
  this model and system (PERF.md of 2025-03-17, #18777), where the code the model writes (2025-09:
  the performance row the host's prefill figure is fitted to) takes 22 ms; its decode moved far less
  (100.5 -> 105.9 t/s/u).  The settings are read from each table's heading as model_config.py of that
  commit defines them: ``hifi2`` is HiFi2 with float32 accumulation (compute_kernel_config_hifi2),
  ``hifi2fp16`` without, ``hifi2na`` without and without packer L1 accumulation, ``hifi4`` HiFi4 with
  float32 accumulation, ``lofi`` LoFi; ``activation: mixed`` is each op's default.
- Its "Short-Context, Batch-32" table (2025-03-17, #18777): 32 users of 128-token prompts, decode of
  the batch (each user at position 228, PERF.md's 200 generated tokens), sampled on the host as the demo
  did then.  The decode figures are checks; the "avg TTFT" column is not (how the demo of 2025-03
  averaged 32 users' prefills is not in the table: its 1B on an N150, 38 ms, is below the same day's
  batch-1 figure, 55 ms).  Llama-3.2-11B (a vision model) and the empty rows are left out.
"""

from __future__ import annotations

from tt_llama import (
    BF16,
    BFP4,
    BFP8,
    HIFI2,
    HIFI2_FP32,
    HIFI2_NA,
    HIFI4_FP32,
    LLAMA_1B,
    LLAMA_3B,
    LLAMA_8B,
    LLAMA_70B,
    LOFI,
    Precision,
)

_DTYPES = {"bfp4": BFP4, "bfp8": BFP8, "bf16": BF16}
_FIDELITIES = {"lofi": LOFI, "hifi2": HIFI2_FP32, "hifi2fp16": HIFI2, "hifi2na": HIFI2_NA, "hifi4": HIFI4_FP32}
_ACTIVATIONS = {"mixed": None, "bf16": BF16, "bfp8": BFP8}


def table_precision(ff1_3: str, ff2: str, wo: str, activation: str, li_ff1_3: str, li_ff2: str, li_o: str) -> Precision:
    """One PERF.md precision table's settings (its heading's fields; the others are the same in all twelve:
    wqkv and kv_cache bfp8, li_qkv hifi2, sdpa_decode hifi2na, sdpa_prefill hifi4, li_o_prefill hifi2fp16
    where li_o_decode is hifi2, lofi where it is lofi)."""
    name = f"{ff1_3}/{ff2}/{wo}/{activation} {li_ff1_3}/{li_ff2}/{li_o}"
    return Precision(
        name,
        ff1_ff3=_DTYPES[ff1_3],
        ff2=_DTYPES[ff2],
        wo=_DTYPES[wo],
        attention=HIFI2_FP32,
        sdpa_decode=HIFI2_NA,
        activation=_ACTIVATIONS[activation],
        ff1_ff3_fidelity=_FIDELITIES[li_ff1_3],
        ff2_fidelity=_FIDELITIES[li_ff2],
        wo_decode=_FIDELITIES[li_o],
        wo_prefill=_FIDELITIES["hifi2fp16" if li_o == "hifi2" else li_o],
    )


PRECISION_TABLES = [  # (ff1_3, ff2, wo, activation, li_ff1_3, li_ff2, li_o): (t/s/u, TTFT ms), Llama-3.2-1B N300
    (("bfp4", "bfp4", "bfp8", "mixed", "lofi", "lofi", "hifi2"), (100.3, 69.0)),
    (("bfp4", "bfp8", "bfp8", "mixed", "lofi", "hifi2", "hifi2"), (100.3, 55.0)),
    (("bfp4", "bf16", "bfp8", "mixed", "lofi", "hifi4", "hifi2"), (96.8, 51.0)),
    (("bfp8", "bfp4", "bfp8", "mixed", "hifi2", "lofi", "hifi2"), (98.5, 50.0)),
    (("bfp8", "bfp8", "bfp8", "mixed", "hifi2", "hifi2", "hifi2"), (99.0, 60.0)),
    (("bfp8", "bf16", "bfp8", "mixed", "hifi2", "hifi4", "hifi2"), (95.2, 49.0)),
    (("bf16", "bfp4", "bfp8", "mixed", "hifi4", "lofi", "hifi2"), (95.2, 53.0)),
    (("bf16", "bfp8", "bfp8", "mixed", "hifi4", "hifi2", "hifi2"), (94.4, 57.0)),
    (("bf16", "bf16", "bfp8", "mixed", "hifi4", "hifi4", "hifi2"), (91.2, 60.0)),
    (("bfp8", "bfp8", "bfp4", "bf16", "hifi2", "hifi2", "lofi"), (98.2, 45.0)),
    (("bfp8", "bfp8", "bfp4", "bfp8", "hifi2", "hifi2", "lofi"), (101.0, 57.0)),
    (("bfp8", "bfp8", "bfp4", "mixed", "hifi2", "hifi2", "lofi"), (99.4, 73.0)),
]
"""PERF.md's precision tables (2025-03-17): Llama-3.2-1B on an N300, decode t/s/u and TTFT ms."""

BATCH32 = [  # (shape, system, t/s/u, avg TTFT ms): PERF.md's "Short-Context, Batch-32" (2025-03-17)
    (LLAMA_1B, "N150", 54.7, 38.0),
    (LLAMA_1B, "N300", 64.2, 34.0),
    (LLAMA_1B, "T3K", 69.9, 42.0),
    (LLAMA_3B, "N150", 36.5, 69.0),
    (LLAMA_3B, "N300", 45.8, 51.0),
    (LLAMA_3B, "T3K", 47.8, 63.0),
    (LLAMA_8B, "N150", 22.3, 119.0),
    (LLAMA_8B, "N300", 33.5, 80.0),
    (LLAMA_8B, "T3K", 45.6, 64.0),
    (LLAMA_70B, "T3K", 14.8, 192.0),
]
BATCH32_PRECISION = table_precision("bfp4", "bfp8", "bfp8", "mixed", "lofi", "hifi2", "hifi2")
"""Batch-32's settings: the performance settings of 2025-03 (bfloat4_b FF1/FF3 at LoFi, the rest the day's
defaults), which are the second precision table's."""


def precision_rows():
    """(precision, t/s/u, TTFT ms) for each precision table."""
    return [(table_precision(*fields), tsu, ttft) for fields, (tsu, ttft) in PRECISION_TABLES]
