"""benchmarks/tt_llama.py's other families, as tt_transformers runs them: Qwen2.5-7B's own decoder
config (HiFi4 on every matmul, the MLP's included), Qwen2's QKV bias adds and Qwen3's q / k norms, and
the on-device sampling that ends a decode step of the rows measured since 2025-11."""

from __future__ import annotations

import dataclasses
from collections import Counter

import pytest

import meshnn as ttnn
from meshnn.perf import MathFidelity, OpFamily

from .test_dispatch import load_tt_llama


def captured(shape, precision, *, prefill: bool = False, device_sampling: bool = False):
    """The records of a decode step (or a 128-token prefill) of ``shape`` on a planning N300."""
    llama = load_tt_llama()
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 2), system="n300", execute=False)
    try:
        model = llama.Llama(shape, mesh, precision=precision, device_sampling=device_sampling)
        with ttnn.perf_capture() as capture:
            model.prefill(128) if prefill else model.decode(228)
    finally:
        mesh.close()
    return capture.recorders[0].records


def small(llama, **flags):
    """A one-layer Qwen2.5-7B-sized decoder with a small vocabulary (the ops per layer are what these tests count)."""
    return llama.Shape("Qwen2.5-7B", 1, 3584, 28, 4, 128, 18944, vocab=4096, **flags)


def mlp_fidelities(records, hidden: int) -> set[MathFidelity]:
    """The fidelities of the matmuls whose weight has the MLP's hidden dim (per device) on a side."""
    return {
        r.desc.fidelity for r in records if r.desc.family is OpFamily.MATMUL and hidden in r.desc.inputs[1].shape[-2:]
    }


def test_qwen25_7b_runs_its_decoder_config_hifi4_on_the_mlp_and_is_slower_for_it():
    llama = load_tt_llama()
    shape = small(llama)
    hidden = llama.padded(shape, 2).hidden // 2
    own = captured(shape, llama.QWEN25_7B_DECODERS)
    default = captured(shape, llama.BF16_ATTENTION)
    assert mlp_fidelities(own, hidden) == {MathFidelity.HiFi4}
    assert mlp_fidelities(default, hidden) == {MathFidelity.HiFi2}
    kernels = [sum(r.prediction.kernel_ns for r in records) for records in (own, default)]
    assert kernels[0] > kernels[1]


def test_qwen25_7b_activations_are_bfloat16_so_ff2_reads_a_bfloat16_gated_product():
    """Its decoder config's ACTIVATION BF16 reaches mlp.py's w2_in (``activation_dtype or bfloat8_b``):
    FF2's input is bfloat16 there, bfloat8_b under the default settings."""
    llama = load_tt_llama()
    shape = small(llama)
    hidden = llama.padded(shape, 2).hidden // 2
    for precision, dtype in ((llama.QWEN25_7B_DECODERS, "BFLOAT16"), (llama.BF16_ATTENTION, "BFLOAT8_B")):
        for prefill in (False, True):
            ff2 = [
                r.desc
                for r in captured(shape, precision, prefill=prefill)
                if r.desc.family is OpFamily.MATMUL and r.desc.inputs[1].shape[-2] == hidden
            ]
            assert ff2 and {d.inputs[0].dtype for d in ff2} == {dtype}


def test_the_qkv_bias_is_an_add_a_layer_and_the_qk_norms_two_rms_norms_a_layer():
    llama = load_tt_llama()
    plain = small(llama)
    for prefill in (False, True):
        base = Counter(r.desc.family for r in captured(plain, llama.BF16_ATTENTION, prefill=prefill))
        bias = Counter(r.desc.family for r in captured(dataclasses.replace(plain, qkv_bias=True), llama.BF16_ATTENTION,
                                                        prefill=prefill))  # fmt: skip
        norm = Counter(r.desc.family for r in captured(dataclasses.replace(plain, qk_norm=True), llama.BF16_ATTENTION,
                                                        prefill=prefill))  # fmt: skip
        assert bias - base == Counter({OpFamily.BINARY: plain.layers})
        assert (norm - base)[OpFamily.NORM] == 2 * plain.layers
        assert set(norm - base) <= {OpFamily.NORM, OpFamily.COPY}


def test_device_sampling_ends_the_decode_step_with_ttsamplings_ops():
    """TTSampling's top-k path on two devices: the logits typecast (and padded: 2048 a device is a
    power of two already, so no pad), a local top-32, values and indices gathered, the indices typecast,
    offset and untilized, one draw; the rest of the step is unchanged."""
    llama = load_tt_llama()
    shape = small(llama)
    host = captured(shape, llama.BF16_ATTENTION)
    device = captured(shape, llama.BF16_ATTENTION, device_sampling=True)
    assert [r.desc for r in device[: len(host)]] == [r.desc for r in host]
    added = [r.desc.op_code for r in device[len(host) :]]
    assert added == [
        "TypecastDeviceOperation",
        "TopKDeviceOperation",
        "AllGatherAsyncDeviceOperation",
        "AllGatherAsyncDeviceOperation",
        "TypecastDeviceOperation",
        "BinaryNgDeviceOperation",
        "UntilizeDeviceOperation",
        "SamplingDeviceOperation",
    ]
    topk = device[len(host) + 1].desc
    assert topk.inputs[0].shape[-2:] == (32, 2048) and topk.outputs[0].shape[-2:] == (32, 32)


def test_device_sampling_pads_a_devices_logits_to_a_power_of_two():
    llama = load_tt_llama()
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 2), system="n300", execute=False)
    try:
        model = llama.Llama(dataclasses.replace(small(llama), vocab=3000), mesh, device_sampling=True)
        assert model._vocab_share() == 2048  # 3000 tokens: 1504 a device (whole tiles), padded to 2048
        before = llama.Llama(
            dataclasses.replace(small(llama), vocab=3000), mesh, device_sampling=True, pad_sampling_logits=False
        )
        assert before._vocab_share() == 1504  # the code before tt-metal #40397: whole tiles only
    finally:
        mesh.close()


def test_device_sampling_on_one_device_takes_the_top_k_of_each_half_of_the_logits():
    """TTSampling's multi_step_reduction (a 1x1 mesh): no padding, no gathers; a top-32 of each half
    (3008 tokens: 1504 each), concatenated, then the offsets, untilize and the draw."""
    llama = load_tt_llama()
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 1), system="n150", execute=False)
    try:
        model = llama.Llama(dataclasses.replace(small(llama), vocab=3008), mesh, device_sampling=True)
        logits = model._head(model._norm(model._embedded(32, model._residual_config()), model.norm))
        with ttnn.perf_capture() as capture:
            model._sample(logits)
    finally:
        mesh.close()
    records = capture.recorders[0].records
    codes = [r.desc.op_code for r in records]
    assert codes.count("TopKDeviceOperation") == 2 and "AllGatherAsyncDeviceOperation" not in codes
    assert "PadDeviceOperation" not in codes and codes[-1] == "SamplingDeviceOperation"
    widths = [r.desc.inputs[0].shape[-1] for r in records if r.desc.op_code == "TopKDeviceOperation"]
    assert widths == [1504, 1504]


def test_a_decode_step_takes_a_position_for_each_user():
    """Users at their own positions: attention's time follows the furthest user's, where a single
    position puts them all there."""
    llama = load_tt_llama()
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 2), system="n300", execute=False)
    try:
        model = llama.Llama(small(llama), mesh, batch=32)
        steps = []
        for positions in (100, [100] * 31 + [900], 900):
            with ttnn.perf_capture() as capture:
                model.decode(positions)
            steps.append(capture.recorders[0].records)
        with pytest.raises(ValueError, match="2 positions for a batch of 32"):
            model.decode([1, 2])
    finally:
        mesh.close()
    sdpa = [
        [r.prediction.kernel_ns for r in records if r.desc.op_code == "ScaledDotProductAttentionDecode"]
        for records in steps
    ]
    assert all(len(times) == 1 for times in sdpa)  # one layer
    assert sdpa[0][0] < sdpa[1][0] <= sdpa[2][0]
    assert [r.desc.op_code for r in steps[1]] == [r.desc.op_code for r in steps[0]]


@pytest.mark.parametrize(
    ("system", "widths"),
    [
        ("n150", [42752] * 3),  # Wormhole: 668 columns a core of the LM head's 8x8 grid
        ("p150", [16032] * 8),  # Blackhole, one chip: an eighth of Llama 3's 128,256-token vocabulary a split
    ],
)
def test_the_lm_head_splits_as_model_config_sizes_them_per_architecture(system, widths):
    llama = load_tt_llama()
    shape = llama.Shape("Llama-3.1-8B", 1, 4096, 32, 8, 128, 14336)
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 1), system=system, execute=False)
    try:
        model = llama.Llama(shape, mesh)
        assert [weight.shape[-1] for weight, _ in model.lm_head] == widths
    finally:
        mesh.close()


def test_the_prefill_attention_runs_model_configs_chunks_of_64_rows_below_2048_tokens():
    llama = load_tt_llama()
    sdpa = [r.desc for r in captured(small(llama), llama.PERFORMANCE, prefill=True) if r.desc.family is OpFamily.SDPA]
    assert len(sdpa) == 1 and (sdpa[0].attention.q_chunk, sdpa[0].attention.k_chunk) == (64, 64)
    assert sdpa[0].attention.causal
    longer = llama.Llama._prefill_sdpa_program(4096)
    assert (longer.q_chunk_size, longer.k_chunk_size, longer.exp_approx_mode) == (256, 256, False)


def test_the_attention_accumulates_in_float32_and_the_mlp_in_bfloat16():
    """model_config.py: the attention's matmuls run compute_kernel_config_hifi2 (fp32_dest_acc_en on), the
    MLP's HIFI2_FP16 or LoFi and the LM head its own config (off); all with packer_l1_acc.  A decode step's
    matmuls carry those flags to the model (their partial sums between K blocks: meshnn.perf.matmul)."""
    llama = load_tt_llama()
    flags = {}
    for r in captured(small(llama), llama.PERFORMANCE):
        if r.desc.family is OpFamily.MATMUL:
            config = r.desc.matmul
            flags.setdefault(r.desc.inputs[1].shape[-2:], set()).add((config.packer_l1_acc, config.fp32_acc))
    assert flags[(3584, 2304)] == flags[(1792, 3584)] == {(True, True)}  # QKV and the output, a device's share
    assert flags[(3584, 9728)] == flags[(9728, 3584)] == {(True, False)}  # FF1 / FF3 (LoFi) and FF2 (HIFI2_FP16)
    assert flags[(3584, 2048)] == {(True, False)}  # the LM head
