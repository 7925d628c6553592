"""A collective with no cluster_axis on a tensor that lives on part of the mesh gathers over the
tensor's devices (meshnn.ops.costs.collective_config keeps their count, meshnn.perf.collectives.group_size
uses it), not over the whole mesh."""

from __future__ import annotations

import torch

import meshnn as ttnn
from meshnn.perf import CollectiveConfig, OpDesc, OpFamily, predict
from meshnn.perf.collectives import group_size
from meshnn.perf.desc import TensorDesc
from meshnn.perf.systems import machine


def test_group_size_takes_the_devices_it_runs_on():
    part, whole = TensorDesc((1, 1, 32, 2112)), TensorDesc((1, 8, 32, 2112))
    m = machine("galaxy", (8, 4))
    on_eight = OpDesc(OpFamily.ALL_GATHER, (part,), (whole,), collective=CollectiveConfig(devices=8))
    on_all = OpDesc(OpFamily.ALL_GATHER, (part,), (whole,), collective=CollectiveConfig())
    assert (group_size(on_eight, m), group_size(on_all, m)) == (8, 32)
    assert predict(on_eight, m).fixed_ns < predict(on_all, m).fixed_ns


def test_a_gather_of_a_tensor_on_eight_of_32_devices_is_timed_over_eight():
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(8, 4), system="galaxy")
    try:
        mapper = ttnn.create_mesh_mapper(
            mesh, ttnn.MeshMapperConfig([ttnn.PlacementReplicate(), ttnn.PlacementShard(1)], ttnn.MeshShape(1, 8))
        )
        x = ttnn.from_torch(torch.rand(1, 8, 32, 64), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh,
                            mesh_mapper=mapper)  # fmt: skip
        cores = ttnn.CoreRangeSet({ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(7, 7))})
        sems = [ttnn.create_global_semaphore(mesh, cores, 0) for _ in range(2)]
        with ttnn.perf_capture() as capture:
            ttnn.experimental.all_gather_async(x, 1, multi_device_global_semaphore=sems, num_links=1)
        record = capture.recorders[0].records[-1]
        assert record.desc.collective.devices == 8
        assert record.prediction.kernel_ns > 0
        assert any("8 devices" in note for note in record.prediction.notes)
    finally:
        ttnn.close_mesh_device(mesh)
