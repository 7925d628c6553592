"""ttnn.model_preprocessing.preprocess_model_parameters walks a torch model as ttnn's
``convert_torch_model_to_ttnn_model`` does: a ModuleList as a ParameterList, a Sequential's children by
int key, layers ttnn's default preprocessor does not know (Conv2d, BatchNorm2d) as host ROW_MAJOR
tensors of their own parameters, children without parameters left out, the model put in eval mode,
and with ``device=`` every ttnn tensor moved to the device, a custom preprocessor's too."""

from __future__ import annotations

import pytest

import meshnn as ttnn
from meshnn.testing.model_preprocessing import ParameterDict, ParameterList, preprocess_model_parameters

torch = pytest.importorskip("torch")


class _Model(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.seq = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Conv2d(2, 3, 1))
        self.blocks = torch.nn.ModuleList([torch.nn.LayerNorm(8), torch.nn.Embedding(5, 4)])
        self.bn = torch.nn.BatchNorm2d(3)
        self.drop = torch.nn.Dropout()


def test_the_tree_has_ttnn_keys_and_kinds():
    model = _Model()
    parameters = preprocess_model_parameters(initialize_model=lambda: model)
    assert not model.training  # ttnn puts the model in eval mode
    assert set(parameters) == {"seq", "blocks", "bn"}  # the Dropout has nothing: left out
    assert set(parameters.seq) == {0, 2} and isinstance(parameters.seq, ParameterDict)  # int keys, no ReLU
    assert isinstance(parameters.blocks, ParameterList) and len(parameters.blocks) == 2
    assert 1 in parameters.blocks and 2 not in parameters.blocks
    conv = parameters.seq[2].weight  # a Conv2d: its own parameter, host ROW_MAJOR bfloat16, shape kept
    assert conv.layout == ttnn.ROW_MAJOR_LAYOUT and conv.dtype == ttnn.bfloat16 and tuple(conv.shape) == (3, 2, 1, 1)
    assert torch.equal(ttnn.to_torch(conv), model.seq[2].weight.detach().bfloat16())
    assert tuple(parameters.seq[0].weight.shape) == (4, 8) and parameters.seq[0].weight.layout == ttnn.TILE_LAYOUT
    assert set(parameters.bn) == {"weight", "bias"}  # parameters only: running statistics are buffers
    assert tuple(parameters.blocks[0].bias.shape) == (1, 8) and tuple(parameters.blocks[1].weight.shape) == (5, 4)


def test_unconverted_layers_keep_torch_tensors():
    model = torch.nn.Sequential(torch.nn.Linear(4, 6), torch.nn.Conv2d(1, 2, 1))
    parameters = preprocess_model_parameters(initialize_model=lambda: model, convert_to_ttnn=lambda m, name: False)
    assert isinstance(parameters[0].weight, torch.Tensor) and tuple(parameters[0].weight.shape) == (4, 6)
    assert parameters[1].weight is model[1].weight


def test_device_moves_every_tensor_a_custom_preprocessor_made_too(open_mesh):
    device = open_mesh((1, 1))
    on_device = ttnn.from_torch(torch.ones(1, 32), layout=ttnn.TILE_LAYOUT, device=device)

    def custom(model, name):
        if isinstance(model, torch.nn.Linear):
            weight = ttnn.from_torch(model.weight.T.contiguous(), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
            return {"weight": weight, "flag": True, "kept": on_device, "nested": {"w": weight}}
        return {}

    model = torch.nn.Sequential(torch.nn.Linear(32, 32), torch.nn.Conv2d(1, 2, 1))
    parameters = preprocess_model_parameters(initialize_model=lambda: model, custom_preprocessor=custom, device=device)
    assert ttnn.is_tensor_storage_on_device(parameters[0].weight) and parameters[0].flag is True
    assert ttnn.is_tensor_storage_on_device(parameters[0].nested.w) and parameters[0].kept is on_device
    assert ttnn.is_tensor_storage_on_device(parameters[1].weight)  # the default conversion's too
    x = ttnn.from_torch(torch.randn(1, 32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    out = ttnn.to_torch(ttnn.linear(x, parameters[0].weight))  # a host weight would be refused
    assert tuple(out.shape) == (1, 32, 32)


def test_a_parameter_without_a_ttnn_dtype_is_refused():
    class Odd(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.p = torch.nn.Parameter(torch.zeros(2, dtype=torch.complex64), requires_grad=False)

    with pytest.raises(ttnn.MeshnnTypeError, match="complex64"):
        preprocess_model_parameters(initialize_model=Odd)
