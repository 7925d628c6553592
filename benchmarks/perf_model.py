"""The performance model: (a) its own cost, and (b) whole Llama models as tt_transformers runs them,
predicted beside Tenstorrent's published figures.

(a) The cost of predicting: ``meshnn.perf.predict`` on a mix of op descriptions, and the whole capture
(event -> OpDesc -> prediction -> record) added to a tiny op, in us per op beside the limit measured
in the same run: the tiny op itself (``ttnn.add`` of one 32x32 bfloat16 tile on a 1x1 mesh).

(b) Llama-3.2-1B, 3B, Llama-3.1-8B and 70B (and Mistral-7B) written as tt_transformers writes them
(:mod:`tt_llama`: every layer, the embedding, the rotary lookups, the LM head; its precisions and
fidelities) on planning meshes of N150, N300, T3000 and the Galaxy, each: a decode step of one user at
position 228 (a 128-token prompt, then the middle of 200 generated tokens: PERF.md's run), traced, and
the prefill of the 128-token prompt, eager.  Each prediction says what it includes: the device's
kernels, the op-to-op gaps (traced: the replay's; eager: the host's dispatch), and the host's work per
step (:mod:`meshnn.perf.host`), each in its own column of the table and the CSV.  Beside it, the
published figure (tt-metal models/tt_transformers/PERF.md, performance table): tokens/s/user for decode,
time to first token for the prefill.  The 1B and 3B rows fitted the host's figures (and the decode
matmuls' single-use weight tile, and on the Galaxy a per-layer residual the model does not explain,
shown in its own column); the 8B, 70B and Mistral-7B rows are checks: the model was not fitted to them.

(c) Checks on figures nothing was fitted to and the issue did not name (:data:`UNNAMED`): PERF.md's other
Llama-shaped families (Qwen, Phi, Ministral), the 8B on a P150, and its accuracy table (other precisions:
:class:`tt_llama.Precision`).

(d) Checks on tt-metal's CI targets (models/model_targets.yaml, 2026-06: :mod:`model_targets`): the entries that are
tt_transformers decoders on a system here, run as the demo's ci-eval-32 case that measured them (32 users, each
prefilled alone at its padded length, decode at each user's position, sampling on the device where the demo
samples there); the other entries
listed with the reason.

(e) Checks on published whole-model figures no other part holds (:mod:`perf_extra`): PERF.md's precision tables,
64K-context and batch-32 tables, and models/README.md's LLM table.  ``--set named`` / ``unnamed`` / ``targets`` /
``extra`` runs (b) / (c) / (d) / (e) alone.  Every checked row outside 15% is printed split (:mod:`perf_breakdown`):
kernels by op family and by matmul weight, the gaps eager and traced, the host's figure.

Prints the tables and one JSON line; ``--csv FILE`` also writes the whole-model rows as CSV.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from pathlib import Path

import numpy as np

import meshnn as ttnn
from meshnn import perf
from meshnn.perf.bcast_rows import BinaryProgram
from meshnn.perf.bcast_rows import marked as bcast_marked
from meshnn.perf.dated_collectives import RingReduceScatterProgram
from meshnn.perf.dated_collectives import marked as ring_marked
from meshnn.perf.flash_decode import DecodeProgram, marked
from meshnn.perf.host import TT_TRANSFORMERS, TT_TRANSFORMERS_TG, StepTime, step_time
from meshnn.perf.matmul import float16_partials

sys.path.insert(0, str(Path(__file__).parent))
import perf_extra
from decode_tail import DYNAMIC_DECODE_CHUNK_ROWS, HOST_SAMPLING, decode_chunk, host_argmax_ns, logits_read_ns
from model_targets import BUILT, GENERATED, SKUS, Target, load, padded_prefill, prompt_tokens, traced_prefill, why_not
from perf_breakdown import breakdown, compact, print_misses
from tt_llama import (
    ACCURACY_LLAMA,
    BF16_ATTENTION,
    LLAMA_1B,
    LLAMA_3B,
    LLAMA_8B,
    LLAMA_70B,
    NOT_MODELLED,
    PERFORMANCE,
    PHI3_MINI_ACCURACY,
    PHI3_MINI_PERFORMANCE,
    QWEN25_7B_DECODERS,
    Llama,
    Precision,
    Shape,
)

PROMPT, POSITION = 128, 128 + 100
SYSTEMS = {
    "N150": ("n150", (1, 1)),
    "N300": ("n300", (1, 2)),
    "T3K": ("t3k", (1, 8)),
    "TG": ("galaxy", (8, 4)),
    "P150": ("p150", (1, 1)),
}
PUBLISHED = {  # (model, system): (tokens/s/user, TTFT ms or None), PERF.md's performance table
    ("Llama-3.2-1B", "N150"): (87.8, 26.0),
    ("Llama-3.2-1B", "N300"): (105.9, 22.0),
    ("Llama-3.2-1B", "T3K"): (119.8, 32.0),
    ("Llama-3.2-3B", "N150"): (54.0, 55.0),
    ("Llama-3.2-3B", "N300"): (68.0, 39.0),
    ("Llama-3.2-3B", "T3K"): (68.5, 52.0),
    ("Llama-3.2-1B", "TG"): (51.0, None),
    ("Llama-3.2-3B", "TG"): (33.5, None),
    ("Llama-3.1-8B", "N150"): (28.3, 104.0),
    ("Llama-3.1-8B", "N300"): (44.2, 67.0),
    ("Llama-3.1-8B", "T3K"): (64.3, 53.0),
    ("Llama-3.1-8B", "TG"): (29.5, None),
    ("Llama-3.1-70B", "T3K"): (16.6, 164.0),
    ("Llama-3.1-70B", "TG"): (12.7, None),
    ("Mistral-7B", "N150"): (29.75, 100.24),
    ("Mistral-7B", "N300"): (47.01, 65.95),
    ("Mistral-7B", "T3K"): (67.82, 53.93),
}
MISTRAL_7B = Shape("Mistral-7B", 32, 4096, 32, 8, 128, 14336, vocab=32768)
"""Mistral-7B-Instruct-v0.3 (HF config; tt_transformers' README lists it for N150): a Llama-shaped decoder
with a 32768-token vocabulary, run as tt_transformers runs the Llamas (PERF.md's performance configuration:
bfloat4_b FF1/FF3, bfloat8_b FF2 and attention).  PERF.md does not say which Mistral-7B it timed (v0.1/v0.2 have 32000
tokens: 0.1% of the weights).  Its rows are checks."""
FITTED = ("Llama-3.2-1B", "Llama-3.2-3B")
RUNS = [(LLAMA_1B, s) for s in ("N150", "N300", "T3K", "TG")] + [(LLAMA_3B, s) for s in ("N150", "N300", "T3K", "TG")]
RUNS += [(LLAMA_8B, s) for s in ("N150", "N300", "T3K", "TG")] + [(LLAMA_70B, s) for s in ("T3K", "TG")]
RUNS += [(MISTRAL_7B, s) for s in ("N150", "N300", "T3K")]

# ---------------------------------------------- checks on figures the issue did not name (PERF.md)
# Public HF configs (the tree's model_params/<model>/config.json where it has one): layers, dim, heads,
# KV heads, head dim, hidden, vocabulary; Qwen2's QKV bias (attention.py adds it after the QKV matmul, a
# broadcast add in prefill) and Qwen3's per-head q / k norms (an rms_norm each, in decode between two reshards).
QWEN25_7B = Shape("Qwen2.5-7B", 28, 3584, 28, 4, 128, 18944, vocab=152064, qkv_bias=True)
QWEN25_32B = Shape("Qwen2.5-32B", 64, 5120, 40, 8, 128, 27648, vocab=152064, qkv_bias=True)
QWEN25_72B = Shape("Qwen2.5-72B", 80, 8192, 64, 8, 128, 29568, vocab=152064, qkv_bias=True)
QWEN3_32B = Shape("Qwen3-32B", 64, 5120, 64, 8, 128, 25600, vocab=151936, qk_norm=True)
QWQ_32B = Shape("QwQ-32B", 64, 5120, 40, 8, 128, 27648, vocab=152064, qkv_bias=True)
PHI35_MINI = Shape("Phi3.5-mini", 32, 3072, 32, 32, 96, 8192, vocab=32064)
PHI3_MINI = Shape("Phi-3-mini-128k", 32, 3072, 32, 32, 96, 8192, vocab=32064)
PHI_4 = Shape("Phi-4", 40, 5120, 40, 10, 128, 17920, vocab=100352)
MINISTRAL_8B = Shape("Ministral-8B", 36, 4096, 32, 8, 128, 12288, vocab=131072)
DEVICE_SAMPLING = ("Ministral-8B", "QwQ-32B")
"""The families whose PERF.md rows were measured after tt_transformers moved decode's sampling onto the
device (2025-11-05, tt-metal #31046; their rows added later): their decode step ends in TTSampling's
top-k, gathers and ``sampling`` (:meth:`tt_llama.Llama._sample`), timed as every op is; the other rows
predate it and sample on the host."""
UNPADDED_SAMPLING = ("Ministral-8B", "QwQ-32B")
"""The :data:`DEVICE_SAMPLING` rows measured before tt-metal #40397 (2026-03-24) padded a device's logits
to a power of two for top-k (Ministral-8B: 2026-01-24; QwQ-32B: #36724, 2026-03-23): their top-k read the
tile-padded share (QwQ's 19,008 a chip: the single-core program, as #40397 describes for the Qwen and
Llama rows of those weeks; Ministral's 65,536 are a power of two already)."""
TRACED_PREFILL_ROWS = ("Ministral-8B", "QwQ-32B")
"""The PERF.md rows measured after tt-metal #32086 (2025-11-13) listed 128 tokens among every Wormhole system's
``trace_prefill_supported_seq_lens`` (generator.py's ``prefill_forward_text`` has traced a supported length by
default since #29827, 2025-10-30, with paged attention, as the demo runs): their prefill is timed traced, the host's
prefill figure as for the others (Ministral-8B: 2026-01-24; QwQ-32B: 2026-03-23)."""
UNNAMED_NOT_MODELLED = ("Phi-3's fused gate / up projection is split into w1 and w3 as tt_transformers loads it",)
UNNAMED = [  # (shape, system, precision, tokens/s/user, TTFT ms or None, PERF.md's table)
    (QWEN25_7B, "N300", QWEN25_7B_DECODERS, 24.6, 92.0, "performance"),
    (QWEN25_32B, "T3K", PERFORMANCE, 22.4, 190.0, "performance"),
    (QWEN25_72B, "T3K", PERFORMANCE, 15.2, 225.0, "performance"),
    (QWEN3_32B, "T3K", PERFORMANCE, 22.9, 123.0, "performance"),
    (QWQ_32B, "T3K", PERFORMANCE, 20.7, 105.0, "performance"),
    (PHI35_MINI, "N150", PERFORMANCE, 43.2, 98.0, "performance"),
    (PHI35_MINI, "N300", PERFORMANCE, 57.8, 62.0, "performance"),
    (PHI35_MINI, "T3K", PERFORMANCE, 48.8, 51.0, "performance"),
    (PHI3_MINI, "N150", PHI3_MINI_PERFORMANCE, 45.0, 73.32, "performance"),
    (PHI3_MINI, "N300", PHI3_MINI_PERFORMANCE, 60.87, 114.94, "performance"),
    (PHI_4, "N300", PERFORMANCE, 37.34, 123.33, "performance"),
    (MINISTRAL_8B, "N300", PERFORMANCE, 22.15, 79.3, "performance"),
    (LLAMA_8B, "P150", PERFORMANCE, 33.6, 76.0, "performance"),
    (LLAMA_1B, "N150", ACCURACY_LLAMA, 84.7, 29.0, "accuracy"),
    (LLAMA_1B, "N300", ACCURACY_LLAMA, 102.8, 21.0, "accuracy"),
    (LLAMA_1B, "T3K", ACCURACY_LLAMA, 120.5, 28.0, "accuracy"),
    (LLAMA_1B, "TG", ACCURACY_LLAMA, 48.4, None, "accuracy"),
    (LLAMA_3B, "N150", ACCURACY_LLAMA, 47.6, 63.0, "accuracy"),
    (LLAMA_3B, "N300", ACCURACY_LLAMA, 63.5, 41.0, "accuracy"),
    (LLAMA_3B, "T3K", ACCURACY_LLAMA, 67.9, 69.0, "accuracy"),
    (LLAMA_3B, "TG", ACCURACY_LLAMA, 33.6, None, "accuracy"),
    (LLAMA_8B, "N150", ACCURACY_LLAMA, 25.2, 138.0, "accuracy"),
    (LLAMA_8B, "N300", ACCURACY_LLAMA, 38.8, 79.0, "accuracy"),
    (LLAMA_8B, "T3K", ACCURACY_LLAMA, 60.8, 81.0, "accuracy"),
    (LLAMA_8B, "TG", ACCURACY_LLAMA, 29.5, None, "accuracy"),
    (LLAMA_70B, "T3K", PERFORMANCE, 16.5, 168.0, "accuracy"),  # (70B: the performance settings in both)
    (QWEN25_72B, "T3K", PERFORMANCE, 15.1, 216.0, "accuracy"),  # 2025-05-12: a ">70B" model (below)
    (QWEN25_32B, "T3K", BF16_ATTENTION, 19.7, 183.0, "accuracy"),
    (QWEN3_32B, "T3K", BF16_ATTENTION, 19.6, 119.0, "accuracy"),
    (QWQ_32B, "T3K", BF16_ATTENTION, 18.3, 120.0, "accuracy"),
    (PHI35_MINI, "N150", ACCURACY_LLAMA, 38.8, 92.0, "accuracy"),  # 2025-03-10: bfloat8_b MLP (below)
    (PHI35_MINI, "N300", ACCURACY_LLAMA, 53.9, 63.0, "accuracy"),
    (PHI35_MINI, "T3K", ACCURACY_LLAMA, 48.6, 53.0, "accuracy"),
    (PHI3_MINI, "N150", PHI3_MINI_ACCURACY, 40.41, 82.58, "accuracy"),
    (PHI3_MINI, "N300", PHI3_MINI_ACCURACY, 57.0, 115.36, "accuracy"),
    (PHI_4, "N300", BF16_ATTENTION, 20.48, 146.32, "accuracy"),  # 2025-09-26: "phi-4" not in the Llama branch
    (MINISTRAL_8B, "N300", BF16_ATTENTION, 19.95, 93.22, "accuracy"),
]
"""PERF.md's rows that the issue did not name and nothing was fitted to: other families (Qwen, Phi,
Ministral) and the accuracy table's precisions, each as ModelOptimizations.accuracy read on the day its row
was measured (``git blame`` of PERF.md; model_config.py at that commit): bfloat8_b MLP for Llama 3 and
Phi-3-mini; bfloat16 attention and KV cache at HiFi4 for the other families; the 70B keeps the performance
settings.  Three rows differ from today's code: Qwen2.5-72B's (2025-05-12) ran while "Qwen2.5-72B" was in the
">70B" list (bfloat4_b MLP, bfloat8_b attention: the performance settings; dropped from it by #39080, 2026-05);
phi-4's (#28299, 2025-09-26) ran before phi-4 joined the Llama branch (#30511, 2025-10-20), so its model name
"phi-4" took the other families' bfloat16 attention at HiFi4 (its accuracy_decoder_config.json came later
too); Phi-3.5-mini's figures are the llama3 code base's of 2025-03-10, whose accuracy mode was
``ModelOptimizations(bfp4_mlp=False)``: a bfloat8_b MLP at HiFi2 (hifi2_fp16), bfloat8_b attention.
Left out: Mistral-7B's accuracy rows (the same figures as its performance rows to the last digit, under
different settings: a copy), Qwen2.5-7B's (its performance
settings are its accuracy ones: the same row), Qwen2.5-Coder-32B (Qwen2.5-32B's shape and figures),
the vision models and Mixtral (not Llama-shaped decoders), data-parallel rows, and the Blackhole P100
(not a system here).  Qwen2.5-32B's rows copy Qwen2.5-Coder-32B's (#24915, 2025-07-17), whose commit left its CI
time-to-first-token target off for "too much variability in CI" (#24754).  Phi-4's performance decode row
(#28299's ci-token-matching run) is left outside (-29%): 37.34 t/s/u is 26.78 ms a token, 21.49 ms of device time
after the host's 4.47 ms and the replay's 0.82 ms of gaps, and its 5.68 GB of weights a chip take 21.27 ms at the
DRAM-sharded banks' own rate (267 GB/s) alone, which would leave 0.22 ms for 40 layers' norms, attention and
collectives (the model: 7.59 ms; 7.79 ms in its accuracy row, met at +6%).  Its bfloat4_b FF1 / FF3 (24 columns
a bank core, K in 40 blocks of 4 tiles) run as the 8B's on an N150 (38 columns, 64 blocks of 2), which that row meets
(+4%): neither waits on its packer, both are held by the single-use weight tile (36 cycles, 183-186 GB/s).  Run at
that peak they would move the row to -22% only.  The same run's accuracy figure is 1.82x slower for 1.54x the bytes
(8.74 GB), where every other row pair here is 1.00-1.17x (Qwen3-32B's, with the same bfloat16 attention, 1.17x).
Qwen2.5-7B's decode row (2025-06-03) reads +23% (models/README.md's +32%): its FF2 (9728 x 3584 bfloat8_b at HiFi4,
K in 304 one-tile blocks, 10 output tiles a bank core) took 390 us with float32 partials, each 128-cycle accumulate
outlasting its 75-cycle multiply, which held the row at +8%; the program of its date accumulated bfloat16 partials
(64 cycles: hidden, 231 us, 4.5 ms a step less).  What else its N300 step spends is not found (its 28 HiFi4 FF1 /
FF3 pairs, 19 tiles a bank core in blocks of 7, run at the model's multiply, 167 GB/s).
The Qwen2.5 prefills of before 2025-08-04 add their QKV bias as the legacy row broadcast (:data:`LEGACY_BCAST_ROWS`:
76 us a layer on the 7B's N300 chip, 44 on the 72B's, 31 on the 32B's, where binary_ng's takes 4-8).  Left outside:
Qwen2.5-72B's performance prefill (-15.1%): its accuracy row of the same day runs the same settings (the ">70B"
list's) and measured 216 ms to its 225 (4% apart), and reads -11.5%; beside the 70B's T3000 row (2025-06-24,
+8%) its figure is 61 ms slower where the model's is 15 ms (its MLP padded to 32768 columns, 14% more than the 70B's,
its bias, its 152k vocabulary).  Qwen2.5-32B's prefills (-32% / -29%): Qwen2.5-Coder-32B's figures (2025-07-17)
are 67 / 64 ms above Qwen3-32B's of 2025-06-04 (123 / 119 ms: +8% / +12% here) on the same T3000, where the model
puts the two within 4.4 ms (129.0 against 133.4: 64 layers each; the Coder's 40 heads, 28672 padded columns and bias
against Qwen3's 64 heads, 25600 columns and q / k norms); its commit left the CI target off (#24754, above).
Phi-3-mini-128k's N300 prefills (-57% / -54%, #27508, 2025-09-02) are slower than the same day's N150 ones (73.32 /
82.58 ms, -3% / -6% here) and do not move with the MLP's precision: the performance and accuracy figures are 0.42 ms
apart on the N300 where they are 9.26 ms apart on the N150 (the model's kernels: 3.46 ms apart on the N300, 6.92 on
the N150, bfloat4_b against bfloat8_b FF1 / FF3), so the N300's 115 ms is not set by its kernels; what held it is
not found (Mistral-7B's N300 prefill of 2025-09-17 and Phi-4's of 2025-09-26, the same fabric collectives, read
+9% and +4%).  Phi3.5-mini's performance prefills (N150 -26%, N300 -18%; the llama3 code base of 2025-03-10): the
N150's performance figure (98 ms) is 6 ms slower than its accuracy figure (92 ms, -13% here) whose bfloat8_b FF1 /
FF3 read twice the bytes (the model: 6.9 ms of kernels faster, not slower).  Phi3.5-mini's T3000 decodes (+40% /
+39%): against Llama-3.2-3B's T3000 row of the same code base (65.4 t/s/u on 2025-03-10, 15.29 ms; the same
3072-wide stream, so its collectives move the same bytes a layer) the Phi step is 5.20 ms longer where the model's
is 1.24 ms (13.42 against 14.66 ms), while on the N300 the two differences agree (1.99 against 1.81 ms) and on the
N150 nearly (4.06 against 2.72): the excess is the T3000's alone, about 0.12 ms of each of Phi's 32 layers beyond
the 3B's; its 4 KV heads a chip (MHA, head dim 96) against the 3B's one are what differs there, and what they cost
is not found.  The accuracy table's T3000 prefills of Llama-3.2-3B and -3.1-8B (-27% / -30%, 69 and 81 ms, tt-metal
0354717896, 2025-05-12) rose from 53 and 56 ms in the same table of 2025-03-17 (#17872), which the model meets (50.3
and 56.7 ms: -5% / +1%), while their performance twins of the same commit moved 51 -> 52 and 52 -> 53 ms; on the
T3000 a chip holds an eighth of the MLP weights, so the bfloat8_b MLP adds least there (the model: 0.8 / 2.0 ms of
kernels over the performance rows).  Llama-3.2-1B's accuracy prefill on the N300 (+23%, 21 ms; 25 ms on 2025-03-17,
which the model meets at +3%) is faster than its performance twin (22 ms, the fitted row at +17%), with twice its MLP
bytes.  Llama-3.1-8B's P150 prefill (-20%, 76 ms, 2025-09-11): the same model on the same P150 measured 57 ms at
v0.64.0-dev20251030 (models/README.md's batch-32 run, its performance settings; +7% here), 19 ms faster seven weeks
later."""


# ------------------------------------------- (d) model_targets.yaml's entries (tt-metal 2026-06): checks
TARGET_SHAPES = {s.name: s for s in (LLAMA_8B, MISTRAL_7B, QWEN25_32B, QWEN25_72B, QWEN3_32B)}


# ------------------------------------------------------------------------ (a) the model's cost


def sample_descs() -> list[perf.OpDesc]:
    l1 = {"buffer": perf.BufferType.L1, "memory": perf.MemoryLayout.WIDTH_SHARDED}
    x, w = perf.TensorDesc((1, 1, 32, 4096), **l1), perf.TensorDesc((1, 1, 4096, 1792), "BFLOAT8_B")
    y, big = perf.TensorDesc((1, 1, 32, 1792), **l1), perf.TensorDesc((1, 1, 128, 4096))
    q, kv = perf.TensorDesc((1, 4, 128, 128)), perf.TensorDesc((1, 1, 128, 128))
    dram = perf.MatmulConfig(perf.MatmulProgram.DRAM_SHARDED)
    ring = perf.CollectiveConfig(perf.Topology.RING, cluster_axis=1)
    return [
        perf.OpDesc(perf.OpFamily.MATMUL, (x, w), (y,), matmul=dram),
        perf.OpDesc(perf.OpFamily.BINARY, (big, big), (big,)),
        perf.OpDesc(perf.OpFamily.NORM, (big,), (big,)),
        perf.OpDesc(perf.OpFamily.SDPA, (q, kv, kv), (q,)),
        perf.OpDesc(perf.OpFamily.ALL_REDUCE, (big,), (big,), collective=ring),
    ]


def best_us(fn, calls: int, rounds: int = 5) -> float:
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        best = min(best, (time.perf_counter() - start) / calls)
    return best * 1e6


def model_cost() -> dict[str, float]:
    """us per predicted op, us a capture adds to an op, and the tiny op's own us (the limit)."""
    descs = sample_descs()
    predict_us = best_us(lambda: [perf.predict(d, "t3k", mesh_shape=(1, 8)) for d in descs], 200) / len(descs)
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 1), system="n150")
    try:
        x = ttnn.from_torch(np.ones((32, 32), np.float32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh)
        queue = mesh.mesh_command_queue()

        def tiny():
            ttnn.add(x, x)
            queue.finish()

        off = on = float("inf")
        for _ in range(5):  # in turn, so that both meet the shared machine in the same states
            off = min(off, best_us(tiny, 200, rounds=1))
            with ttnn.perf_capture():
                on = min(on, best_us(tiny, 200, rounds=1))
    finally:
        mesh.close()
    return {"predict_us_per_op": predict_us, "capture_added_us_per_op": on - off, "tiny_op_us": off}


# ------------------------------------------------------------------------ (b) whole models


RING_RS_PROGRAM = RingReduceScatterProgram.HALF_SLICES
"""The ring reduce_scatter program of the rows :func:`predicted` times (PERF.md's, models/README.md's: 2025-02 to
2026-03, all before tt-metal #41522 of 2026-04-09; :mod:`meshnn.perf.dated_collectives`); model_targets.yaml's rows
(2026-06) run today's."""


def dated(recorder, program: DecodeProgram | None, *, traced: bool, float16: bool = False, legacy_bcast: bool = False):
    """``recorder``'s ops re-timed (all traced or all eager) as a row of :func:`predicted`'s dates ran them: its
    ring reduce_scatters by :data:`RING_RS_PROGRAM`, its decode attention by ``program`` (None: today's),
    where ``float16``, its DRAM-sharded matmuls with the bfloat16 partials of before tt-metal #36177
    (:func:`meshnn.perf.matmul.float16_partials`; :data:`TODAYS_PARTIALS` names the rows after it) and, where
    ``legacy_bcast``, its row broadcasts by the legacy program of before tt-metal #23626
    (:mod:`meshnn.perf.bcast_rows`; :data:`LEGACY_BCAST_ROWS`)."""

    def rewrite(desc: perf.OpDesc) -> perf.OpDesc:
        desc = ring_marked(desc, RING_RS_PROGRAM)
        desc = desc if program is None else marked(desc, program)
        desc = bcast_marked(desc, BinaryProgram.BCAST_H_ROWS) if legacy_bcast else desc
        return float16_partials(desc) if float16 else desc

    return recorder.retimed(traced=traced, rewrite=rewrite)


def predicted(
    shape,
    label: str,
    precision: Precision = PERFORMANCE,
    published: tuple | None = None,
    role: str | None = None,
    batch: int = 1,
    position: int = POSITION,
    device_sampling: bool | None = None,
    traced_prefill: bool | None = None,
    reads_logits: bool = False,
    program: DecodeProgram | None = None,
    legacy_bcast: bool | None = None,
) -> list[dict[str, object]]:
    """The decode step (``batch`` users at ``position``) and the prefill of ``shape`` on system ``label`` with
    ``precision``: a row each, beside ``published`` (tokens/s/user, TTFT ms; default: :data:`PUBLISHED`'s); the
    decode step samples on the device for the rows of :data:`DEVICE_SAMPLING` (or as ``device_sampling`` says:
    then unpadded, as before tt-metal #40397); the prefill is traced for :data:`TRACED_PREFILL_ROWS` (or as
    ``traced_prefill`` says), else eager.  The decode SDPA's chunk is the one of the row's date
    (:func:`decode_tail.decode_chunk`); ``reads_logits``: the host reads the batch's logits back every step
    (:func:`decode_tail.logits_read_ns`) and argmaxes them (:func:`decode_tail.host_argmax_ns`), both added to the
    host's figure; ``program``: the flash-decode program of the
    row's date where it is not today's (:mod:`meshnn.perf.flash_decode`); its ring reduce_scatters run the program
    of its date (:data:`RING_RS_PROGRAM`); ``legacy_bcast``: its prefill's row broadcasts run the legacy program of
    before tt-metal #23626 (default: the rows of :data:`LEGACY_BCAST_ROWS`)."""
    system, mesh_shape = SYSTEMS[label]
    start = time.perf_counter()
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(*mesh_shape), system=system, execute=False)
    sampling = shape.name in DEVICE_SAMPLING if device_sampling is None else device_sampling
    try:
        padded = shape.name not in UNPADDED_SAMPLING and device_sampling is None
        model = Llama(
            shape, mesh, max_seq=max(1024, position + PROMPT), precision=precision, batch=batch,
            device_sampling=sampling, pad_sampling_logits=padded,
            sdpa_decode_chunk=decode_chunk(system, dynamic=shape.name in DYNAMIC_DECODE_CHUNK_ROWS),
        )  # fmt: skip
        galaxy = label == "TG"
        with ttnn.perf_capture() as decode:
            (model.tg_decode if galaxy else model.decode)(position)
        prefill = None
        if not galaxy:  # tt_transformers' TG prefill path is not written here
            with ttnn.perf_capture() as prefill:
                model.prefill(PROMPT)
    finally:
        mesh.close()
    wall = time.perf_counter() - start
    tps, ttft = published or PUBLISHED.get((shape.name, label), (None, None))
    host = TT_TRANSFORMERS_TG if galaxy else TT_TRANSFORMERS
    residual = host.layer_residual_ns * shape.layers
    read, argmax = host_sampled(system, mesh_shape, shape.vocab, host) if reads_logits else (0.0, 0.0)
    steps = dated(decode.recorders[0], program, traced=True, float16=shape.name not in TODAYS_PARTIALS)
    step = step_time(steps, traced=True, host_ns=host.decode_step_ns + read + argmax, residual_ns=residual)
    rows = [_row(shape.name, label, "decode (traced)", step, 1e9 / step.total_ns, tps, "tokens/s/user", wall)]
    rows[0].update(logits_read_ms=read / 1e6, host_argmax_ms=argmax / 1e6)
    rows[0]["parts"] = breakdown(steps, traced=True)
    rows[0]["precision"] = precision.name
    rows[0]["sampling"] = "device" if sampling else "host"
    if prefill is not None:
        traced = shape.name in TRACED_PREFILL_ROWS if traced_prefill is None else traced_prefill
        legacy = shape.name in LEGACY_BCAST_ROWS if legacy_bcast is None else legacy_bcast
        filled = dated(prefill.recorders[0], None, traced=traced, legacy_bcast=legacy)
        first = step_time(filled, traced=traced, host_ns=host.prefill_ns)
        phase = f"prefill {PROMPT} ({'traced' if traced else 'eager'})"
        rows.append(_row(shape.name, label, phase, first, first.total_ns / 1e6, ttft, "TTFT ms", wall))
        rows[-1]["parts"] = breakdown(filled, traced=traced)
        rows[-1]["precision"] = precision.name
        rows[-1]["sampling"] = "-"
    if role is not None:
        for row in rows:
            row["role"] = role
    return rows


TODAYS_PARTIALS = ("Ministral-8B", "QwQ-32B")
"""The rows of :func:`predicted` measured after tt-metal #36177 (2026-01-21; Ministral-8B 2026-01-24, QwQ-32B
2026-03-23): their DRAM-sharded matmuls keep float32 partial sums under ``fp32_dest_acc_en``; every other row's
(PERF.md's of 2025, models/README.md's of 2025-06 to 2025-12) kept them in bfloat16
(:class:`meshnn.perf.matmul.DramShardedPartials`)."""


LEGACY_BCAST_ROWS = ("Qwen2.5-7B", "Qwen2.5-72B", "Qwen2.5-32B")
"""The PERF.md rows with a QKV bias measured before tt-metal #23626 landed for good (60f878c90e, 2025-08-04): their
prefill's bias add (a row broadcast) ran the legacy BroadcastHeightMultiCore program, its tile rows over 4 cores at
128 tokens, each tile's two reads and its write waited for (:mod:`meshnn.perf.bcast_rows`): Qwen2.5-72B's of
2025-05-12, Qwen2.5-7B's of 2025-06-03, Qwen2.5-Coder-32B's of 2025-07-17 (Qwen2.5-32B's copy).  Not QwQ-32B's
(2026-03), which ran binary_ng's row broadcast over every core.  Nor models/README.md's (Qwen2.5-7B at v0.62.0-rc35,
72B at rc25), whose date is not established: the table listed v0.62.0-rc8 / rc9 by 2025-08-06 (#26408), rc25 by
2025-08-19 (#27060), rc35 by 2025-09-09 (#28146), so rc25 and rc35 came after 2025-08-04 if cut from main, not if
from a branch cut before it; timed as binary_ng's (marked, the 72B's would read -14.3%, not -15.7%)."""


def host_sampled(system: str, mesh_shape: tuple[int, int], vocab: int, host) -> tuple[float, float]:
    """(read, argmax) ns: what a decode step sampled on the host adds to the host's figure (:mod:`decode_tail`)."""
    devices = mesh_shape[0] * mesh_shape[1]
    return logits_read_ns(system, devices, vocab), host_argmax_ns(devices, vocab, host)


def _row(model: str, system: str, phase: str, step, value: float, published, unit: str, wall: float) -> dict:
    role = "fit" if model in FITTED else "check"
    error = None if published is None else value / published - 1
    return {
        "model": model,
        "system": system,
        "phase": phase,
        "ops": step.ops,
        "kernel_ms": step.kernel_ns / 1e6,
        "gap_ms": step.gap_ns / 1e6,
        "host_ms": step.host_ns / 1e6,
        "residual_ms": step.residual_ns / 1e6,
        "total_ms": step.total_ns / 1e6,
        "predicted": value,
        "published": published,
        "unit": unit,
        "error": error,
        "role": role,
        "host_bound_ops": step.host_bound_ops,
        "includes": step.statement(),
        "simulator_s": wall,
    }


def mean_step(steps: list[StepTime]) -> StepTime:
    """The mean of ``steps`` (a user each), field by field; traced where every step is; the longest's ops."""
    mean = [sum(getattr(s, f) for s in steps) / len(steps) for f in ("kernel_ns", "gap_ns", "host_ns")]
    longest = max(steps, key=lambda s: s.total_ns)
    return StepTime(*mean, all(s.traced for s in steps), longest.ops, longest.host_bound_ops)


def predicted_target(target: Target) -> list[dict[str, object]]:
    """``target``'s run (the demo's ci-eval-32: :mod:`model_targets`) on the system of its SKU: a decode
    step of its batch, each user half-way through its generated tokens, sampled on the device (traced), and
    the mean of the users' prefills, each at its padded length, sampled on the device (traced at the
    lengths model_config lists), each with the host's prefill work; beside the entry's figures.  Sampled
    on the host where model.py does (a run with the prefetcher) or the demo does (Mistral-7B)."""
    shape_name, sampling, differs = BUILT[target.line]
    shape, label = TARGET_SHAPES[shape_name], SKUS[target.sku]
    system, mesh_shape = SYSTEMS[label]
    users = prompt_tokens(target)
    start = time.perf_counter()
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(*mesh_shape), system=system, execute=False)
    try:
        model = Llama(shape, mesh, batch=target.batch, device_sampling=sampling)  # 2026-06: dynamic SDPA chunks
        with ttnn.perf_capture() as decode:
            model.decode([n + GENERATED // 2 for n in users])
        prefills, parts = {}, {}
        for tokens in sorted({padded_prefill(n) for n in users}):
            with ttnn.perf_capture() as capture:
                model.prefill(tokens, sample=True)
            traced = tokens in traced_prefill(shape.name, label)
            prefills[tokens] = step_time(capture.recorders[0], traced=traced, host_ns=TT_TRANSFORMERS.prefill_ns)
            parts[tokens] = breakdown(capture.recorders[0], traced=traced)
    finally:
        mesh.close()
    wall = time.perf_counter() - start
    read, argmax = (0.0, 0.0) if sampling else host_sampled(system, mesh_shape, shape.vocab, TT_TRANSFORMERS)
    step = step_time(decode.recorders[0], traced=True, host_ns=TT_TRANSFORMERS.decode_step_ns + read + argmax)
    first = mean_step([prefills[padded_prefill(n)] for n in users])
    lengths = "/".join(f"{sum(padded_prefill(n) == t for n in users)}x{t}" for t in prefills)
    decode_phase = f"decode b{target.batch}"
    rows = [
        _row(target.model, label, decode_phase, step, 1e9 / step.total_ns, target.decode_tsu, "tokens/s/user", wall),
        _row(target.model, label, f"prefill {lengths}", first, first.total_ns / 1e6, target.ttft_ms, "TTFT ms", wall),
    ]
    rows[0]["parts"] = breakdown(decode.recorders[0], traced=True)
    rows[0].update(logits_read_ms=read / 1e6, host_argmax_ms=argmax / 1e6)
    rows[1]["parts"] = parts[max(prefills, key=lambda t: sum(padded_prefill(n) == t for n in users))]  # the most users'
    for row in rows:
        row.update(precision=PERFORMANCE.name, sampling="device" if sampling else "host")
        row["role"] = "check (model_targets.yaml)"
        row.update(yaml_line=target.line, differs=differs)
    return rows


def run_targets(only: str | None) -> list[dict]:
    """Part (d): every model_targets.yaml entry built here, printed beside its figures; the others listed."""
    entries = load()
    built = [t for t in entries if why_not(t) is None and (not only or only.lower() in BUILT[t.line][0].lower())]
    rows = [row for target in built for row in predicted_target(target)]
    if not rows:
        return rows
    print("(d) tt-metal models/model_targets.yaml (2026-06), the demo's ci-eval-32 runs (batch 32): checks")
    print_rows(rows)
    for row in rows[::2]:
        if row["differs"]:
            print(f"    {row['model']} {row['system']}: {row['differs']}")
    print(f"    not built ({len(entries) - len(built)} entries with figures):")
    for reason in sorted({why_not(t) for t in entries if why_not(t) is not None}):
        names = sorted({f"{t.model} {t.sku}" for t in entries if why_not(t) == reason})
        print(f"      {reason}: {', '.join(names)}")
    return rows


def run_extra(only: str | None) -> list[dict]:
    """Part (e): PERF.md's precision tables and its batch-32 table (:mod:`perf_extra`), checks."""
    rows = []
    if not only or only.lower() in LLAMA_1B.name.lower():
        for precision, tsu, ttft in perf_extra.precision_rows():
            role = "check (PERF.md precision table)"
            pair = predicted(LLAMA_1B, "N300", precision, (tsu, ttft), role, program=perf_extra.DECODE_PROGRAM)
            pair[1]["role"] = "not a check (2025-03 prefill)"
            rows += pair
    for shape, label, tsu, _ttft in perf_extra.LONG_CONTEXT:
        if only and only.lower() not in shape.name.lower():
            continue
        role = "check (PERF.md 64K context)"
        decode = predicted(
            shape, label, perf_extra.BATCH32_PRECISION, (tsu, None), role, 1, perf_extra.LONG_POSITION,
            program=perf_extra.DECODE_PROGRAM,
        )  # fmt: skip
        rows.append(decode[0])
    for shape, label, tsu, _ttft in perf_extra.BATCH32:
        if only and only.lower() not in shape.name.lower():
            continue
        role = f"{'fit' if shape.name in perf_extra.BATCH32_FITTED else 'check'} (PERF.md batch 32)"
        decode = predicted(
            shape, label, perf_extra.BATCH32_PRECISION, (tsu, None), role, 32, reads_logits=True,
            program=perf_extra.DECODE_PROGRAM,
        )  # fmt: skip
        rows.append(decode[0])
    shapes = {
        s.name: s for s in (LLAMA_1B, LLAMA_3B, LLAMA_8B, LLAMA_70B, MISTRAL_7B, QWEN25_7B, QWEN25_72B, QWEN3_32B)
    }
    precisions = {p.name: p for p in (PERFORMANCE, QWEN25_7B_DECODERS)}
    for shape, label, precision, tsu, ttft, sampling, release in perf_extra.readme_llms(shapes, precisions):
        if only and only.lower() not in shape.name.lower():
            continue
        traced = release >= perf_extra.TRACED_PREFILL_FROM
        role = f"check (models/README.md {release})"
        reads = not sampling and release < perf_extra.DEVICE_ARGMAX_FROM
        pair = predicted(
            shape, label, precision, (tsu, ttft), role, 32, PROMPT, sampling, traced, reads_logits=reads,
            legacy_bcast=False,
        )  # fmt: skip
        rows += pair
    if rows:
        print("(e) PERF.md's precision tables (Llama-3.2-1B, N300), 64K-context and batch-32 tables (2025-03-17),")
        print("    models/README.md's LLM table (batch 32, 128-token prompts, 2025-06 to 2025-12): checks")
        print_rows(rows)
    return rows


def print_rows(rows: list[dict]) -> None:
    head = f"{'model':15} {'system':6} {'precision':14} {'phase':19} {'sample':6} {'ops':>5} {'kernels':>8} {'gaps':>7}"
    head += f" {'host':>6} {'resid':>6}"
    head += f" {'total':>8}"
    print(f"    {head} {'predicted':>10} {'published':>10} {'error':>7}  unit           role")
    for r in rows:
        pub = "-" if r["published"] is None else f"{r['published']:.1f}"
        err = "-" if r["error"] is None else f"{100 * r['error']:+.0f}%"
        times = (
            f"{r['kernel_ms']:8.2f} {r['gap_ms']:7.2f} {r['host_ms']:6.2f} {r['residual_ms']:6.2f} {r['total_ms']:8.2f}"
        )
        print(
            f"    {r['model']:15} {r['system']:6} {r['precision']:14} {r['phase']:19} {r['sampling']:6} {r['ops']:5d} "
            f"{times} {r['predicted']:10.1f} {pub:>10} {err:>7}  {r['unit']:14} {r['role']}"
        )


def write_csv(rows: list[dict], path: str) -> None:
    with open(path, "w", newline="") as out:
        writer = csv.DictWriter(out, fieldnames=list(dict.fromkeys(key for row in rows for key in row)))
        writer.writeheader()
        writer.writerows(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--csv", help="also write the whole-model rows to this CSV file")
    parser.add_argument("--only", help="run the models whose name contains this (e.g. 8B)")
    parser.add_argument(
        "--set", choices=("named", "unnamed", "targets", "extra", "all"), default="all",
        help="the issue's rows (PUBLISHED), PERF.md's others (UNNAMED), model_targets.yaml's, PERF.md's precision "
        "and batch-32 tables (perf_extra), or all (default)",
    )  # fmt: skip
    args = parser.parse_args()
    cost = model_cost()
    print("(a) the model's own cost, us per op (limit: the tiny op itself, measured in this run)")
    print(f"    predict(), per op                   {cost['predict_us_per_op']:8.1f}")
    print(f"    capture on, added to each op        {cost['capture_added_us_per_op']:8.1f}")
    print(f"    limit: ttnn.add of one tile on 1x1  {cost['tiny_op_us']:8.1f}")

    def wanted(shape: Shape) -> bool:
        return not args.only or args.only.lower() in shape.name.lower()

    runs = [(s, sys_) for s, sys_ in RUNS if wanted(s)] if args.set in ("named", "all") else []
    rows = [row for shape, label in runs for row in predicted(shape, label)]
    if rows:
        print("(b) whole models as tt_transformers runs them, ms per step: device kernels + op-to-op gaps + host")
        print_rows(rows)
    unnamed = [u for u in UNNAMED if wanted(u[0])] if args.set in ("unnamed", "all") else []
    others = [
        row
        for shape, label, precision, tps, ttft, table in unnamed
        for row in predicted(shape, label, precision, (tps, ttft), f"check ({table})")
    ]
    if others:
        print("(c) PERF.md's rows the issue did not name (other families; the accuracy table's precisions): checks")
        print_rows(others)
        print("    not modelled besides: " + "; ".join(UNNAMED_NOT_MODELLED))
    rows += others
    targets = run_targets(args.only) if args.set in ("targets", "all") else []
    rows += targets
    extra = run_extra(args.only) if args.set in ("extra", "all") else []
    rows += extra
    print("    host: meshnn.perf.host.TT_TRANSFORMERS (1-D) and TT_TRANSFORMERS_TG, fitted to the 1B and 3B rows;")
    print(
        "    resid: the Galaxy's per-layer residual (fitted, not modelled: see TT_TRANSFORMERS_TG); "
        "8B, 70B and Mistral-7B: checks"
    )
    print("    not modelled: " + "; ".join(NOT_MODELLED))
    print("    timed besides: " + HOST_SAMPLING)
    checks = [abs(r["error"]) for r in rows if r["role"] == "check" and r["error"] is not None]
    unnamed_errors = [abs(r["error"]) for r in others if r["error"] is not None]
    print_misses(rows)
    for row in rows:
        row["parts"] = compact(row["parts"])
    if args.csv:
        write_csv(rows, args.csv)
        print(f"    wrote {args.csv}")
    kept = [{k: v for k, v in r.items() if k not in ("includes", "parts")} for r in rows]
    rounded = [{k: round(v, 4) if isinstance(v, float) else v for k, v in r.items()} for r in kept]
    summary = {"checks": len(checks), "checks_within_15pct": sum(e <= 0.15 for e in checks)}
    if unnamed_errors:
        summary["unnamed_checks"] = len(unnamed_errors)
        summary["unnamed_within_15pct"] = sum(e <= 0.15 for e in unnamed_errors)
        summary["unnamed_median_abs_error"] = round(float(np.median(unnamed_errors)), 4)
    extra_errors = [abs(r["error"]) for r in extra if r["error"] is not None and r["role"].startswith("check")]
    if extra_errors:
        summary["extra_checks"] = len(extra_errors)
        summary["extra_within_15pct"] = sum(e <= 0.15 for e in extra_errors)
    target_errors = [abs(r["error"]) for r in targets if r["error"] is not None]
    if target_errors:
        summary["targets_checks"] = len(target_errors)
        summary["targets_within_15pct"] = sum(e <= 0.15 for e in target_errors)
    costs = {k: round(v, 2) for k, v in cost.items()}
    print(json.dumps({"benchmark": "perf_model", **costs, **summary, "rows": rounded}))


if __name__ == "__main__":
    main()
