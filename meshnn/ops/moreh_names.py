"""moreh's ops under their top-level names, ``ttnn.moreh_<op>`` (``ttnn.moreh_cumsum``,
``ttnn.moreh_sum``...): tt-metal 2026-06 binds each moreh op as ``ttnn.moreh_<op>`` (its binding's
fully qualified name), and ``ttnn.operations.moreh.<op>`` is the same function.  Each is an alias of
the registry's ``moreh.<op>`` (``moreh_full`` / ``moreh_full_like`` are declared so already).
(``moreh_abs_pow`` is not here: meshnn has no ``operations.moreh.abs``.)

May import: the registry and the moreh op modules (imported here, so their ops are declared first).
"""

from __future__ import annotations

import importlib
import pkgutil

import meshnn.ops.moreh as moreh_ops
import meshnn.ops.moreh_train as moreh_train_ops
from meshnn.ops.registry import alias

for _package in (moreh_ops, moreh_train_ops):
    for _module in pkgutil.iter_modules(_package.__path__, f"{_package.__name__}."):
        importlib.import_module(_module.name)

TOP_LEVEL = [
    "adam",
    "adamw",
    "arange",
    "bmm",
    "bmm_backward",
    "clip_grad_norm",
    "cumsum",
    "cumsum_backward",
    "dot",
    "dot_backward",
    "fold",
    "getitem",
    "group_norm",
    "group_norm_backward",
    "layer_norm",
    "layer_norm_backward",
    "linear",
    "linear_backward",
    "logsoftmax",
    "logsoftmax_backward",
    "matmul",
    "matmul_backward",
    "mean",
    "mean_backward",
    "nll_loss",
    "nll_loss_backward",
    "nll_loss_unreduced_backward",
    "norm",
    "norm_backward",
    "sgd",
    "softmax",
    "softmax_backward",
    "softmin",
    "softmin_backward",
    "sum",
    "sum_backward",
]
"""The moreh ops tt-metal 2026 binds at ttnn's top level as ``moreh_<op>``."""

for _op in TOP_LEVEL:
    alias(f"moreh_{_op}", f"moreh.{_op}")
