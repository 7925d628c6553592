"""tests/golden/mesh_mapping.json through the ttnn-named API: shard shapes, populated coordinates,
topologies, raw shard bytes, and the failing calls failing with ttnn's message."""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest
import torch

import meshnn as ttnn

GOLDEN = pathlib.Path(__file__).parents[1] / "golden"
CASES = json.loads((GOLDEN / "mesh_mapping.json").read_text())["part_a"]
ARRAYS = np.load(GOLDEN / "mesh_mapping.npz")


def placement(text: str):
    if text == "Replicate":
        return ttnn.PlacementReplicate()
    return ttnn.PlacementShard(int(text[len("Shard(") : -1]))


def run_case(case: dict) -> ttnn.Tensor:
    array = np.arange(np.prod(case["input_shape"]), dtype=np.float32).reshape(case["input_shape"])
    override = case["mesh_shape_override"]
    offset = case["mesh_offset_override"]
    config = ttnn.MeshMapperConfig(
        [placement(p) for p in case["placements"]],
        None if override is None else ttnn.MeshShape(override),
        None if offset is None else ttnn.MeshCoordinate(offset),
    )
    mapper = ttnn.create_mesh_mapper(ttnn.MeshShape(case["mesh_shape"]), config)
    dtype = getattr(ttnn.DataType, case["dtype"].split(".")[1])
    layout = getattr(ttnn.Layout, case["layout"].split(".")[1])
    if case["via"] == "from_torch":
        return ttnn.from_torch(torch.from_numpy(array), dtype=dtype, layout=layout, mesh_mapper=mapper)
    if case["via"] == "distribute_tensor":
        return ttnn.distribute_tensor(ttnn.Tensor(array, dtype, layout=layout), mapper)
    return ttnn.Tensor(array, dtype, layout=layout, mesh_mapper=mapper)


@pytest.mark.parametrize("case", CASES["cases"], ids=lambda c: f"c{c['case']}:{c['name']}")
def test_mapper_case(case):
    if case["result"] != "ok":
        message = case["result"].split("info: | ", 1)[1]
        with pytest.raises(ttnn.MeshnnError) as failure:
            run_case(case)
        assert str(failure.value) == message
        assert isinstance(failure.value, RuntimeError | ValueError)
        return
    tensor = run_case(case)
    assert list(tensor.shape) == case["shape"] and list(tensor.padded_shape) == case["padded_shape"]
    assert tensor.storage_type() is ttnn.StorageType.HOST
    host = tensor.host_buffer()
    assert list(host.shape()) == case["host_buffer_mesh_shape"]
    assert repr(tensor.tensor_topology()) == case["topology"]
    for record in case["host_buffer_shards"]:
        coord = ttnn.MeshCoordinate(record["coord"])
        shard = host.get_shard(coord)
        assert host.is_local(coord) is record["is_local"]
        assert (shard is not None) is record["populated"]
        if shard is not None:
            assert shard.nbytes == record["nbytes"]
            r, c = (record["coord"] + [0])[:2]
            expected = ARRAYS[f"c{case['case']}_shard_{r}_{c}"]
            assert np.array_equal(np.asarray(shard), expected), coord
            assert np.array_equal(np.from_dlpack(shard), expected)
    shards = ttnn.get_device_tensors(tensor)
    assert len(shards) == len(case["get_device_tensors"])
    for shard, record in zip(shards, case["get_device_tensors"], strict=True):
        assert str(shard.dtype) == record["dtype"] and str(shard.layout) == record["layout"]
        assert list(shard.shape) == record["shape"] and list(shard.padded_shape) == record["padded_shape"]


def test_from_host_shards():
    record = CASES["from_host_shards"]
    shards = [ttnn.Tensor(np.full((2, 3), i, dtype=np.float32), ttnn.float32) for i in range(4)]
    tensor = ttnn.from_host_shards(shards, ttnn.MeshShape(1, 4))
    assert list(tensor.shape) == record["shape"] and repr(tensor.tensor_topology()) == record["topology"]
    assert list(tensor.host_buffer().shape()) == record["host_buffer_mesh_shape"]
    for c in range(4):
        got = np.asarray(tensor.host_buffer().get_shard(ttnn.MeshCoordinate(0, c)))
        assert np.array_equal(got, ARRAYS[f"from_host_shards_shard_0_{c}"])
    unequal = [ttnn.Tensor(np.zeros((n, 3), np.float32), ttnn.float32) for n in range(2, 6)]
    expected = CASES["calls"]["from_host_shards with unequal shard shapes (2..5,3)"].split("info: | ")[1]
    with pytest.raises(ttnn.MeshnnError, match=expected):
        ttnn.from_host_shards(unequal, ttnn.MeshShape(1, 4))


@pytest.mark.parametrize("key", sorted(CASES["compute_distribution_to_mesh_mapping"]))
def test_compute_distribution_to_mesh_mapping(key):
    dist, mesh = key.split(" in ")
    coords = ttnn.compute_distribution_to_mesh_mapping(ttnn.MeshShape(eval(dist)), ttnn.MeshShape(eval(mesh)))
    assert [repr(c) for c in coords] == CASES["compute_distribution_to_mesh_mapping"][key]
