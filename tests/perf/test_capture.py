"""The perf capture: every op a program runs becomes an OpDesc (shapes, dtypes, fidelity, cores,
tt-metal's op names) recorded per mesh and device; its configs are read by ttnn's field names from
stand-in objects; traced replays are timed as traced; with no capture running no event is built."""

from __future__ import annotations

import numpy as np
import pytest

import meshnn as ttnn
from meshnn.mesh.observers import OBSERVERS, OpEvent
from meshnn.ops import launch as launch_module
from meshnn.ops.costs import ESTIMATED, op_desc
from meshnn.perf import (
    BufferType,
    Fabric,
    MathFidelity,
    MatmulProgram,
    MemoryLayout,
    OpFamily,
    Topology,
    arch_perf,
    default_fidelity,
    predict,
)

WH = arch_perf("wormhole_b0")


def put(mesh, values, dtype=ttnn.bfloat16, *, dim=None, memory_config=None):
    mapper = ttnn.ShardTensorToMesh(mesh, dim=dim) if dim is not None else None
    return ttnn.from_torch(
        values.astype(np.float32),
        dtype=dtype,
        layout=ttnn.TILE_LAYOUT,
        device=mesh,
        mesh_mapper=mapper,
        memory_config=memory_config,
    )


def small_block(mesh, rng):
    """An attention block, tensor-parallel over a 1x2 mesh: 11 ops."""
    x = put(mesh, rng.standard_normal((1, 64, 256)))
    norm = put(mesh, 1 + rng.standard_normal((1, 256)))
    wqkv = put(mesh, rng.standard_normal((256, 768)) / 16, ttnn.bfloat8_b, dim=1)
    wo = put(mesh, rng.standard_normal((256, 256)) / 16, ttnn.bfloat8_b, dim=0)
    odd = put(mesh, rng.standard_normal((50, 96)))
    h = ttnn.rms_norm(x, epsilon=1e-5, weight=norm)
    qkv = ttnn.linear(h, wqkv)
    q, k, v = ttnn.transformer.split_query_key_value_and_split_heads(qkv, num_heads=2, transpose_key=False)
    context = ttnn.transformer.scaled_dot_product_attention(q, k, v, is_causal=True)
    partial = ttnn.linear(ttnn.transformer.concatenate_heads(context), wo)
    out = ttnn.add(x, ttnn.all_reduce(partial))
    ttnn.softmax(out, dim=-1)
    ttnn.to_layout(ttnn.exp(odd), ttnn.ROW_MAJOR_LAYOUT)


CODES = [
    "LayerNormDeviceOperation",
    "MatmulDeviceOperation",
    "CreateQKVHeadsDeviceOperation",
    "ScaledDotProductAttention",
    "ConcatenateHeadsDeviceOperation",
    "MatmulDeviceOperation",
    "AllReduceAsyncDeviceOperation",
    "BinaryNgDeviceOperation",
    "SoftmaxDeviceOperation",
    "UnaryDeviceOperation",
    "UntilizeWithUnpadding",
]


def test_every_op_of_a_small_model_is_recorded_with_its_tensors(open_mesh, rng):
    mesh = open_mesh((1, 2))
    with ttnn.perf_capture() as capture:
        small_block(mesh, rng)
    assert capture.skipped == []
    recorder = capture.recorder(mesh)
    assert capture.recorders == [recorder] and len(capture) == len(CODES)
    records = recorder.records
    assert [r.desc.op_code for r in records] == CODES
    assert all(r.devices == (0, 1) for r in records)
    assert recorder.machine.system.name == "n300" and recorder.machine.mesh_shape == (1, 2)
    norm, qkv, split, sdpa, _, wo, reduce, add, _, exp, untilize = (r.desc for r in records)
    assert norm.inputs[0].shape == (1, 64, 256) and norm.inputs[0].dtype == "BFLOAT16"
    assert qkv.inputs[1].shape == (256, 384) and qkv.inputs[1].dtype == "BFLOAT8_B"  # one device's columns
    assert qkv.outputs[0].shape == (1, 64, 384)
    assert [t.shape for t in split.outputs] == [(1, 2, 64, 64)] * 3
    assert sdpa.attention.causal and sdpa.attention.q_chunk == 32
    assert wo.inputs[1].shape == (128, 256)  # one device's rows
    assert reduce.collective.topology is Topology.LINEAR and reduce.collective.cluster_axis is None
    assert add.inputs[0].buffer is BufferType.DRAM and add.inputs[0].memory is MemoryLayout.INTERLEAVED
    assert exp.inputs[0].shape == (64, 96) and exp.inputs[0].logical_shape == (50, 96)  # padded, logical
    assert exp.unary_ops == ("exp",)
    assert untilize.outputs[0].layout is ttnn.ROW_MAJOR_LAYOUT
    # no configs given: ttnn's default fidelity and the whole 8x8 compute grid
    assert all(r.desc.fidelity is None and r.desc.core_grid is None for r in records)
    fidelities = [r.prediction.fidelity for r in records]
    assert fidelities[0] is MathFidelity.HiFi4 and fidelities[1] is MathFidelity.HiFi2  # norm, matmul
    assert fidelities[3] is MathFidelity.HiFi2 and fidelities[7] is MathFidelity.LoFi  # sdpa, add
    # no program config: ttnn's 2-D program over the 8x8 grid, ceil(2/8) x ceil(12/8) = 1x2 tiles a core
    assert records[1].prediction.cores == 12
    assert records[0].prediction.cores == 2  # a norm keeps each row of tiles on one core


def event(mesh, op, inputs, **attrs):
    return OpEvent(op, mesh, tuple(inputs), tuple(inputs[0].storage.coords), 0, attrs)


class WormholeComputeKernelConfig:  # stand-ins carrying ttnn's field names
    def __init__(self, math_fidelity):
        self.math_fidelity = math_fidelity
        self.fp32_dest_acc_en = False


class MatmulMultiCoreReuseMultiCastProgramConfig:
    def __init__(self, grid, per_core_M, per_core_N, fused_activation=None):
        self.compute_with_storage_grid_size = grid
        self.in0_block_w = 2
        self.per_core_M, self.per_core_N = per_core_M, per_core_N
        self.fused_activation = fused_activation


class MatmulMultiCoreReuseMultiCastDRAMShardedProgramConfig:
    def __init__(self):
        self.in0_block_w, self.per_core_M, self.per_core_N, self.fused_activation = 4, 1, 2, None


def test_configs_are_read_by_ttnns_field_names(open_mesh, rng):
    mesh = open_mesh((1, 2))
    a, b = put(mesh, rng.standard_normal((64, 256))), put(mesh, rng.standard_normal((256, 512)), ttnn.bfloat8_b)
    out = ttnn.matmul(a, b)
    program = MatmulMultiCoreReuseMultiCastProgramConfig(
        ttnn.CoreCoord(4, 2), 1, 2, ttnn.UnaryWithParam(ttnn.UnaryOpType.SILU)
    )
    kernel = WormholeComputeKernelConfig(MathFidelity.LoFi)
    desc = op_desc(event(mesh, "matmul", (a, b), program_config=program, compute_kernel_config=kernel), [out])
    assert desc.fidelity is MathFidelity.LoFi and desc.unary_ops == ("silu",)
    assert desc.matmul.program is MatmulProgram.MULTICAST_2D and desc.matmul.grid == (4, 2)
    assert (desc.matmul.per_core_m, desc.matmul.per_core_n) == (1, 2)
    assert desc.core_grid == (4, 2)
    assert predict(desc, "n300").cores == 8  # 2x16 output tiles in 1x2 blocks, 16 blocks on 4x2 cores
    dram = op_desc(
        event(mesh, "linear", (a, b), program_config=MatmulMultiCoreReuseMultiCastDRAMShardedProgramConfig()), [out]
    )
    assert dram.matmul.program is MatmulProgram.DRAM_SHARDED and default_fidelity(dram) is MathFidelity.LoFi
    gridded = op_desc(event(mesh, "matmul", (a, b), core_grid=ttnn.CoreGrid(x=2, y=2)), [out])
    assert gridded.core_grid == (2, 2) and gridded.matmul.user_core_grid
    assert default_fidelity(gridded) is MathFidelity.LoFi  # ttnn: a core grid turns the HiFi2 default off
    plain = op_desc(event(mesh, "matmul", (a, b)), [out])
    assert plain.fidelity is None and default_fidelity(plain) is MathFidelity.HiFi2
    for given, expected in (("HiFi3", MathFidelity.HiFi3), (4, MathFidelity.HiFi4)):
        named = op_desc(event(mesh, "add", (a,), compute_kernel_config=WormholeComputeKernelConfig(given)), [a])
        assert named.fidelity is expected


def test_attention_collective_and_tensor_decided_ops(open_mesh, rng):
    mesh = open_mesh((1, 2))
    x = put(mesh, rng.standard_normal((1, 1, 64, 64)))
    chunks = ttnn.SDPAProgramConfig(compute_with_storage_grid_size=(8, 4), q_chunk_size=64, k_chunk_size=64)
    sdpa = op_desc(
        event(mesh, "transformer.scaled_dot_product_attention", (x, x, x), program_config=chunks, is_causal=False), [x]
    )
    assert sdpa.family is OpFamily.SDPA and sdpa.core_grid == (8, 4)
    assert (sdpa.attention.q_chunk, sdpa.attention.k_chunk, sdpa.attention.causal) == (64, 64, False)
    ring = op_desc(
        event(mesh, "all_gather", (x,), topology=ttnn.Topology.Ring, cluster_axis=1, num_links=1, dim=3), [x]
    )
    config = ring.collective
    assert ring.op_code == "AllGatherAsyncDeviceOperation" and config.topology is Topology.RING
    assert (config.cluster_axis, config.num_links, config.dim, config.fabric) == (1, 1, 3, Fabric.FABRIC_1D)
    height = ttnn.create_sharded_memory_config((64, 64), ttnn.CoreGrid(x=2, y=1), ttnn.ShardStrategy.HEIGHT)
    sharded = ttnn.to_memory_config(x, height)
    resharded = op_desc(event(mesh, "to_memory_config", (x,)), [sharded])
    assert resharded.op_code == "InterleavedToShardedDeviceOperation"
    assert resharded.outputs[0].buffer is BufferType.L1 and resharded.outputs[0].sharded
    on_shards = op_desc(event(mesh, "exp", (sharded,)), [sharded])
    assert on_shards.core_grid == (2, 1)  # the shard grid's two cores
    unknown = op_desc(event(mesh, "experimental.frobnicate", (x,)), [x])
    assert unknown.family is OpFamily.COPY and unknown.op_code == "FrobnicateDeviceOperation"
    assert ESTIMATED in unknown.attributes


def test_replays_of_a_real_trace_are_timed_traced_and_its_capture_is_not(open_mesh, rng):
    mesh = open_mesh((1, 2), trace_region_size=64 * 1024)
    x = put(mesh, rng.standard_normal((64, 64)))
    ttnn.exp(x)  # the op runs once before its capture, as TTNN programs do
    with ttnn.perf_capture() as capture:
        eager = ttnn.exp(x)
        trace_id = ttnn.begin_trace_capture(mesh, cq_id=0)
        traced_out = ttnn.relu(ttnn.exp(x))
        ttnn.end_trace_capture(mesh, trace_id, cq_id=0)
        assert [r.desc.name for r in capture.recorder(mesh).records] == ["ttnn.exp"]  # the capture ran nothing
        ttnn.execute_trace(mesh, trace_id, cq_id=0, blocking=True)
        ttnn.execute_trace(mesh, trace_id, cq_id=0, blocking=True)
    records = capture.recorder(mesh).records
    assert [r.desc.name for r in records] == ["ttnn.exp"] + ["ttnn.exp", "ttnn.relu"] * 2
    assert not records[0].prediction.traced and records[0].prediction.gap_ns == WH.dispatch_ns(2)  # to both devices
    assert all(r.prediction.traced and r.prediction.gap_ns == WH.op_to_op_traced_ns for r in records[1:])
    (eager_run,), (traced_run,) = capture.retimed(traced=False), capture.retimed(traced=True)
    assert traced_run.total_ns() < capture.total_ns() < eager_run.total_ns()
    with ttnn.perf_capture() as later:  # a trace captured before the perf capture: its replays are named
        ttnn.execute_trace(mesh, trace_id, cq_id=0, blocking=True)
    assert later.skipped == [("execute_trace", f"trace {int(trace_id)} was captured before this perf capture began")]
    whole = ttnn.PerfCapture(traced=True)
    whole.on_op_end(event(mesh, "exp", (x,)), [x])
    assert whole.recorder(mesh).records[0].prediction.traced
    ttnn.release_trace(mesh, trace_id)
    del eager, traced_out


def test_recording_is_off_unless_asked_and_builds_no_events(open_mesh, rng, monkeypatch):
    mesh = open_mesh((1, 2))
    x = put(mesh, rng.standard_normal((64, 64)))
    built = []
    real = launch_module.OpEvent
    monkeypatch.setattr(launch_module, "OpEvent", lambda *a, **k: built.append(a[0]) or real(*a, **k))
    assert not OBSERVERS  # nothing observes an ordinary run
    ttnn.exp(x)
    assert built == []  # no event was built
    capture = ttnn.begin_perf_capture()
    assert capture in OBSERVERS
    ttnn.exp(x)
    with pytest.raises(ttnn.MeshnnError, match="already running"):
        ttnn.begin_perf_capture()
    assert ttnn.end_perf_capture() is capture and not OBSERVERS
    ttnn.exp(x)
    assert built == ["exp"] and len(capture) == 1
    with pytest.raises(ZeroDivisionError), ttnn.perf_capture():
        raise ZeroDivisionError  # the block's error passes; the capture still ends
    assert not OBSERVERS


def test_a_mesh_the_model_has_no_figures_for_is_listed_not_fatal(open_mesh, rng):
    mesh = open_mesh((1, 2))
    x = put(mesh, rng.standard_normal((64, 64)))
    capture = ttnn.PerfCapture()
    capture.on_op_end(event(mesh, "all_gather", (x,), cluster_axis=5), [x])
    assert capture.skipped and capture.skipped[0][0] == "all_gather" and "cluster_axis" in capture.skipped[0][1]
