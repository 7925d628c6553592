"""ttnn's operation hooks and comparison mode (tt-metal's test_comparison_mode.py and
test_pre_and_post_operation_hook.py scenarios, and what they leave unsaid)."""

from __future__ import annotations

import logging

import numpy as np
import pytest
import torch

import meshnn as ttnn
from meshnn.capture import comparison
from meshnn.errors import ComparisonError, MeshnnError, MeshnnTypeError
from meshnn.mesh import op_hooks
from meshnn.ops import registry


@pytest.fixture
def x(open_mesh):
    mesh = open_mesh((1, 1))
    torch.manual_seed(0)
    values = torch.rand((1, 64, 128), dtype=torch.bfloat16) * 2 - 1
    return ttnn.from_torch(values, layout=ttnn.TILE_LAYOUT, device=mesh)


@pytest.fixture
def comparing():
    """Comparison mode on with fast runtime mode off, restored after; the records made inside."""
    start = len(comparison.RECORDS)
    with ttnn.manage_config("enable_fast_runtime_mode", False), ttnn.manage_config("enable_comparison_mode", True):
        yield lambda: comparison.RECORDS[start:]
    assert comparison.before not in op_hooks.PRE_OPERATION_HOOKS  # removed with the mode


def test_hooks_see_top_level_calls_only_with_the_callers_arguments(x):
    seen: list[tuple] = []
    ended: list[str] = []
    pre = lambda op, args, kwargs: seen.append((op.__name__, len(args), sorted(kwargs)))  # noqa: E731
    post = lambda op, args, kwargs, out: ended.append(f"{op.__name__}:{type(out).__name__}")  # noqa: E731
    with ttnn.register_pre_operation_hook(pre), ttnn.register_post_operation_hook(post):
        ttnn.exp(x) * 2 + 1
        ttnn.linear(x, ttnn.permute(x, (0, 2, 1)), memory_config=ttnn.DRAM_MEMORY_CONFIG)
    assert seen == [
        ("exp", 1, []),
        ("multiply", 2, []),
        ("add", 2, []),
        ("permute", 2, []),
        ("linear", 2, ["memory_config"]),  # the ops linear runs inside it are not top level
    ]
    assert ended == ["exp:Tensor", "multiply:Tensor", "add:Tensor", "permute:Tensor", "linear:Tensor"]
    assert not op_hooks.PRE_OPERATION_HOOKS and not op_hooks.POST_OPERATION_HOOKS
    seen.clear()
    ttnn.exp(x)
    assert seen == []  # outside the block: no hook


def test_a_hook_must_return_none_and_be_callable(x):
    with ttnn.register_pre_operation_hook(lambda op, args, kwargs: 1), pytest.raises(MeshnnError, match="returned 1"):
        ttnn.exp(x)
    ttnn.exp(x)  # the failed call left no hook and no "inside an op" state behind
    with pytest.raises(MeshnnTypeError, match="the hook must be callable"):
        ttnn.register_post_operation_hook("print")  # refused at the call, before any with
    assert not op_hooks.POST_OPERATION_HOOKS


def test_the_public_op_is_one_object_per_function_and_its_module_function_finds_the_entry():
    module_function = ttnn.add.__meshnn_unhooked__  # what the op's own module defines and calls
    assert ttnn.sub_ is ttnn.subtract_ and module_function is not ttnn.add
    assert registry.entry_of(module_function) is registry.entry_of(ttnn.add) is not None
    assert ttnn.get_golden_function(ttnn.add) is ttnn.add.golden_function


def test_comparison_mode_is_off_in_fast_runtime_mode(x, monkeypatch):
    monkeypatch.setattr(ttnn.softmax, "golden_function", lambda t, **_: t)  # a wrong golden
    start = len(comparison.RECORDS)
    with (
        ttnn.manage_config("enable_comparison_mode", True),
        ttnn.manage_config("comparison_mode_should_raise_exception", True),
    ):
        ttnn.softmax(x, dim=-1)  # fast runtime mode (the default) skips comparisons, as in ttnn
    assert len(comparison.RECORDS) == start


def test_a_right_golden_matches_and_a_wrong_one_fails_by_the_configured_pcc(x, comparing, monkeypatch, caplog):
    with ttnn.manage_config("comparison_mode_pcc", 0.99):
        ttnn.softmax(x, dim=-1)
        (record,) = comparing()
        assert record.operation == "ttnn.softmax" and record.matches and 0.99 <= record.actual_pcc <= 1.0
        monkeypatch.setattr(ttnn.softmax, "golden_function", lambda t, **_: t)  # softmax's input is not its output
        with caplog.at_level(logging.ERROR, logger="meshnn.comparison"):
            ttnn.softmax(x, dim=-1)  # logged, not raised
        assert "ttnn.softmax: Comparing output tensor 0 against CPU locally failed: pcc is" in caplog.text
        raising = ttnn.manage_config("comparison_mode_should_raise_exception", True)
        with raising, pytest.raises(ComparisonError, match=r"should be >=0\.99") as caught:
            ttnn.softmax(x, dim=-1)
        assert isinstance(caught.value, RuntimeError)  # what ttnn raises
    assert [r.matches for r in comparing()] == [True, False, False]


def test_an_in_place_op_is_compared_with_its_inputs_as_they_were_before_it(x, comparing):
    ttnn.multiply_(x, x)  # x becomes x * x: a golden fed x afterwards would give x ** 4 (PCC about 0.96)
    (record,) = [r for r in comparing() if r.operation == "ttnn.multiply_"]
    assert record.matches and record.actual_pcc > 0.999, record


def test_pcc_as_comp_pcc_takes_it():
    a = torch.tensor([1.0, 2.0, 3.0, 4.0])
    assert comparison.pcc(a, a) == 1.0
    assert comparison.pcc(a, -a) == pytest.approx(-1.0)
    assert comparison.pcc(torch.tensor([1.0, float("nan")]), torch.tensor([1.0, float("nan")])) == 1.0
    assert comparison.pcc(torch.tensor([1.0, float("nan")]), torch.tensor([1.0, 2.0])) == 0.0
    assert comparison.pcc(torch.ones(4), a) == 0.0  # one is constant
    b = torch.tensor([1.0, 2.0, 3.0, 5.0])
    assert comparison.pcc(a, b) == pytest.approx(float(np.corrcoef(a.numpy(), b.numpy())[0, 1]), abs=1e-12)
