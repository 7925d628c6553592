"""``ttnn._ttnn.tensor.dump_tensor_flatbuffer`` / ``load_tensor_flatbuffer``: the binary calls under
``dump_tensor`` / ``load_tensor`` (tt-metal's ``LazyWeight`` cache calls the first directly): the
same file, any name, a ``str`` name only."""

from __future__ import annotations

import pytest
import torch

import meshnn as ttnn


def test_a_tensor_round_trips_under_any_name(tmp_path, open_mesh):
    mesh = open_mesh((1, 2))
    values = torch.arange(64.0).reshape(2, 32)
    tensor = ttnn.from_torch(values, dtype=ttnn.float32, mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0))
    name = str(tmp_path / "weight.cache")  # no .tensorbin: the binary call has no name rule
    ttnn._ttnn.tensor.dump_tensor_flatbuffer(name, tensor)
    back = ttnn._ttnn.tensor.load_tensor_flatbuffer(name, mesh)
    assert back.storage_type() == ttnn.StorageType.DEVICE
    assert torch.equal(ttnn.to_torch(back, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0)), values)
    with pytest.raises(ttnn.TensorFileError, match=r"\.tensorbin"):  # ttnn.load_tensor keeps its name rule
        ttnn.load_tensor(name)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda t, d: ttnn._ttnn.tensor.dump_tensor_flatbuffer(d / "x.bin", t), "file_name must be a str"),
        (lambda t, d: ttnn._ttnn.tensor.dump_tensor_flatbuffer(str(d / "x.bin"), t, 0), "mode must be"),
        (lambda t, d: ttnn._ttnn.tensor.load_tensor_flatbuffer(str(d / "x.bin"), "dev"), "device must be"),
    ],
)
def test_what_the_binding_cannot_take_is_refused_before_any_file_is_touched(tmp_path, call, match):
    tensor = ttnn.from_torch(torch.ones(2, 2))
    with pytest.raises(ttnn.MeshnnTypeError, match=match):
        call(tensor, tmp_path)
    assert not list(tmp_path.iterdir())
