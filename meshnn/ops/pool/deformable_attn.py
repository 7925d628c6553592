"""``ttnn.experimental.multi_scale_deformable_attn(value, grid, attn, *, memory_config=None,
align_corners=False)`` (tt-metal 2026-06): fused multi-scale deformable attention, the one-level
fast path.

``value`` ``(N, h, w, D)`` (N = batch x heads), ``grid`` ``(N, Q*P, 1, 2)`` normalised (x, y) sample
points in [-1, 1] and ``attn`` ``(N, Q, P)`` weights, all bfloat16 ROW_MAJOR interleaved on one
device mesh; the output ``(N, Q, D)`` bfloat16 ROW_MAJOR is, for each query q,
``sum_p attn[n, q, p] * bilinear(value[n], grid[n, q*P + p])``: each point sampled bilinearly with
zero padding (a corner outside the image counts 0), ``align_corners`` mapping -1 / 1 to the corner
pixels' centres (else to the image's outer edges, mmcv's default), as torch's ``grid_sample`` does;
computed in float32 and rounded to bfloat16 once.

tt-metal's checks, made before anything is allocated: each input on the device, bfloat16,
ROW_MAJOR, INTERLEAVED (the output's memory config too); value rank 4, grid rank 4 with dims
``[.., .., 1, 2]``, attn rank 3; the same N; N, h, w, Q, P > 0; D == 32 (the kernel's one row
layout); grid's dim 1 == Q * P.

May import: :mod:`meshnn.errors`, :mod:`meshnn.formats`, :mod:`meshnn.tensor`, the ops' checks,
launch, outputs, values, registry and grid_sample's bilinear table.
"""

from __future__ import annotations

import numpy as np

from meshnn.device.buffer import TensorMemoryLayout
from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.ops.checks import device_input, same_mesh
from meshnn.ops.launch import launch
from meshnn.ops.outputs import Output, out_spec_like
from meshnn.ops.pool.grid_sample import corners, sample
from meshnn.ops.registry import OpKind, register
from meshnn.ops.values import logical_values, write_values
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor

OP = "experimental.multi_scale_deformable_attn"
HEAD_DIM = 32
"""The only D the kernel lays out (two 32-byte half rows of a tile row)."""


def msda_values(value: np.ndarray, grid: np.ndarray, attn: np.ndarray, align_corners: bool) -> np.ndarray:
    """``(N, Q, D)`` float32 of ``value (N, h, w, D)``, ``grid (N, Q*P, 1, 2)``, ``attn (N, Q, P)``."""
    n, height, width, depth = value.shape
    queries, points = attn.shape[1], attn.shape[2]
    table = corners(grid.reshape(n, queries * points, 2), height, width, align_corners)
    sampled = sample(value.astype(np.float32, copy=False), table).reshape(n, queries, points, depth)
    return np.einsum("nqpd,nqp->nqd", sampled, attn.astype(np.float32, copy=False))


def _checked(named: dict[str, Tensor]) -> None:
    """tt-metal's checks of the three inputs' formats and shapes (see the module's text)."""
    for name, tensor in named.items():
        if tensor.dtype is not DataType.BFLOAT16:
            raise MeshnnTypeError(f"ttnn.{OP}: {name} must be BFLOAT16, got {tensor.dtype}")
        if tensor.layout is not Layout.ROW_MAJOR:
            raise MeshnnValueError(f"ttnn.{OP}: {name} must be ROW_MAJOR, got {tensor.layout}")
        if tensor.memory_config().memory_layout is not TensorMemoryLayout.INTERLEAVED:
            raise MeshnnValueError(f"ttnn.{OP}: {name} memory_layout must be INTERLEAVED")
    vs, gs, a_s = (tuple(named[k].shape) for k in ("value", "grid", "attn"))
    if len(vs) != 4 or len(gs) != 4 or len(a_s) != 3:
        raise MeshnnValueError(
            f"ttnn.{OP}: value rank must be 4 (N, h_in, w_in, D), grid rank 4 (N, Q*P, 1, 2) and attn rank 3 "
            f"(N, Q, P); got value {list(vs)}, grid {list(gs)}, attn {list(a_s)}"
        )
    if gs[-1] != 2 or gs[-2] != 1:
        raise MeshnnValueError(f"ttnn.{OP}: grid must be (N, Q*P, 1, 2): its last dims 1 and 2, got {list(gs)}")
    if not vs[0] == gs[0] == a_s[0]:
        raise MeshnnValueError(f"ttnn.{OP}: N (batch*head) dim mismatch: value {vs[0]}, grid {gs[0]}, attn {a_s[0]}")
    if min(vs[0], vs[1], vs[2], a_s[1], a_s[2]) <= 0:
        raise MeshnnValueError(f"ttnn.{OP}: N, h_in, w_in, Q and P must be > 0; got value {list(vs)}, attn {list(a_s)}")
    if vs[-1] != HEAD_DIM:
        raise MeshnnValueError(f"ttnn.{OP}: value's last dim (D) must be {HEAD_DIM}, got {vs[-1]}")
    if gs[1] != a_s[1] * a_s[2]:
        raise MeshnnValueError(
            f"ttnn.{OP}: grid dim 1 (= Q*P = {gs[1]}) must equal attn Q*P (= {a_s[1]} * {a_s[2]} = {a_s[1] * a_s[2]})"
        )


@register(OP, kind=OpKind.POOL, family=OpFamily.COPY, device_operation="MSDAOperation", modelled=False)
def multi_scale_deformable_attn(
    value: Tensor,
    grid: Tensor,
    attn: Tensor,
    *,
    memory_config: MemoryConfig | None = None,
    align_corners: bool = False,
) -> Tensor:
    """Each query's attention-weighted sum of its points sampled bilinearly from ``value`` (see the
    module's text)."""
    named = {"value": device_input(OP, "value", value), "grid": device_input(OP, "grid", grid)}
    named["attn"] = device_input(OP, "attn", attn)
    mesh = same_mesh(OP, named)
    if not isinstance(align_corners, bool):
        raise MeshnnTypeError(f"ttnn.{OP}: align_corners must be a bool, got {align_corners!r}")
    if memory_config is not None and not isinstance(memory_config, MemoryConfig):
        raise MeshnnTypeError(f"ttnn.{OP}: memory_config must be a ttnn.MemoryConfig, got {memory_config!r}")
    if memory_config is not None and memory_config.memory_layout is not TensorMemoryLayout.INTERLEAVED:
        raise MeshnnValueError(f"ttnn.{OP}: output_memory_config memory_layout must be INTERLEAVED")
    _checked(named)
    n, _, _, depth = value.shape
    queries = attn.shape[1]
    spec = out_spec_like(value, shape=(n, queries, depth), memory_config=memory_config or value.memory_config())
    specs = [t.spec for t in named.values()]

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple) -> None:
        v, g, a = (logical_values(rows, s) for rows, s in zip(in_rows, specs, strict=True))
        made = [msda_values(v[i], g[i], a[i], align_corners) for i in range(len(coords))]
        write_values(out_rows[0], np.stack(made), spec)

    attrs = {"align_corners": align_corners, "memory_config": memory_config}
    return launch(OP, mesh, list(named.values()), [Output(spec)], kernel, attrs=attrs)[0]
