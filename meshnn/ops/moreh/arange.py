"""``ttnn.operations.moreh.arange(start, end, step, any, *, output, untilize_out, dtype,
memory_config)``: ``start + i * step`` for ``i`` in ``[0, ceil((end - start) / step))``, computed
in float32 as moreh's kernel computes it (its arguments are floats), then rounded into ``dtype``
(None: ``any``'s dtype when ``any`` is a tensor, else bfloat16; int32 takes the values truncated).
``any`` names the device (a device, or a tensor on one).  The output is ``[1, N]`` TILE, or
``[N]`` ROW_MAJOR with ``untilize_out``; a given ``output`` is written in place and must have
``dtype``, INTERLEAVED memory and the layout ``untilize_out`` asks for.

May import: every layer below the ops and the ops' checks, launch, outputs, registry and values
modules.
"""

from __future__ import annotations

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.mesh.coord import MeshCoordinate
from meshnn.mesh.mesh_device import MeshDevice
from meshnn.ops.checks import device_input
from meshnn.ops.launch import launch
from meshnn.ops.outputs import Output
from meshnn.ops.registry import OpKind, register, torch_golden
from meshnn.ops.values import write_values
from meshnn.perf.desc import OpFamily
from meshnn.tensor.memory_config import DRAM_MEMORY_CONFIG
from meshnn.tensor.spec import MemoryConfig, TensorMemoryLayout, TensorSpec
from meshnn.tensor.tensor import Tensor

OP = "ttnn.operations.moreh.arange"


def _bounds(start: object, end: object, step: object) -> tuple[np.float32, np.float32, np.float32, int]:
    """The bounds as float32 and the element count, checked as moreh checks them."""
    for name, value in (("start", start), ("end", end), ("step", step)):
        if isinstance(value, bool) or not isinstance(value, int | float | np.number):
            raise MeshnnTypeError(f"{OP}: {name} must be a number, got {value!r}")
    lo, hi, by = np.float32(start), np.float32(end), np.float32(step)
    if by == 0:
        raise MeshnnValueError(f"{OP}: step must be nonzero.")
    if not ((by > 0 and hi >= lo) or (by < 0 and hi <= lo)):
        raise MeshnnValueError(f"{OP}: Upper bound and larger bound inconsistent with step sign.")
    return lo, hi, by, int(np.ceil(np.float32((hi - lo) / by)))


def _device(any: object) -> MeshDevice:
    if isinstance(any, Tensor):
        return device_input("operations.moreh.arange", "any", any).device()
    if isinstance(any, MeshDevice):
        return any
    raise MeshnnTypeError(f"{OP}: any must be a device or a device tensor, got {type(any).__name__}")


def _output(output: object, dtype: DataType, untilize_out: bool) -> Tensor:
    tensor = device_input("operations.moreh.arange", "output", output)
    if tensor.dtype is not dtype:
        raise MeshnnValueError(
            f"{OP}: If output is provided as input, its dtype should match the dtype parameter. ({tensor.dtype} and "
            f"{dtype})"
        )
    if tensor.memory_config().memory_layout is not TensorMemoryLayout.INTERLEAVED:
        raise MeshnnValueError(f"{OP}: Output memory config layout must be INTERLEAVED")
    wanted = Layout.ROW_MAJOR if untilize_out else Layout.TILE
    if tensor.layout is not wanted:
        raise MeshnnValueError(f"{OP}: Error: output_layout must be {wanted} when untilize_out is {untilize_out}")
    return tensor


@register(
    name="moreh.arange",
    kind=OpKind.CREATION,
    family=OpFamily.COPY,
    device_operation="MorehArangeOperation",
    golden=torch_golden(lambda torch, start=0, end=None, step=1, *_, **__: torch.arange(start, end, step)),
    modelled=False,
)
def arange(
    start: float = 0,
    end: float | None = None,
    step: float = 1,
    any: MeshDevice | Tensor | None = None,
    *,
    output: Tensor | None = None,
    untilize_out: bool = False,
    dtype: DataType | None = None,
    memory_config: MemoryConfig | None = None,
) -> Tensor:
    """The values ``start, start + step, ...`` below ``end`` (above it for a negative step)."""
    lo, _, by, count = _bounds(start, end, step)
    mesh = _device(any)
    if not isinstance(untilize_out, bool):
        raise MeshnnTypeError(f"{OP}: untilize_out must be a bool, got {untilize_out!r}")
    dtype = dtype if dtype is not None else any.dtype if isinstance(any, Tensor) else DataType.BFLOAT16
    if not isinstance(dtype, DataType) or dtype in (DataType.BFLOAT8_B, DataType.UINT32):
        raise MeshnnValueError(f"{OP}: moreh arange does not support the dtype {dtype!r}")
    if memory_config is not None and not isinstance(memory_config, MemoryConfig):
        raise MeshnnTypeError(f"{OP}: memory_config must be a ttnn.MemoryConfig, got {memory_config!r}")
    into = None if output is None else _output(output, dtype, untilize_out)
    layout = Layout.ROW_MAJOR if untilize_out else Layout.TILE
    shape = (count,) if untilize_out else (1, count)
    spec = (
        into.spec
        if into is not None
        else TensorSpec(shape, dtype, layout, memory_config=memory_config or DRAM_MEMORY_CONFIG)
    )
    if spec.logical_volume() != count:
        raise MeshnnValueError(f"{OP}: output has shape {list(spec.shape)}; arange makes {count} values")

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], where: tuple[MeshCoordinate, ...]) -> None:
        values = lo + np.arange(count, dtype=np.float32) * by  # float32, as the kernel's arithmetic
        if not dtype.is_float:
            values = values.astype(np.int64)
        rows = out_rows[0].shape[0]
        write_values(out_rows[0], np.broadcast_to(values.reshape(spec.shape), (rows, *spec.shape)).copy(), spec)

    attrs = {"start": float(start), "end": float(end), "step": float(step), "untilize_out": untilize_out}
    coords = tuple(mesh.shape.coords())
    into_list = [into] if into is not None else None
    return launch(
        "moreh.arange", mesh, [], [Output(spec)], kernel, coords=coords, into=into_list, rowwise=True, attrs=attrs
    )[0]
