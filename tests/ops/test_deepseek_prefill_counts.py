"""``ttnn.experimental.deepseek_prefill.masked_bincount`` and ``offset_cumsum`` against loops over
tokens, experts and devices written from ttnn's description (tt-metal 2026-06): each device's masked
expert histogram (ids past ``n`` and columns past ``num_experts_per_token`` skipped), then the
histograms gathered over a mesh axis into each device's dispatch offsets, the totals and the
tile-aligned expert regions.  Integers: compared exactly."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import meshnn as ttnn
from meshnn.ops import registry

RM = ttnn.ROW_MAJOR_LAYOUT
DS = "experimental.deepseek_prefill"


def open_mesh(shape):
    system = {(1, 1): "n150", (1, 2): "n300", (2, 4): "t3k", (8, 4): "galaxy"}[shape]
    return ttnn.open_mesh_device(ttnn.MeshShape(*shape), system=system)


def height_sharded(rows: int, width: int, cores: int):
    grid = ttnn.CoreRangeSet({ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(cores - 1, 0))})
    return ttnn.create_sharded_memory_config(
        shape=(rows // cores, width),
        core_grid=grid,
        strategy=ttnn.ShardStrategy.HEIGHT,
        use_height_and_width_as_shard_shape=True,
    )


def loop_bincount(ids: np.ndarray, table_row: np.ndarray, n: int, per_token: int) -> np.ndarray:
    out = np.zeros(n, dtype=np.int64)
    for token in ids:
        for e in token[:per_token]:
            if e < n and table_row[e] >= 0:
                out[e] += 1
    return out


def put_ids(mesh, ids: np.ndarray, width: int, cores: int = 4):
    """``ids`` ``(rows * mesh rows, width)`` sharded over the mesh's rows, replicated over its columns."""
    mapper = ttnn.ShardTensor2dMesh(mesh, mesh_shape=mesh.shape, dims=(0, None))
    tensor = ttnn.from_torch(
        torch.from_numpy(ids.astype(np.int16)), dtype=ttnn.uint16, layout=RM, device=mesh, mesh_mapper=mapper
    )
    return ttnn.to_memory_config(tensor, height_sharded(ids.shape[0] // mesh.shape[0], width, cores))


def put_table(mesh, table: np.ndarray):
    """The dispatch table ``(mesh columns, n)``: each column of devices its row."""
    mapper = ttnn.ShardTensor2dMesh(mesh, mesh_shape=mesh.shape, dims=(None, 0))
    return ttnn.from_torch(torch.from_numpy(table), dtype=ttnn.int32, layout=RM, device=mesh, mesh_mapper=mapper)


@pytest.mark.parametrize("shape", [(1, 1), (1, 2), (2, 4)])
def test_masked_bincount_per_device(shape):
    rng = np.random.default_rng(7)
    mesh = open_mesh(shape)
    try:
        rows, width, n, per_token = 64, 8, 40, 6
        ids = rng.integers(0, n + 5, size=(rows * shape[0], width))  # some ids past n: skipped
        table = rng.integers(-1, 3, size=(shape[1], n)).astype(np.int32)
        out = ttnn.experimental.deepseek_prefill.masked_bincount(
            put_ids(mesh, ids, width), put_table(mesh, table), n, per_token
        )
        assert tuple(out.shape) == (n,) and out.dtype == ttnn.uint32 and out.layout == RM
        assert out.memory_config().buffer_type == ttnn.BufferType.DRAM
        for i, dev in enumerate(ttnn.get_device_tensors(out)):
            r, c = divmod(i, shape[1])
            want = loop_bincount(ids[r * rows : (r + 1) * rows], table[c], n, per_token)
            np.testing.assert_array_equal(ttnn.to_torch(dev).numpy().astype(np.int64), want)
    finally:
        ttnn.close_mesh_device(mesh)


def test_masked_bincount_flat_mask_and_every_column():
    mesh = open_mesh((1, 1))
    try:
        ids = np.arange(32 * 4).reshape(32, 4) % 11
        table = np.where(np.arange(11) % 3 == 0, -1, 0).astype(np.int32)
        mask = ttnn.from_torch(torch.from_numpy(table), dtype=ttnn.int32, layout=RM, device=mesh)
        out = ttnn.experimental.deepseek_prefill.masked_bincount(put_ids(mesh, ids, 4, cores=2), mask, 11, 4)
        np.testing.assert_array_equal(ttnn.to_torch(out).numpy().astype(np.int64), loop_bincount(ids, table, 11, 4))
    finally:
        ttnn.close_mesh_device(mesh)


def loop_offsets(hist: np.ndarray, row: int, per_chip: int):
    """(offsets, totals, regions) of the ``(H, n)`` histograms for the device at ``row``, by loops."""
    height, n = hist.shape
    totals = [int(sum(hist[h, e] for h in range(height))) for e in range(n)]
    region = [0] * n
    for e in range(n):
        start = e - e % per_chip
        region[e] = sum(-(-totals[x] // 32) * 32 for x in range(start, e))
    offsets = [int(sum(hist[h, e] for h in range(row))) + region[e] for e in range(n)]
    return [np.array(v, dtype=np.int64).reshape(1, n) for v in (offsets, totals, region)]


@pytest.mark.parametrize("shape,axis", [((1, 2), 1), ((2, 4), 0), ((2, 4), 1), ((8, 4), 0)])
def test_offset_cumsum_over_an_axis(shape, axis):
    rng = np.random.default_rng(11)
    mesh = open_mesh(shape)
    try:
        n, per_chip = 64, 8
        hist = rng.integers(0, 70, size=(shape[0], shape[1], n)).astype(np.int32)
        mapper = ttnn.ShardTensor2dMesh(mesh, mesh_shape=mesh.shape, dims=(0, 1))
        tt = ttnn.from_torch(
            torch.from_numpy(hist.reshape(shape[0], shape[1] * n)),
            dtype=ttnn.uint32,
            layout=RM,
            device=mesh,
            mesh_mapper=mapper,
        )
        outs = ttnn.experimental.deepseek_prefill.offset_cumsum(tt, axis, 1, per_chip, ttnn.L1_MEMORY_CONFIG)
        assert len(outs) == 3
        for out in outs:
            assert tuple(out.shape) == (1, n) and out.dtype == ttnn.uint32 and out.layout == RM
            assert out.memory_config() == ttnn.DRAM_MEMORY_CONFIG
            assert all(isinstance(p, ttnn.PlacementShard) for p in out.tensor_topology().placements)
        got = [[ttnn.to_torch(d).numpy().astype(np.int64) for d in ttnn.get_device_tensors(o)] for o in outs]
        for i in range(shape[0] * shape[1]):
            r, c = divmod(i, shape[1])
            group = hist[:, c] if axis == 0 else hist[r]
            want = loop_offsets(group, (r, c)[axis], per_chip)
            for j in range(3):
                np.testing.assert_array_equal(got[j][i], want[j])
    finally:
        ttnn.close_mesh_device(mesh)


def dram_buffers(mesh) -> list:
    return [b for b in mesh.live_buffers() if b.buffer_type() == ttnn.BufferType.DRAM]


def test_offset_cumsum_wraps_as_uint32_and_frees_its_intermediates():
    mesh = open_mesh((1, 2))
    try:
        hist = np.array([[2**32 - 40, 5, 0, 1], [50, 0, 33, 2**31]], dtype=np.uint32)
        tt = ttnn.from_torch(
            torch.from_numpy(hist.view(np.int32)),
            dtype=ttnn.uint32,
            layout=RM,
            device=mesh,
            mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0),
        )
        before = len(dram_buffers(mesh))
        offsets, totals, region = ttnn.experimental.deepseek_prefill.offset_cumsum(tt, 1, 1, 2, ttnn.DRAM_MEMORY_CONFIG)
        totals_want = (hist[0].astype(np.uint64) + hist[1]) % 2**32
        read = [ttnn.to_torch(d).numpy().view(np.uint32).reshape(-1) for d in ttnn.get_device_tensors(totals)]
        np.testing.assert_array_equal(read[0], totals_want)
        aligned = (totals_want + 31) // 32 * 32 % 2**32
        region_want = np.array([0, aligned[0], 0, aligned[2]], dtype=np.uint64) % 2**32
        reg = [ttnn.to_torch(d).numpy().view(np.uint32).reshape(-1) for d in ttnn.get_device_tensors(region)]
        np.testing.assert_array_equal(reg[1], region_want)
        off = [ttnn.to_torch(d).numpy().view(np.uint32).reshape(-1) for d in ttnn.get_device_tensors(offsets)]
        np.testing.assert_array_equal(off[1], (region_want + hist[0]) % 2**32)
        assert len(dram_buffers(mesh)) == before + 3  # the gather freed (the program's semaphores live in L1)
    finally:
        ttnn.close_mesh_device(mesh)


def test_registry_entries():
    for name, device_op in (
        ("masked_bincount", "MaskedBincountDeviceOperation"),
        ("offset_cumsum", "OffsetCumsumDeviceOperation"),
    ):
        entry = registry.lookup(f"{DS}.{name}")
        assert entry.device_operation == device_op
        assert getattr(ttnn.experimental.deepseek_prefill, name) is entry.function


def test_masked_bincount_is_timed_over_its_shard_grid():
    """The model times the op by the ids' shard grid (its cores count rows, then a tree adds the
    histograms), not as one core's loop."""
    from meshnn.perf import OpDesc, OpFamily, TensorDesc, predict

    ids = TensorDesc((4096, 8), "UINT16", layout=ttnn.ROW_MAJOR_LAYOUT)
    mask = TensorDesc((1, 256), "INT32", layout=ttnn.ROW_MAJOR_LAYOUT)
    out = TensorDesc((256,), "UINT32", layout=ttnn.ROW_MAJOR_LAYOUT)

    def on(grid):
        desc = OpDesc(OpFamily.ARGMAX, (ids, mask), (out,), op_code="MaskedBincountDeviceOperation", core_grid=grid)
        return predict(desc, "n150")

    one, grid = on((1, 1)), on((8, 8))
    assert grid.cores == 64 and one.cores == 1
    assert grid.kernel_ns < one.kernel_ns / 5
    assert any("6 tree level" in note for note in grid.notes)
    mesh = open_mesh((1, 1))
    try:
        tt_ids = put_ids(mesh, np.arange(64 * 8).reshape(64, 8) % 256, 8, cores=8)
        with ttnn.perf_capture() as capture:
            ttnn.experimental.deepseek_prefill.masked_bincount(tt_ids, put_table(mesh, np.zeros((1, 256), np.int32)),
                                                               256, 8)  # fmt: skip
        (entry,) = [e for r in capture.recorders for e in r.records]
        assert entry.desc.op_code == "MaskedBincountDeviceOperation" and entry.prediction.cores == 8
    finally:
        ttnn.close_mesh_device(mesh)
