"""``ttnn.experimental.llama_all_gather_matmul_async`` on a 2x4 mesh: input_tensor0 gathered along
dim 3 over a cluster axis into the caller's intermediate tensor (in place: same object, same
address, its bytes the gathered ones), then multiplied by input_tensor1.  The product is compared
bit for bit with ``ttnn.all_gather`` + ``ttnn.matmul`` of the same configs, and with the float64
product within the bound of the bfloat16 output (float32 dot products of K terms: gamma_K sum|a||b|;
the rounding to bfloat16: 2^-8 relative); the op is one program in the cache, as in ttnn.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import meshnn as ttnn

from .reference import BF16, Approx, a_matmul, assert_within, mesh_fixtures, output_bound

meshes, mesh = mesh_fixtures([(2, 4)])
HIFI4 = ttnn.WormholeComputeKernelConfig(math_fidelity=ttnn.MathFidelity.HiFi4, fp32_dest_acc_en=True)


def put(mesh, values):
    """``values`` of shape (2, 4, ...) with device (r, c) holding ``values[r, c]``."""
    mapper = ttnn.ShardTensor2dMesh(mesh, dims=(0, 1), mesh_shape=(2, 4))
    return ttnn.from_torch(torch.from_numpy(values), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh,
                           mesh_mapper=mapper)  # fmt: skip


def per_device(tensor):
    return np.stack([ttnn.to_torch(t).float().numpy().astype(np.float64) for t in ttnn.get_device_tensors(tensor)])


def bf16(values):
    return torch.from_numpy(values).bfloat16().float().numpy()


def sems(mesh):
    grid = mesh.compute_with_storage_grid_size()
    cores = ttnn.CoreRangeSet([ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(grid.x - 1, grid.y - 1))])
    return ttnn.create_global_semaphore(mesh, cores, 0)


@pytest.mark.parametrize("cluster_axis", [1, 0])
def test_the_product_of_the_gathered_rows(mesh, cluster_axis):
    rng = np.random.default_rng(3584)
    n = mesh.shape[cluster_axis]
    x = bf16(rng.standard_normal((2, 4, 32, 64)).astype(np.float32))
    w = bf16(rng.standard_normal((2, 4, 64 * n, 96)).astype(np.float32))
    a, b = put(mesh, x), put(mesh, w)
    middle = put(mesh, np.zeros((2, 4, 32, 64 * n), np.float32))
    address = middle.buffer_address()
    mesh.clear_program_cache()
    out = ttnn.experimental.llama_all_gather_matmul_async(
        a, b, middle, dim=3, cluster_axis=cluster_axis, mesh_device=mesh, topology=ttnn.Topology.Linear,
        multi_device_global_semaphore=sems(mesh), num_links=1, compute_kernel_config=HIFI4,
    )  # fmt: skip
    assert mesh.num_program_cache_entries() == 1
    gathered = ttnn.all_gather(a, 3, cluster_axis=cluster_axis)
    assert middle.buffer_address() == address
    np.testing.assert_array_equal(per_device(middle), per_device(gathered))
    unfused = ttnn.matmul(gathered, b, compute_kernel_config=HIFI4)
    np.testing.assert_array_equal(per_device(out), per_device(unfused))
    got = per_device(out).reshape(2, 4, 32, 96)
    for r in range(2):
        for c in range(4):
            members = [x[r, j] for j in range(4)] if cluster_axis == 1 else [x[i, c] for i in range(2)]
            product = a_matmul(Approx.exact(np.concatenate(members, axis=-1)), Approx.exact(w[r, c]))
            assert_within(got[r, c], product.ref, output_bound(product.ref, product.err, BF16), f"device {r, c}")


def test_its_arguments_are_checked(mesh):
    x, w = np.zeros((2, 4, 32, 64), np.float32), np.zeros((2, 4, 256, 96), np.float32)
    a, b, middle = put(mesh, x), put(mesh, w), put(mesh, np.zeros((2, 4, 32, 256), np.float32))
    call = ttnn.experimental.llama_all_gather_matmul_async
    with pytest.raises(ttnn.MeshnnValueError, match="intermediate_tensor"):
        call(a, b, a, 3, 1, mesh, ttnn.Topology.Linear, sems(mesh))  # not the gathered shape
    with pytest.raises(ttnn.MeshnnValueError, match="inner dimensions"):
        call(a, a, middle, 3, 1, mesh, ttnn.Topology.Linear, sems(mesh))
    with pytest.raises(ttnn.MeshnnValueError, match="multi_device_global_semaphore"):
        call(a, b, middle, 3, 1, mesh, ttnn.Topology.Linear, [sems(mesh)] * 2)
    with pytest.raises(ttnn.MeshnnTypeError, match="cluster_axis"):
        call(a, b, middle, 3, None, mesh, ttnn.Topology.Linear, sems(mesh))
