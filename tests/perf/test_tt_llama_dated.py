"""benchmarks/tt_llama.py and benchmarks/decode_tail.py as tt_transformers ran on the dates of the figures they are
checked on: the prefill matmuls' program configs as model_config.py writes them (XQKV_PREFILL_PROGCFG's one-tile K
blocks on the 8x8 grid; matmul_config's 8 x c grids, K blocks and output subblocks), the decode SDPA's chunk by
date and architecture, and the host's read of a batch's logits (meshnn.perf.transfer)."""

from __future__ import annotations

import pytest

import meshnn as ttnn
from meshnn.perf import OpFamily
from meshnn.perf.host import TT_TRANSFORMERS, TT_TRANSFORMERS_TG
from meshnn.perf.transfer import host_read_ns

from .test_dispatch import load_tt_llama
from .test_tt_llama_settings import load, prefill_records


def matmul_configs(recorder) -> list:
    return [r.desc.matmul for r in recorder.records if r.desc.family is OpFamily.MATMUL]


def test_prefill_qkv_runs_one_tile_k_blocks_on_the_8x8_grid():
    """XQKV_PREFILL_PROGCFG (2025-03 to 2026-06): in0_block_w 1, per_core_M 1 at 128 tokens, per_core_N the device's
    QKV columns over 8; the MLP's FF1 / FF3 take matmul_config's blocks of the dim's tiles over c (8 here: 128 / 8 =
    16 -> 8), FF2 those of the whole hidden dim's (14336: 448 / 8 = 56 -> 8), a subblock of up to 4 tiles."""
    llama = load_tt_llama()
    configs = matmul_configs(prefill_records(llama.LLAMA_8B))
    qkv, wo, ff1, ff3, ff2 = configs[:5]
    assert (qkv.in0_block_w, qkv.per_core_m, qkv.per_core_n) == (1, 1, 3 * 1024 // 32 // 8), qkv
    assert (ff1.in0_block_w, ff1.per_core_m, ff1.per_core_n) == (8, 1, 7168 // 32 // 8), ff1
    assert ff3 == ff1
    assert (ff2.in0_block_w, ff2.per_core_n) == (8, 4096 // 32 // 8), ff2
    assert wo.in0_block_w == 8  # k_dim 2048 a device: 64 tiles, c = 8, 8 a block


def test_prefill_blocks_follow_the_whole_hidden_dim_as_model_config_does():
    """Qwen2.5-7B on an N300: hidden 18944 padded to 19456 (608 tiles, c = 8, 76 -> 4: FF2's K blocks of 4 tiles
    where the device's own 304 tiles would give 8); the dim's 112 tiles give FF1 / FF3 blocks of 14 -> 7; their
    38-tile outputs a core run subblocks of 2."""
    llama = load_tt_llama()
    configs = matmul_configs(prefill_records(load("perf_model").QWEN25_7B, llama.QWEN25_7B_DECODERS))
    ff1, ff2 = configs[2], configs[4]  # QKV, WO, FF1, FF3, FF2
    assert (ff1.in0_block_w, ff1.per_core_n) == (7, 38), ff1
    assert ff2.in0_block_w == 4, ff2
    assert llama.out_subblock_w(38) == 2 and llama.out_subblock_w(16) == 4 and llama.out_subblock_w(7) == 1


def sdpa_chunks(chunk: int, system: str = "p150") -> set[int]:
    llama = load_tt_llama()
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 1), system=system, execute=False)
    try:
        model = llama.Llama(llama.Shape("tiny", 2, 2048, 32, 8, 64, 8192, vocab=4096), mesh, sdpa_decode_chunk=chunk)
        with ttnn.perf_capture() as capture:
            model.decode(228)
    finally:
        mesh.close()
    return {r.desc.attention.k_chunk for r in capture.recorders[0].records if r.desc.family is OpFamily.SDPA_DECODE}


def test_decode_sdpa_chunk_by_date_and_architecture():
    """SDPA_DECODE_PROGCFG: 256 on Wormhole, 128 on Blackhole (2025-05-13 to 2026-01-06), 0 after (the op's own)."""
    tail = load("decode_tail")
    assert tail.decode_chunk("n300", dynamic=False) == 256
    assert tail.decode_chunk("p150", dynamic=False) == 128
    assert tail.decode_chunk("t3k", dynamic=True) == 0
    assert sdpa_chunks(128) == {128}
    assert sdpa_chunks(0) == {0}


def test_a_batch_sampled_on_the_host_reads_32_rows_of_logits():
    """Device 0's gathered logits, 32 rows of the tile-padded vocabulary in bfloat16 pages of a row: Llama 3's
    128,256 on one chip or eight (16,032 a chip, whole tiles), timed by meshnn.perf.transfer; a padded share reads
    more."""
    tail = load("decode_tail")
    row = 2 * 128256
    assert tail.logits_read_ns("n150", 1, 128256) == host_read_ns("wormhole_b0", 32 * row, row)
    assert tail.logits_read_ns("t3k", 8, 128256) == tail.logits_read_ns("n150", 1, 128256)
    assert tail.logits_read_ns("p150", 1, 128256) == host_read_ns("blackhole", 32 * row, row)
    assert tail.logits_read_ns("n300", 2, 152064) > tail.logits_read_ns("n300", 2, 151936) > 0


def test_a_batch_sampled_on_the_host_is_argmaxed_at_the_fitted_rate_a_logit():
    """The host's float conversion and argmax take the gathered rows whole, at HostModel.host_logit_ns a logit:
    Llama 3's 32 x 128,256 on any mesh of whole tiles (4.75 ms at the fitted 1.158 ns), Mistral's 32,768 a quarter of
    it; the padded share of a vocabulary that does not split into whole tiles counts; the Galaxy's model has none."""
    tail = load("decode_tail")
    llama = tail.host_argmax_ns(1, 128256, TT_TRANSFORMERS)
    assert llama == 32 * 128256 * TT_TRANSFORMERS.host_logit_ns
    assert tail.host_argmax_ns(8, 128256, TT_TRANSFORMERS) == llama
    assert tail.host_argmax_ns(1, 32768, TT_TRANSFORMERS) * 128256 == pytest.approx(llama * 32768)
    assert tail.host_argmax_ns(8, 151936, TT_TRANSFORMERS) == 32 * 152064 * TT_TRANSFORMERS.host_logit_ns
    assert tail.host_argmax_ns(8, 128256, TT_TRANSFORMERS_TG) == 0.0


def test_the_qwen2_bias_add_runs_the_legacy_row_broadcast_only_where_marked():
    """attention.py's prefill QKV bias add ([1, 1, 1, 2304] onto [1, 1, 128, 2304] on an N300 chip) is each layer's
    one row broadcast; dated with ``legacy_bcast`` (the PERF.md Qwen2.5 rows of before tt-metal #23626) it runs on 4
    cores and costs more, and no other op changes; the perf_model rows marked are those dated before 2025-08-04."""
    perf_model = load("perf_model")
    llama = load_tt_llama()
    recorder = prefill_records(perf_model.QWEN25_7B, llama.QWEN25_7B_DECODERS)
    today = perf_model.dated(recorder, None, traced=False)
    legacy = perf_model.dated(recorder, None, traced=False, legacy_bcast=True)
    pairs = zip(today.records, legacy.records, strict=True)
    changed = [(a, b) for a, b in pairs if a.prediction.kernel_ns != b.prediction.kernel_ns]
    assert len(changed) == perf_model.QWEN25_7B.layers
    for a, b in changed:
        assert a.desc.family is OpFamily.BINARY and a.desc.inputs[1].logical_shape[-2] == 1
        assert (a.prediction.cores, b.prediction.cores) == (64, 4)
        assert b.prediction.kernel_ns > 5 * a.prediction.kernel_ns
    assert set(perf_model.LEGACY_BCAST_ROWS) == {"Qwen2.5-7B", "Qwen2.5-72B", "Qwen2.5-32B"}
    assert "QwQ-32B" not in perf_model.LEGACY_BCAST_ROWS  # 2026-03: binary_ng's row broadcast
