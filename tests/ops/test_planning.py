"""Planning meshes against executing meshes, op by op, on the suite's models.

Each model of tests/ops/test_models.py (the tensor-parallel MLP with both reductions, attention by
heads, ttnn's cases 52, 53, 55, 56) and the demo's decoder runs twice: on an executing mesh with
real values and on a planning mesh (``execute=False``) whose weights are torch "meta" tensors.  A
``ttnn.MemoryTimeline`` records both; every step (op) must match exactly: its name, the buffers it
allocated and freed (buffer type, address, bytes per bank), and per buffer type the bytes allocated,
the peak inside the op and the largest free block.  The final memory views (block tables included)
must be equal too.  An out-of-memory run must fail at the same op with the same message.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import math
import pathlib
import sys

import numpy as np
import pytest
import torch

import meshnn as ttnn
from meshnn.cli.demo import DemoConfig, MeshModel, make_weights

TILE, BF16, BFP8 = ttnn.TILE_LAYOUT, ttnn.bfloat16, ttnn.bfloat8_b
MESHES = [(2, 4), (8, 4)]


class Put:
    """Tensors of a model on ``mesh``: real random values, or meta tensors (shapes only)."""

    def __init__(self, mesh, real: bool) -> None:
        self.mesh, self.real = mesh, real
        self.rng = np.random.default_rng(7)
        rows, cols = tuple(mesh.shape)
        self.two_d = rows == 8
        self.dp, self.tp = (rows, cols) if self.two_d else (1, rows * cols)
        self.axis = 1 if self.two_d else None

    def values(self, shape):
        if self.real:
            return torch.from_numpy(self.rng.standard_normal(shape).astype(np.float32))
        return torch.empty(shape, device="meta")

    def __call__(self, shape, dtype=BF16, *, batch_dim=None, tp_dim=None, memory_config=None):
        if self.two_d:
            mapper = ttnn.ShardTensor2dMesh(self.mesh, mesh_shape=tuple(self.mesh.shape), dims=(batch_dim, tp_dim))
        elif tp_dim is not None:
            mapper = ttnn.ShardTensorToMesh(self.mesh, dim=tp_dim)
        else:
            mapper = ttnn.ReplicateTensorToMesh(self.mesh)
        values = self.values(shape)
        return ttnn.from_torch(
            values, dtype=dtype, layout=TILE, device=self.mesh, mesh_mapper=mapper, memory_config=memory_config
        )


def mlp(put: Put, reduction: str, memory_config=None) -> None:
    """test_tensor_parallel_mlp's ops."""
    tp, dp = put.tp, put.dp
    hidden, ffn, seq = 32 * tp, 64 * tp, 20
    x = put((dp * 2, seq, hidden), batch_dim=0, memory_config=memory_config)
    h = ttnn.linear(
        x,
        put((hidden, ffn), tp_dim=1),
        bias=put((ffn,), tp_dim=0),
        activation="gelu",
        memory_config=memory_config,
    )
    partial = ttnn.matmul(h, put((ffn, hidden), tp_dim=0), memory_config=memory_config)
    if reduction == "all_reduce":
        ttnn.add(ttnn.all_reduce(partial, cluster_axis=put.axis), put((hidden,)))
    else:
        scattered = ttnn.reduce_scatter(partial, dim=-1, cluster_axis=put.axis)
        scattered = ttnn.add(scattered, put((hidden,), tp_dim=0))
        ttnn.all_gather(scattered, dim=-1, cluster_axis=put.axis)


def attention(put: Put) -> None:
    """test_multi_head_attention_sharded_by_heads's ops."""
    tp, dp = put.tp, put.dp
    heads_per_rank, head_dim, seq = 8 // tp if tp < 8 else 1, 16, 20
    model = heads_per_rank * tp * head_dim
    x = put((dp, seq, model), batch_dim=0)

    def project():
        flat = ttnn.linear(x, put((model, model), tp_dim=1))
        return ttnn.permute(ttnn.reshape(flat, (1, seq, heads_per_rank, head_dim)), (0, 2, 1, 3))

    q, k, v = project(), project(), project()
    scores = ttnn.multiply(ttnn.matmul(q, k, transpose_b=True), 1 / math.sqrt(head_dim))
    context = ttnn.matmul(ttnn.softmax(scores, dim=-1), v)
    context = ttnn.reshape(ttnn.permute(context, (0, 2, 1, 3)), (1, seq, heads_per_rank * head_dim))
    ttnn.all_reduce(ttnn.matmul(context, put((model, model), tp_dim=0)), cluster_axis=put.axis)


def cases_52_to_56(put: Put) -> None:
    """ttnn's multi-device cases 52 (gelu, add, gelu+exp), 53 (data-parallel matmul), 55 (slice of a
    replicated tensor), 56 (exp of shards)."""
    mesh, n = put.mesh, put.mesh.get_num_devices()

    def sharded(shape, dim):
        return ttnn.from_torch(
            put.values(shape), dtype=BF16, layout=TILE, device=mesh, mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=dim)
        )

    x, y = sharded((1, 1, 32, 32 * n), 3), sharded((1, 1, 32, 32 * n), 3)
    ttnn.gelu(x), ttnn.add(x, y), ttnn.exp(ttnn.gelu(x))
    a = sharded((n, 1, 32, 32), 0)
    b = ttnn.from_torch(put.values((1, 1, 32, 32)), dtype=BF16, layout=TILE, device=mesh)
    ttnn.matmul(a, b)
    replicated = ttnn.from_torch(put.values((1, 32, 32, 32)), dtype=BF16, layout=TILE, device=mesh)
    ttnn.slice(replicated, [0, 0, 0, 0], [1, 32, 32, 1])
    ttnn.exp(x)


def demo(put: Put) -> None:
    """The demo's Llama-style decoder (2 layers), weights as numpy (planning ignores their values)."""
    config = DemoConfig(layers=2, hidden=256, seq=64, heads=8, vocab=512)
    model = MeshModel(config, make_weights(config), put.mesh, lambda _: None)
    model.forward(np.arange(config.seq) % config.vocab, lambda _: None)


def run(shape, execute: bool, model, *, filler: int = 0):
    """``model`` on a fresh mesh; returns (steps, final memory views, the error raised or None)."""
    with ttnn.MemoryTimeline() as timeline:
        system = "galaxy" if shape == (8, 4) else "t3k"
        mesh = ttnn.open_mesh_device(ttnn.MeshShape(*shape), execute=execute, system=system)
        error = None
        try:
            if filler:
                kept = ttnn.allocate_tensor_on_device(  # noqa: F841 (held until the model is done)
                    ttnn.Shape([1, 1, 32, filler]), BF16, TILE, mesh, ttnn.L1_MEMORY_CONFIG
                )
            model(Put(mesh, real=execute))
        except ttnn.OutOfMemoryError as oom:
            error = str(oom)
        views = [mesh.get_memory_view(t).as_dict() for t in (ttnn.BufferType.DRAM, ttnn.BufferType.L1)]
        steps = list(timeline.of(mesh).steps)
        mesh.close()
    return steps, views, error


MODELS = {
    "mlp reduce_scatter+all_gather": lambda put: mlp(put, "reduce_scatter+all_gather"),
    "mlp all_reduce": lambda put: mlp(put, "all_reduce"),
    "attention by heads": attention,
    "cases 52-56": cases_52_to_56,
    "demo decoder": demo,
}


CASES = [(name, shape) for name in MODELS for shape in MESHES if name != "demo decoder" or shape == (2, 4)]
# (the demo shards its heads over every device of the mesh: it runs on the T3000's 2x4)


@pytest.mark.parametrize(("name", "shape"), CASES, ids=[f"{n} {r}x{c}" for n, (r, c) in CASES])
def test_planning_gives_the_same_addresses_and_memory_views_op_by_op(name, shape):
    executed, exec_views, exec_error = run(shape, True, MODELS[name])
    planned, plan_views, plan_error = run(shape, False, MODELS[name])
    assert exec_error is None and plan_error is None
    ops = [s for s in executed if s.op_id is not None]
    assert len(ops) >= 4, [s.op for s in executed]
    assert len(planned) == len(executed)
    for done, plan in zip(executed, planned, strict=True):
        assert plan == done, f"step {done.index} (ttnn.{done.op}) differs"
    assert plan_views == exec_views  # block tables included
    assert any(s.born for s in ops)  # the ops allocated: the comparison compared addresses


def test_the_comparison_can_fail():
    """A model that differs by one op (an extra gelu) is told apart at that op."""
    executed, _, _ = run((2, 4), True, cases_52_to_56)

    def one_more(put):
        cases_52_to_56(put)
        ttnn.gelu(ttnn.from_torch(put.values((1, 1, 32, 256)), dtype=BF16, layout=TILE, device=put.mesh))

    planned, _, _ = run((2, 4), False, one_more)
    assert planned[: len(executed) - 1] == executed[:-1] and planned != executed


def l1_mlp(put: Put) -> None:
    mlp(put, "all_reduce", ttnn.L1_MEMORY_CONFIG)


def filler_leaving(free_per_bank: int, leave: int) -> int:
    """The width of a (1, 1, 32, width) bfloat16 L1 tensor that leaves ``leave`` bytes per bank of
    ``free_per_bank`` (tiles of 2 KiB, spread over the 64 L1 banks of a Wormhole device)."""
    tiles_per_bank = (free_per_bank - leave) // 2048
    return 32 * 64 * tiles_per_bank


def test_out_of_memory_comes_at_the_same_op_with_the_same_message():
    """L1 filled up to within a few activations of the MLP's need: executing and planning fail at
    the same op, with the same error, and leave the same memory."""
    executed, _, none = run((2, 4), True, l1_mlp)
    assert none is None
    need = max(s.lanes["L1"].peak for s in executed)  # the model's L1 peak per bank
    with ttnn.open_mesh_device(ttnn.MeshShape(2, 4), execute=False) as mesh:
        free = mesh.get_memory_view(ttnn.BufferType.L1).largest_contiguous_bytes_free_per_bank
    failures = []
    for leave in (need // 4, need // 2, need - 2048):
        filler = filler_leaving(free, leave)
        executed, exec_views, exec_error = run((2, 4), True, l1_mlp, filler=filler)
        planned, plan_views, plan_error = run((2, 4), False, l1_mlp, filler=filler)
        assert exec_error is not None, f"leaving {leave} B per bank of the {need} B needed did not fail"
        assert plan_error == exec_error and planned == executed and plan_views == exec_views
        assert "on every device of the 2x4 mesh" in exec_error
        failures.append(len(executed))
    assert len(set(failures)) >= 2, failures  # the fillers stop the model at different points


def load_benchmark():
    path = pathlib.Path(__file__).parents[2] / "benchmarks" / "plan_70b.py"
    spec = importlib.util.spec_from_file_location("plan_70b", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["plan_70b"] = module  # (its dataclasses look their module up)
    spec.loader.exec_module(module)
    return module


def per_bank(pages: int, page: int) -> int:
    """Bytes per DRAM bank of an interleaved buffer: its pages dealt over 12 banks."""
    return -(-pages // 12) * page


def test_the_70b_benchmark_model_plans_and_the_405b_runs_out_of_memory_naming_op_devices_and_sizes():
    """benchmarks/plan_70b.py's model, 2 of its 80 layers: its weights take exactly Llama-70B's
    bytes per device (bfloat8_b attention at 1088 B a tile, bfloat4_b MLP at 576 B, bfloat16 norms,
    caches and embedding), its prefill and decode plan; the 405B in bfloat16 does not fit."""
    bench = load_benchmark()
    config = dataclasses.replace(bench.LLAMA_70B, layers=2)
    mesh_shape = ttnn.MeshShape(8, 4)
    with ttnn.MemoryTimeline() as timeline, ttnn.open_mesh_device(mesh_shape, system="galaxy", execute=False) as mesh:
        model = bench.Model(config, mesh)
        logits = model.forward(128, decode=False)
        assert list(logits.shape) == [1, 1, 128, config.padded_vocab // 32]
        decoded = model.forward(32, decode=True)
        assert decoded.memory_config().buffer_type is ttnn.BufferType.L1
        loaded = timeline.of(mesh).steps[0]
    layer = (
        2 * per_bank(256, 2048)  # two norms [1, 8192] bfloat16: 256 tiles
        + per_bank(256 * 40, 1088)  # QKV [8192, 1280] per device
        + per_bank(32 * 64, 1088)  # wo [1024, 2048]
        + 3 * per_bank(256 * 28, 576)  # w1, w3 [8192, 896], w2 [896, 8192]
        + 2 * per_bank(32 * 8 * 4, 2048)  # k and v caches [32, 1, 256, 128]
    )
    rest = (
        per_bank(128256, 4096)  # the embedding [128256, 2048] bfloat16 rows
        + per_bank(256, 2048)  # the final norm
        + per_bank(256 * 126, 1088)  # the LM head [8192, 4032]
        + 2 * per_bank(32, 2048)  # cos and sin [1, 1, 256, 128]
        + per_bank(1, 512)  # the prefill's token ids [1, 128] uint32: one row
    )
    assert loaded.op == "(between ops)" and loaded.lanes["DRAM"].allocated == 2 * layer + rest
    error, layers, _ = bench.plan_405b()
    assert error is not None and 0 < layers < bench.LLAMA_405B.layers
    assert "In ttnn.from_torch (called at" in error and "plan_70b.py" in error
    assert "on every device of the 8x4 mesh at once (lock-step: device 0 at (0, 0) .. device 31 at (7, 3))" in error
    assert "each DRAM bank needs 6.00 MiB" in error and "the whole buffer is 72.00 MiB per device" in error
