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
  float32 accumulation, ``lofi`` LoFi; ``activation: mixed`` is each op's default.  The DRAM-sharded decode
  matmuls of that date kept their partial sums in bfloat16 under float32 accumulation (the factory's
  ``interm0_data_format = Float16_b``, removed by tt-metal #36177, 2026-01-21: perf_model's :func:`dated`): timed
  with float32 partials, each FF1/FF3 at ``hifi2`` (K in 64 one-tile blocks, 11 output tiles a bank core) took
  90.9 us where the tables show it 0.18 ms a step above bfloat4_b at LoFi (9.97 -> 10.15 ms), and three rows read
  15-17% slow; with the program's bfloat16 partials it takes 46.8 us and the twelve rows read -2.9% to +0.7%.
- Its "Short-Context, Batch-32" table (2025-03-17, #18777): 32 users of 128-token prompts, decode of
  the batch (each user at position 228, PERF.md's 200 generated tokens), sampled on the host as the demo
  did then (``argmax_on_device`` at batch 1 only): each step reads device 0's 32 rows of logits back, timed
  (``decode_tail.logits_read_ns``: 0.46 ms on Wormhole), and converts and argmaxes them on the host
  (``decode_tail.host_argmax_ns``: 4.75 ms for Llama 3's vocabulary, fitted to the 1B's three rows,
  :data:`BATCH32_FITTED`).  The other decode figures are checks; the "avg TTFT" column is not (how the demo of 2025-03
  averaged 32 users' prefills is not in the table: its 1B on an N150, 38 ms, is below the same day's
  batch-1 figure, 55 ms).  Llama-3.2-11B (a vision model) and the empty rows are left out.
- Its "Long-context (64K Tokens)" table (2025-03-17): decode one user at position 64K (:data:`LONG_CONTEXT`).
- tt-metal models/README.md's LLM table (:data:`README_TABLE`).
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

from meshnn.perf.flash_decode import DecodeProgram

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

BATCH32 = [  # (shape, system, t/s/u, avg TTFT ms): PERF.md's "Short-Context, Batch-32" (2025-03-17; t/s/u 2025-02-20)
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
LONG_CONTEXT = [  # (shape, system, t/s/u, TTFT ms): PERF.md's "Long-context (64K)" (2025-03-17; t/s/u 2025-02-20)
    (LLAMA_1B, "N150", 53.0, 20066.0),
    (LLAMA_1B, "N300", 65.2, 10949.0),
    (LLAMA_1B, "T3K", 73.7, 5271.0),
    (LLAMA_3B, "N150", 25.3, 46743.0),
    (LLAMA_3B, "N300", 34.8, 22921.0),
    (LLAMA_3B, "T3K", 41.0, 10677.0),
    (LLAMA_8B, "N150", 16.9, 64385.0),
    (LLAMA_8B, "N300", 26.1, 36229.0),
    (LLAMA_8B, "T3K", 38.1, 16165.0),
    (LLAMA_70B, "T3K", 11.9, 74363.0),
]
"""Batch 1, a 64K-token prompt, then 200 tokens (PERF.md's note): the decode figures are checks, a step at
:data:`LONG_POSITION` whose attention reads a 64K-token cache; the times to first token are not (a 64K prompt runs
as chunked prefill, ``max_prefill_chunk_size`` chunks each attending to the cache before it, which
``tt_llama.Llama.prefill`` does not write).  The same day's settings as the batch-32 rows; Llama-3.2-11B and the
empty rows are left out."""
LONG_POSITION = 65536 + 100
DECODE_PROGRAM = DecodeProgram.SERIAL_MERGE
"""The flash-decode program of every table here but models/README.md's: :mod:`meshnn.perf.flash_decode`'s, tt-metal's
before #20912 (2025-04-25).  The 64K and batch-32 tables first appear with tt-metal e27c83a76f (2025-02-20, #16753;
the 2025-03-17 commit kept their decode figures), the precision tables with #17872 (2025-03-17).  At a 128-token
prompt a user's cache is one chunk on one core, so the program costs a layer its chunk's calls (~9 us) and no merge;
at 64K a T3000 chip's one kv head is split over 16 cores whose 15 merges run one after another (~140 us a layer)."""

BATCH32_FITTED = ("Llama-3.2-1B",)
"""The batch-32 rows the host's argmax per logit was fitted to (``meshnn.perf.host.HostModel.host_logit_ns``): the
1B's three, as the host's per-token figure was fitted to the 1B and 3B batch-1 rows; the 3B, 8B and 70B rows are
checks."""

BATCH32_PRECISION = table_precision("bfp4", "bfp8", "bfp8", "mixed", "lofi", "hifi2", "hifi2")
"""Batch-32's settings: the performance settings of 2025-03 (bfloat4_b FF1/FF3 at LoFi, the rest the day's
defaults), which are the second precision table's."""


def precision_rows():
    """(precision, t/s/u, TTFT ms) for each precision table."""
    return [(table_precision(*fields), tsu, ttft) for fields, (tsu, ttft) in PRECISION_TABLES]


README_TABLE = [  # (model, system, precision, t/s/u, ttft ms, samples on the device, release): models/README.md
    ("Llama-3.2-1B", "N150", "performance", 80.5, 23.0, False, "v0.62.0-dev20251015"),
    ("Llama-3.2-3B", "N150", "performance", 46.6, 52.0, False, "v0.62.0-rc35"),
    ("Llama-3.1-8B", "N150", "performance", 26.0, 104.0, False, "v0.62.0-rc35"),
    ("Mistral-7B", "N150", "performance", 28.7, 99.0, False, "v0.64.0-dev20251030"),
    ("Llama-3.1-8B", "P150", "performance", 33.1, 57.0, False, "v0.64.0-dev20251030"),
    ("Qwen2.5-7B", "N300", "qwen2.5-7b decoders", 22.1, 109.0, False, "v0.62.0-rc35"),
    ("Qwen2.5-72B", "T3K", "performance", 15.4, 223.0, False, "v0.62.0-rc25"),
    ("Llama-3.1-70B", "T3K", "performance", 15.9, 159.0, False, "v0.59.0-rc53"),
    ("Qwen3-32B", "T3K", "performance", 22.8, 94.0, True, "v0.65.0-rc7"),
]
"""tt-metal models/README.md's LLM table (#34023, 2025-12-09, "Last Update: Dec 8, 2025"): batch 32, 128-token
prompts ("an input sequence length (number of rows filled in the KV cache) of 128"), t/s/u "the throughput of the
first token generated after prefill" (a decode step at position 128), measured with the tt_transformers demo at
each row's release.  Sampling as the demo of each release did: greedy argmax on the device at any batch from
2025-09 (simple_text_demo.py: ``argmax_on_device = temperature == 0``; the argmax op is not written: the host's
fitted figure holds batch 1's), the 70B's v0.59 (2025-06/07) on the host above batch 1 (``argmax_on_device``
only at batch 1 then), Qwen3-32B's v0.65 (2025-12) TTSampling's top-k on the device (#31046, 2025-11-05), its
logits unpadded (before #40397).  Llama 3.3 70B is Llama 3.1 70B's shape.  Left out: QwQ-32B (v0.56.0, 2025-02:
the llama3 code base), DeepSeek-R1-Distill-Llama-70B (the 70B's row, number for number), Llama 3.1 70B on
Blackhole (a P150x4 QuietBox: no such system here), the P100 and 2 x P150 rows, Llama 3.2 11B Vision, Mixtral,
Falcon, Mamba, and the Galaxy's llama3_70b_galaxy row (its own code).  Left outside: Qwen2.5-7B's N300 rows (decode
+32%, prefill -29%): 22.1 t/s/u and 109 ms against PERF.md's 24.6 and 92 ms for the same model and settings
(2025-06-03; +23% and -14% here, perf_model.UNNAMED): 10% fewer tokens a second and an 18% longer prefill, where the
model's batch-32 step is 1.25 ms longer and its prefill the same (today's bias add, 2 ms less than the legacy one);
Qwen2.5-72B's prefill (-15.7%): run as binary_ng's bias add (perf_model.LEGACY_BCAST_ROWS says why; as the legacy
program, -14.3%)."""


DEVICE_ARGMAX_FROM = "v0.62"
"""The first release whose demo argmaxed a batch of 32 on the device (tt-metal #25510, 2025-07-23: "Activate multicore
argmax for batch=32"; before it ``argmax_on_device`` held at batch 1 only; v0.60.0 and v0.61.0 were out by 2025-07-17,
#25302): the rows of earlier releases (the 70B's v0.59.0-rc53) read their 32 users' logits back every step
(``perf_model.predicted``'s ``reads_logits``)."""

TRACED_PREFILL_FROM = "v0.65"
"""The releases from which models/README.md's rows ran their 128-token prefill traced (tt-metal #32086, 2025-11-13:
128 tokens among every Wormhole system's ``trace_prefill_supported_seq_lens``; before it only Llama-3.1-8B's, from
#29827 of 2025-10-30, which v0.64.0-dev20251030's P150 does not list): v0.65.0 (2025-12)."""


def readme_llms(shapes: dict, precisions: dict) -> list[tuple]:
    """:data:`README_TABLE` as (shape, system, precision, t/s/u, ttft, device sampling, release), the shapes and
    precisions looked up by name in ``shapes`` / ``precisions``."""
    return [(shapes[m], s, precisions[p], tsu, ttft, dev, rel) for m, s, p, tsu, ttft, dev, rel in README_TABLE]
