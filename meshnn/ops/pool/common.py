"""What every pool shares: the input checked to be a device tensor of a dtype pools take, the
output's spec (ttnn's ``dtype`` and ``output_layout``, L1 unless ``memory_config`` says
otherwise: ttnn shards a pool's output in L1, meshnn interleaves it there), and one MeshWorkload
whose kernel computes every device's output from that device's input values with torch in
float32, rounded once into the output's format.

May import: :mod:`meshnn.errors`, :mod:`meshnn.formats`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor`,
the ops' launch, checks, outputs and values modules and the conv geometry.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.mesh.coord import MeshCoordinate
from meshnn.ops.checks import device_input, same_mesh
from meshnn.ops.launch import launch
from meshnn.ops.outputs import Output, out_spec_like
from meshnn.ops.values import logical_values, write_values
from meshnn.tensor.memory_config import L1_MEMORY_CONFIG
from meshnn.tensor.spec import MemoryConfig, TensorSpec
from meshnn.tensor.tensor import Tensor

POOL_DTYPES = (DataType.BFLOAT16, DataType.BFLOAT8_B, DataType.FLOAT32)


def pool_input(op: str, input_tensor: object, dtypes=POOL_DTYPES) -> Tensor:
    """``input_tensor`` checked to be a device tensor of a dtype the op takes."""
    tensor = device_input(op, "input_tensor", input_tensor)
    if tensor.dtype not in dtypes:
        raise MeshnnTypeError(
            f"ttnn.{op}: input_tensor must be {', '.join(str(d) for d in dtypes)}, got {tensor.dtype}"
        )
    return tensor


def check_slice_config(op: str, value: object) -> object:
    """``dram_slice_config`` checked: None (ttnn decides) or a ``ttnn.Op2DSliceConfig`` (ttnn's
    ``Conv2dSliceConfig``); how a DRAM input is cut into slices, recorded (the values are the same)."""
    from meshnn.ops.conv.config import Conv2dSliceConfig

    if value is not None and not isinstance(value, Conv2dSliceConfig):
        raise MeshnnTypeError(f"ttnn.{op}: dram_slice_config must be a ttnn.Op2DSliceConfig or None, got {value!r}")
    return value


def pool_spec(
    op: str, tensor: Tensor, shape: tuple[int, ...], dtype: object, layout: object, memory_config: object
) -> TensorSpec:
    """The output's spec: ``dtype`` in ``layout``, ``memory_config`` (None: L1 interleaved)."""
    if not isinstance(dtype, DataType):
        raise MeshnnTypeError(f"ttnn.{op}: dtype must be a ttnn DataType, got {dtype!r}")
    if not isinstance(layout, Layout):
        raise MeshnnTypeError(f"ttnn.{op}: output_layout must be a ttnn Layout, got {layout!r}")
    if dtype.is_block_float and layout is not Layout.TILE:
        raise MeshnnValueError(f"ttnn.{op}: a {dtype} output needs output_layout TILE")
    if memory_config is not None and not isinstance(memory_config, MemoryConfig):
        raise MeshnnTypeError(f"ttnn.{op}: memory_config must be a ttnn.MemoryConfig, got {memory_config!r}")
    memory = memory_config if memory_config is not None else L1_MEMORY_CONFIG
    return out_spec_like(tensor, shape=shape, dtype=dtype, layout=layout, memory_config=memory, op=op)


def run_pool(
    op: str,
    inputs: list[Tensor],
    specs: list[TensorSpec],
    compute: Callable[..., list[np.ndarray]],
    attrs: Mapping[str, object],
) -> list[Tensor]:
    """Launch ``compute(*input values of one device)`` -> that device's output values, one per
    output spec, on every device."""
    mesh = same_mesh(op, {f"input {i}": t for i, t in enumerate(inputs)})
    in_specs = [t.spec for t in inputs]

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]) -> None:
        values = [logical_values(rows, spec) for rows, spec in zip(in_rows, in_specs, strict=True)]
        outs = [compute(*(v[i] for v in values)) for i in range(values[0].shape[0])]
        for j, spec in enumerate(specs):
            write_values(out_rows[j], np.stack([o[j] for o in outs]), spec)

    return launch(op, mesh, inputs, [Output(s) for s in specs], kernel, rowwise=True, attrs=dict(attrs))


def nchw_tensor(values: np.ndarray, batch: int, height: int, width: int, channels: int):
    """Flattened NHWC values as a float32 torch ``(N, C, H, W)`` tensor (first ``channels``): a
    channels-last view of the NHWC values, which torch's pooling kernels run on as they are."""
    from meshnn.ops.conv.geometry import torch_module

    torch = torch_module()
    x = np.asarray(values, dtype=np.float32).reshape(batch, height, width, -1)[..., :channels]
    if not (x.flags.writeable and x.flags.c_contiguous):  # (torch takes only writable arrays)
        x = np.array(x, order="C")
    return torch.from_numpy(x).permute(0, 3, 1, 2)
