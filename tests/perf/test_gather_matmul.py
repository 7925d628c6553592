"""``experimental.all_gather_matmul_async`` under a perf capture: one row (tt-metal runs one program), its
gather overlapped with its matmul (:mod:`meshnn.perf.gather_matmul`), bounded by the two timed alone."""

from __future__ import annotations

import numpy as np

import meshnn as ttnn
from meshnn.perf.collectives import predict_collective
from meshnn.perf.gather_matmul import FUSED_GATHER_OP_CODE, parts, predict_all_gather_matmul
from meshnn.perf.matmul import predict_matmul
from meshnn.perf.systems import machine

DIM = 4096


def _fused(mesh, *, execute: bool = True):
    rng = np.random.default_rng(3)
    x = ttnn.from_torch(
        rng.standard_normal((1, 1, 32, DIM)).astype(np.float32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT,
        device=mesh, mesh_mapper=ttnn.ShardTensor2dMesh(mesh, mesh_shape=(1, 8), dims=(None, 3)),
        memory_config=ttnn.L1_MEMORY_CONFIG,
    )  # fmt: skip
    w = ttnn.from_torch(
        rng.standard_normal((DIM, DIM)).astype(np.float32) / 64, dtype=ttnn.bfloat8_b, layout=ttnn.TILE_LAYOUT,
        device=mesh, mesh_mapper=ttnn.ShardTensor2dMesh(mesh, mesh_shape=(1, 8), dims=(None, 1)),
    )  # fmt: skip
    grid = ttnn.CoreRangeSet({ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(7, 0))})
    semaphores = [ttnn.create_global_semaphore(mesh, grid, 0) for _ in range(2)]
    program = ttnn.MatmulMultiCoreReuseMultiCast1DProgramConfig(
        compute_with_storage_grid_size=(8, 1), in0_block_w=DIM // 32 // 8, out_subblock_h=1, out_subblock_w=2,
        per_core_M=1, per_core_N=DIM // 8 // 32 // 8, fuse_batch=True, fused_activation=None, mcast_in0=True,
    )  # fmt: skip
    kernel = ttnn.WormholeComputeKernelConfig(math_fidelity=ttnn.MathFidelity.HiFi2)
    with ttnn.perf_capture() as capture:
        gathered, product = ttnn.experimental.all_gather_matmul_async(
            x, w, dim=3, multi_device_global_semaphore=semaphores, all_gather_core_grid_offset=(0, 4), num_links=1,
            topology=ttnn.Topology.Ring, program_config=program, compute_kernel_config=kernel,
        )  # fmt: skip
    return capture, (x, w, gathered, product)


def test_one_row_between_the_parts_alone():
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 8), system="t3k")
    try:
        capture, (x, _, gathered, product) = _fused(mesh)
        want = ttnn.to_torch(x, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=3))
        got = ttnn.to_torch(gathered, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0))[:1]
        assert np.array_equal(got.float().numpy(), want.float().numpy())  # the values unchanged
        assert tuple(product.shape) == (1, 1, 32, DIM // 8)
    finally:
        mesh.close()
    records = capture.recorders[0].records
    assert len(records) == 1 and records[0].devices == tuple(range(8))  # one row: the gather is no row of its own
    desc, prediction = records[0].desc, records[0].prediction
    assert desc.op_code == FUSED_GATHER_OP_CODE and desc.name == "ttnn.experimental.all_gather_matmul_async"
    assert desc.collective is not None and desc.collective.num_links == 1
    assert prediction.kernel_ns > 0 and not capture.skipped
    m = machine("t3k", (1, 8))
    gather_desc, matmul_desc = parts(desc)
    gather, matmul = predict_collective(gather_desc, m), predict_matmul(matmul_desc, m)
    assert max(gather.kernel_ns, matmul.kernel_ns) <= prediction.kernel_ns + 1e-6
    assert prediction.kernel_ns < gather.kernel_ns + matmul.kernel_ns  # overlapped: less than one after the other
    assert predict_all_gather_matmul(desc, m).kernel_ns == prediction.kernel_ns


def test_overlap_formula():
    """The op ends at the later of the matmul alone and the last slice's landing plus its share of the matmul."""
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 8), system="t3k", execute=False)
    try:
        capture, _ = _fused(mesh)
    finally:
        mesh.close()
    desc = capture.recorders[0].records[0].desc
    m = machine("t3k", (1, 8))
    gather_desc, matmul_desc = parts(desc)
    gather, matmul = predict_collective(gather_desc, m), predict_matmul(matmul_desc, m)
    body = matmul.kernel_ns - matmul.fixed_ns
    fused = predict_all_gather_matmul(desc, m)
    assert abs(fused.kernel_ns - max(matmul.kernel_ns, gather.kernel_ns + body / 8)) < 1e-6
