"""benchmarks/tt_llama.py as tt_transformers runs it where the published rows of part (e) and the accuracy table
need it: RMSNorm's distributed prefill above a hidden size of 4096 (model_config.is_distributed_norm), the
precision tables' per-op fidelities (FF1/FF3, FF2 and the attention output apart), and perf_breakdown's split of
a step (its families add up to the step's kernels)."""

from __future__ import annotations

import importlib.util
import pathlib
import sys
from collections import Counter

import meshnn as ttnn
from meshnn.perf import MathFidelity, OpFamily
from meshnn.perf.host import step_time

from .test_dispatch import load_tt_llama

BENCHMARKS = pathlib.Path(__file__).parents[2] / "benchmarks"


def load(name: str):
    """A benchmarks/ module by name (its siblings importable, as when the benchmark runs)."""
    load_tt_llama()
    sys.path.insert(0, str(BENCHMARKS))
    try:
        spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(BENCHMARKS))
    return module


def prefill_records(shape, precision=None, *, system="n300", mesh_shape=(1, 2)):
    llama = load_tt_llama()
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(*mesh_shape), system=system, execute=False)
    try:
        model = llama.Llama(shape, mesh, precision=precision or llama.PERFORMANCE)
        with ttnn.perf_capture() as capture:
            model.prefill(128)
    finally:
        mesh.close()
    return capture.recorders[0]


def norm_codes(recorder) -> Counter:
    return Counter(r.desc.op_code for r in recorder.records if r.desc.family is OpFamily.NORM)


def test_prefill_norms_are_distributed_above_a_hidden_size_of_4096_on_several_devices():
    """Two norms a layer and the output norm: at dim 5120 each is statistics + normalisation on the device's
    share (and two all_gathers: the statistics', the output's); at 4096, and on one device, a whole rms_norm."""
    llama = load_tt_llama()
    wide = llama.Shape("wide", 1, 5120, 40, 8, 128, 8192, vocab=4096)
    narrow = llama.Shape("narrow", 1, 4096, 32, 8, 128, 8192, vocab=4096)
    codes = norm_codes(prefill_records(wide))
    assert codes == Counter({"LayerNormPreAllGatherDeviceOperation": 3, "LayerNormPostAllGatherDeviceOperation": 3}), (
        codes
    )
    assert set(norm_codes(prefill_records(narrow))) == {"LayerNormDeviceOperation"}
    assert set(norm_codes(prefill_records(wide, system="n150", mesh_shape=(1, 1)))) == {"LayerNormDeviceOperation"}
    gathers = [
        sum(r.desc.family is OpFamily.ALL_GATHER for r in prefill_records(shape).records) for shape in (wide, narrow)
    ]
    assert gathers == [6, 3]  # distributed: the statistics' and the output's all_gather per norm


def test_a_precision_sets_ff1_ff3_ff2_and_the_attention_output_apart():
    """PERF.md's precision tables set LI_FF1_FF3, LI_FF2 and LI_O one by one (perf_extra.table_precision)."""
    llama = load_tt_llama()
    extra = load("perf_extra")
    shape = llama.Shape("small", 1, 2048, 32, 8, 64, 8192, vocab=4096)
    precision = extra.table_precision("bf16", "bfp4", "bfp4", "mixed", "hifi4", "lofi", "lofi")
    records = prefill_records(shape, precision).records
    by_weight = {}
    for r in records:
        if r.desc.family is OpFamily.MATMUL and len(r.desc.inputs) > 1:
            weight = r.desc.inputs[1]
            by_weight.setdefault(tuple(weight.shape[-2:]), set()).add((weight.dtype, r.desc.fidelity))
    assert by_weight[(2048, 4096)] == {("BFLOAT16", MathFidelity.HiFi4)}  # FF1 / FF3: bf16 at hifi4
    assert by_weight[(4096, 2048)] == {("BFLOAT4_B", MathFidelity.LoFi)}  # FF2: bfp4 at lofi
    assert by_weight[(1024, 2048)] == {("BFLOAT4_B", MathFidelity.LoFi)}  # WO: bfp4 at lofi
    assert by_weight[(2048, 1536)] == {("BFLOAT8_B", MathFidelity.HiFi2)}  # QKV keeps hifi2


def test_the_breakdown_of_a_step_adds_up_to_its_kernels():
    llama = load_tt_llama()
    breakdown = load("perf_breakdown")
    recorder = prefill_records(llama.Shape("small", 1, 2048, 32, 8, 64, 8192, vocab=4096))
    parts = breakdown.breakdown(recorder, traced=False)
    step = step_time(recorder, traced=False)
    assert abs(sum(parts["families"].values()) - step.kernel_ns / 1e6) < 1e-6
    assert abs(parts["gaps"]["eager"] - step.gap_ns / 1e6) < 1e-6
    assert parts["gaps"]["traced"] < parts["gaps"]["eager"]
    assert sum(t for _, t in parts["matmuls"].values()) <= parts["families"]["MATMUL"] + 1e-9
    assert "MATMUL=" in breakdown.compact(parts)
