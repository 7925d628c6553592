"""``ttnn.bcast``: ttnn's older broadcast op, ``input_a`` combined (``BcastOpMath``: ADD, SUB, MUL)
with one row (``BcastOpDim.H``), one column (``W``) or one element (``HW``) of ``input_b``'s tiles
repeated over ``input_a``.

As ttnn checks it: both operands TILE on one device mesh, ``input_a`` floating point; by padded
shape, ``input_b`` spans one tile row (H: ``input_a``'s width, padded height 32), one tile column (W:
``input_a``'s height, padded width 32) or one tile (HW); a ``input_b`` with more than one batch has
``input_a``'s rank and leading dims.  The device reads row 0 / column 0 / element (0, 0) of
``input_b`` (its padding is not read); the result is ``input_a``'s spec unless ``memory_config`` says
otherwise, or written into ``output_tensor``.

May import: every layer below the ops and the ops' launch, checks, outputs and values.
"""

from __future__ import annotations

import enum

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.layout import Layout
from meshnn.mesh.coord import MeshCoordinate
from meshnn.mesh.op_keywords import ttnn_keywords
from meshnn.ops.checks import device_input, same_mesh
from meshnn.ops.launch import launch
from meshnn.ops.outputs import Output, out_spec_like, output_into
from meshnn.ops.registry import OpKind, register, torch_golden
from meshnn.ops.values import logical_values, write_values
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor

TILE = 32  # the tile's height and width, elements


class BcastOpMath(enum.Enum):
    """``ttnn.BcastOpMath``: what ``ttnn.bcast`` computes."""

    ADD = 0
    SUB = 1
    MUL = 2


class BcastOpDim(enum.Enum):
    """``ttnn.BcastOpDim``: which of ``input_b``'s dims are broadcast."""

    H = 0
    W = 1
    HW = 2


_MATH = {BcastOpMath.ADD: np.add, BcastOpMath.SUB: np.subtract, BcastOpMath.MUL: np.multiply}


def _golden(torch, in0, in1, math_op, bcast_dim, *args, **kwargs):
    in1 = in1.expand(in0.shape)
    return {BcastOpMath.ADD: in0 + in1, BcastOpMath.SUB: in0 - in1, BcastOpMath.MUL: in0 * in1}[math_op]


def _check_shapes(op: str, a: Tensor, b: Tensor, dim: BcastOpDim) -> None:
    """ttnn's checks of the operands' padded shapes (see the module's text)."""
    pa, pb = tuple(a.spec.padded_shape), tuple(b.spec.padded_shape)
    if int(np.prod(pb[:-2], dtype=np.int64)) != 1 and (len(pa) != len(pb) or pa[:-2] != pb[:-2]):
        raise MeshnnValueError(
            f"ttnn.{op}: Broadcast with batch is currently only supported when bN*bC=1 or N & C match "
            f"(input_a {list(a.shape)}, input_b {list(b.shape)})"
        )
    wants = {
        BcastOpDim.H: (TILE, pa[-1]),
        BcastOpDim.W: (pa[-2], TILE),
        BcastOpDim.HW: (TILE, TILE),
    }[dim]
    if pb[-2:] != wants:
        raise MeshnnValueError(
            f"ttnn.{op}: for {dim}, input_b's padded height and width must be {list(wants)}, "
            f"got {list(pb[-2:])} (input_a {list(a.shape)}, input_b {list(b.shape)})"
        )


@register(
    kind=OpKind.BINARY,
    family=OpFamily.BINARY,
    device_operation="EltwiseBinaryBroadcast",
    golden=torch_golden(_golden),
)
@ttnn_keywords()
def bcast(
    input_a: Tensor,
    input_b: Tensor,
    math_op: BcastOpMath,
    dim: BcastOpDim,
    *,
    output_tensor: Tensor | None = None,
    memory_config: MemoryConfig | None = None,
) -> Tensor:
    """``input_a`` (math_op) ``input_b`` broadcast along ``dim`` (see the module's text)."""
    op = "bcast"
    if not isinstance(math_op, BcastOpMath):
        raise MeshnnTypeError(f"ttnn.{op}: math_op must be a ttnn.BcastOpMath, got {math_op!r}")
    if not isinstance(dim, BcastOpDim):
        raise MeshnnTypeError(f"ttnn.{op}: dim must be a ttnn.BcastOpDim, got {dim!r}")
    a, b = device_input(op, "input_a", input_a), device_input(op, "input_b", input_b)
    mesh = same_mesh(op, {"input_a": a, "input_b": b})
    for name, t in (("input_a", a), ("input_b", b)):
        if t.layout is not Layout.TILE:
            raise MeshnnValueError(f"ttnn.{op}: {name} layout must be TILE but got {t.layout}")
    if not a.dtype.is_float:
        raise MeshnnTypeError(f"ttnn.{op}: input_a must be floating point (Unsupported data format), got {a.dtype}")
    _check_shapes(op, a, b, dim)
    spec = out_spec_like(a, memory_config=memory_config or a.memory_config(), op=op)
    into = None if output_tensor is None else [output_into(op, mesh, output_tensor, spec, a.storage.coords)]
    rows = slice(0, 1) if dim in (BcastOpDim.H, BcastOpDim.HW) else slice(None)
    cols = slice(0, 1) if dim in (BcastOpDim.W, BcastOpDim.HW) else slice(None)
    math = _MATH[math_op]

    a_spec, b_spec = a.spec, b.spec  # (the kernel holds no tensor: a trace must not keep it allocated)

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]) -> None:
        x = logical_values(in_rows[0], a_spec).astype(np.float32, copy=False)
        y = logical_values(in_rows[1], b_spec)[..., rows, cols].astype(np.float32, copy=False)
        y = y.reshape((y.shape[0],) + (1,) * (x.ndim - y.ndim) + y.shape[1:])  # (a lower-rank input_b)
        write_values(out_rows[0], math(x, y), spec)

    attrs = {"math_op": math_op, "dim": dim, "memory_config": spec.memory_config}
    return launch(op, mesh, [a, b], [Output(spec)], kernel, into=into, rowwise=True, attrs=attrs)[0]
