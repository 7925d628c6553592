"""ttnn's keyword arguments on the public functions (meshnn.mesh.op_keywords): a hardware-only
keyword is checked and reaches the launched op's attrs by ttnn's name; an unknown keyword is refused
before anything runs; the keywords with a meaning meshnn models (a preallocated all_gather /
reduce_scatter output, reshape's memory_config, embedding's padding_idx, tilize_with_zero_padding's
output_dtype) do what they say.  Exact formats, so results compare by equality.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest
import torch

import meshnn as ttnn
from meshnn.mesh.op_keywords import Keyword, recorded, ttnn_keywords
from meshnn.testing.model_preprocessing import preprocess_model_parameters

GRID = ttnn.CoreRangeSet([ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(1, 1))])


@pytest.fixture
def mesh(open_mesh):
    return open_mesh((1, 2))


def put(mesh, values, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, shard=True):
    mapper = ttnn.ShardTensorToMesh(mesh, dim=0) if shard else ttnn.ReplicateTensorToMesh(mesh)
    return ttnn.from_torch(torch.from_numpy(values), dtype=dtype, layout=layout, device=mesh, mesh_mapper=mapper)


def values(tensor, mesh):
    return ttnn.to_torch(tensor, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0)).float().numpy()


def test_hardware_keywords_reach_the_ops_attrs_by_ttnns_names(mesh, recorder, rng):
    x = put(mesh, rng.standard_normal((2, 1, 32, 64)).astype(np.float32))
    kernel = ttnn.WormholeComputeKernelConfig(math_fidelity=ttnn.MathFidelity.HiFi4)
    plain = values(ttnn.sum(x, 3), mesh)
    tuned = values(ttnn.sum(x, 3, sub_core_grids=GRID, compute_kernel_config=kernel), mesh)
    ttnn.all_gather(x, 3, num_workers_per_link=2, chunks_per_sync=4)
    ttnn.tilize(ttnn.to_layout(x, ttnn.ROW_MAJOR_LAYOUT), use_multicore=False)
    ttnn.exp(x, fast_and_approximate_mode=True)
    first, second, gather, _, tilize, exp = recorder.ops
    assert "sub_core_grids" not in first.attrs  # only what the caller gave is recorded
    assert second.attrs["sub_core_grids"] == GRID and second.attrs["compute_kernel_config"] == kernel
    assert gather.op == "all_gather" and gather.attrs["num_workers_per_link"] == 2
    assert gather.attrs["chunks_per_sync"] == 4
    assert tilize.op == "tilize" and tilize.attrs["use_multicore"] is False
    assert exp.attrs["fast_and_approximate_mode"] is True
    np.testing.assert_array_equal(tuned, plain)  # a hardware keyword changes no value
    assert recorded() == {}  # nothing lingers after the calls


def test_an_outer_calls_keywords_reach_the_ops_it_launches_inside(mesh, recorder, rng):
    """ttnn.to_layout of a device tensor runs the ops layer's to_layout: the op it launches still
    carries the public call's sub_core_grids."""
    x = put(mesh, rng.standard_normal((2, 1, 32, 64)).astype(np.float32))
    ttnn.to_layout(x, ttnn.ROW_MAJOR_LAYOUT, sub_core_grids=GRID)
    (event,) = recorder.ops
    assert event.op == "to_layout" and event.attrs["sub_core_grids"] == GRID


def test_an_unknown_keyword_is_refused_before_any_op_begins(mesh, recorder, rng):
    x = put(mesh, rng.standard_normal((2, 1, 32, 64)).astype(np.float32))
    live = mesh.get_memory_view(ttnn.BufferType.DRAM).total_bytes_allocated_per_bank
    with pytest.raises(ttnn.MeshnnTypeError, match=r"ttnn\.sum\(\).*'memroy_config'.*did you mean 'memory_config'"):
        ttnn.sum(x, 3, memroy_config=ttnn.L1_MEMORY_CONFIG)
    with pytest.raises(TypeError, match=r"ttnn\.gelu\(\).*'beta'"):
        ttnn.gelu(x, beta=2.0)  # softplus's parameter, not gelu's
    with pytest.raises(ttnn.MeshnnTypeError, match=r"sub_core_grids must be a ttnn\.CoreRangeSet"):
        ttnn.add(x, x, sub_core_grids="all cores")
    assert recorder.ops == [] and mesh.get_memory_view(ttnn.BufferType.DRAM).total_bytes_allocated_per_bank == live


def test_signatures_show_ttnns_keywords_with_ttnns_defaults():
    sum_params = inspect.signature(ttnn.sum).parameters
    assert [p for p in sum_params][:3] == ["input_tensor", "dim", "keepdim"]
    assert sum_params["scalar"].default == 1.0 and sum_params["sub_core_grids"].default is None
    assert sum_params["sub_core_grids"].kind is inspect.Parameter.KEYWORD_ONLY
    gelu_params = inspect.signature(ttnn.gelu).parameters
    assert "fast_and_approximate_mode" in gelu_params
    assert all(p.kind is not inspect.Parameter.VAR_KEYWORD for p in gelu_params.values())
    assert inspect.signature(ttnn.all_gather).parameters["use_l1_small_for_semaphores"].default is False


def test_all_gather_and_reduce_scatter_write_into_output_tensor(mesh, rng):
    x = put(mesh, rng.standard_normal((2, 1, 32, 64)).astype(np.float32))
    fresh = ttnn.all_gather(x, 3)
    out = ttnn.allocate_tensor_on_device(fresh.spec, mesh)
    result = ttnn.all_gather(x, 3, output_tensor=out)
    assert result.buffer_address() == out.buffer_address()
    np.testing.assert_array_equal(values(result, mesh), values(fresh, mesh))
    scattered = ttnn.reduce_scatter(x, 3)
    out = ttnn.allocate_tensor_on_device(scattered.spec, mesh)
    result = ttnn.reduce_scatter(x, 3, output_tensor=out)
    assert result.buffer_address() == out.buffer_address()
    np.testing.assert_array_equal(values(result, mesh), values(scattered, mesh))
    with pytest.raises(ttnn.MeshnnValueError, match="output_tensor"):
        ttnn.all_gather(x, 3, output_tensor=x)  # the input's shape, not the gathered one


def test_reshape_moves_a_device_result_to_its_memory_config(mesh, rng):
    x = put(mesh, rng.standard_normal((2, 1, 32, 64)).astype(np.float32))
    moved = ttnn.reshape(x, (1, 32, 64), memory_config=ttnn.L1_MEMORY_CONFIG)
    assert moved.memory_config() == ttnn.L1_MEMORY_CONFIG and x.memory_config() == ttnn.DRAM_MEMORY_CONFIG
    np.testing.assert_array_equal(values(moved, mesh).reshape(2, 1, 32, 64), values(x, mesh))


def test_embedding_padding_idx_is_pad_token(mesh, rng):
    raw = rng.integers(0, 16, (2, 8)).astype(np.uint32)
    raw[0, 0] = 3  # one id is the padding one
    ids = put(mesh, raw, ttnn.uint32, ttnn.ROW_MAJOR_LAYOUT)
    table = put(mesh, rng.standard_normal((16, 32)).astype(np.float32), shard=False)
    by_idx = values(ttnn.embedding(ids, table, padding_idx=3), mesh)
    by_token = values(ttnn.embedding(ids, table, pad_token=3), mesh)
    np.testing.assert_array_equal(by_idx, by_token)
    assert not by_idx[0, 0].any() and values(ttnn.embedding(ids, table), mesh)[0, 0].any()  # its row is zeros
    with pytest.raises(ttnn.MeshnnValueError, match="padding_idx"):
        ttnn.embedding(ids, table, pad_token=1, padding_idx=3)


def test_tilize_with_zero_padding_takes_output_dtype(mesh, rng):
    x = put(mesh, rng.standard_normal((2, 1, 30, 60)).astype(np.float32), layout=ttnn.ROW_MAJOR_LAYOUT)
    assert ttnn.tilize_with_zero_padding(x, output_dtype=ttnn.bfloat8_b).dtype == ttnn.bfloat8_b
    with pytest.raises(ttnn.MeshnnValueError, match="output_dtype"):
        ttnn.tilize_with_zero_padding(x, dtype=ttnn.float32, output_dtype=ttnn.bfloat8_b)


def test_preprocess_model_parameters_refuses_an_unknown_keyword():
    with pytest.raises(ttnn.MeshnnTypeError, match="initialise_model"):
        preprocess_model_parameters(initialise_model=lambda: torch.nn.Linear(2, 2))
    params = preprocess_model_parameters(initialize_model=lambda: torch.nn.Linear(2, 2), version="v1")
    assert "weight" in params


def test_a_declaration_that_does_not_fit_its_function_fails_at_import():
    with pytest.raises(TypeError, match="ttnn_keywords"):
        ttnn_keywords(memory_config=Keyword())(lambda input_tensor, *, memory_config=None: None)
    with pytest.raises(TypeError, match="ttnn_keywords"):
        ttnn_keywords(records=("use_multicore",))(lambda input_tensor: None)
