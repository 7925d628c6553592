"""``ttnn.batch_norm``: batch normalisation of a rank-4 ``[N, C, H, W]`` TILE tensor, per channel:
``(x - mean) / sqrt(var + eps) * weight + bias``, with ttnn's semantics:

- ``training``: mean and variance are the batch's, over N, H and W (the variance biased:
  ``E[x^2] - E[x]^2``, as ttnn computes it); the running statistics given are updated in place,
  ``running = (1 - momentum) * running + momentum * batch`` (ttnn's ``running_statistics``
  operation, the batch variance biased too);
- otherwise ``running_mean`` and ``running_var`` are required and used;
- every tensor is TILE, BFLOAT16 or FLOAT32, on the device, rank 4 with C channels (statistics,
  weight and bias ``[1, C, 1, 1]``); the input and the output are interleaved;
- the output (or ``output``, written in place) is TILE of the input's dtype;
- precision: the statistics and the result are computed in float64 and rounded into the output's
  dtype, except where the compute kernel config turns ``fp32_dest_acc_en`` off for a FLOAT32
  input (ttnn's default keeps it on for FLOAT32): the destination register then holds 16-bit
  values, so the statistics and the result are rounded to bfloat16 as the device rounds them.

A zero-volume input gives a copy of itself.

May import: every layer below the ops and the ops' launch, checks, outputs, values and config.
"""

from __future__ import annotations

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.bfloat16 import round_to_bfloat16
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.mesh.coord import MeshCoordinate
from meshnn.mesh.op_keywords import ttnn_keywords
from meshnn.ops.checks import device_input, same_mesh
from meshnn.ops.config import check_compute_kernel_config
from meshnn.ops.launch import launch
from meshnn.ops.outputs import Output, out_spec_like, output_into
from meshnn.ops.registry import OpKind, register, torch_golden
from meshnn.ops.values import logical_values, write_values
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor

DTYPES = (DataType.BFLOAT16, DataType.FLOAT32)


def _checked(op: str, name: str, value: object, channels: int | None) -> Tensor:
    t = device_input(op, name, value)
    if t.layout is not Layout.TILE:
        raise MeshnnValueError(f"ttnn.{op}: batch_norm only supports tiled layout. Got: {t.layout} ({name})")
    if t.dtype not in DTYPES:
        raise MeshnnTypeError(f"ttnn.{op}: batch_norm only supports bfloat16, float32. Got: {t.dtype.name} ({name})")
    if len(t.shape) != 4:
        raise MeshnnValueError(f"ttnn.{op}: batch_norm supports tensors of rank 4 ({name} is {list(t.shape)})")
    if channels is not None and t.shape[1] != channels:
        raise MeshnnValueError(f"ttnn.{op}: {name}[1] must be the same as input's channel size ({channels})")
    if t.spec.memory_config.is_sharded():
        raise MeshnnValueError(f"ttnn.{op}: {name} must be interleaved")
    return t


def _fp32_dest(config: object, dtype: DataType) -> bool:
    """Whether the destination register holds float32 (ttnn's default: for FLOAT32 inputs)."""
    if config is None or getattr(config, "fp32_dest_acc_en", None) is None:
        return dtype is DataType.FLOAT32
    return bool(config.fp32_dest_acc_en)  # type: ignore[attr-defined]


def _round(values: np.ndarray, exact: bool) -> np.ndarray:
    """``values`` (float64) as the destination register holds them: unchanged when ``exact`` (a
    float32 register: meshnn's float64 rounds once, at the end), else rounded to bfloat16."""
    return values if exact else round_to_bfloat16(values.astype(np.float32)).astype(np.float64)


def _batch_stats(x: np.ndarray, exact: bool) -> tuple[np.ndarray, np.ndarray]:
    """Per-channel mean and biased variance of ``(k, N, C, H, W)`` values, as ``(k, 1, C, 1, 1)``."""
    axes = (1, 3, 4)
    mean = x.mean(axis=axes, keepdims=True, dtype=np.float64)
    square = np.square(x, dtype=np.float64).mean(axis=axes, keepdims=True)
    mean_r = _round(mean, exact)
    return mean_r, _round(_round(square, exact) - np.square(mean_r), exact)


def _golden(torch, input, *, running_mean=None, running_var=None, training=False, eps=1e-05, momentum=0.1,
            weight=None, bias=None, **_):  # fmt: skip
    def flat(t):
        return None if t is None else t.reshape(-1)

    return torch.nn.functional.batch_norm(
        input, flat(running_mean), flat(running_var), flat(weight), flat(bias), training, momentum, eps
    )


def _update_running(op, mesh, x, running, momentum, exact) -> None:
    """ttnn's running_statistics: the running mean / var given, updated in place."""
    targets = [t for t in running if t is not None]
    if not targets:
        return
    which = [i for i, t in enumerate(running) if t is not None]
    x_spec, target_specs = x.spec, [t.spec for t in targets]  # (the kernel holds no tensor: a trace keeps it)

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]) -> None:
        stats = _batch_stats(logical_values(in_rows[0], x_spec), exact)
        for row, i, target_spec in zip(out_rows, which, target_specs, strict=True):
            old = logical_values(in_rows[1 + which.index(i)], target_spec).astype(np.float64)
            updated = (1.0 - momentum) * old + momentum * stats[i].reshape(old.shape)
            write_values(row, _round(updated, exact).astype(np.float32), target_spec)

    outputs = [Output(t.spec) for t in targets]
    attrs = {"momentum": momentum, "stage": "running_statistics"}
    launch(op, mesh, [x, *targets], outputs, kernel, into=targets, rowwise=True, attrs=attrs)


def _statistics(op: str, given: dict, channels: int, training: bool, memory_config: object) -> dict[str, Tensor]:
    """The statistics, weight and bias given, checked (and the output's memory config)."""
    named = {n: _checked(op, n, t, channels) for n, t in given.items() if t is not None}
    if not training and ("running_mean" not in named or "running_var" not in named):
        raise MeshnnValueError(f"ttnn.{op}: running_mean and running_var must be defined in evaluation mode")
    if memory_config is not None and isinstance(memory_config, MemoryConfig) and memory_config.is_sharded():
        raise MeshnnValueError(f"ttnn.{op}: Output tensor to batch_norm must be interleaved (memory_config)")
    return named


def _number(op: str, name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | np.floating):
        raise MeshnnTypeError(f"ttnn.{op}: {name} must be a number, got {value!r}")
    return float(value)


@register(kind=OpKind.NORMALIZATION, family=OpFamily.NORM, device_operation="BatchNormOperation",
          golden=torch_golden(_golden))  # fmt: skip
@ttnn_keywords(records=("compute_kernel_config",))
def batch_norm(
    input: Tensor,
    *,
    running_mean: Tensor | None = None,
    running_var: Tensor | None = None,
    training: bool = False,
    eps: float = 1e-05,
    momentum: float = 0.1,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    output: Tensor | None = None,
    memory_config: MemoryConfig | None = None,
    compute_kernel_config: object = None,
    queue_id: int = 0,
) -> Tensor:
    """Batch normalisation per channel (see the module docstring)."""
    op = "batch_norm"
    x = device_input(op, "input", input)
    if len(x.shape) < 4:
        raise MeshnnValueError(f"ttnn.{op}: input must have rank 4 or more, got {list(x.shape)}")
    if not isinstance(training, bool):
        raise MeshnnTypeError(f"ttnn.{op}: training must be a bool, got {training!r}")
    epsilon, m = _number(op, "eps", eps), _number(op, "momentum", momentum)
    config = check_compute_kernel_config(op, compute_kernel_config)
    if x.logical_volume() == 0:  # ttnn gives a copy (nothing to compute)
        empty = out_spec_like(x, memory_config=memory_config, op=op)
        return launch(op, same_mesh(op, {"input": x}), [x], [Output(empty)], lambda i, o, c: None, rowwise=True)[0]
    x = _checked(op, "input", x, None)
    channels = x.shape[1]
    given = {"running_mean": running_mean, "running_var": running_var, "weight": weight, "bias": bias}
    named = _statistics(op, given, channels, training, memory_config)
    mesh = same_mesh(op, {"input": x, **named})
    spec = out_spec_like(x, layout=Layout.TILE, memory_config=memory_config, op=op)
    if output is not None:
        target = _checked(op, "output", output, channels)
        spec = output_into(op, mesh, target, spec, x.storage.coords).spec  # type: ignore[union-attr]
    into = None if output is None else [target]
    exact = _fp32_dest(config, x.dtype)
    if training:
        _update_running(op, mesh, x, (named.get("running_mean"), named.get("running_var")), m, exact)
    inputs, names = [x, *named.values()], list(named)
    x_spec, in_specs = x.spec, [t.spec for t in inputs[1:]]  # (the kernel holds no tensor: a trace keeps it)

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]) -> None:
        values = logical_values(in_rows[0], x_spec)
        found = {n: logical_values(r, s) for n, r, s in zip(names, in_rows[1:], in_specs, strict=True)}
        if training:
            mean, var = _batch_stats(values, exact)
        else:
            mean, var = (found[n].astype(np.float64) for n in ("running_mean", "running_var"))
            mean, var = mean.reshape(-1, 1, channels, 1, 1), var.reshape(-1, 1, channels, 1, 1)
        scale = _round(1.0 / np.sqrt(var + epsilon), exact)
        y = (values - mean) * scale
        for name, combine in (("weight", np.multiply), ("bias", np.add)):
            if name in found:
                y = combine(y, found[name].astype(np.float64).reshape(-1, 1, channels, 1, 1))
        write_values(out_rows[0], _round(y, exact).astype(np.float32), spec)

    attrs = {"training": training, "eps": epsilon, "momentum": m, "memory_config": spec.memory_config}
    return launch(op, mesh, inputs, [Output(spec)], kernel, queue_id=queue_id, into=into, rowwise=True, attrs=attrs)[0]
