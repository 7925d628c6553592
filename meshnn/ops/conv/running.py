"""How a conv runs: its input brought to the device, its output's spec, its weights prepared
(or a prepared weight checked), and one MeshWorkload whose kernel computes every device's output
with torch in float32 from the device's own input, weight and bias values, rounded once into the
output's format.  Shared by ``conv2d``, ``conv1d`` and ``conv_transpose2d``.

Where the output goes, as ttnn's conv decides: ``memory_config`` when given; DRAM when the conv
runs in DRAM slices (``slice_config`` a DRAM slice type, or no ``slice_config`` and an input in
DRAM); else L1 (ttnn shards it there; meshnn interleaves it in L1, the same bytes in all).

May import: :mod:`meshnn.errors`, :mod:`meshnn.formats`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor`,
the ops' launch, checks, outputs and values modules, and the conv package.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from meshnn.device.buffer import BufferType
from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.mesh.coord import MeshCoordinate
from meshnn.mesh.mesh_device import MeshDevice
from meshnn.ops.checks import same_mesh
from meshnn.ops.conv.config import Conv2dConfig, Conv2dSliceConfig
from meshnn.ops.eltwise.activations import activation_steps, apply_steps
from meshnn.ops.launch import launch
from meshnn.ops.outputs import Output, out_spec_like
from meshnn.ops.values import logical_values, write_values
from meshnn.tensor.memory_config import DRAM_MEMORY_CONFIG, L1_MEMORY_CONFIG
from meshnn.tensor.placement import to_device
from meshnn.tensor.spec import MemoryConfig, TensorSpec
from meshnn.tensor.storage import DeviceStorage
from meshnn.tensor.tensor import Tensor, check_tensor

INPUT_DTYPES = (DataType.BFLOAT16, DataType.BFLOAT8_B, DataType.FLOAT32)

Compute = Callable[[np.ndarray, np.ndarray, np.ndarray | None], np.ndarray]
"""``compute(input values, prepared weight values, bias values or None)`` of one device: the
output values, ``(1, 1, N*OH*OW, OC)`` float32."""


def on_device(op: str, input_tensor: object, device: object) -> tuple[Tensor, MeshDevice]:
    """The conv's input on ``device`` (a host input is written there, DRAM interleaved, as ttnn
    writes it) and the mesh; its dtype checked."""
    tensor = check_tensor(input_tensor, f"ttnn.{op}: input_tensor")
    if tensor.dtype not in INPUT_DTYPES:
        raise MeshnnTypeError(f"ttnn.{op}: input_tensor must be bfloat16, bfloat8_b or float32, got {tensor.dtype}")
    if isinstance(tensor.storage, DeviceStorage):
        mesh = same_mesh(op, {"input_tensor": tensor})
        if device is not None and device is not mesh and not _same_device(device, mesh):
            raise MeshnnValueError(f"ttnn.{op}: input_tensor is on another device than device")
        return tensor, mesh
    if not isinstance(device, MeshDevice):
        raise MeshnnTypeError(f"ttnn.{op}: device must be a ttnn.MeshDevice for a host input, got {device!r}")
    if tensor.dtype.is_block_float and tensor.layout is not Layout.TILE:
        raise MeshnnValueError(f"ttnn.{op}: a {tensor.dtype} input_tensor must be in TILE layout")
    return to_device(tensor, device), device


def _same_device(device: object, mesh: MeshDevice) -> bool:
    return getattr(device, "mesh_id", None) == mesh.mesh_id


def check_slice_config(op: str, slice_config: object, name: str = "slice_config") -> None:
    """A conv's slice config checked: None or a ``ttnn.Conv2dSliceConfig``."""
    if slice_config is not None and not isinstance(slice_config, Conv2dSliceConfig):
        raise MeshnnTypeError(f"ttnn.{op}: {name} must be a ttnn.Conv2dSliceConfig, got {slice_config!r}")


def output_memory(
    op: str, tensor: Tensor, memory_config: object, slice_config: object, *, name: str = "slice_config"
) -> MemoryConfig:
    """Where the conv's output goes (see the module's text); ``name``: the slice config's argument name."""
    check_slice_config(op, slice_config, name)
    if memory_config is not None:
        if not isinstance(memory_config, MemoryConfig):
            raise MeshnnTypeError(f"ttnn.{op}: memory_config must be a ttnn.MemoryConfig, got {memory_config!r}")
        return memory_config
    in_dram = tensor.memory_config().buffer_type is BufferType.DRAM
    if (slice_config is None and in_dram) or (slice_config is not None and slice_config.in_dram):
        return DRAM_MEMORY_CONFIG
    return L1_MEMORY_CONFIG


def output_spec(
    op: str, tensor: Tensor, shape: tuple[int, ...], dtype: object, config: Conv2dConfig, memory: MemoryConfig
) -> TensorSpec:
    """The output's spec: ``dtype`` (None: the input's) in ``config.output_layout``."""
    if dtype is not None and not isinstance(dtype, DataType):
        raise MeshnnTypeError(f"ttnn.{op}: dtype must be a ttnn DataType, got {dtype!r}")
    target = dtype or tensor.dtype
    if target not in INPUT_DTYPES and target is not DataType.BFLOAT4_B:
        raise MeshnnValueError(f"ttnn.{op}: the output dtype must be bfloat16, bfloat8_b or float32, got {target}")
    if target.is_block_float and config.output_layout is not Layout.TILE:
        raise MeshnnValueError(f"ttnn.{op}: a {target} output needs conv_config.output_layout TILE")
    return out_spec_like(tensor, shape=shape, dtype=target, layout=config.output_layout, memory_config=memory, op=op)


def activation_of(op: str, config: Conv2dConfig) -> Callable[[np.ndarray], np.ndarray] | None:
    """``conv_config.activation`` as a function of float32 values (None: no activation)."""
    if config.activation is None:
        return None
    steps = activation_steps(op, "conv_config.activation", config.activation)
    return lambda x: apply_steps(steps, x)


@dataclass(frozen=True)
class ConvRun:
    """One conv's launch: its device inputs (input, prepared weight, prepared bias or None), the
    output spec and the per-device computation."""

    op: str
    mesh: MeshDevice
    inputs: tuple[Tensor, ...]
    spec: TensorSpec
    compute: Compute
    attrs: dict

    def launch(self, config: Conv2dConfig | None = None, given: Tensor | None = None) -> Tensor:
        """Run the conv; with ``config.deallocate_activation`` the input ``given`` (when it was a
        device tensor) is deallocated after it, as ttnn does."""
        output = self._launch()
        if config is not None and config.deallocate_activation and given is self.inputs[0]:
            given.deallocate()
        return output

    def _launch(self) -> Tensor:
        specs = [t.spec for t in self.inputs]
        has_bias = len(self.inputs) > 2
        compute, spec = self.compute, self.spec

        def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]) -> None:
            x = logical_values(in_rows[0], specs[0])
            w = logical_values(in_rows[1], specs[1])
            b = logical_values(in_rows[2], specs[2]) if has_bias else None
            out = [compute(x[i], w[i], None if b is None else b[i]) for i in range(x.shape[0])]
            write_values(out_rows[0], out[0][None] if len(out) == 1 else np.stack(out), spec)

        return launch(self.op, self.mesh, list(self.inputs), [Output(spec)], kernel, rowwise=True, attrs=self.attrs)[0]


def check_returns(op: str, return_output_dim: object, return_weights_and_bias: object) -> None:
    """The two return flags checked to be bools."""
    for name, value in (("return_output_dim", return_output_dim), ("return_weights_and_bias", return_weights_and_bias)):
        if not isinstance(value, bool):
            raise MeshnnTypeError(f"ttnn.{op}: {name} must be a bool, got {value!r}")


def results(output: Tensor, dims: object, weights: tuple, return_output_dim: bool, return_weights_and_bias: bool):
    """ttnn's conv return forms: the output, then its dims and/or the prepared weight and bias."""
    if return_output_dim and return_weights_and_bias:
        return output, dims, weights
    if return_output_dim:
        return output, dims
    if return_weights_and_bias:
        return output, weights
    return output
