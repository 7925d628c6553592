"""ttnn's comparison mode: each top-level op's output checked against the op's golden function.

While ``ttnn.CONFIG.enable_comparison_mode`` is on and ``enable_fast_runtime_mode`` is off (ttnn's
fast mode skips it too), two operation hooks (:mod:`meshnn.mesh.op_hooks`) run around each top-level
op: before it, its tensor arguments are read back as torch tensors (before: an in-place op changes
them); after it, the op's golden function (``operation.golden_function``, which a caller may
replace) runs on them with the op's other arguments, and each output is compared with the golden's
by the Pearson correlation (PCC, as tt-metal's ``comp_pcc`` computes it).  An output below
``comparison_mode_pcc`` raises :class:`~meshnn.errors.ComparisonError` (a RuntimeError, ttnn's
message) when ``comparison_mode_should_raise_exception`` is on, and is logged otherwise.  An op
without a golden function is not compared.  Each comparison is kept in :data:`RECORDS` as ttnn's
``TensorComparisonRecord`` fields.  (ttnn's second, "global" comparison, which feeds each golden
the goldens of the ops before it through the report database, is not made.)

Layers: imports errors, the ops layer's hooks and golden-input conversion (:mod:`meshnn.ops.fallback`)
and the tensor layer.
"""

from __future__ import annotations

import logging
import math
import threading
from dataclasses import dataclass
from typing import Any

from meshnn.errors import ComparisonError
from meshnn.mesh import op_hooks
from meshnn.ops.fallback import default_preprocess_golden_function_inputs
from meshnn.tensor.interop import to_torch
from meshnn.tensor.tensor import Tensor

LOG = logging.getLogger("meshnn.comparison")
_PENDING = threading.local()  # ``inputs``: the top-level op's (args, kwargs) as torch, until it ends


@dataclass(frozen=True)
class ComparisonRecord:
    """One output compared: the op, the output's index, whether it met ``desired_pcc``, and the PCC."""

    operation: str
    index: int
    matches: bool
    desired_pcc: float
    actual_pcc: float


RECORDS: list[ComparisonRecord] = []
"""Every comparison made in this process, in order (cleared by nobody but the caller)."""


def before(operation: Any, args: tuple, kwargs: dict) -> None:
    """The pre-operation hook: keep the op's arguments as torch (only for an op with a golden)."""
    if getattr(operation, "golden_function", None) is None:
        _PENDING.inputs = None
        return
    preprocess = getattr(operation, "preprocess_golden_function_inputs", None)
    _PENDING.inputs = (preprocess or default_preprocess_golden_function_inputs)(args, kwargs)


def after(operation: Any, args: tuple, kwargs: dict, output: Any) -> None:
    """The post-operation hook: run the golden function and compare each output with its own."""
    inputs, _PENDING.inputs = getattr(_PENDING, "inputs", None), None
    golden = getattr(operation, "golden_function", None)
    if inputs is None or golden is None:
        return
    expected = golden(*inputs[0], **inputs[1])
    if expected is None:
        return
    from meshnn.capture.config import CONFIG

    outputs = output if isinstance(output, list | tuple) else [output]
    goldens = expected if isinstance(expected, list | tuple) else [expected]
    name = f"ttnn.{getattr(operation, '__name__', operation)}"
    for index, (made, wanted) in enumerate(zip(outputs, goldens, strict=False)):
        if not isinstance(made, Tensor) or wanted is None:
            continue
        actual = pcc(wanted, to_torch(made))
        desired = CONFIG.comparison_mode_pcc
        RECORDS.append(ComparisonRecord(name, index, actual >= desired, desired, actual))
        if actual < desired:
            message = (
                f"{name}: Comparing output tensor {index} against CPU locally failed: "
                f"pcc is {actual} but should be >={desired}"
            )
            if CONFIG.comparison_mode_should_raise_exception:
                raise ComparisonError(message)
            LOG.error(message)


def pcc(golden: Any, calculated: Any) -> float:
    """The Pearson correlation of two tensors as tt-metal's ``comp_pcc`` takes it: 1.0 when they
    are equal (NaNs at the same places included), 0.0 when only one has NaNs or only one is
    constant; otherwise over the elements, in float64."""
    import torch

    a = torch.as_tensor(golden).detach().to(torch.float64).flatten()
    b = torch.as_tensor(calculated).detach().to(torch.float64).flatten()
    if a.shape != b.shape:
        return 0.0
    if torch.equal(torch.isnan(a), torch.isnan(b)) and torch.equal(a.nan_to_num(), b.nan_to_num()):
        return 1.0
    if bool(torch.isnan(a).any()) or bool(torch.isnan(b).any()):
        return 0.0
    a, b = a - a.mean(), b - b.mean()
    scale = math.sqrt(float((a * a).sum()) * float((b * b).sum()))
    return 0.0 if scale == 0.0 else float((a * b).sum()) / scale


def sync(enabled: bool) -> None:
    """Install the two hooks when ``enabled`` (comparison mode on, fast runtime mode off), remove
    them otherwise; idempotent."""
    installed = before in op_hooks.PRE_OPERATION_HOOKS
    if enabled and not installed:
        op_hooks.PRE_OPERATION_HOOKS.append(before)
        op_hooks.POST_OPERATION_HOOKS.append(after)
    elif installed and not enabled:
        op_hooks.PRE_OPERATION_HOOKS.remove(before)
        op_hooks.POST_OPERATION_HOOKS.remove(after)
