"""benchmarks/model_targets.csv: tt-metal's models/model_targets.yaml (2026-06) copied as data, and what
benchmarks/model_targets.py makes of it for perf_model.py's part (d)."""

from __future__ import annotations

import importlib.util
import pathlib
import sys

import pytest

BENCHMARKS = pathlib.Path(__file__).parents[2] / "benchmarks"


@pytest.fixture(scope="module")
def targets():
    spec = importlib.util.spec_from_file_location("model_targets", BENCHMARKS / "model_targets.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["model_targets"] = module  # (its dataclasses look their module up)
    spec.loader.exec_module(module)
    return module


def test_the_table_parses_the_yamls_facts(targets):
    rows = targets.load()
    by_line = {t.line: t for t in rows}
    assert len(rows) == len(by_line) == 44  # every active entry with a perf figure, one a YAML line
    assert [t.line for t in rows] == sorted(by_line)  # in the YAML's order
    # the entries at model_targets.yaml lines 476, 826 and 1114 as they stand (None: the entry does not say)
    assert by_line[476] == targets.Target(476, "llama3.1-8b", "wh_n150", 32, 712, 195.0, 8.8, None, None)
    assert by_line[826] == targets.Target(826, "mistral-7b", "wh_n150", 32, 744, 118.0, 21.9, None, None)
    assert by_line[1114] == targets.Target(1114, "qwen3-32b", "p300x2", 32, 686, 87.0, 21.6, 691.0, None)
    assert by_line[555].batch is None and by_line[555].seq_len is None  # llama3.1-8b p300x2: no dims
    assert by_line[106].prefill_ts == 1990.0 and by_line[106].ttft_ms is None  # falcon-7b: prefill t/s only
    for t in rows:  # every entry has a figure, and each figure is positive
        figures = [f for f in (t.ttft_ms, t.decode_tsu, t.decode_ts, t.prefill_ts) if f is not None]
        assert figures and min(figures) > 0


def test_every_entry_is_built_or_says_why_not(targets):
    rows = targets.load()
    built = [t for t in rows if targets.why_not(t) is None]
    assert sorted(t.line for t in built) == sorted(targets.BUILT)
    for t in built:  # the tt_transformers ci-eval-32 entries: batch 32, both figures, a system here
        assert t.sku in targets.SKUS and t.batch == 32 and t.ttft_ms and t.decode_tsu
    assert all(targets.why_not(t) for t in rows if t not in built)
    # the P150 run has the prefetcher, under which model.py samples on the host; Mistral-7B is on the demo's
    # host-sampling list (models_not_supported_for_device_sampling); the others sample on the device
    assert [line for line, (_, device, _) in targets.BUILT.items() if not device] == [510, 826]


def test_the_users_prompts_pad_as_the_demo_pads_them(targets):
    assert [targets.padded_prefill(n) for n in (1, 128, 129, 1024, 1025, 5000)] == [128, 128, 1024, 1024, 2048, 8192]
    assert len(targets.PROMPT_TOKENS) == 32 and max(targets.PROMPT_TOKENS) == 712
    for t in (t for t in targets.load() if targets.why_not(t) is None):
        users = targets.prompt_tokens(t)
        assert len(users) == t.batch and max(users) == t.seq_len  # the entry's seq_len: max(prefill_lens)
        assert sorted(targets.padded_prefill(n) for n in users) == [128] * 30 + [1024] * 2


def test_the_prefill_lengths_traced(targets):
    assert targets.traced_prefill("Llama-3.1-8B", "N150") == (128, 1024)
    assert targets.traced_prefill("Mistral-7B", "N150") == (128,)
    assert targets.traced_prefill("Qwen2.5-72B", "T3K") == (128, 1024)
