"""Inputs that populate nested sets of devices: ttnn runs a device operation on the smallest of
its inputs' coordinate sets (``extract_tensor_coordinates``); meshnn's ops run on the first
input's devices, so a later input may populate more of the mesh (DeepSeek's MLA test puts its
query on a 1x8 row of a 4x8 Galaxy and its rotary tables on all 32), never fewer (refused, naming
the devices it lacks, before anything is allocated).  Exact values: ones plus twos in bfloat16."""

from __future__ import annotations

import pytest
import torch

import meshnn as ttnn


def test_a_later_input_on_more_devices_runs_on_the_first_inputs_devices(open_mesh):
    mesh = open_mesh((2, 4))
    row = ttnn.MeshMapperConfig([ttnn.PlacementReplicate(), ttnn.PlacementReplicate()], ttnn.MeshShape(1, 4))
    a = ttnn.from_torch(torch.ones(32, 64), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh,
                        mesh_mapper=ttnn.create_mesh_mapper(mesh, row))  # fmt: skip
    b = ttnn.from_torch(torch.full((32, 64), 2.0), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh,
                        mesh_mapper=ttnn.ReplicateTensorToMesh(mesh))  # fmt: skip
    out = ttnn.add(a, b)
    parts = ttnn.get_device_tensors(out)
    assert [str(c) for c in out.storage.coords] == [str(c) for c in a.storage.coords]
    assert len(parts) == 4 and all(torch.equal(ttnn.to_torch(p).float(), torch.full((32, 64), 3.0)) for p in parts)
    view = ttnn.get_memory_view(mesh, ttnn.BufferType.DRAM)
    with pytest.raises(ttnn.MeshnnValueError, match=r"input_tensor_b populates 4 devices and input_tensor_a 8 \("):
        ttnn.add(b, a)
    assert ttnn.get_memory_view(mesh, ttnn.BufferType.DRAM) == view
