"""Time moves the way it must: more cores faster, lower fidelity faster, smaller weights faster when
DRAM-bound, rings faster than lines, more devices and bigger messages slower, tracing faster."""

from __future__ import annotations

import pytest

from meshnn.perf import (
    AttentionConfig,
    Bound,
    BufferType,
    CollectiveConfig,
    Fabric,
    MathFidelity,
    MatmulConfig,
    MatmulProgram,
    MemoryLayout,
    OpDesc,
    OpFamily,
    Recorder,
    TensorDesc,
    Topology,
    predict,
)

L1 = {"buffer": BufferType.L1, "memory": MemoryLayout.BLOCK_SHARDED}


def matmul(m, k, n, *, weight="BFLOAT16", grid=(8, 8), fidelity=MathFidelity.HiFi2, program=MatmulProgram.MULTICAST_2D):
    a = TensorDesc((1, 1, m, k), **L1)
    w = TensorDesc((1, 1, k, n), weight)
    return OpDesc(
        OpFamily.MATMUL,
        (a, w),
        (TensorDesc((1, 1, m, n), **L1),),
        fidelity=fidelity,
        matmul=MatmulConfig(program, grid),
    )


def gather(per_device: int, devices: int, topology=Topology.LINEAR, **config) -> OpDesc:
    part = TensorDesc((1, 1, 32, per_device // 64))
    whole = TensorDesc((1, 1, 32, per_device * devices // 64))
    return OpDesc(OpFamily.ALL_GATHER, (part,), (whole,), collective=CollectiveConfig(topology, **config))


def kernel(desc, system="n150", **kw) -> float:
    return predict(desc, system, traced=True, **kw).kernel_ns


def test_more_cores_is_faster():
    times = [kernel(matmul(2048, 2048, 2048, grid=g)) for g in ((1, 1), (2, 2), (4, 4), (8, 8))]
    assert times == sorted(times, reverse=True)
    assert times[0] / times[-1] > 30  # 64x the cores, less the fixed cost


def test_lower_fidelity_is_faster_when_compute_bound():
    times = [kernel(matmul(4096, 4096, 4096, fidelity=f)) for f in reversed(MathFidelity)]
    assert times == sorted(times, reverse=True)  # HiFi4 > HiFi3 > HiFi2 > LoFi
    assert predict(matmul(4096, 4096, 4096), "n150").bound is Bound.COMPUTE


def test_block_float_weights_are_faster_when_dram_bound():
    dtypes = ("FLOAT32", "BFLOAT16", "BFLOAT8_B", "BFLOAT4_B")
    descs = [matmul(32, 4096, 4096, weight=d, program=MatmulProgram.MULTICAST_1D) for d in dtypes]
    preds = [predict(desc, "n150", traced=True) for desc in descs]  # eager, bfloat4_b's waits on the host
    assert all(p.bound is Bound.DRAM for p in preds)
    times = [p.kernel_ns for p in preds]
    assert times == sorted(times, reverse=True)
    # bytes decide: the senders keep blocks of reads in flight, so the banks serve bfloat8_b's 1088 B
    # pages at the interleaved rate (the fixed launch and fill keep the ratio under the bytes' ratio)
    assert 1.4 < times[1] / times[2] <= 2048 / 1088


def test_dram_sharded_decode_matmul_beats_interleaved():
    sharded = kernel(matmul(32, 4096, 4096, weight="BFLOAT8_B", program=MatmulProgram.DRAM_SHARDED))
    interleaved = kernel(matmul(32, 4096, 4096, weight="BFLOAT8_B", program=MatmulProgram.MULTICAST_1D))
    assert sharded < interleaved


def test_blackhole_is_faster_than_wormhole():
    assert kernel(matmul(4096, 4096, 4096, grid=None), "p150") < kernel(matmul(4096, 4096, 4096, grid=None), "n150") / 2


def test_ring_beats_line_where_the_ring_closes():
    line = kernel(gather(8 << 20, 8), "t3k", mesh_shape=(1, 8))
    ring = kernel(gather(8 << 20, 8, Topology.RING), "t3k", mesh_shape=(1, 8))
    assert 1.5 <= line / ring <= 1.8  # Wormhole rings: 1.5-1.8x, not 2x (CCL report)


def test_ring_without_wraparound_runs_as_a_line():
    ring = predict(gather(1 << 20, 4, Topology.RING, cluster_axis=1), "t3k")  # a row of the 2x4 grid
    line = predict(gather(1 << 20, 4, Topology.LINEAR, cluster_axis=1), "t3k")
    assert ring.kernel_ns == line.kernel_ns
    assert any("no wraparound" in note for note in ring.notes)


def test_more_devices_take_longer():
    times = [kernel(gather(4 << 20, n), "t3k", mesh_shape=(1, n)) for n in (2, 4, 8)]
    assert times == sorted(times)
    axis0 = kernel(gather(4 << 20, 8, cluster_axis=0), "galaxy")  # 8 devices along axis 0
    axis1 = kernel(gather(4 << 20, 4, cluster_axis=1), "galaxy")  # 4 along axis 1
    assert axis0 > axis1


def test_bigger_messages_take_longer_and_use_the_links_better():
    sizes = [1 << s for s in range(12, 31, 3)]
    preds = [predict(gather(s, 4, cluster_axis=1), "t3k") for s in sizes]
    times = [p.kernel_ns for p in preds]
    assert times == sorted(times)
    rates = [p.link_bytes / p.kernel_ns for p in preds]
    assert rates == sorted(rates)
    assert preds[0].bound is Bound.DISPATCH and preds[-1].bound is Bound.LINK


def test_more_links_and_1d_fabric_are_faster():
    four = kernel(gather(64 << 20, 4, cluster_axis=1), "galaxy")
    one = kernel(gather(64 << 20, 4, cluster_axis=1, num_links=1), "galaxy")
    assert one / four == pytest.approx(4, rel=0.05)
    flat = kernel(gather(4096, 8, cluster_axis=0), "galaxy")
    mesh = kernel(gather(4096, 8, cluster_axis=0, fabric=Fabric.FABRIC_2D), "galaxy")
    assert mesh > flat


def test_a_collective_of_one_device_moves_nothing():
    alone = predict(gather(1 << 20, 1), "n150")
    assert alone.link_ns == 0 and alone.link_bytes == 0 and alone.bound is not Bound.LINK


def test_all_reduce_moves_twice_what_reduce_scatter_moves():
    x = TensorDesc((1, 1, 32, 1 << 16))
    part = TensorDesc((1, 1, 32, 1 << 13))
    config = CollectiveConfig(cluster_axis=1)
    rs = predict(OpDesc(OpFamily.REDUCE_SCATTER, (x,), (part,), collective=config), "t3k", mesh_shape=(1, 8))
    ar = predict(OpDesc(OpFamily.ALL_REDUCE, (x,), (x,), collective=config), "t3k", mesh_shape=(1, 8))
    assert ar.link_bytes == 2 * rs.link_bytes == int(2 * 7 / 8 * x.nbytes)


def test_tracing_removes_the_host_from_small_ops():
    eager, traced = Recorder("n150"), Recorder("n150")
    x = TensorDesc((1, 1, 32, 1024))
    for recorder, trace in ((eager, False), (traced, True)):
        for _ in range(10):
            recorder.record(OpDesc(OpFamily.BINARY, (x, x), (x,)), traced=trace)
    assert eager.total_ns() > 5 * traced.total_ns()
    assert all(r.prediction.bound is Bound.DISPATCH for r in eager.records)
    assert eager.retimed(traced=True).total_ns() == pytest.approx(traced.total_ns())


def test_eager_gaps_hide_behind_long_kernels():
    recorder = Recorder("n150")
    big = matmul(4096, 4096, 4096)
    recorder.record(big)
    second = recorder.record(big)
    assert second.prediction.gap_ns == recorder.machine.system.arch.op_to_op_traced_ns


def test_longer_kv_cache_decode_takes_longer_and_prefill_grows_faster_than_linear():
    q = TensorDesc((1, 32, 32, 128))
    cache = TensorDesc((32, 8, 4096, 128), "BFLOAT8_B")
    times = []
    for kv_len in (256, 1024, 4096):
        desc = OpDesc(OpFamily.SDPA_DECODE, (q, cache, cache), (q,), attention=AttentionConfig(kv_len=kv_len))
        times.append(kernel(desc))
    assert times == sorted(times)
    prefill = []
    for s in (1024, 2048, 4096):
        qs, kv = TensorDesc((1, 8, s, 128)), TensorDesc((1, 1, s, 128))
        desc = OpDesc(OpFamily.SDPA, (qs, kv, kv), (qs,), attention=AttentionConfig(128, 128))
        prefill.append(kernel(desc))
    assert prefill[2] / prefill[1] > 2 * 0.9 and prefill[1] > prefill[0]


@pytest.mark.parametrize(
    "family",
    [
        f
        for f in OpFamily
        if not f.is_collective
        and f not in (OpFamily.MATMUL, OpFamily.SDPA, OpFamily.SDPA_DECODE, OpFamily.MOE_GPT, OpFamily.MOE_COMPUTE)
    ],  # those read their own shapes (moe_gpt / moe_compute: their packed weights, tests/ops/test_moe_*.py)
)
def test_every_family_predicts_and_l1_beats_dram(family):
    dram = TensorDesc((1, 1, 1024, 4096))
    l1 = TensorDesc((1, 1, 1024, 4096), buffer=BufferType.L1, memory=MemoryLayout.HEIGHT_SHARDED)
    in_dram = predict(OpDesc(family, (dram, dram), (dram,)), "n150")
    in_l1 = predict(OpDesc(family, (l1, l1), (l1,)), "n150")
    assert in_dram.kernel_ns > 0 and in_dram.total_ns > in_dram.kernel_ns
    assert in_l1.kernel_ns <= in_dram.kernel_ns
    assert in_dram.dram_bytes > 0 and in_l1.dram_bytes == 0
