"""``ttnn.moreh_full`` and ``ttnn.moreh_full_like``: moreh's creation ops, a device tensor of one
value.  ``moreh_full(shape, fill_value, any, *, dtype, layout, memory_config)`` (``device=``: the 2026
binding's name for ``any``) puts the tensor on
``any``'s device (``any`` is a device or a tensor on one, whose dtype and layout are the
defaults then); ``moreh_full_like(input, fill_value, *,
dtype, layout, memory_config)`` takes ``input``'s shape, dtype, layout, device and memory config
unless given.  Defaults as moreh's: bfloat16 (an int ``fill_value`` with no dtype: int32), TILE.

May import: :mod:`meshnn.errors`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor` and the ops' checks,
registry, launch, outputs and values modules.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from meshnn.errors import MeshnnTypeError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.mesh.coord import MeshCoordinate
from meshnn.mesh.mesh_device import MeshDevice
from meshnn.ops.checks import device_input, int_list
from meshnn.ops.launch import launch
from meshnn.ops.outputs import Output, out_spec_like
from meshnn.ops.registry import OpKind, register, torch_golden
from meshnn.ops.values import write_values
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig, TensorSpec
from meshnn.tensor.tensor import Tensor


def _value(op: str, fill_value: object) -> int | float:
    if isinstance(fill_value, bool) or not isinstance(fill_value, int | float | np.number):
        raise MeshnnTypeError(f"ttnn.{op}: fill_value must be an int or a float, got {fill_value!r}")
    return fill_value  # type: ignore[return-value]


@register(
    kind=OpKind.CREATION,
    family=OpFamily.COPY,
    device_operation="FullOperation",
    golden=torch_golden(lambda torch, shape, fill_value, *_, **__: torch.full(list(shape), fill_value)),
    modelled=False,
)
def moreh_full(
    shape: Sequence[int],
    fill_value: float,
    any: MeshDevice | Tensor | None = None,
    *,
    dtype: DataType | None = None,
    layout: Layout | None = None,
    memory_config: MemoryConfig | None = None,
    device: MeshDevice | None = None,
) -> Tensor:
    """A device tensor of ``shape`` holding ``fill_value``, on ``any`` (a device, or a tensor's).
    ``device``: the 2026 binding's name for the same argument (gpt-oss's fused decode passes it)."""
    value = _value("moreh_full", fill_value)
    if (any is None) == (device is None):
        raise MeshnnTypeError("ttnn.moreh_full: give the device once, as the third argument or device=")
    any = device if any is None else any
    if isinstance(any, Tensor):
        device = device_input("moreh_full", "any", any).device()
        dtype, layout = dtype or any.dtype, layout or any.layout
    elif isinstance(any, MeshDevice):
        device = any
    else:
        raise MeshnnTypeError(f"ttnn.moreh_full: any must be a device or a device tensor, got {type(any).__name__}")
    if dtype is None:
        dtype = DataType.INT32 if isinstance(value, int | np.integer) else DataType.BFLOAT16
    if not isinstance(dtype, DataType) or (layout is not None and not isinstance(layout, Layout)):
        raise MeshnnTypeError(f"ttnn.moreh_full: dtype and layout must be ttnn's, got {dtype!r} and {layout!r}")
    dims = int_list("moreh_full", "shape", shape)
    spec = TensorSpec(dims, dtype, layout or Layout.TILE, memory_config=memory_config)
    return _launched("moreh_full", device, [], spec, value, tuple(device.shape.coords()))


@register(
    kind=OpKind.CREATION,
    family=OpFamily.COPY,
    device_operation="FullLikeOperation",
    golden=torch_golden(lambda torch, input, fill_value, **_: torch.full_like(input, fill_value)),
    modelled=False,
)
def moreh_full_like(
    input: Tensor,
    fill_value: float,
    *,
    dtype: DataType | None = None,
    layout: Layout | None = None,
    memory_config: MemoryConfig | None = None,
) -> Tensor:
    """A device tensor like ``input`` (on its device) holding ``fill_value``."""
    value = _value("moreh_full_like", fill_value)
    tensor = device_input("moreh_full_like", "input", input)
    spec = out_spec_like(tensor, dtype=dtype, layout=layout, memory_config=memory_config, op="moreh_full_like")
    return _launched("moreh_full_like", tensor.device(), [tensor], spec, value, None)


def _launched(op: str, mesh: MeshDevice, inputs: list[Tensor], spec: TensorSpec, value: float, coords) -> Tensor:
    """The device op that fills a new tensor of ``spec`` with ``value`` (rounded into its dtype)."""
    kind = np.float32 if spec.dtype.is_float else spec.dtype.storage_dtype

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], where: tuple[MeshCoordinate, ...]) -> None:
        write_values(out_rows[0], np.full((out_rows[0].shape[0], *spec.shape), value, kind), spec)

    attrs = {"fill_value": value, "memory_config": spec.memory_config}
    return launch(op, mesh, inputs, [Output(spec)], kernel, coords=coords, rowwise=True, attrs=attrs)[0]
