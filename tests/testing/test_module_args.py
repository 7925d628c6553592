"""ttnn.model_preprocessing.infer_ttnn_module_args: the calls of a small torch model, nested as ttnn's
traced graph nests them (a ModuleList's children in the module that iterates them), with the four
kinds of records and their input sizes."""

from __future__ import annotations

import pytest

from meshnn.compat.dot_access import DotAccessDict
from meshnn.testing.model_preprocessing import (
    Conv2dArgs,
    ConvTranspose2dArgs,
    GroupNormArgs,
    MaxPool2dArgs,
    infer_ttnn_module_args,
)

torch = pytest.importorskip("torch")


class _Model(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv1 = torch.nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.blocks = torch.nn.ModuleList(
            [torch.nn.Sequential(torch.nn.Conv2d(8, 8, 1), torch.nn.ReLU()) for _ in range(2)]
        )
        self.pool = torch.nn.MaxPool2d(2)
        self.norm = torch.nn.GroupNorm(2, 8)
        self.up = torch.nn.ConvTranspose2d(8, 4, 2, stride=2)
        self.unused = torch.nn.Conv2d(4, 4, 1)

    def forward(self, x):
        x = self.conv1(x)
        for block in self.blocks:
            x = block(x)
        return self.up(self.norm(self.pool(x)))


def test_the_calls_of_a_run_nested_as_they_ran():
    model, x = _Model(), torch.randn(2, 3, 32, 40)
    args = infer_ttnn_module_args(model=model, run_model=lambda m: m(x), device=None)
    assert isinstance(args, DotAccessDict)
    assert list(args) == ["conv1", "0", 0, "1", 1, "pool", "norm", "up"]  # no "blocks", no "unused"
    conv = args.conv1
    assert isinstance(conv, Conv2dArgs) and (conv.in_channels, conv.out_channels) == (3, 8)
    assert (conv.kernel_size, conv.stride, conv.padding) == ((3, 3), (2, 2), (1, 1))
    assert (conv.batch_size, conv.input_height, conv.input_width) == (2, 32, 40)
    assert args[1][0].input_height == 16 and args["1"]["1"] == {}  # (the ReLU: no records inside)
    pool = args.pool
    assert isinstance(pool, MaxPool2dArgs) and (pool.input_channels, pool.input_height, pool.input_width) == (8, 16, 20)
    norm = args.norm
    assert isinstance(norm, GroupNormArgs) and (norm.num_groups, norm.input_height, norm.input_width) == (2, 8, 10)
    up = args.up
    assert isinstance(up, ConvTranspose2dArgs) and up.output_padding == (0, 0) and up.input_height == 8
    with pytest.raises(KeyError):
        conv.no_such_argument  # noqa: B018


def test_no_run_model_gives_none_and_the_hooks_are_removed():
    model = _Model()
    assert infer_ttnn_module_args(model=model, run_model=None, device=None) is None
    infer_ttnn_module_args(model=model, run_model=lambda m: m(torch.randn(1, 3, 8, 8)), device=None)
    assert all(not m._forward_pre_hooks and not m._forward_hooks for m in model.modules())


def test_a_batch_norm_folded_into_the_conv_before_it_gives_the_same_output():
    from meshnn.testing.model_preprocessing import fold_batch_norm2d_into_conv2d

    torch.manual_seed(0)
    for bias in (True, False):
        conv, bn = torch.nn.Conv2d(3, 4, 3, bias=bias).double(), torch.nn.BatchNorm2d(4).double()
        bn.running_mean.uniform_(-1, 1), bn.running_var.uniform_(0.5, 2), bn.weight.data.uniform_(0.5, 2)
        bn.eval()
        weight, folded_bias = fold_batch_norm2d_into_conv2d(conv, bn)
        x = torch.randn(2, 3, 8, 8, dtype=torch.float64)
        want = bn(conv(x))
        got = torch.nn.functional.conv2d(x, weight, folded_bias)
        assert torch.allclose(got, want, rtol=1e-12, atol=1e-12)


def test_a_norm_without_running_statistics_is_not_folded_and_parameter_list_asks_for_an_index():
    import meshnn
    from meshnn.testing.model_preprocessing import ParameterList, fold_batch_norm2d_into_conv2d

    with pytest.raises(meshnn.MeshnnValueError, match="track_running_stats"):
        fold_batch_norm2d_into_conv2d(torch.nn.Conv2d(3, 4, 1), torch.nn.BatchNorm2d(4, track_running_stats=False))
    params = ParameterList(["a", "b"])
    assert 1 in params and 2 not in params and -1 in params and "a" not in params


def test_a_custom_preprocessor_gets_what_its_signature_names():
    import meshnn
    from meshnn.testing.model_preprocessing import preprocess_model_parameters

    seen = []

    def custom(model, name, ttnn_module_args, convert_to_ttnn):
        seen.append((name, ttnn_module_args, convert_to_ttnn(model, name)))
        return {"marker": name} if isinstance(model, torch.nn.Conv2d) else {}

    parameters = preprocess_model_parameters(initialize_model=lambda: torch.nn.Sequential(torch.nn.Conv2d(1, 1, 1)),
                                             custom_preprocessor=custom)  # fmt: skip
    assert parameters[0] == {"marker": 0} and seen[0] == ("", None, True)  # a digit child: an int key and name
    nested = preprocess_model_parameters(initialize_model=lambda: torch.nn.Conv2d(1, 1, 1),
                                         custom_preprocessor=lambda model, name: {"conv": {"weight": 1}})  # fmt: skip
    assert nested.conv.weight == 1  # nested dicts are ParameterDicts too

    def extra(model, name, mesh_mapper):
        return {}

    with pytest.raises(meshnn.MeshnnValueError, match="mesh_mapper"):
        preprocess_model_parameters(initialize_model=lambda: torch.nn.Conv2d(1, 1, 1), custom_preprocessor=extra)
