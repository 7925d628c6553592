"""``meshnn perf``'s capture of ``fused_rms_minimal`` (RMSAllGather): one record, a NORM with the call's collective
config, timed as its program runs (meshnn.perf.rms_all_gather): the pre stage, the statistics' gather over the
``cluster_axis`` group and the post stage, one launch; a hand-built description without the collective config
stays the plain sharded norm."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import meshnn as ttnn
from meshnn.perf import (
    BufferType,
    CollectiveConfig,
    Layout,
    MemoryLayout,
    OpDesc,
    OpFamily,
    TensorDesc,
    Topology,
    default_fidelity,
    machine,
    predict,
)
from meshnn.perf.collectives import predict_collective
from meshnn.perf.fabric import fabric_perf
from meshnn.perf.latency import op_latency
from meshnn.perf.norm_stats import sharded_stats_ns
from meshnn.perf.rms_all_gather import OP_CODE, arrival_skew_ns, gamma_wait_ns, parts, pre_add, stages
from meshnn.perf.systems import Machine
from meshnn.perf.tile_ops import is_local_binary, local_binary_launch_ns, predict_tile_op
from tests.ops.reference import BF16, mesh_fixtures
from tests.ops.test_llama_ccl import grid, on_mesh, width_sharded
from tests.perf.published_ccl_ci import GALAXY_6U

meshes, mesh = mesh_fixtures([(2, 4)])


def _capture(mesh, residual: bool):
    rows, cols = tuple(mesh.shape)
    width = 256
    cores = grid(0, 0, 1, 0)
    config = width_sharded(cores, 128)
    rng = np.random.default_rng(5)
    x, r = (on_mesh(mesh, rng.standard_normal((rows, cols, 32, width)).astype(np.float32), BF16, ttnn.TILE_LAYOUT,
                    config) for _ in range(2))  # fmt: skip
    g_np = rng.standard_normal((rows, cols, width // 32, 32)).astype(np.float32)
    g = on_mesh(mesh, g_np, BF16, ttnn.ROW_MAJOR_LAYOUT, ttnn.DRAM_MEMORY_CONFIG)
    program = ttnn.LayerNormShardedMultiCoreProgramConfig(
        compute_with_storage_grid_size=(2, 1), subblock_w=1, block_h=1, block_w=4, inplace=False
    )
    sem = ttnn.create_global_semaphore(mesh, cores, 0)
    with ttnn.perf_capture() as capture:
        ttnn.fused_rms_minimal(
            x, program, 1, mesh, sem, residual_input_tensor=r if residual else None, weight=g, epsilon=1e-5,
            topology=ttnn.Topology.Ring, num_links=1,
        )  # fmt: skip
    return capture.recorder(mesh).records


@pytest.mark.parametrize("residual", [False, True], ids=["plain", "residual"])
def test_the_capture_is_one_norm_with_its_gather(mesh, residual):
    records = _capture(mesh, residual)
    assert len(records) == 1
    desc = records[0].desc
    assert desc.family is OpFamily.NORM and desc.op_code == OP_CODE
    assert desc.collective == CollectiveConfig(Topology.RING, cluster_axis=1, num_links=1)
    assert len(desc.inputs) == (3 if residual else 2)
    p = records[0].prediction
    assert p.kernel_ns > 0 and p.link_bytes > 0


def test_the_stages_run_in_one_program(mesh):
    desc = _capture(mesh, True)[0].desc
    m = machine("t3k", (2, 4))
    resolved = dataclasses.replace(desc, fidelity=default_fidelity(desc))  # as predict resolves it
    pre, gather, post = stages(resolved, 4)
    assert gather.outputs[0].shape[-1] == 4 * gather.inputs[0].shape[-1]  # one stats tile from each device
    assert pre.inputs == (desc.inputs[1],) and post.inputs[0] == desc.inputs[1]  # the pre-added sum, in the residual
    launch = m.system.arch.op_launch_ns
    add = pre_add(resolved)
    assert add is not None and add.family is OpFamily.BINARY and add.outputs == (desc.inputs[1],)
    parts = [predict_tile_op(add, m), predict_tile_op(pre, m), predict_collective(gather, m), predict_tile_op(post, m)]
    whole = predict(desc, m, traced=True).kernel_ns
    skew = arrival_skew_ns(resolved, m, 4)
    # each stage timed alone holds a launch; the add's is a local binary's where its operands are all L1 shards
    add_launch = local_binary_launch_ns(m, parts[0].cores) if is_local_binary(add) else launch
    launches = add_launch + 2 * launch
    assert whole == pytest.approx(sum(p.kernel_ns for p in parts) - launches + skew + gamma_wait_ns(resolved, m))
    assert whole > sum(p.kernel_ns for p in parts) - launches - launch  # more than its stages' work alone
    plain = predict(dataclasses.replace(desc, collective=None), m, traced=True).kernel_ns
    assert plain < whole  # without its config: the norm alone, no gather


def _hand_built(weight_buffer: BufferType | None, residual: bool) -> OpDesc:
    w = dict(buffer=BufferType.L1, memory=MemoryLayout.WIDTH_SHARDED)
    x = TensorDesc((1, 1, 32, 2048), "BFLOAT8_B", **w)
    res = (TensorDesc((1, 1, 32, 2048), "BFLOAT16", **w),) if residual else ()
    gamma = (
        () if weight_buffer is None else (TensorDesc((1, 1, 64, 32), layout=Layout.ROW_MAJOR, buffer=weight_buffer),)
    )
    config = CollectiveConfig(Topology.RING, cluster_axis=1, num_links=1)
    return OpDesc(OpFamily.NORM, (x, *res, *gamma), (x,), op_code=OP_CODE, core_grid=(2, 8), collective=config)


def test_gamma_in_dram_is_read_a_tile_at_a_time_after_the_gather():
    m = machine("galaxy", (8, 4))
    desc = _hand_built(BufferType.DRAM, residual=False)
    _, _, post = stages(desc, 4)
    trips = 4 * op_latency(m.system.arch.arch).tile_round_trip_cycles / m.system.arch.clock_hz * 1e9  # block_w 4
    assert gamma_wait_ns(desc, m) == pytest.approx(max(0.0, trips - sharded_stats_ns(post, m)))
    assert gamma_wait_ns(_hand_built(BufferType.L1, residual=False), m) == 0.0  # no DRAM reads
    assert gamma_wait_ns(_hand_built(None, residual=False), m) == 0.0  # no gamma


def test_a_residual_without_gamma_is_still_the_residual():
    desc = _hand_built(None, residual=True)
    _, residual, weight = parts(desc)
    assert residual is desc.inputs[1] and weight is None
    _, _, post = stages(desc, 4)
    assert len(post.inputs) == 2 and post.inputs[0] is residual  # the sum and the gathered stats, no gamma
    _, residual, weight = parts(_hand_built(BufferType.DRAM, residual=False))
    assert residual is None and weight is not None and weight.layout is Layout.ROW_MAJOR


def test_the_gather_waits_out_its_peers_arrival_skew_unless_aligned():
    desc = _hand_built(BufferType.DRAM, residual=True)
    m = Machine(GALAXY_6U, (8, 4))
    skew = fabric_perf(m.system.arch.arch).launch_skew_ns[Topology.RING]
    assert skew > 0 and arrival_skew_ns(desc, m, 4) == skew  # the 6U's axis of 4: a ring
    assert arrival_skew_ns(desc, machine("galaxy", (8, 4)), 4) == skew  # the 4U's, a line: the devices' start, the same
    aligned = dataclasses.replace(desc, collective=dataclasses.replace(desc.collective, aligned=True))
    assert arrival_skew_ns(aligned, m, 4) == 0.0 and arrival_skew_ns(desc, m, 1) == 0.0
    whole, behind = (predict(d, m, traced=True).kernel_ns for d in (desc, aligned))
    assert whole - behind == pytest.approx(skew)  # the only difference: the wait for the latest peer
