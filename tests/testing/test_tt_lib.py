"""``import tt_lib`` under the ttnn alias (meshnn.compat.tt_lib): its modules found where no real one is,
the sweep tests' dangling link to its comparison functions answered, the padding helpers' exact shapes
and values, the comparisons' verdicts, and the fallback ops' round trip through torch."""

from __future__ import annotations

import importlib
import sys

import numpy as np
import pytest
import torch

import meshnn
from meshnn.compat import tt_lib_finder, ttnn_alias

SWEEP = "tests.tt_eager.python_api_testing.sweep_tests"


@pytest.fixture
def ttnn():
    was = ttnn_alias.is_installed()
    module = ttnn_alias.install()
    yield module
    if not was:
        ttnn_alias.uninstall()


@pytest.fixture
def device(open_mesh):
    mesh = open_mesh((1, 1))
    before = meshnn.GetDefaultDevice()
    meshnn.SetDefaultDevice(mesh)
    yield mesh
    meshnn.SetDefaultDevice(before)


def test_tt_lib_modules_are_meshnns(ttnn):
    import tt_lib.fused_ops.softmax
    import tt_lib.utils
    from tt_lib._internal import comparison_funcs
    from tt_lib.fallback_ops import fallback_ops

    assert tt_lib.utils is importlib.import_module("meshnn.compat.tt_lib.utils")
    assert fallback_ops is importlib.import_module("meshnn.compat.tt_lib.fallback_ops")
    assert tt_lib.fallback_ops.reshape is fallback_ops.reshape  # the package re-exports its module
    assert tt_lib.fused_ops.softmax.softmax.__module__ == "meshnn.compat.tt_lib.fused_ops.softmax"
    assert comparison_funcs.__spec__.name == "meshnn.compat.tt_lib._internal.comparison_funcs"  # kept, not the alias's
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("tt_lib.no_such_module")


def test_uninstall_takes_tt_lib_away(ttnn):
    import tt_lib.utils  # noqa: F401

    ttnn_alias.uninstall()
    try:
        assert "tt_lib" not in sys.modules and "tt_lib.utils" not in sys.modules
        assert tt_lib_finder._FINDER not in sys.meta_path
    finally:
        ttnn_alias.install()


def test_the_sweep_tests_dangling_link_is_answered(ttnn, tmp_path, monkeypatch):
    """A copy of tt-metal's tests without its ttnn/ folder: comparison_funcs.py links to nothing."""
    package = tmp_path / SWEEP.replace(".", "/")
    package.mkdir(parents=True)
    (tmp_path / "tests" / "__init__.py").write_text("")
    (package / "comparison_funcs.py").symlink_to("../../../../ttnn/tt_lib/_internal/comparison_funcs.py")
    (package / "generation_funcs.py").write_text("from tt_lib.utils import _nearest_32 as nearest_32\n")
    for name in [n for n in sys.modules if n == "tests" or n.startswith("tests.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        from tests.tt_eager.python_api_testing.sweep_tests import comparison_funcs, generation_funcs

        assert comparison_funcs.comp_pcc is importlib.import_module("tt_lib._internal.comparison_funcs").comp_pcc
        assert generation_funcs.nearest_32(33) == 64
    finally:
        for name in [n for n in sys.modules if n == "tests" or n.startswith("tests.")]:
            del sys.modules[name]


def test_padding_to_tiles(ttnn):
    from tt_lib.utils import _nearest_32, _nearest_y, pad_activation, pad_weight

    assert (_nearest_32(0), _nearest_32(1), _nearest_32(32), _nearest_32(33), _nearest_y(10, 4)) == (0, 32, 32, 64, 12)
    x = torch.arange(1.0, 41.0)
    a = pad_activation(x)
    assert a.shape == (1, 1, 32, 64) and torch.equal(a[0, 0, 0, :40], x) and a.sum() == x.sum()
    b = pad_activation(torch.ones(3, 5))
    assert b.shape == (3, 1, 32, 32) and torch.equal(b[:, 0, 0, :5], torch.ones(3, 5)) and b.sum() == 15
    c = pad_activation(torch.ones(2, 33, 7))
    assert c.shape == (2, 1, 64, 32) and c.sum() == 2 * 33 * 7 and c[0, 0, 32, 6] == 1 and c[0, 0, 33, 0] == 0
    w = pad_weight(torch.ones(33, 2))
    assert w.shape == (1, 1, 64, 32) and w.sum() == 66 and w[0, 0, 32, 1] == 1
    assert pad_weight(torch.ones(2, 3, 4)).shape == (2, 32, 32)
    with pytest.raises(TypeError):
        pad_weight(np.ones(3))


def test_tile_identities_and_divisors(ttnn):
    from tt_lib import utils

    x = torch.randn(2, 3)
    with pytest.warns(DeprecationWarning):
        assert utils.tilize(x) is x
    with pytest.warns(DeprecationWarning):
        assert utils.tilize_to_list(torch.tensor([[1, 2], [3, 4]])) == [1, 2, 3, 4]
    assert utils.find_closest_largest_divisor(12, 5) == 4
    assert utils.find_closest_largest_divisor_with_num_padding(10, 8) == 5  # 10 = 5 x 2: no padding
    assert (utils.divup(7, 2), utils.roundup(7, 4), utils.roundup32(33)) == (4, 8, 64)
    assert utils.float_to_bits(1.0) == 0x3F800000 and utils.float_to_bits(-2.0) == -0x40000000
    assert bool(utils.is_close(torch.tensor([1.0, 100.0]), torch.tensor([1.05, 107.0])))
    assert not bool(utils.is_close(torch.tensor([1.0, 100.0]), torch.tensor([1.05, 120.0])))


def test_comparisons(ttnn):
    from tt_lib._internal.comparison_funcs import comp_allclose, comp_equal, comp_pcc, get_atol_rtol_pcc

    golden = torch.tensor([1.0, 2.0, float("nan"), 4.0, float("inf")])
    assert comp_pcc(golden, golden.clone()) == (True, "Max ATOL Delta: nan, Max RTOL Delta: nan, PCC: 1.0")
    atol, rtol, pcc, _ = get_atol_rtol_pcc(torch.tensor([1.0, 2.0, 3.0]), torch.tensor([1.0, 2.0, 4.0]))
    assert (atol, rtol) == (1.0, 0.25) and pcc == pytest.approx(np.corrcoef([1, 2, 3], [1, 2, 4])[0, 1], abs=1e-12)
    passed, message = comp_pcc(torch.zeros(4), torch.ones(4))  # one of them all zero
    assert not passed and message.endswith("PCC: 0.0, PCC check failed")
    assert comp_pcc(torch.full((4,), 2.0), torch.full((4,), 2.0 + 1e-9))[0]  # two constants, close
    assert not comp_pcc(torch.tensor([1.0, 2.0, 3.0]), torch.tensor([3.0, 2.0, 1.0]))[0]
    assert comp_equal(torch.ones(2, 2), torch.ones(1, 2, 2, dtype=torch.bfloat16))[0]  # golden given a leading 1
    passed, message = comp_equal(torch.ones(2), torch.tensor([1.0, 1.5]))
    assert not passed and message.endswith("Equal check failed")
    assert comp_allclose(torch.ones(3), torch.ones(3) + 1e-6, rtol=0, atol=2e-6)[0]
    assert not comp_allclose(torch.ones(3), torch.ones(3) + 1e-6, rtol=0, atol=5e-7)[0]


def test_fallback_ops_round_trip(ttnn, device):
    from tt_lib.fallback_ops import fallback_ops

    values = (torch.arange(2048, dtype=torch.float32) % 256).reshape(1, 1, 32, 64) / 8  # 8 bits: exact in bfloat16
    x = meshnn.from_torch(values, dtype=meshnn.bfloat16, layout=meshnn.TILE_LAYOUT, device=device)
    y = fallback_ops.reshape(x, 1, 1, 64, 32)
    assert y.layout == meshnn.TILE_LAYOUT and meshnn.is_tensor_storage_on_device(y)
    assert torch.equal(meshnn.to_torch(y).float(), values.reshape(1, 1, 64, 32))
    odd = fallback_ops.tensor_slice(x, [slice(None), slice(None), slice(0, 3), slice(0, 5)])
    assert odd.layout == meshnn.ROW_MAJOR_LAYOUT and not meshnn.is_tensor_storage_on_device(odd)  # odd width
    host = fallback_ops.reshape(x, 1, 2, 32, 32, output_on_device=False)
    assert not meshnn.is_tensor_storage_on_device(host) and host.layout == meshnn.TILE_LAYOUT
    parts = fallback_ops.chunk(x, 2, -1)
    assert [tuple(p.shape) for p in parts] == [(1, 1, 32, 32)] * 2
    assert torch.equal(meshnn.to_torch(parts[1]).float(), values[..., 32:])
    assert tuple(fallback_ops.full([2, 32], 3.0).shape) == (1, 1, 2, 32)


def test_fallback_modules(ttnn, device):
    from tt_lib.fallback_ops import fallback_ops

    torch.manual_seed(0)
    image = torch.randn(1, 3, 8, 8).bfloat16().float()
    weight = torch.randn(4, 3, 3, 3).bfloat16().float()
    conv = fallback_ops.Conv2d(meshnn.from_torch(weight), None, 3, 4, 3, padding=1, bias=False)
    out = conv(meshnn.from_torch(image, dtype=meshnn.bfloat16, device=device))
    want = torch.nn.functional.conv2d(image, weight, padding=1)
    got = meshnn.to_torch(out).float()
    assert got.shape == want.shape
    assert torch.all((got - want).abs() <= want.abs() * 2.0**-8 + 1e-6)  # bfloat16 rounding of the output
    pool = fallback_ops.MaxPool2d(2, channels_last=True, reshape_2d=True)
    nhwc = image.permute(0, 2, 3, 1)
    pooled = meshnn.to_torch(pool(meshnn.from_torch(nhwc, dtype=meshnn.bfloat16))).float()
    want = torch.nn.functional.max_pool2d(image, 2).permute(0, 2, 3, 1).reshape(1, 1, 16, 3)
    assert torch.equal(pooled, want)  # a max of bfloat16 values is one of them


def test_fused_softmax(ttnn, device):
    from tt_lib.fused_ops.softmax import softmax

    x = meshnn.from_torch(torch.randn(1, 1, 32, 64), dtype=meshnn.bfloat16, layout=meshnn.TILE_LAYOUT, device=device)
    for stable in (False, True):
        rows = meshnn.to_torch(softmax(x, stable=stable)).float().sum(-1)
        assert torch.all((rows - 1).abs() < 64 * 2.0**-8)  # 64 bfloat16 terms, each within 2^-8 relative
