"""ttnn's TensorTopology readers are methods (``topology.placements()``); meshnn's topology answers
them as calls and as attributes alike, with the same values."""

from __future__ import annotations

import pickle

import torch

import meshnn as ttnn


def test_tensor_topology_readers_are_calls_and_attributes():
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(2, 4))
    try:
        mapper = ttnn.ShardTensor2dMesh(mesh, dims=(2, 3), mesh_shape=(2, 4))
        tensor = ttnn.from_torch(torch.zeros(1, 1, 64, 256), mesh_mapper=mapper, device=mesh)
        topology = tensor.tensor_topology()
        assert topology.distribution_shape() == ttnn.MeshShape(2, 4) == topology.distribution_shape
        assert list(topology.placements()) == [ttnn.PlacementShard(2), ttnn.PlacementShard(3)]
        assert topology.placements() is topology.placements
        assert topology.mesh_coords()[5] == ttnn.MeshCoordinate(1, 1) and len(topology.mesh_coords()) == 8
        again = ttnn.TensorTopology(topology.distribution_shape(), topology.placements(), topology.mesh_coords())
        assert again == topology
        assert (again != topology) is False
        assert pickle.loads(pickle.dumps(topology)) == topology
        replicated = ttnn.from_torch(torch.zeros(1, 32), mesh_mapper=ttnn.ReplicateTensorToMesh(mesh), device=mesh)
        assert replicated.tensor_topology() != topology
        assert all(p == ttnn.PlacementReplicate() for p in replicated.tensor_topology().placements())
    finally:
        ttnn.close_mesh_device(mesh)
