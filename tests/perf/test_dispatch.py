"""The host's dispatch of eager ops: it costs more the more devices an op runs on, it runs ahead of
the device behind long kernels (so the short ops after one cost no host time), and a read back to
the host makes it wait; whole Llama prefills timed so hold on PERF.md's times to first token that
the host's figures were not fitted to."""

from __future__ import annotations

import importlib.util
import pathlib
import sys

import numpy as np
import pytest

import meshnn as ttnn
from meshnn.perf import OpDesc, OpFamily, Recorder, TensorDesc
from meshnn.perf.hardware import WORMHOLE_B0 as WH
from meshnn.perf.host import TT_TRANSFORMERS, step_time

SMALL = TensorDesc((1, 1, 32, 32))
BIG = TensorDesc((1, 1, 4096, 4096))
SHORT = OpDesc(OpFamily.UNARY, (SMALL,), (SMALL,))  # a kernel of a few us
LONG = OpDesc(OpFamily.MATMUL, (BIG, BIG), (BIG,), fidelity="HiFi4")  # a kernel of milliseconds


def test_dispatch_grows_with_the_devices_an_op_is_written_to():
    assert WH.dispatch_ns(1) == WH.host_dispatch_ns
    assert WH.dispatch_ns(8) == pytest.approx(WH.host_dispatch_ns + 7 * WH.host_dispatch_per_device_ns)
    assert WH.host_dispatch_per_device_ns > 0 and "fd_mesh_command_queue" in WH.source("host_dispatch_per_device_ns")
    one, eight = Recorder("t3k", (1, 1)), Recorder("t3k", (1, 8))
    for recorder in (one, eight):
        for _ in range(10):
            recorder.record(SHORT)
    assert one.total_ns() == pytest.approx(10 * WH.dispatch_ns(1) + one.records[-1].prediction.kernel_ns)
    assert eight.total_ns() == pytest.approx(10 * WH.dispatch_ns(8) + eight.records[-1].prediction.kernel_ns)


def test_the_host_runs_ahead_behind_a_long_kernel():
    recorder = Recorder("n150")
    recorder.record(LONG)
    for _ in range(20):
        recorder.record(SHORT)
    long_ns = recorder.records[0].prediction.kernel_ns
    assert long_ns > 21 * WH.host_dispatch_ns  # the host dispatches all 20 while it runs
    gaps = [r.prediction.gap_ns for r in recorder.records]
    assert gaps[0] == WH.host_dispatch_ns and gaps[1:] == [WH.op_to_op_traced_ns] * 20
    # the old rule (the host waits for each op to start) would have paid the host again after every short op
    short_ns = recorder.records[1].prediction.kernel_ns
    assert recorder.total_ns() < WH.host_dispatch_ns + long_ns + 20 * (short_ns + WH.op_to_op_traced_ns) + 1.0
    assert step_time(recorder, traced=False).host_bound_ops == 1


def test_a_host_that_fell_behind_pays_each_dispatch():
    recorder = Recorder("n150")
    for _ in range(5):
        recorder.record(SHORT)
    recorder.record(LONG)
    gaps = [r.prediction.gap_ns for r in recorder.records]
    short_ns = recorder.records[0].prediction.kernel_ns
    assert gaps[0] == WH.host_dispatch_ns
    assert gaps[1:] == [pytest.approx(WH.host_dispatch_ns - short_ns)] * 5  # the host is the bottleneck


def test_a_read_back_makes_the_host_wait_and_a_retimed_run_keeps_it():
    ahead, synced = Recorder("n150"), Recorder("n150")
    for recorder in (ahead, synced):
        recorder.record(LONG)
        if recorder is synced:
            recorder.synchronize()
        recorder.record(SHORT)
    assert ahead.records[1].prediction.gap_ns == WH.op_to_op_traced_ns
    assert synced.records[1].prediction.gap_ns == WH.host_dispatch_ns  # dispatched only after the read
    again = synced.retimed(traced=False)
    assert [r.prediction.gap_ns for r in again.records] == [r.prediction.gap_ns for r in synced.records]


def test_to_torch_under_a_capture_synchronises_its_meshs_host_clock():
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 1), system="n150")
    try:
        put = dict(layout=ttnn.TILE_LAYOUT, device=mesh, dtype=ttnn.bfloat16)
        a = ttnn.from_torch(np.ones((2048, 2048), np.float32), **put)
        with ttnn.perf_capture() as capture:
            big = ttnn.matmul(a, a)
            ttnn.to_torch(big)
            ttnn.exp(a)
        records = capture.recorder(mesh).records
    finally:
        mesh.close()
    assert records[0].prediction.kernel_ns > WH.host_dispatch_ns  # long enough to hide the next dispatch
    assert records[1].prediction.gap_ns == WH.host_dispatch_ns  # but the read made the host wait


# ------------------------------------------------------------------ whole models (checks, not fits)


def load_tt_llama():
    path = pathlib.Path(__file__).parents[2] / "benchmarks" / "tt_llama.py"
    spec = importlib.util.spec_from_file_location("tt_llama", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["tt_llama"] = module  # (its dataclasses look their module up)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    ("model", "system", "mesh_shape", "published_ms"),
    [
        ("LLAMA_8B", "n150", (1, 1), 104.0),
        ("LLAMA_8B", "n300", (1, 2), 67.0),
        ("LLAMA_8B", "t3k", (1, 8), 53.0),
        ("LLAMA_70B", "t3k", (1, 8), 164.0),
    ],
)
def test_a_llama_prefill_meets_perf_md_time_to_first_token(model, system, mesh_shape, published_ms):
    """PERF.md's performance table (batch 1, 128-token prompts): not fitted to, within 15%."""
    llama = load_tt_llama()
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(*mesh_shape), system=system, execute=False)
    try:
        with ttnn.perf_capture() as capture:
            llama.Llama(getattr(llama, model), mesh).prefill(128)
    finally:
        mesh.close()
    step = step_time(capture.recorders[0], traced=False, host_ns=TT_TRANSFORMERS.prefill_ns)
    assert abs(step.total_ns / 1e6 / published_ms - 1) <= 0.15, step.statement()
