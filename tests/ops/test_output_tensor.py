"""Element-wise ops write into a preallocated ``output_tensor`` and run on the chosen ``queue_id``."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import meshnn as ttnn


def on(mesh, values, dtype=ttnn.float32):
    return ttnn.from_torch(
        torch.from_numpy(values),
        dtype,
        layout=ttnn.TILE_LAYOUT,
        device=mesh,
        mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0),
    )


def read(tensor, mesh):
    return ttnn.to_numpy(tensor, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0))


def test_binary_writes_into_output_tensor_and_allocates_nothing(open_mesh, rng):
    mesh = open_mesh((2, 4))
    x, y = (rng.standard_normal((8, 32, 64)).astype(np.float32) for _ in range(2))
    a, b = on(mesh, x), on(mesh, y)
    out = ttnn.allocate_tensor_on_device(a.spec, mesh)
    address, live = out.buffer_address(), len(mesh.live_buffers())
    result = ttnn.add(a, b, output_tensor=out)
    assert result is out and out.buffer_address() == address
    assert len(mesh.live_buffers()) == live, "the op allocated an output of its own"
    np.testing.assert_array_equal(read(out, mesh), x + y)  # float32 add is exact to float32 rounding


def test_unary_in_place_and_scalar_operand(open_mesh, rng):
    mesh = open_mesh((1, 2))
    x = rng.standard_normal((2, 32, 32)).astype(np.float32)
    a = on(mesh, x)
    assert ttnn.relu(a, output_tensor=a) is a
    np.testing.assert_array_equal(read(a, mesh), np.maximum(x, 0))
    ttnn.multiply(a, 2.0, output_tensor=a)
    np.testing.assert_array_equal(read(a, mesh), np.maximum(x, 0) * 2)


def test_output_tensor_dtype_is_the_outputs(open_mesh, rng):
    mesh = open_mesh((1, 2))
    x = rng.standard_normal((2, 32, 32)).astype(np.float32)
    a = on(mesh, x)
    out = on(mesh, np.zeros_like(x), ttnn.bfloat16)
    ttnn.add(a, a, output_tensor=out)
    assert out.dtype is ttnn.bfloat16
    expected = ttnn.to_numpy(on(mesh, 2 * x, ttnn.bfloat16), mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0))
    np.testing.assert_array_equal(read(out, mesh), expected)


def _inline_spy(queue, mark, seen):
    """``queue.run_if_idle`` noting ``mark`` in ``seen`` when it runs the work (an op on an idle
    queue runs there, without a workload)."""
    original = queue.run_if_idle

    def spy(work):
        ran = original(work)
        if ran:
            seen.append(mark)
        return ran

    return spy


@pytest.mark.parametrize("queue_id", [0, 1])
def test_queue_id_runs_the_op_on_that_queue(open_mesh, rng, monkeypatch, queue_id):
    mesh = open_mesh((2, 4), num_command_queues=2)
    x = rng.standard_normal((8, 32, 32)).astype(np.float32)
    a = on(mesh, x)
    ttnn.synchronize_device(mesh)
    seen = []
    for cq in (0, 1):
        queue = mesh.mesh_command_queue(cq)
        original = queue.enqueue_mesh_workload

        def spy(workload, blocking=False, cq=cq, original=original):
            seen.append(cq)
            return original(workload, blocking)

        monkeypatch.setattr(queue, "enqueue_mesh_workload", spy)
        monkeypatch.setattr(queue, "run_if_idle", _inline_spy(queue, cq, seen))
    result = ttnn.exp(a, queue_id=queue_id)
    ttnn.synchronize_device(mesh, cq_id=queue_id)
    assert seen == [queue_id]
    np.testing.assert_allclose(read(result, mesh), np.exp(x), rtol=2e-6)
    with pytest.raises(ttnn.MeshnnValueError, match="queue_id 2"):
        ttnn.exp(a, queue_id=2)


@pytest.mark.parametrize("op", ["matmul", "linear"])
def test_matmul_writes_into_optional_output_tensor_on_its_queue(open_mesh, rng, monkeypatch, op):
    mesh = open_mesh((2, 4), num_command_queues=2)
    x, w = rng.standard_normal((8, 32, 64)).astype(np.float32), rng.standard_normal((64, 32)).astype(np.float32)
    a = on(mesh, x)
    b = ttnn.from_torch(torch.from_numpy(w), ttnn.float32, layout=ttnn.TILE_LAYOUT, device=mesh)
    out = ttnn.allocate_tensor_on_device(ttnn.TensorSpec((1, 32, 32), ttnn.float32, ttnn.TILE_LAYOUT), mesh)
    address, live = out.buffer_address(), len(mesh.live_buffers())
    queue = mesh.mesh_command_queue(1)
    seen = []
    original = queue.enqueue_mesh_workload
    monkeypatch.setattr(
        queue, "enqueue_mesh_workload", lambda w, blocking=False: (seen.append(1), original(w, blocking))
    )
    monkeypatch.setattr(queue, "run_if_idle", _inline_spy(queue, 1, seen))
    result = getattr(ttnn, op)(a, b, optional_output_tensor=out, queue_id=1)
    ttnn.synchronize_device(mesh, cq_id=1)
    assert result is out and out.buffer_address() == address and seen == [1]
    assert len(mesh.live_buffers()) == live, "the op allocated an output of its own"
    np.testing.assert_allclose(read(out, mesh), x @ w, rtol=1e-5, atol=1e-4)
    wrong = ttnn.allocate_tensor_on_device(ttnn.TensorSpec((1, 32, 64), ttnn.float32, ttnn.TILE_LAYOUT), mesh)
    with pytest.raises(ttnn.MeshnnValueError, match="output_tensor"):
        getattr(ttnn, op)(a, b, optional_output_tensor=wrong)
    with pytest.raises(ttnn.MeshnnValueError, match="queue_id 2"):
        getattr(ttnn, op)(a, b, queue_id=2)
