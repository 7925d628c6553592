"""A whole step's time says what it holds: kernels, op-to-op gaps (traced or eager), the host's work
per step; an eager decode step is dispatch-bound and says so; the model's notes reach the table."""

from __future__ import annotations

import numpy as np
import pytest

import meshnn as ttnn
from meshnn.perf import CollectiveConfig, OpDesc, OpFamily, Recorder, TensorDesc, format_table
from meshnn.perf.host import TT_TRANSFORMERS, TT_TRANSFORMERS_TG, step_time


def decode_like(mesh, users):
    """A decode-sized block: a few small ops on [users, 1024]."""
    put = dict(layout=ttnn.TILE_LAYOUT, device=mesh, dtype=ttnn.bfloat16)
    x = ttnn.from_torch(np.ones((users, 1024), np.float32), **put)
    w = ttnn.from_torch(np.ones((1024, 1024), np.float32), **put)
    h = ttnn.rms_norm(x, epsilon=1e-5)
    return ttnn.add(x, ttnn.silu(ttnn.linear(h, w)))


@pytest.fixture(scope="module")
def steps():
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 1), system="n150", execute=False)
    try:
        out = {}
        for users in (1, 32):
            with ttnn.perf_capture() as capture:
                decode_like(mesh, users)
            out[users] = capture
        return out
    finally:
        mesh.close()


def test_a_traced_step_is_kernels_gaps_and_the_hosts_work(steps):
    recorder = steps[1].recorders[0]
    step = step_time(recorder, traced=True, host_ns=TT_TRANSFORMERS.decode_step_ns)
    assert step.total_ns == pytest.approx(step.kernel_ns + step.gap_ns + TT_TRANSFORMERS.decode_step_ns)
    assert step.gap_ns == pytest.approx(step.ops * 720.0)  # the replay's gap before each op
    text = step.statement()
    assert "device kernels" in text and "op-to-op gaps" in text and "traced" in text and "host work" in text
    assert "dispatch-bound" not in text


def test_an_eager_decode_step_is_dispatch_and_says_so(steps):
    eager = {users: step_time(c.recorders[0], traced=False) for users, c in steps.items()}
    assert eager[1].host_bound_ops == eager[1].ops
    assert "dispatch-bound" in eager[1].statement()
    assert eager[32].total_ns == pytest.approx(eager[1].total_ns, rel=0.02)  # the same at any batch
    assert "wait on the host's dispatch" in steps[1].summary()


def test_a_step_of_no_ops_is_refused():
    with pytest.raises(ttnn.MeshnnValueError, match="no ops"):
        step_time(Recorder("n150"), traced=True)


def test_the_host_figures_name_their_sources():
    for host in (TT_TRANSFORMERS, TT_TRANSFORMERS_TG):
        assert set(host.sources) == {"decode_step_ns", "prefill_ns", "layer_residual_ns", "host_logit_ns"}
        assert "PERF.md" in host.sources["decode_step_ns"]
    assert TT_TRANSFORMERS.layer_residual_ns == 0 and TT_TRANSFORMERS_TG.layer_residual_ns > 0


def test_the_table_carries_the_models_notes():
    whole, part = TensorDesc((1, 1, 32, 4096)), TensorDesc((1, 1, 32, 512))
    gather = OpDesc(OpFamily.ALL_GATHER, (part,), (whole,), collective=CollectiveConfig(num_links=2, cluster_axis=1))
    recorder = Recorder("t3k", (1, 8))
    recorder.record(gather)
    recorder.record(gather)
    text = format_table(recorder)
    assert "notes (each once" in text and text.count("num_links=2 asked, 1 usable") == 1
