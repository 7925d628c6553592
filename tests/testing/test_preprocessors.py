"""ttnn.model_preprocessing's single-parameter preprocessors (the names model code imports on their own):
a Linear's weight transposed and its bias as one row, a norm's parameter as one row, an embedding's table
as it is; each in the dtype and layout asked, on the host, a mesh mapper honoured."""

from __future__ import annotations

import pytest

import meshnn as ttnn
from meshnn.testing.model_preprocessing import (
    preprocess_embedding_weight,
    preprocess_layernorm_parameter,
    preprocess_linear_bias,
    preprocess_linear_weight,
)

torch = pytest.importorskip("torch")


def test_norm_parameter_is_one_row_in_the_layout_asked():
    gamma = torch.randn(96)
    t = preprocess_layernorm_parameter(gamma, dtype=ttnn.bfloat16)
    assert tuple(t.shape) == (1, 96) and t.layout == ttnn.TILE_LAYOUT and t.dtype == ttnn.bfloat16
    assert not ttnn.is_tensor_storage_on_device(t)
    assert torch.equal(ttnn.to_torch(t), gamma.bfloat16().reshape(1, 96))
    rm = preprocess_layernorm_parameter(gamma, dtype=ttnn.float32, layout=ttnn.ROW_MAJOR_LAYOUT)
    assert rm.layout == ttnn.ROW_MAJOR_LAYOUT and torch.equal(ttnn.to_torch(rm), gamma.reshape(1, 96))


def test_embedding_table_is_kept_row_major():
    table = torch.randn(10, 64)
    t = preprocess_embedding_weight(table, dtype=ttnn.bfloat16)
    assert tuple(t.shape) == (10, 64) and t.layout == ttnn.ROW_MAJOR_LAYOUT
    assert torch.equal(ttnn.to_torch(t), table.bfloat16())


def test_linear_weight_and_bias_take_layout_and_a_mesh_mapper(open_mesh):
    mesh = open_mesh((1, 2))
    weight, bias = torch.randn(64, 32), torch.randn(64)
    w = preprocess_linear_weight(weight, dtype=ttnn.bfloat16, weights_mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=1))
    assert tuple(w.shape) == (32, 32) and w.layout == ttnn.TILE_LAYOUT  # each device's half of (in, out)
    whole = ttnn.to_torch(w, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=1))
    assert torch.equal(whole, weight.T.bfloat16())
    b = preprocess_linear_bias(bias, dtype=ttnn.float32, layout=ttnn.ROW_MAJOR_LAYOUT)
    assert tuple(b.shape) == (1, 64) and torch.equal(ttnn.to_torch(b), bias.reshape(1, 64))
