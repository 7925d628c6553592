"""tt-metal's centralized model CI targets (models/model_targets.yaml, 2026-06 snapshot), copied as data
(``model_targets.csv`` beside this file: every active entry with a perf figure, with its YAML line), and
what ``perf_model.py`` builds of them.

The tt_transformers entries with figures are the demo's ``performance-ci-eval-32`` run
(models/tt_transformers/demo/simple_text_demo.py; tests/pipeline_reorg/models_e2e_tests.yaml runs it):
32 users of ``sample_prompts/eval_repeat_prompts_batch32.json`` (instruct chat template), max_seq_len 1024,
up to 200 generated tokens, paged attention, greedy sampling on the device (TTSampling; Mistral-7B's on the host:
:data:`HOST_MISTRAL`), traced decode.
The entry's ``seq_len`` is that run's ``max(prefill_lens)`` (the benchmark JSON's input_sequence_length,
which .github's validate_perf_targets.py matches), so each model's own longest prompt.  Its time to first
token is the whole prefill over the batch (``total_inference_prefill_time / global_batch_size``): each user
prefilled alone (their padded lengths differ, so generator.py's batched prefill is off), padded by
common.py's ``get_padded_prefill_len`` (up to 128 tokens: 128; up to 1024: 1024), traced where
model_config.py's ``trace_prefill_supported_seq_lens`` lists the length; its decode t/s/u is the mean
over the decode iterations (at batch 32 a step serves all users).
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

SOURCE = Path(__file__).with_name("model_targets.csv")


@dataclass(frozen=True)
class Target:
    """One active entry of model_targets.yaml with a perf figure (None: the entry does not give it)."""

    line: int  # the YAML line of the entry's first key
    model: str
    sku: str
    batch: int | None
    seq_len: int | None  # max(prefill_lens) of the run it was measured on (tokens)
    ttft_ms: float | None  # prefill_time_to_first_token, ms a user
    decode_tsu: float | None  # decode_t/s/u, tokens/s/user
    decode_ts: float | None  # decode_t/s, tokens/s
    prefill_ts: float | None  # prefill_t/s, tokens/s


def _number(text: str, kind=float):
    return kind(text) if text else None


def load(path: Path = SOURCE) -> tuple[Target, ...]:
    """The targets of ``path`` (``#`` lines are its source note), in YAML order."""
    with open(path, newline="") as handle:
        rows = list(csv.DictReader(line for line in handle if not line.startswith("#")))
    figures = ("ttft_ms", "decode_tsu", "decode_ts", "prefill_ts")
    return tuple(
        Target(
            int(r["line"]),
            r["model"],
            r["sku"],
            _number(r["batch_size"], int),
            _number(r["seq_len"], int),
            *(_number(r[f]) for f in figures),
        )
        for r in rows
    )


SKUS = {"wh_n150": "N150", "wh_n300": "N300", "wh_llmbox_perf": "T3K", "wh_galaxy_perf": "TG", "bh_p150": "P150"}
"""model_targets.yaml's SKUs that are systems here (wh_llmbox_perf: the T3000; wh_galaxy_perf: the Galaxy)."""

PREFETCHER = (
    "run with Blackhole's DRAM prefetcher (--use_prefetcher True; the 8B only): its matmul programs are not written; "
    "with a prefetcher model.py samples on the host (_supports_on_device_sampling), as the model does here"
)
HOST_MISTRAL = (
    "sampled on the host: simple_text_demo.py lists Mistral-7B in models_not_supported_for_device_sampling "
    "(tt-metal #34763), so its logits are read back and argmaxed on the host each step"
)
CODER_32B = (
    "Qwen2.5-Coder-32B: Qwen2.5-32B's shape; its decode target (20.0 t/s/u) is the YAML's own 'run-to-run unstable' "
    "one (issue #46214: 20.6-21.9 measured over a week, centre raised from 16.0, tolerance 0.2, [16, 24]) and 12% "
    "below qwen2.5-32b's (line 921: 22.66, met at +8%) for the same shape, system and run"
)
BUILT = {  # YAML line: (perf_model's shape name, sampled on the device, what differs from the run or why on the host)
    476: ("Llama-3.1-8B", True, ""),
    510: ("Llama-3.1-8B", False, PREFETCHER),
    537: ("Llama-3.1-8B", True, ""),
    826: ("Mistral-7B", False, HOST_MISTRAL),
    921: ("Qwen2.5-32B", True, ""),
    960: ("Qwen2.5-72B", True, ""),
    1027: ("Qwen2.5-32B", True, CODER_32B),
    1093: ("Qwen3-32B", True, ""),
}
"""The entries ``perf_model.py`` builds as tt_transformers runs them."""

P300X2 = "p300x2 (bh_quietbox_2: two P300 cards, 4 Blackhole chips) is not a system here (p150: 1 chip, p300: 2)"
NOT_BUILT = {  # model: why perf_model.py does not build its entries with figures
    "distil-whisper-large-v3": "whisper: an encoder-decoder speech model",
    "falcon-40b": "falcon: models/demos' own Falcon code, not tt_transformers",
    "falcon-7b": "falcon: models/demos' own Falcon code, not tt_transformers",
    "gemma-3-27b": "gemma: models/demos/multimodal/gemma3's own code (sliding-window layers)",
    "gemma-3-4b": "gemma: models/demos/multimodal/gemma3's own code (sliding-window layers)",
    "gpt-oss-120b": "gpt-oss: a mixture of experts (models/demos/gpt_oss)",
    "gpt-oss-20b": "gpt-oss: a mixture of experts (models/demos/gpt_oss)",
    "llama3.3-70b-galaxy": "models/demos/llama3_70b_galaxy's own code (prefetcher, fused CCLs), not tt_transformers",
    "qwen3-32b-galaxy": "models/demos/llama3_70b_galaxy's Qwen3 code, not tt_transformers",
    "mamba-2.8b": "mamba: a state-space model",
    "mixtral-8x7b": "Mixtral: a mixture of experts; tt_llama writes no expert layers",
    "qwen2.5-72b-vl": "vision: models/demos/qwen25_vl (mrope, vision prefill)",
    "qwen2.5-vl-32b": "vision: models/demos/qwen25_vl (mrope, vision prefill)",
}
"""Why the other entries with figures are not built (besides the p300x2 entries: :data:`P300X2`)."""


def why_not(target: Target) -> str | None:
    """None where ``perf_model.py`` builds ``target``, else the reason."""
    if target.line in BUILT:
        return None
    if target.sku == "p300x2":
        return P300X2
    return NOT_BUILT[target.model]


PROMPT_TOKENS = (
    337, 712, 71, 75, 81, 119, 66, 59, 99, 57, 98, 105, 84, 56, 80, 70,
    52, 63, 124, 61, 116, 67, 106, 80, 60, 72, 70, 67, 106, 65, 77, 86,
)  # fmt: skip
"""The 32 prompts of eval_repeat_prompts_batch32.json in Llama 3 tokens, as Llama-3.1-Instruct's chat template
writes them (its dated system header, the user turn, the assistant header: 33 tokens), counted with the
Llama 3 tokenizer that Meta's ``llama-models`` package ships.  The longest, 712, is the 8B entries' seq_len.
The other families' tokenizers are not here: their users take these lengths with the longest set to the
entry's seq_len (two prompts pad to 1024 in every family: the 4,070-character one and the 1-to-N
sequence, 337 Llama tokens, whose digits the others' tokenizers split finer; the next longest is 124)."""
GENERATED = 200
"""The run's max_generated_tokens: decode is timed with each user half-way through them."""

TRACED_PREFILL = {"N150": (128,), "N300": (128, 1024), "T3K": (128, 1024), "TG": (128, 1024), "P150": (128, 1024)}
TRACED_PREFILL_MODEL = {("Llama-3.1-8B", "N150"): (128, 1024), ("Llama-3.1-8B", "T3K"): (128, 1024, 2048, 4096, 8192)}
"""model_config.py's get_trace_prefill_supported_seq_lens: the default lengths a system's prefill is traced at,
and the models here that list their own."""


def padded_prefill(tokens: int) -> int:
    """common.py's get_padded_prefill_len: up to 128 tokens 128, up to 1024 1024, then a power of two."""
    if tokens <= 128:
        return 128
    return 1024 if tokens <= 1024 else 1 << (tokens - 1).bit_length()


def prompt_tokens(target: Target) -> tuple[int, ...]:
    """Each user's prompt, in tokens, for ``target``'s model (:data:`PROMPT_TOKENS`, the longest its seq_len)."""
    longest = max(PROMPT_TOKENS)
    return tuple(target.seq_len if n == longest else n for n in PROMPT_TOKENS)


def traced_prefill(model: str, system: str) -> tuple[int, ...]:
    """The prefill lengths that run traced for ``model`` on ``system``."""
    return TRACED_PREFILL_MODEL.get((model, system), TRACED_PREFILL.get(system, ()))
