"""An op on replicated inputs computes one device's rows and copies them, only when every device
holds the same bytes; the results are the bytes every device would have computed."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import meshnn as ttnn
from meshnn.mesh.slab import EQUAL_ROWS
from meshnn.mesh.transfers import ShardDataTransfer
from meshnn.ops import launch, shared_rows


def replicated(mesh, values: np.ndarray, dtype=ttnn.bfloat16) -> ttnn.Tensor:
    return ttnn.from_torch(
        torch.from_numpy(values),
        dtype,
        layout=ttnn.TILE_LAYOUT,
        device=mesh,
        mesh_mapper=ttnn.ReplicateTensorToMesh(mesh),
    )


def device_bytes(tensor: ttnn.Tensor) -> np.ndarray:
    return tensor.storage.mesh_buffer.slab().copy()


@pytest.fixture
def kernel_rows(monkeypatch):
    """How many device rows each kernel call saw."""
    seen: list[int] = []
    real = launch.launch

    def spying(op, mesh, inputs, outputs, kernel, **options):
        def counted(in_rows, out_rows, coords):
            seen.append(out_rows[0].shape[0])
            kernel(in_rows, out_rows, coords)

        return real(op, mesh, inputs, outputs, counted, **options)

    modules = (
        "eltwise.kernel",
        "normalization",
        "norm.softmax",
        "movement.rearrange",
        "reduce.generic",
        "embedding",
        "matmul",
    )
    for module in modules:
        monkeypatch.setattr(f"meshnn.ops.{module}.launch", spying, raising=False)
    return seen


def ops(x: ttnn.Tensor, w: ttnn.Tensor) -> list[ttnn.Tensor]:
    return [
        ttnn.exp(x),
        ttnn.add(x, x),
        ttnn.rms_norm(x, epsilon=1e-5, weight=w),
        ttnn.softmax(x, dim=-1),
        ttnn.permute(x, (0, 2, 1)),
        ttnn.sum(x, dim=-1),
        ttnn.matmul(x, ttnn.permute(x, (0, 2, 1))),
    ]


def test_replicated_inputs_run_once_and_give_every_devices_bytes(open_mesh, rng, monkeypatch, kernel_rows):
    mesh = open_mesh((2, 4))
    values = rng.standard_normal((1, 128, 96)).astype(np.float32)  # 24 KiB per device, past the threshold
    assert shared_rows.SHARED_ROWS_MIN_BYTES <= 128 * 96 * 2
    x, w = replicated(mesh, values), replicated(mesh, rng.standard_normal((96,)).astype(np.float32))
    once = [device_bytes(t) for t in ops(x, w)]
    assert kernel_rows and set(kernel_rows) == {1}, "replicated inputs should be computed on one device"
    monkeypatch.setattr(shared_rows, "_replicated", lambda topology: False)  # every device computes
    kernel_rows.clear()
    each = [device_bytes(t) for t in ops(x, w)]
    assert set(kernel_rows) == {8}
    for a, b in zip(once, each, strict=True):
        np.testing.assert_array_equal(a, b)
        assert all(np.array_equal(a[0], row) for row in a[1:])


def test_a_replicated_tensor_whose_devices_differ_runs_on_every_device(open_mesh, rng, kernel_rows):
    mesh = open_mesh((1, 2))
    values = rng.standard_normal((1, 32, 64)).astype(np.float32)
    x = replicated(mesh, values, ttnn.float32)
    other = rng.standard_normal((1, 32, 64)).astype(np.float32)
    one = replicated(mesh, other, ttnn.float32)  # device (0, 1) gets the tiles of ``other``
    queue = mesh.mesh_command_queue()
    queue.enqueue_write_shards(
        x.storage.mesh_buffer, [ShardDataTransfer(ttnn.MeshCoordinate(0, 1), device_bytes(one)[1])], blocking=True
    )
    out = ttnn.to_torch(ttnn.exp(x), mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0)).numpy()
    assert kernel_rows == [2]
    np.testing.assert_allclose(out[0], np.exp(values[0]), rtol=2e-6)
    np.testing.assert_allclose(out[1], np.exp(other[0]), rtol=2e-6)


def test_sharded_inputs_are_not_compared(open_mesh, rng, monkeypatch, kernel_rows):
    mesh = open_mesh((1, 2))
    x = ttnn.from_torch(
        torch.from_numpy(rng.standard_normal((2, 32, 32)).astype(np.float32)),
        ttnn.bfloat16,
        layout=ttnn.TILE_LAYOUT,
        device=mesh,
        mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0),
    )
    compared = []
    monkeypatch.setattr(shared_rows, "_same_on_every_device", lambda rows: compared.append(1) or True)
    ttnn.exp(x)
    assert compared == [] and kernel_rows == [2]


def test_small_replicated_inputs_are_computed_on_every_device(open_mesh, rng, kernel_rows, monkeypatch):
    """Unless a memo says their devices hold the same bytes and there are enough devices' bytes:
    small rows are never compared."""
    compared = []
    real = shared_rows._same_on_every_device
    monkeypatch.setattr(shared_rows, "_same_on_every_device", lambda rows: compared.append(1) or real(rows))
    values = rng.standard_normal((32, 32)).astype(np.float32)
    few = replicated(open_mesh((2, 4)), values)  # 8 devices' tiles: 16 KiB in all
    assert few.storage.mesh_buffer.memo is EQUAL_ROWS  # written from one host array
    assert 8 * 2048 < shared_rows.KNOWN_ROWS_MIN_BYTES <= 32 * 2048
    ttnn.exp(few)
    assert kernel_rows == [8] and compared == [], "8 tiles cost less to compute than to copy"
    kernel_rows.clear()
    mesh = open_mesh((8, 4))
    x = replicated(mesh, values)
    known = ttnn.exp(x)
    assert kernel_rows == [1], "32 tiles known equal on every device are computed once"
    queue = mesh.mesh_command_queue()  # the same bytes written again to one device: the memo goes
    queue.enqueue_write_shards(
        x.storage.mesh_buffer, [ShardDataTransfer(ttnn.MeshCoordinate(0, 1), device_bytes(x)[1])], blocking=True
    )
    assert x.storage.mesh_buffer.memo is None
    unknown = ttnn.exp(x)
    assert kernel_rows == [1, 32] and compared == [], "comparing a tile's bytes costs more than computing it"
    np.testing.assert_array_equal(device_bytes(known), device_bytes(unknown))


def test_one_host_array_written_to_every_device_marks_the_rows_equal(open_mesh, rng, monkeypatch, kernel_rows):
    """A replicated write leaves ``EQUAL_ROWS`` (so the op does not compare the devices' bytes);
    a write to one device drops it, and the op then compares and runs on every device."""
    mesh = open_mesh((2, 4))
    values = rng.standard_normal((1, 128, 96)).astype(np.float32)
    x = replicated(mesh, values, ttnn.float32)
    buffer = x.storage.mesh_buffer
    assert buffer.memo is EQUAL_ROWS
    compared = []
    real = shared_rows._same_on_every_device
    monkeypatch.setattr(shared_rows, "_same_on_every_device", lambda rows: compared.append(1) or real(rows))
    ttnn.exp(x)
    assert compared == [] and kernel_rows == [1]
    other = replicated(mesh, rng.standard_normal((1, 128, 96)).astype(np.float32), ttnn.float32)
    mesh.mesh_command_queue().enqueue_write_shards(
        buffer, [ShardDataTransfer(ttnn.MeshCoordinate(1, 3), device_bytes(other)[7])], blocking=True
    )
    assert buffer.memo is None
    kernel_rows.clear()
    out = ttnn.to_torch(ttnn.exp(x), mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0)).numpy()
    assert compared and kernel_rows == [8]
    np.testing.assert_allclose(out[0], np.exp(values[0]), rtol=2e-6)
    np.testing.assert_allclose(
        out[7], np.exp(ttnn.to_torch(other, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0)).numpy()[7]), rtol=2e-6
    )


def test_a_sharded_write_leaves_no_equal_rows_mark(open_mesh, rng):
    mesh = open_mesh((1, 2))
    same = np.ones((2, 32, 32), np.float32)  # equal halves, but two host arrays: not marked
    x = ttnn.from_torch(
        torch.from_numpy(same), ttnn.float32, layout=ttnn.TILE_LAYOUT, device=mesh,
        mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0),
    )  # fmt: skip
    assert x.storage.mesh_buffer.memo is not EQUAL_ROWS


def test_a_small_first_input_with_a_large_replicated_second_runs_once(open_mesh, rng, kernel_rows):
    """The rule looks at the largest input or output: embedding's ids are a few bytes, its table
    is large and replicated, so one device's rows are computed (and copied: the same bytes)."""
    mesh = open_mesh((2, 4))
    table = replicated(mesh, rng.standard_normal((256, 128)).astype(np.float32))
    ids = ttnn.from_torch(
        torch.from_numpy(rng.integers(0, 256, (1, 32)).astype(np.int32)), ttnn.uint32, device=mesh,
        mesh_mapper=ttnn.ReplicateTensorToMesh(mesh),
    )  # fmt: skip
    out = ttnn.embedding(ids, table)
    assert kernel_rows == [1]
    rows = device_bytes(out)
    assert all(np.array_equal(rows[0], row) for row in rows[1:])
