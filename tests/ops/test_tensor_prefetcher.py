"""The tensor prefetcher of tt-metal 2026 (``ttnn.experimental.start_tensor_prefetcher`` / queue /
wait / stop, DRAM-sender global circular buffers, tt-metal's test validator and consumer) on a
simulated P150 with programmable DRAM cores: its state on the mesh device and each check, the
pages a request pushes compared byte for byte by the validator (a changed weight is caught), the
matmul a DRAM-sender buffer feeds equal to the same matmul without it, and the perf capture.
"""

from __future__ import annotations

import pytest
import torch

import meshnn as ttnn
from meshnn.mesh.dram_sender_gcb import DRAM_CORES_ENV, pending_pages
from meshnn.ops.registry import DeviceWork, lookup

X = ttnn.experimental
C = ttnn.CoreCoord
BANKS = 8  # a P150's DRAM banks
RING = BANKS  # one receiver a bank: ring positions 0..7 on row 0
M, K, N = 32, 8 * 64, 8 * 32  # K: 2 tiles a ring block; N: one tile a receiver


def one(core):
    return ttnn.CoreRangeSet([ttnn.CoreRange(core, core)])


BANK_TO_RECEIVERS = [(b, one(C(b, 0))) for b in range(BANKS)]


@pytest.fixture
def p150(monkeypatch):
    monkeypatch.setenv(DRAM_CORES_ENV, "1")
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 1), system="p150")
    yield mesh
    X.stop_tensor_prefetcher(mesh)
    ttnn.close_mesh_device(mesh)


def weight(mesh, values, dtype=ttnn.bfloat16):
    grid = ttnn.CoreRangeSet([ttnn.CoreRange(C(0, 0), C(BANKS - 1, 0))])
    shard = ttnn.ShardSpec(grid, [values.shape[-2], values.shape[-1] // BANKS], ttnn.ShardOrientation.ROW_MAJOR)
    config = ttnn.MemoryConfig(ttnn.TensorMemoryLayout.WIDTH_SHARDED, ttnn.BufferType.DRAM, shard)
    return ttnn.from_torch(values, dtype=dtype, layout=ttnn.TILE_LAYOUT, device=mesh, memory_config=config)


def page_bytes(dtype_tile_bytes=2048):
    return (K // 32 // RING) * (N // BANKS // 32) * dtype_tile_bytes


def gcb(mesh, size=None):
    return X.create_global_circular_buffer_with_dram_senders(mesh, BANK_TO_RECEIVERS, size or 4 * page_bytes())


def test_supported_only_on_blackhole_with_programmable_dram_cores(monkeypatch):
    monkeypatch.setenv(DRAM_CORES_ENV, "1")
    wormhole = ttnn.open_mesh_device(ttnn.MeshShape(1, 1), system="n150")
    try:
        assert X.is_tensor_prefetcher_supported(wormhole) is False
        with pytest.raises(ttnn.MeshnnValueError, match="programmable DRAM cores"):
            X.start_tensor_prefetcher(wormhole)
        with pytest.raises(ttnn.MeshnnValueError, match="programmable DRAM cores"):
            X.create_global_circular_buffer_with_dram_senders(wormhole, [(0, one(C(0, 0)))], 2048)
    finally:
        ttnn.close_mesh_device(wormhole)
    monkeypatch.delenv(DRAM_CORES_ENV)
    blackhole = ttnn.open_mesh_device(ttnn.MeshShape(1, 1), system="p150")
    try:
        assert X.is_tensor_prefetcher_supported(blackhole) is False
        monkeypatch.setenv(DRAM_CORES_ENV, "1")
        assert X.is_tensor_prefetcher_supported(blackhole) is True
    finally:
        ttnn.close_mesh_device(blackhole)


def test_the_prefetcher_s_lifecycle_is_state_on_the_mesh_device(p150):
    cb, w = gcb(p150), weight(p150, torch.randn(K, N))
    with pytest.raises(ttnn.MeshnnValueError, match="before StartTensorPrefetcher"):
        X.queue_tensor_prefetcher_request(p150, [(w, RING)], global_cb=cb)
    with pytest.raises(ttnn.MeshnnValueError, match="before StartTensorPrefetcher"):
        X.wait_for_cq_on_tensor_prefetcher(p150, 0)
    X.stop_tensor_prefetcher(p150)  # no prefetcher: a no-op
    X.start_tensor_prefetcher(p150)
    with pytest.raises(ttnn.MeshnnValueError, match="already active"):
        X.start_tensor_prefetcher(p150)
    X.wait_for_cq_on_tensor_prefetcher(p150, 0)
    outside = ttnn.MeshCoordinateRangeSet(
        ttnn.MeshCoordinateRange(ttnn.MeshCoordinate(0, 1), ttnn.MeshCoordinate(0, 1))
    )
    with pytest.raises(ttnn.MeshnnValueError, match="not in the mesh"):
        X.wait_for_cq_on_tensor_prefetcher(p150, 0, device_subset=outside)
    with pytest.raises(ttnn.MeshnnValueError, match="not in the mesh"):
        X.queue_tensor_prefetcher_request(p150, [(w, RING)], global_cb=cb, device_subset=outside)
    with pytest.raises(ttnn.MeshnnValueError, match="command queue"):
        X.wait_for_cq_on_tensor_prefetcher(p150, 1)  # the mesh has one
    with pytest.raises(ttnn.MeshnnValueError, match="block_count must be > 0"):
        X.queue_tensor_prefetcher_request(p150, [(w, 0)], global_cb=cb)
    assert not pending_pages(cb)  # refusals push nothing
    X.queue_tensor_prefetcher_request(p150, [(w, RING)] * 2, global_cb=cb)
    assert [(t is w, blocks) for t, blocks, _ in pending_pages(cb)] == [(True, RING), (True, RING)]
    X.stop_tensor_prefetcher(p150)
    with pytest.raises(ttnn.MeshnnValueError, match="before StartTensorPrefetcher"):
        X.queue_tensor_prefetcher_request(p150, [(w, RING)], global_cb=cb)
    X.start_tensor_prefetcher(p150, dual_senders_per_bank=True)  # 16 senders: the 8-sender buffer no longer fits
    with pytest.raises(ttnn.MeshnnValueError, match="num_senders"):
        X.queue_tensor_prefetcher_request(p150, [(w, RING)], global_cb=cb)


def test_the_validator_compares_the_pushed_pages_byte_for_byte(p150):
    values = torch.randn(K, N)
    cb, w = gcb(p150), weight(p150, values)
    same, other = weight(p150, values.clone()), weight(p150, values + 1)
    X.start_tensor_prefetcher(p150)
    X.queue_tensor_prefetcher_request(p150, [(w, RING), (same, RING)], global_cb=cb)
    X.test_dram_prefetcher_validator(p150, w, 2, 0, global_cb=cb)  # a distinct tensor with w's bytes passes
    assert not pending_pages(cb)
    X.queue_tensor_prefetcher_request(p150, [(other, RING)], global_cb=cb)
    with pytest.raises(ttnn.MeshnnValueError, match="differs"):
        X.test_dram_prefetcher_validator(p150, w, 1, 0, global_cb=cb)
    assert [t for t, _, _ in pending_pages(cb)] == [other]  # a refusal takes nothing
    X.test_dram_prefetcher_validator(p150, other, 1, 0, global_cb=cb)
    X.queue_tensor_prefetcher_request(p150, [(w, RING)], global_cb=cb)
    with pytest.raises(ttnn.MeshnnValueError, match="would hang"):
        X.test_dram_prefetcher_validator(p150, w, 2, 0, global_cb=cb)  # one layer pushed, two awaited
    X.test_dram_prefetcher_validator(p150, w, 1, 0, global_cb=cb)
    X.queue_tensor_prefetcher_request(p150, [(w, RING // 2)] * 2, global_cb=cb)
    with pytest.raises(ttnn.MeshnnValueError, match="ring_size"):
        X.test_dram_prefetcher_validator(p150, w, 1, 0, global_cb=cb)


def test_the_consumer_takes_pages_of_the_pushed_size(p150):
    cb, w = gcb(p150), weight(p150, torch.randn(K, N))
    X.start_tensor_prefetcher(p150)
    X.queue_tensor_prefetcher_request(p150, [(w, RING)] * 3, global_cb=cb)
    X.test_dram_prefetcher_consumer(p150, 2 * RING, page_bytes(), global_cb=cb)
    with pytest.raises(ttnn.MeshnnValueError, match="page_size_bytes"):
        X.test_dram_prefetcher_consumer(p150, RING, page_bytes() * 2, global_cb=cb)


def test_a_worker_sender_buffer_gets_the_pages_of_ttnn_dram_prefetcher(p150):
    senders = [C(b, 1) for b in range(BANKS)]
    cb = ttnn.create_global_circular_buffer(
        p150, [(s, r) for s, (_, r) in zip(senders, BANK_TO_RECEIVERS, strict=True)], RING * page_bytes()
    )
    w = weight(p150, torch.randn(K, N))
    grid = ttnn.CoreRangeSet([ttnn.CoreRange(C(0, 1), C(BANKS - 1, 1))])
    table = ttnn.from_torch(
        torch.zeros(BANKS, 2, dtype=torch.int32),
        dtype=ttnn.uint32,
        device=p150,
        memory_config=ttnn.MemoryConfig(
            ttnn.TensorMemoryLayout.HEIGHT_SHARDED,
            ttnn.BufferType.L1,
            ttnn.ShardSpec(grid, [1, 2], ttnn.ShardOrientation.ROW_MAJOR),
        ),
    )
    ttnn.dram_prefetcher([w, table], num_layers=2, global_cb=cb)
    X.test_dram_prefetcher_validator(p150, w, 2, 0, global_cb=cb)


def matmul_setup(mesh):
    ring = ttnn.CoreRangeSet([ttnn.CoreRange(C(0, 0), C(RING - 1, 0))])
    a_config = ttnn.MemoryConfig(
        ttnn.TensorMemoryLayout.WIDTH_SHARDED,
        ttnn.BufferType.L1,
        ttnn.ShardSpec(ring, [M, K // RING], ttnn.ShardOrientation.ROW_MAJOR),
    )
    out_config = ttnn.MemoryConfig(
        ttnn.TensorMemoryLayout.WIDTH_SHARDED,
        ttnn.BufferType.L1,
        ttnn.ShardSpec(ring, [M, N // RING], ttnn.ShardOrientation.ROW_MAJOR),
    )
    config = ttnn.MatmulMultiCoreReuseMultiCast1DProgramConfig(
        compute_with_storage_grid_size=C(RING, 1),
        in0_block_w=K // RING // 32,
        out_subblock_h=1,
        out_subblock_w=1,
        per_core_M=M // 32,
        per_core_N=N // RING // 32,
        fuse_batch=True,
        fused_activation=None,
        mcast_in0=False,
        gather_in0=True,
        num_global_cb_receivers=1,
    )
    torch.manual_seed(5)
    a = ttnn.from_torch(
        torch.randn(M, K), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh, memory_config=a_config
    )
    return a, config, out_config


def test_the_matmul_a_dram_sender_buffer_feeds_is_meshnn_s_matmul(p150):
    a, config, out_config = matmul_setup(p150)
    w = weight(p150, torch.randn(K, N), ttnn.bfloat8_b)
    cb = X.create_global_circular_buffer_for_matmul_1d(p150, [config], [w], BANK_TO_RECEIVERS, RING * 4 * 1088)
    X.start_tensor_prefetcher(p150)
    block_count = cb.receiver_cores().num_cores()
    X.queue_tensor_prefetcher_request(p150, [(w, block_count)], global_cb=cb)
    fed = ttnn.linear(a, w, program_config=config, global_cb=cb, memory_config=out_config)
    assert not pending_pages(cb)  # the matmul took the pushed weight
    plain = ttnn.linear(a, w, program_config=config, memory_config=out_config)
    assert torch.equal(ttnn.to_torch(fed), ttnn.to_torch(plain))
    wrong = ttnn.MatmulMultiCoreReuseMultiCast1DProgramConfig(**{**config.__dict__, "per_core_N": 2})
    with pytest.raises(ttnn.MeshnnValueError, match="per_core_N"):
        X.create_global_circular_buffer_for_matmul_1d(p150, [wrong], [w], BANK_TO_RECEIVERS, RING * 4 * 1088)


def test_a_request_runs_no_device_program(p150):
    """tt-metal's TensorPrefetcherManager::queue serialises the request into pages its host worker pushes
    to the DRAM senders' sockets: no device operation, no profiler row, no allocation."""
    entry = lookup("experimental.queue_tensor_prefetcher_request")
    assert (entry.runs, entry.device_operation_name) == (DeviceWork.HOST, "")
    cb, w = gcb(p150), weight(p150, torch.randn(K, N))
    X.start_tensor_prefetcher(p150)
    before = p150.get_memory_view(ttnn.BufferType.DRAM).total_bytes_allocated_per_bank
    with ttnn.perf_capture() as capture:
        X.queue_tensor_prefetcher_request(p150, [(w, RING)] * 4, global_cb=cb)
    assert [r for rec in capture.recorders for r in rec.records] == [] and capture.transfers == []
    assert p150.get_memory_view(ttnn.BufferType.DRAM).total_bytes_allocated_per_bank == before
    ttnn.graph.begin_graph_capture(ttnn.graph.RunMode.NORMAL)
    try:
        X.queue_tensor_prefetcher_request(p150, [(w, RING)], global_cb=cb)
    finally:
        trace = ttnn.graph.end_graph_capture()
    assert ttnn.graph.extract_calltrace(trace) == ["ttnn::experimental::queue_tensor_prefetcher_request"]
    assert len(pending_pages(cb)) == 5


def recv_contig(mesh, values, ring):
    grid = ttnn.CoreRangeSet([ttnn.CoreRange(C(0, 0), C(BANKS - 1, 0))])
    spec = ttnn.NdShardSpec(
        ttnn.Shape([values.shape[-2], values.shape[-1] // ring]),
        grid,
        ttnn.ShardOrientation.ROW_MAJOR,
        ttnn.ShardDistributionStrategy.ROUND_ROBIN_1D,
    )
    config = ttnn.MemoryConfig(ttnn.BufferType.DRAM, spec)
    return ttnn.from_torch(values, dtype=ttnn.bfloat8_b, layout=ttnn.TILE_LAYOUT, device=mesh, memory_config=config)


def test_a_receiver_contiguous_weight_feeds_the_matmul_with_the_ring_as_block_count(p150):
    """One receiver a bank: the N-D spec's shards are the banks' (the weight reports WIDTH_SHARDED
    and is queued K-row-major, as tt-metal detects it); the recv-contig checks read its N-D spec."""
    a, config, out_config = matmul_setup(p150)
    w = recv_contig(p150, torch.randn(K, N), RING)
    page = (K // 32 // RING) * config.per_core_N * 1088
    cb = X.create_global_circular_buffer_for_matmul_1d_recv_contig(p150, [config], [w], BANK_TO_RECEIVERS, RING * page)
    assert X.tensor_prefetcher_block_count_for_matmul_1d(config, w, cb) == RING
    with pytest.raises(ttnn.MeshnnValueError, match="GCB size"):
        X.create_global_circular_buffer_for_matmul_1d_recv_contig(p150, [config], [w], BANK_TO_RECEIVERS, page)
    halves = recv_contig(p150, torch.randn(K, N), RING // 2)  # 4 shards for a ring of 8
    with pytest.raises(ttnn.MeshnnValueError, match="shards"):
        X.tensor_prefetcher_block_count_for_matmul_1d(config, halves, cb)
    X.start_tensor_prefetcher(p150)
    X.queue_tensor_prefetcher_request(p150, [(w, RING)], global_cb=cb)
    X.test_dram_prefetcher_consumer(p150, RING, page, global_cb=cb)
    X.queue_tensor_prefetcher_request(p150, [(w, RING)], global_cb=cb)
    fed = ttnn.linear(a, w, program_config=config, global_cb=cb, memory_config=out_config)
    assert not pending_pages(cb)
    plain = ttnn.linear(
        a, weight(p150, ttnn.to_torch(w), ttnn.bfloat8_b), program_config=config, memory_config=out_config
    )
    assert torch.equal(ttnn.to_torch(fed), ttnn.to_torch(plain))


def test_prefetch_and_linear_queues_the_ring_s_blocks_then_runs_the_matmul(p150):
    """``ttnn.experimental.tensor_prefetcher_matmul.prefetch_and_linear``: tt-metal 2026's Python
    helper: the request (block count = the buffer's receiver cores) and the matmul it feeds."""
    a, config, out_config = matmul_setup(p150)
    w = weight(p150, torch.randn(K, N), ttnn.bfloat8_b)
    cb = X.create_global_circular_buffer_for_matmul_1d(p150, [config], [w], BANK_TO_RECEIVERS, RING * 4 * 1088)
    X.start_tensor_prefetcher(p150)
    fed = X.tensor_prefetcher_matmul.prefetch_and_linear(
        a, w, global_cb=cb, program_config=config, memory_config=out_config
    )
    assert not pending_pages(cb)
    plain = ttnn.linear(a, w, program_config=config, memory_config=out_config)
    assert torch.equal(ttnn.to_torch(fed), ttnn.to_torch(plain))
    X.stop_tensor_prefetcher(p150)
    with pytest.raises(ttnn.MeshnnValueError, match="before StartTensorPrefetcher"):
        X.tensor_prefetcher_matmul.prefetch_and_linear(a, w, global_cb=cb, program_config=config)
