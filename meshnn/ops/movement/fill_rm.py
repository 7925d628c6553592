"""``ttnn.fill_rm`` / ``ttnn.fill_ones_rm``: a new ROW_MAJOR ``[N, C, H, W]`` tensor whose top-left
``hOnes x wOnes`` corner of every ``H x W`` matrix holds ``val_hi`` and the rest ``val_lo`` (1 and 0
for ``fill_ones_rm``), on the device of the tensor ``any`` (read for its device and dtype only).

tt-metal's rules, kept: every dim positive, ``hOnes <= H`` and ``wOnes <= W``; ``any`` bfloat16 and
interleaved, the output interleaved (its memory config ``any``'s unless one is given), bfloat16,
ROW_MAJOR, whatever ``any``'s layout; a row of at most 16,383 values (its kernel stages one row in
16 tiles of L1).  The values are rounded to bfloat16 to nearest, ties to even (tt-metal's
``bfloat16(float)``).

May import: :mod:`meshnn.errors`, :mod:`meshnn.formats`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor`
and the ops' checks, launch, outputs, registry and values modules.
"""

from __future__ import annotations

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.mesh.coord import MeshCoordinate
from meshnn.ops.checks import device_input, int_arg
from meshnn.ops.launch import launch
from meshnn.ops.outputs import Output
from meshnn.ops.registry import OpKind, register, torch_golden
from meshnn.ops.values import write_values
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig, TensorMemoryLayout, TensorSpec
from meshnn.tensor.tensor import Tensor

MAX_WIDTH = 16 * 1024 - 1
"""The widest row tt-metal's fill_rm program takes: ``W < 1024 * 16`` (one row staged in 16 tiles)."""


def _golden(torch, N, C, H, W, hOnes, wOnes, any, val_hi=1.0, val_lo=0.0, **_):
    out = torch.full((N, C, H, W), float(val_lo), dtype=torch.bfloat16)
    out[:, :, :hOnes, :wOnes] = float(val_hi)
    return out


_DECLARED = {
    "kind": OpKind.DATA_MOVEMENT,
    "family": OpFamily.COPY,
    "device_operation": "FillRMDeviceOperation",
    "golden": torch_golden(_golden),
    "modelled": False,
}
"""How both ops are declared: one device operation of tt-metal, with the same golden."""


def _dims(op: str, dims: dict[str, object], fills: dict[str, object]) -> tuple[tuple[int, ...], tuple[int, int]]:
    shape = tuple(int_arg(op, name, value) for name, value in dims.items())
    if min(shape) <= 0:
        raise MeshnnValueError(f"ttnn.{op}: N, C, H, W must all be positive, got {list(shape)}")
    if shape[3] > MAX_WIDTH:
        raise MeshnnValueError(f"ttnn.{op}: W ({shape[3]}) must be less than {MAX_WIDTH + 1} (one row in 16 tiles)")
    corner = tuple(int_arg(op, name, value) for name, value in fills.items())
    if not (0 <= corner[0] <= shape[2] and 0 <= corner[1] <= shape[3]):
        raise MeshnnValueError(
            f"ttnn.{op}: hOnes ({corner[0]}) and wOnes ({corner[1]}) must be in [0, H] and [0, W] "
            f"(H={shape[2]}, W={shape[3]})"
        )
    return shape, corner  # type: ignore[return-value]


def _filled(op: str, shape, corner, any_tensor: object, values: tuple[object, object], memory_config) -> Tensor:
    """The checked op: ``values`` (high, low) written as the corner and the rest."""
    source = device_input(op, "any", any_tensor)
    for name, value in zip(("val_hi", "val_lo"), values, strict=True):
        if isinstance(value, bool) or not isinstance(value, int | float | np.number):
            raise MeshnnTypeError(f"ttnn.{op}: {name} must be a number, got {value!r}")
    if source.dtype is not DataType.BFLOAT16:
        raise MeshnnTypeError(f"ttnn.{op}: any must be bfloat16 (it gives the output's dtype), got {source.dtype}")
    if memory_config is not None and not isinstance(memory_config, MemoryConfig):
        raise MeshnnTypeError(f"ttnn.{op}: memory_config must be a ttnn.MemoryConfig or None, got {memory_config!r}")
    out_config = memory_config if memory_config is not None else source.memory_config()
    for name, config in (("any", source.memory_config()), ("memory_config", out_config)):
        if config.memory_layout is not TensorMemoryLayout.INTERLEAVED:
            raise MeshnnValueError(f"ttnn.{op}: {name} must be interleaved (fill_rm does not shard), got {config}")
    spec = TensorSpec(shape, DataType.BFLOAT16, Layout.ROW_MAJOR, memory_config=out_config)
    high, low = (np.float32(v) for v in values)

    def kernel(in_rows, out_rows, coords: tuple[MeshCoordinate, ...]) -> None:
        grid = np.full(shape, low, np.float32)
        grid[:, :, : corner[0], : corner[1]] = high
        write_values(out_rows[0], np.broadcast_to(grid, (out_rows[0].shape[0], *shape)), spec)

    attrs = {"N": shape[0], "C": shape[1], "H": shape[2], "W": shape[3], "hFill": corner[0], "wFill": corner[1]}
    attrs |= {"val_hi": float(high), "val_lo": float(low), "output_mem_config": out_config}
    return launch(op, source.device(), [source], [Output(spec)], kernel, attrs=attrs)[0]


@register(**_DECLARED)
def fill_rm(
    N: int,  # ttnn's names, from its binding
    C: int,
    H: int,
    W: int,
    hOnes: int,
    wOnes: int,
    any: Tensor,
    val_hi: float,
    val_lo: float,
    *,
    memory_config: MemoryConfig | None = None,
) -> Tensor:
    """``[N, C, H, W]`` of ``val_lo`` with ``val_hi`` in the ``hOnes x wOnes`` corner of each matrix."""
    shape, corner = _dims("fill_rm", {"N": N, "C": C, "H": H, "W": W}, {"hOnes": hOnes, "wOnes": wOnes})
    return _filled("fill_rm", shape, corner, any, (val_hi, val_lo), memory_config)


@register(**_DECLARED)
def fill_ones_rm(
    N: int,  # ttnn's names, from its binding
    C: int,
    H: int,
    W: int,
    hOnes: int,
    wOnes: int,
    any: Tensor,
    *,
    memory_config: MemoryConfig | None = None,
) -> Tensor:
    """``fill_rm`` with ``val_hi`` 1 and ``val_lo`` 0."""
    shape, corner = _dims("fill_ones_rm", {"N": N, "C": C, "H": H, "W": W}, {"hOnes": hOnes, "wOnes": wOnes})
    return _filled("fill_ones_rm", shape, corner, any, (1.0, 0.0), memory_config)
