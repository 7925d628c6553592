"""all_gather, reduce_scatter and all_reduce on 1x8, 2x4 and 8x4 meshes, with cluster_axis None / 0 / 1.

Groups: without cluster_axis the whole mesh in row-major order; cluster_axis=0 groups the devices of one
mesh column (they differ in coordinate 0), cluster_axis=1 those of one row.  Every device holds a
distinct shard (ShardTensorToMesh on dim 0), and every device's result is read on its own
(ttnn.get_device_tensors).

- all_gather moves values without arithmetic: exactly equal in every dtype (bfloat8_b shards keep a
  width that is a multiple of 16, so their face rows travel whole).
- reduce_scatter / all_reduce sum k float32 values: |err| <= gamma_(k-1) * sum |x_m| (Higham; any
  order), then the output dtype's rounding (2**-8 |v| for bfloat16, rowmax / 64 for bfloat8_b); a sum
  that dropped one member's shard lies beyond that bound.
"""

from __future__ import annotations

import numpy as np
import pytest

import meshnn as ttnn

from .reference import (
    BF16,
    BFP8,
    F32,
    RM,
    TILE,
    assert_within,
    exact_equal,
    gamma,
    mesh_fixtures,
    output_bound,
)

COLLECTIVE_MESHES = [(1, 8), (2, 4), (8, 4)]
AXES = [None, 0, 1]


meshes, mesh = mesh_fixtures(COLLECTIVE_MESHES)


@pytest.fixture
def rng():
    return np.random.default_rng(20261204)


def groups(shape: tuple[int, int], axis: int | None) -> list[list[int]]:
    """The linear device indices of every group, each in member order."""
    rows, cols = shape
    if axis is None:
        return [list(range(rows * cols))]
    if axis == 0:
        return [[r * cols + c for r in range(rows)] for c in range(cols)]
    return [[r * cols + c for c in range(cols)] for r in range(rows)]


def sharded(mesh, values: np.ndarray, dtype, layout) -> ttnn.Tensor:
    """values (devices * d0, ...) with device i holding rows [i d0, (i+1) d0) of dim 0."""
    return ttnn.Tensor(values, dtype, device=mesh, layout=layout, mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0))


def device_results(tensor: ttnn.Tensor) -> list[np.ndarray]:
    return [ttnn.to_numpy(t).astype(np.float64) for t in ttnn.get_device_tensors(tensor)]


def shards_of(values: np.ndarray, n: int) -> list[np.ndarray]:
    return np.split(values, n, axis=0)


def snapshot(mesh) -> tuple:
    """Everything an op could allocate: the live buffers and every device's DRAM / L1 view."""
    views = []
    for coord in mesh.shape.coords():
        for kind in (ttnn.BufferType.DRAM, ttnn.BufferType.L1):
            view = mesh.get_memory_view(kind, coord)
            views.append((view, view.block_table))
    return [(b.buffer_type(), b.address()) for b in mesh.live_buffers()], views


FORMATS = [(F32, RM), (F32, TILE), (BF16, TILE), (BF16, RM), (BFP8, TILE)]


@pytest.mark.parametrize("cluster_axis", AXES, ids=lambda a: f"axis{a}")
def test_all_gather(mesh, cluster_axis, rng):
    """Every device of a group ends with its group's shards concatenated along dim, in member order."""
    n = mesh.get_num_devices()
    for dtype, layout in FORMATS:
        values = rng.standard_normal((n, 3, 5, 48)).astype(np.float32)
        tensor = sharded(mesh, values, dtype, layout)
        shards = shards_of(
            ttnn.to_numpy(tensor, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0)).astype(np.float64), n
        )
        for dim in (0, 1, 2, 3, -1):
            out = ttnn.all_gather(tensor, dim=dim, cluster_axis=cluster_axis, num_links=1)
            got = device_results(out)
            assert len(got) == n and out.dtype is dtype and out.layout is layout
            for group in groups(tuple(mesh.shape), cluster_axis):
                expected = np.concatenate([shards[m] for m in group], axis=dim)
                for member in group:
                    exact_equal(got[member], expected, f"all_gather dim={dim} {dtype} {layout} device {member}")


@pytest.mark.parametrize("cluster_axis", AXES, ids=lambda a: f"axis{a}")
def test_all_reduce(mesh, cluster_axis, rng):
    n = mesh.get_num_devices()
    for dtype, layout in FORMATS:
        values = rng.standard_normal((n, 2, 20, 48)).astype(np.float32)
        tensor = sharded(mesh, values, dtype, layout)
        shards = shards_of(
            ttnn.to_numpy(tensor, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0)).astype(np.float64), n
        )
        got = device_results(ttnn.all_reduce(tensor, cluster_axis=cluster_axis))
        for group in groups(tuple(mesh.shape), cluster_axis):
            ref = sum(shards[m] for m in group)
            compute = gamma(len(group) - 1) * sum(np.abs(shards[m]) for m in group)
            bound = output_bound(ref, compute, dtype)
            for member in group:
                assert_within(got[member], ref, bound, f"all_reduce {dtype} {layout} device {member}")
            if len(group) > 1:
                missing = ref - shards[group[-1]]
                assert np.any(np.abs(missing - ref) > bound), "a sum missing one member must show"


@pytest.mark.parametrize("cluster_axis", AXES, ids=lambda a: f"axis{a}")
def test_reduce_scatter(mesh, cluster_axis, rng):
    """Device i of a group keeps slice i of dim of the group's sum."""
    n = mesh.get_num_devices()
    k = len(groups(tuple(mesh.shape), cluster_axis)[0])
    for dtype, layout in FORMATS:
        # dim 1 divides by k; a scattered tiled width must divide by k tiles (ttnn's rule for tiled dims),
        # which the 32-device group would make 1024 wide: there it scatters dim 1 only
        tiled_width = layout is TILE and k < 16
        width = 32 * k if tiled_width else (2 * k if layout is RM else 32)
        dims = (1, 3) if tiled_width or layout is RM else (1,)
        values = rng.standard_normal((n, k, 3, width)).astype(np.float32)
        tensor = sharded(mesh, values, dtype, layout)
        shards = shards_of(
            ttnn.to_numpy(tensor, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0)).astype(np.float64), n
        )
        for dim in dims:
            got = device_results(ttnn.reduce_scatter(tensor, dim=dim, cluster_axis=cluster_axis))
            for group in groups(tuple(mesh.shape), cluster_axis):
                totals = np.split(sum(shards[m] for m in group), k, axis=dim)
                magnitudes = np.split(sum(np.abs(shards[m]) for m in group), k, axis=dim)
                for i, member in enumerate(group):
                    bound = output_bound(totals[i], gamma(k - 1) * magnitudes[i], dtype)
                    assert got[member].shape == totals[i].shape
                    assert_within(
                        got[member], totals[i], bound, f"reduce_scatter dim={dim} {dtype} {layout} device {member}"
                    )
                    if k > 1:
                        neighbour = totals[(i + 1) % k]
                        assert np.any(np.abs(neighbour - totals[i]) > bound), "another member's slice must show"


@pytest.mark.parametrize("shape", COLLECTIVE_MESHES, ids=[f"{r}x{c}" for r, c in COLLECTIVE_MESHES])
def test_case_51_all_gather_value_i_in_block_i(meshes, shape):
    """tests/ttnn/unit_tests/test_multi_device.py::test_ttnn_multi_device_all_gather: (1, 1, 32, 32 N) with
    value i in block i, sharded on dim 3; all_gather(dim=3) leaves the full tensor on every device."""
    mesh = meshes[shape]
    n = mesh.get_num_devices()
    full = np.repeat(np.arange(n, dtype=np.float32), 32)[None, None, None, :].repeat(32, axis=2)
    for dtype in (F32, BF16, BFP8):
        tensor = ttnn.from_torch(
            __import__("torch").from_numpy(full),
            dtype=dtype,
            layout=TILE,
            device=mesh,
            mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=3),
        )
        per_device = device_results(tensor)
        for i, block in enumerate(per_device):
            exact_equal(block, np.full((1, 1, 32, 32), float(i)), f"input block {i}")
        gathered = ttnn.all_gather(tensor, dim=3, num_links=1)
        for i, result in enumerate(device_results(gathered)):
            exact_equal(result, full.astype(np.float64), f"{dtype} device {i}")


# ----------------------------------------------------------------------------------------- errors


def test_collective_errors_name_the_problem_and_allocate_nothing(meshes, rng):
    mesh = meshes[(2, 4)]
    tensor = sharded(mesh, rng.standard_normal((8, 1, 32, 64)).astype(np.float32), F32, TILE)
    partial = sharded(mesh, rng.standard_normal((6, 1, 32, 64)).astype(np.float32), F32, TILE)
    assert len(partial.device_coords()) == 6  # torch.chunk semantics: 6 rows over 8 devices -> 6 shards
    cases = [
        (
            lambda: ttnn.all_gather(tensor, dim=4),
            r"ttnn\.all_gather: dim 4 is out of range for input_tensor of shape "
            r"\[1, 1, 32, 64\]",
        ),
        (lambda: ttnn.all_gather(tensor, dim=-5), r"ttnn\.all_gather: dim -5 is out of range"),
        (lambda: ttnn.reduce_scatter(tensor, dim=4), r"ttnn\.reduce_scatter: dim 4 is out of range"),
        (
            lambda: ttnn.reduce_scatter(tensor, dim=3),
            r"ttnn\.reduce_scatter: dim 3 of input_tensor \[1, 1, 32, 64\] "
            r"\(64\) must be divisible by 256 \(8 devices x the tile\)",
        ),
        (
            lambda: ttnn.reduce_scatter(tensor, dim=1, cluster_axis=1),
            r"dim 1 of input_tensor \[1, 1, 32, 64\] \(1\) "
            r"must be divisible by 4 \(4 devices\)",
        ),
        (
            lambda: ttnn.all_gather(tensor, dim=0, cluster_axis=2),
            r"ttnn\.all_gather: cluster_axis 2 must be one of "
            r"\[0, 1\] for a MeshShape\(\[2, 4\]\) mesh",
        ),
        (lambda: ttnn.all_reduce(tensor, cluster_axis=-1), r"ttnn\.all_reduce: cluster_axis -1 must be one of"),
        (lambda: ttnn.reduce_scatter(tensor, dim=3, cluster_axis=5), r"ttnn\.reduce_scatter: cluster_axis 5 must be"),
        (
            lambda: ttnn.all_gather(partial, dim=0),
            r"ttnn\.all_gather: input_tensor populates 6 of 8 devices; a "
            r"collective needs a shard on every device",
        ),
        (lambda: ttnn.all_reduce(partial), r"ttnn\.all_reduce: input_tensor populates 6 of 8 devices"),
        (lambda: ttnn.reduce_scatter(partial, dim=0), r"ttnn\.reduce_scatter: input_tensor populates 6 of 8"),
    ]
    for call, message in cases:
        before = snapshot(mesh)
        with pytest.raises(ttnn.MeshnnValueError, match=message):
            call()
        assert snapshot(mesh) == before, message


def test_collective_of_a_deallocated_tensor_says_where(meshes, rng):
    mesh = meshes[(2, 4)]
    tensor = sharded(mesh, rng.standard_normal((8, 1, 32, 64)).astype(np.float32), F32, TILE)
    ttnn.deallocate(tensor)
    with pytest.raises(
        ttnn.DeallocatedError,
        match=r"ttnn\.all_gather: input_tensor of shape \[1, 1, 32, 64\] .*"
        r"was deallocated at .*test_collectives\.py:\d+",
    ):
        ttnn.all_gather(tensor, dim=3)


@pytest.mark.parametrize("cluster_axis", AXES, ids=lambda a: f"axis{a}")
def test_all_gather_of_whole_tiles_moves_their_bytes(mesh, cluster_axis, rng):
    """A TILE gather along a tile-aligned dim moves tiles: every output byte is a byte of a member's
    input tile, in the tile grid's order (a block-float tile keeps its shared exponents as they
    were), and the values equal the concatenation exactly."""
    n = mesh.get_num_devices()
    for dtype in (BFP8, BF16, F32):
        values = rng.standard_normal((n, 2, 64, 96)).astype(np.float32)
        tensor = sharded(mesh, values, dtype, TILE)
        page = tensor.spec.page_size
        size = tensor.spec.compute_packed_buffer_size_bytes()
        in_bytes = np.array(tensor.storage.mesh_buffer.rows())[:, :size]
        shards = shards_of(
            ttnn.to_numpy(tensor, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0)).astype(np.float64), n
        )
        for dim, grid in ((1, (1, 2, 2 * 3 * page)), (2, (2, 2, 3 * page)), (3, (4, 3, page))):
            out = ttnn.all_gather(tensor, dim=dim, cluster_axis=cluster_axis)
            out_bytes = np.array(out.storage.mesh_buffer.rows())[
                :, : size * len(groups(tuple(mesh.shape), cluster_axis)[0])
            ]
            got = device_results(out)
            for group in groups(tuple(mesh.shape), cluster_axis):
                expected = np.concatenate([shards[m] for m in group], axis=dim)
                a, b, c = grid
                tiles = np.stack([in_bytes[m].reshape(a, b, c) for m in group], axis=1).reshape(-1)
                for member in group:
                    exact_equal(got[member], expected, f"all_gather dim={dim} {dtype} device {member}")
                    assert np.array_equal(out_bytes[member], tiles), f"{dtype} dim={dim} device {member}"
