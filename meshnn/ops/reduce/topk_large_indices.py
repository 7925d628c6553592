"""``ttnn.experimental.topk_large_indices``: the indices of the ``k`` largest values of each row of a
long ROW_MAJOR bfloat16 tensor (tt-metal 2026-06, ``TopkLargeIndicesDeviceOperation``, Blackhole only).

Every leading dim is flattened into independent rows; the last dim (``n``) is a row.  Per row: the
indices of its ``k`` largest values, largest first (equal values: the lower index first, the order
meshnn's ``ttnn.topk`` gives them), as UINT32 ``[..., k]`` ROW_MAJOR in the input's memory config; a
chosen value that is -inf gives the sentinel index ``0xFFFFFFFF`` (tt-metal's kernel marks them so).
The kernel streams a row in windows of 512, 1024 or 2048 values (``k`` snapped up to one of them) and
merges their top-k: the result does not depend on the windows, so meshnn ranks each row at once.

ttnn's checks: ``k`` in ``[16, 2048]``, a multiple of 16 (and required: no default); a Blackhole
device; the input ROW_MAJOR, BFLOAT16, interleaved, on device; rank >= 1, at least one row (the
flattened leading dims fitting uint32), ``k <= n <= 2**30``.  tt-metal's program is cached by ``k``,
the input's dtype, layout and memory config and the grid, not its shape (rows and ``n`` are runtime
arguments): meshnn's program-cache entry is keyed the same way.

May import: :mod:`meshnn.errors`, :mod:`meshnn.formats`, :mod:`meshnn.device`, :mod:`meshnn.mesh`,
:mod:`meshnn.tensor` and the ops' checks, launch, outputs, values, registry and deepseek_prefill.arguments.
"""

from __future__ import annotations

import math

import numpy as np

from meshnn.device.arch import Arch
from meshnn.errors import MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.mesh.coord import MeshCoordinate
from meshnn.ops.checks import device_input, same_mesh
from meshnn.ops.deepseek_prefill.arguments import require, uint_arg
from meshnn.ops.launch import launch
from meshnn.ops.outputs import Output, out_spec_like
from meshnn.ops.registry import OpKind, register
from meshnn.ops.values import logical_values, write_values
from meshnn.perf.desc import OpFamily
from meshnn.tensor.tensor import Tensor

OP = "experimental.topk_large_indices"
MAX_K = 2048
K_STEP = 16
MAX_ROW = 1 << 30
"""The longest row (elements) the first implementation takes."""
SENTINEL = 0xFFFFFFFF
"""The index of a chosen -inf value."""
WINDOWS = (512, 1024, 2048)
"""The LLK window sizes a row streams through (``k`` snapped up to one)."""


def window(k: int) -> int:
    """The window (values) the kernel streams a row in for ``k``: the smallest of :data:`WINDOWS` >= k."""
    return next(w for w in WINDOWS if w >= k)


def largest_indices(values: np.ndarray, k: int) -> np.ndarray:
    """Indices ``(..., k)`` int64 of the ``k`` largest along the last axis, largest first, equal values
    the lower index first (also at the cut: of equal values on both sides of it, the lower indices are kept)."""
    key = -np.asarray(values, dtype=np.float32)
    n = key.shape[-1]
    if k == n:
        return np.argsort(key, axis=-1, kind="stable")
    cut = np.partition(key, k - 1, axis=-1)[..., k - 1 : k]
    better = key < cut
    equal = key == cut
    need = k - better.sum(axis=-1, keepdims=True)
    keep = better | (equal & (np.cumsum(equal, axis=-1) <= need))
    chosen = np.nonzero(keep.reshape(-1, n))[1].reshape(*key.shape[:-1], k)  # (each row: index order)
    ranked = np.argsort(np.take_along_axis(key, chosen, axis=-1), axis=-1, kind="stable")
    return np.take_along_axis(chosen, ranked, axis=-1)


def topk_indices(values: np.ndarray, k: int) -> np.ndarray:
    """The op's result for ``values`` ``(..., n)``: UINT32 indices ``(..., k)``, -inf ones the sentinel."""
    order = largest_indices(values, k)
    picked = np.take_along_axis(values, order, axis=-1)
    return np.where(np.isneginf(picked), SENTINEL, order).astype(np.uint32)


def _check_shape(shape: tuple[int, ...], k: int) -> None:
    if len(shape) < 1:
        raise MeshnnValueError(f"ttnn.{OP}: input_tensor must have rank >= 1")
    rows = math.prod(shape[:-1])
    if rows >= 1 << 32:
        raise MeshnnValueError(f"ttnn.{OP}: flattened leading dimensions must fit in uint32_t rows; got {list(shape)}")
    if rows == 0:
        raise MeshnnValueError(f"ttnn.{OP}: input_tensor must have at least one row, got shape {list(shape)}")
    n = shape[-1]
    if n < k:
        raise MeshnnValueError(f"ttnn.{OP}: input_tensor last dimension {n} must be >= k {k}")
    if n > MAX_ROW:
        raise MeshnnValueError(f"ttnn.{OP}: at most {MAX_ROW} elements in the last dimension are supported; got {n}")


@register(OP, kind=OpKind.REDUCTION, family=OpFamily.REDUCTION, device_operation="TopkLargeIndicesDeviceOperation")
def topk_large_indices(input_tensor: Tensor, *, k: int) -> Tensor:
    """UINT32 ``[..., k]``: the indices of each row's ``k`` largest values (see the module's text)."""
    count = uint_arg(OP, "k", k)
    x = device_input(OP, "input_tensor", input_tensor)
    if not (0 < count <= MAX_K and count % K_STEP == 0):
        raise MeshnnValueError(f"ttnn.{OP}: k must be in [16, {MAX_K}] in multiples of 16, got {count}")
    mesh = same_mesh(OP, {"input_tensor": x})
    if mesh.arch() is not Arch.BLACKHOLE:
        raise MeshnnValueError(f"ttnn.{OP}: only supported on Blackhole architecture, got {mesh.arch().name}")
    require(OP, "input_tensor", x, (DataType.BFLOAT16,), Layout.ROW_MAJOR)
    config = x.spec.memory_config
    if config.is_sharded():
        raise MeshnnValueError(f"ttnn.{OP}: input_tensor must use interleaved memory")
    shape = tuple(x.shape)
    _check_shape(shape, count)
    spec = out_spec_like(x, shape=(*shape[:-1], count), dtype=DataType.UINT32, layout=Layout.ROW_MAJOR, op=OP)
    in_spec = x.spec  # (the kernel holds no tensor: a trace must not keep it allocated)

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], _coords: tuple[MeshCoordinate, ...]) -> None:
        write_values(out_rows[0], topk_indices(logical_values(in_rows[0], in_spec), count), spec)

    grid = mesh.compute_with_storage_grid_size()
    key = (OP, count, x.dtype, x.layout, config.memory_layout, config.buffer_type, grid.x, grid.y)
    attrs = {"k": count}
    return launch(OP, mesh, [x], [Output(spec)], kernel, rowwise=True, attrs=attrs, program_key=key)[0]
