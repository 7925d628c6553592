"""The state-space-model ops of ttnn's Mamba block (``ttnn.experimental``):

- ``prefix_scan(a, bx, h_prev)``: the hidden states ``h[t] = a[t] * h[t-1] + bx[t]`` along the
  sequence (dim 2), starting from ``h_prev``, which is updated in place to the last state;
- ``repeat_and_interleave_eltwise_mul(a, b)``: ``a.repeat(1, 1, 1, W) * b.repeat_interleave(32,
  dim=-1)`` for an ``a`` 32 wide and a ``b`` W wide (either may already be 32 x W wide);
- ``hc_sum_reduce(input)``: the sum of each group of 32 (the latent size) along the last dim.

Each takes ``memory_config``, ``dtype`` (the output's; default the input's) and ``math_fidelity``
(recorded: meshnn computes in float32), and makes tt-metal's checks.

May import: :mod:`meshnn.errors`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor` and the ops' registry,
checks, launch, outputs and values modules.
"""

from __future__ import annotations

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.mesh.coord import MeshCoordinate
from meshnn.ops.checks import device_input, same_mesh
from meshnn.ops.launch import launch
from meshnn.ops.outputs import Output, out_spec_like
from meshnn.ops.registry import OpKind, register, torch_golden
from meshnn.ops.values import logical_values, write_values
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor

LATENT = 32
"""The latent size the SSM ops are built for (one tile's width)."""
HIDDEN_SIZE = 5120
"""The hidden size tt-metal's repeat-and-interleave multiply is built for (Mamba-2.8B's)."""


def _tile_input(op: str, name: str, value: object) -> Tensor:
    tensor = device_input(op, name, value)
    if tensor.layout is not Layout.TILE:
        raise MeshnnValueError(f"ttnn.{op}: {name} must be TILE (tilized), it is {tensor.layout}")
    shape = tuple(tensor.shape)
    if len(shape) != 4 or shape[0] != 1 or shape[1] != 1:
        raise MeshnnValueError(f"ttnn.{op}: {name} must be [1, 1, H, W], got {list(shape)}")
    return tensor


def _dtype(op: str, dtype: object, default: DataType) -> DataType:
    if dtype is None:
        return default
    if not isinstance(dtype, DataType):
        raise MeshnnTypeError(f"ttnn.{op}: dtype must be a ttnn DataType, got {dtype!r}")
    return dtype


def _golden_prefix_scan(torch, a, bx, h_prev, **_):
    length = bx.shape[2]
    states = torch.zeros_like(bx)
    state = h_prev.reshape(-1)
    for t in range(length):
        state = a[0, 0, t] * state + bx[0, 0, t]
        states[0, 0, t] = state
    return states


@register(
    "experimental.prefix_scan",
    kind=OpKind.REDUCTION,
    family=OpFamily.COPY,
    device_operation="PrefixScan",
    golden=torch_golden(_golden_prefix_scan),
    modelled=False,
)
def prefix_scan(
    a: Tensor,
    bx: Tensor,
    h_prev: Tensor,
    *,
    memory_config: MemoryConfig | None = None,
    dtype: DataType | None = None,
    math_fidelity: object = None,
) -> Tensor:
    """The SSM hidden states of every position (``[1, 1, L, 2EN]``); ``h_prev`` ([1, 1, 1, 2EN],
    bfloat16, ROW_MAJOR) becomes the last one, written in place."""
    op = "experimental.prefix_scan"
    ta, tb = _tile_input(op, "a", a), _tile_input(op, "bx", bx)
    th = device_input(op, "h_prev", h_prev)
    mesh = same_mesh(op, {"a": ta, "bx": tb, "h_prev": th})
    if ta.dtype is not tb.dtype or tuple(ta.padded_shape) != tuple(tb.padded_shape):
        raise MeshnnValueError(f"ttnn.{op}: a and bx must have one dtype and shape, got {ta.dtype} / {tb.dtype}")
    if th.dtype is not DataType.BFLOAT16 or th.layout is not Layout.ROW_MAJOR:
        raise MeshnnValueError(f"ttnn.{op}: h_prev must be bfloat16 ROW_MAJOR, got {th.dtype} {th.layout}")
    if tuple(th.shape)[-1] != tuple(ta.shape)[-1] or int(np.prod(th.shape)) != tuple(ta.shape)[-1]:
        raise MeshnnValueError(f"ttnn.{op}: h_prev {list(th.shape)} must hold one state of width {ta.shape[-1]}")
    spec = out_spec_like(ta, dtype=_dtype(op, dtype, ta.dtype), memory_config=memory_config, op=op)

    ta_spec, tb_spec, th_spec = ta.spec, tb.spec, th.spec  # (the kernels hold no tensor: a trace keeps them)

    def kernel(in_rows, out_rows, coords: tuple[MeshCoordinate, ...]) -> None:
        av, bv = logical_values(in_rows[0], ta_spec), logical_values(in_rows[1], tb_spec)
        state = logical_values(in_rows[2], th_spec).reshape(av.shape[0], -1).astype(np.float32)
        states = np.empty_like(bv)
        for t in range(av.shape[3]):
            state = av[:, 0, 0, t] * state + bv[:, 0, 0, t]
            states[:, 0, 0, t] = state
        write_values(out_rows[0], states, spec)

    def last_state(in_rows, out_rows, coords: tuple[MeshCoordinate, ...]) -> None:
        states = logical_values(in_rows[0], spec)
        write_values(out_rows[0], states[:, 0, 0, -1].reshape((states.shape[0], *th_spec.shape)), th_spec)

    attrs = {"memory_config": spec.memory_config, "dtype": spec.dtype, "math_fidelity": math_fidelity}
    out = launch(op, mesh, [ta, tb, th], [Output(spec)], kernel, rowwise=True, attrs=attrs)[0]
    launch(op, mesh, [out], [Output(th.spec)], last_state, into=[th], rowwise=True, attrs=attrs)
    return out


def _golden_interleave(torch, a, b, **_):
    width = max(a.shape[-1], b.shape[-1] * LATENT if b.shape[-1] * LATENT != a.shape[-1] else b.shape[-1])
    left = a if a.shape[-1] == width else a.repeat(1, 1, 1, width // a.shape[-1])
    right = b if b.shape[-1] == width else b.repeat_interleave(LATENT, dim=-1)
    return left * right


@register(
    "experimental.repeat_and_interleave_eltwise_mul",
    kind=OpKind.BINARY,
    family=OpFamily.BINARY,
    device_operation="RepeatAndInterleaveEltwiseMul",
    golden=torch_golden(_golden_interleave),
)
def repeat_and_interleave_eltwise_mul(
    a: Tensor,
    b: Tensor,
    *,
    memory_config: MemoryConfig | None = None,
    dtype: DataType | None = None,
    math_fidelity: object = None,
) -> Tensor:
    """``a`` repeated along its width times ``b`` with each column repeated 32 times, for the Mamba
    block's sizes tt-metal builds it for: ``a`` 32 or 32 x 5120 wide, ``b`` 5120 or 32 x 5120 wide
    (not both full); the output is ``[1, 1, H, 32 x 5120]``.  Interleaved bfloat16 / bfloat8_b only."""
    op = "experimental.repeat_and_interleave_eltwise_mul"
    ta, tb = _tile_input(op, "a", a), _tile_input(op, "b", b)
    mesh = same_mesh(op, {"a": ta, "b": tb})
    full = LATENT * HIDDEN_SIZE
    out_dtype = _dtype(op, dtype, ta.dtype)
    for name, t in (("a", ta), ("b", tb), ("output", None)):
        kind = t.dtype if t is not None else out_dtype
        if kind not in (DataType.BFLOAT16, DataType.BFLOAT8_B):
            raise MeshnnTypeError(f"ttnn.{op}: Unsupported data format for {name} ({kind}): bfloat16 or bfloat8_b")
        config = t.memory_config() if t is not None else memory_config
        if config is not None and config.is_sharded():
            raise MeshnnValueError(f"ttnn.{op}: Unsupported memory layout for {name}: interleaved only")
    (h, wa), (hb, wb) = tuple(ta.padded_shape)[2:], tuple(tb.padded_shape)[2:]
    if h % 32 or h != hb:
        raise MeshnnValueError(f"ttnn.{op}: a and b need the same number of users, a multiple of 32 ({h}, {hb})")
    if wa == wb or wa not in (LATENT, full) or wb not in (HIDDEN_SIZE, full):
        raise MeshnnValueError(
            f"ttnn.{op}: input a width must be 32 or 32*5120 and input b width 5120 or 32*5120, not equal (got {wa}, "
            f"{wb}); use eltwise mul for same size inputs"
        )
    width, repeat_a, interleave_b = full, wa == LATENT, wb == HIDDEN_SIZE
    spec = out_spec_like(
        ta, shape=(1, 1, tuple(ta.shape)[2], width), dtype=out_dtype, memory_config=memory_config, op=op
    )

    ta_spec, tb_spec = ta.spec, tb.spec  # (the kernel holds no tensor: a trace must not keep it allocated)

    def kernel(in_rows, out_rows, coords: tuple[MeshCoordinate, ...]) -> None:
        av, bv = logical_values(in_rows[0], ta_spec), logical_values(in_rows[1], tb_spec)
        left = np.tile(av, (1, 1, 1, 1, width // av.shape[-1])) if repeat_a else av
        right = np.repeat(bv, LATENT, axis=-1) if interleave_b else bv
        write_values(out_rows[0], left * right, spec)

    attrs = {"memory_config": spec.memory_config, "dtype": spec.dtype, "math_fidelity": math_fidelity}
    return launch(op, mesh, [ta, tb], [Output(spec)], kernel, rowwise=True, attrs=attrs)[0]


def _golden_hc_sum(torch, x, **_):
    h, w = x.shape[2], x.shape[3]
    return torch.sum(x.reshape(1, 1, h, w // LATENT, LATENT), dim=-1)


@register(
    "experimental.hc_sum_reduce",
    kind=OpKind.REDUCTION,
    family=OpFamily.REDUCTION,
    device_operation="HCSumReduce",
    golden=torch_golden(_golden_hc_sum),
)
def hc_sum_reduce(
    input: Tensor,
    *,
    memory_config: MemoryConfig | None = None,
    dtype: DataType | None = None,
    math_fidelity: object = None,
) -> Tensor:
    """The sum of each group of 32 consecutive values of the last dim: ``[1, 1, H, W]`` ->
    ``[1, 1, H, W / 32]``."""
    op = "experimental.hc_sum_reduce"
    tensor = _tile_input(op, "input", input)
    mesh = same_mesh(op, {"input": tensor})
    h, w = tuple(tensor.shape)[2:]
    if h % 32 or w % 32 or (w // 32) % LATENT:
        raise MeshnnValueError(
            f"ttnn.{op}: input {list(tensor.shape)} needs a height and width divisible by 32, and width / 32 "
            f"divisible by the latent size {LATENT}"
        )
    spec = out_spec_like(
        tensor, shape=(1, 1, h, w // LATENT), dtype=_dtype(op, dtype, tensor.dtype), memory_config=memory_config, op=op
    )

    tensor_spec = tensor.spec  # (the kernel holds no tensor: a trace must not keep it allocated)

    def kernel(in_rows, out_rows, coords: tuple[MeshCoordinate, ...]) -> None:
        x = logical_values(in_rows[0], tensor_spec)
        sums = x.reshape((*x.shape[:-1], w // LATENT, LATENT)).sum(axis=-1, dtype=np.float32)
        write_values(out_rows[0], sums, spec)

    attrs = {"memory_config": spec.memory_config, "dtype": spec.dtype, "math_fidelity": math_fidelity}
    return launch(op, mesh, [tensor], [Output(spec)], kernel, rowwise=True, attrs=attrs)[0]
