"""Conv weights and biases prepared for a device, as ttnn's ``prepare_conv_weights`` /
``prepare_conv_bias`` / ``prepare_conv_transpose2d_weights`` / ``prepare_conv_transpose2d_bias``
make them, and read back by the conv kernels.

A prepared weight is a device tensor ``[1, 1, KH*KW*I, OC]`` in TILE layout and the weights dtype
(``conv_config.weights_dtype``, else the given weight's dtype), row ``(kh*KW + kw)*I + ic`` holding
``weight[:, ic, kh, kw]``: the weight matrix the conv's matmul multiplies, rounded once into the weights
dtype (bfloat8_b's shared exponents run along output channels, as on a device).  ``I`` is every input
channel: a grouped conv's weight (``[OC, IC/groups, KH, KW]``) is first zero-padded to ``[OC, IC, KH, KW]``,
each output channel holding its group's input channels and zeros elsewhere, as ttnn prepares it
(prepare_conv2d_weights.cpp: convert_conv_weight_tensor_to_grouped_layout, in the trees of 2025-07 and 2026-06 alike);
only a 1-D depthwise conv without bias keeps ``I = IC/groups`` (tt-metal gives it a depthwise layout
shaped by its activation block, which meshnn does not have).  A prepared bias is ``[1, 1, 1, OC]`` TILE.
ttnn pads both to its channel alignment; meshnn keeps them unpadded.  A conv given a device weight takes it as
prepared (as ttnn does) and checks its shape.

A transposed conv's weight (``IOHW``) is prepared as the equivalent conv's: each group's
``[IC, OC/g]`` block transposed and the kernel mirrored (``mirror_kernel=False``: the caller
mirrored it already).

May import: :mod:`meshnn.errors`, :mod:`meshnn.formats`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor`
and the conv package's config and geometry.
"""

from __future__ import annotations

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.mesh.mesh_device import MeshDevice
from meshnn.ops.conv.config import Conv2dConfig
from meshnn.ops.conv.geometry import pair, positive
from meshnn.tensor.interop import to_numpy
from meshnn.tensor.placement import to_device
from meshnn.tensor.readback import decoded_shards
from meshnn.tensor.shards import from_host_shards
from meshnn.tensor.storage import DeviceStorage
from meshnn.tensor.tensor import Tensor, check_tensor
from meshnn.tensor.topology import PlacementShard

WEIGHT_DTYPES = (DataType.BFLOAT16, DataType.BFLOAT8_B, DataType.FLOAT32)


def conv_config_of(op: str, conv_config: object) -> Conv2dConfig:
    """``conv_config`` checked (None: ttnn's defaults)."""
    if conv_config is None:
        return Conv2dConfig()
    if not isinstance(conv_config, Conv2dConfig):
        raise MeshnnTypeError(f"ttnn.{op}: conv_config must be a ttnn.Conv2dConfig, got {conv_config!r}")
    return conv_config


def is_prepared(tensor: Tensor) -> bool:
    """A weight or bias already on a device: ttnn takes it as prepared."""
    return isinstance(tensor.storage, DeviceStorage)


def weights_dtype(op: str, config: Conv2dConfig, given: DataType) -> DataType:
    """The prepared weights' dtype: the config's, else the given weight's."""
    dtype = config.weights_dtype or given
    if dtype not in WEIGHT_DTYPES:
        raise MeshnnValueError(f"ttnn.{op}: weights must be bfloat16, bfloat8_b or float32, got {dtype}")
    return dtype


def host_values(op: str, name: str, tensor: object) -> np.ndarray:
    """The values of a host (or device) tensor in torch's layout, as float32."""
    tensor = check_tensor(tensor, f"ttnn.{op}: {name}")
    try:
        return np.asarray(to_numpy(tensor), dtype=np.float32)
    except MeshnnValueError:  # several shards: a replicated weight has the same values in each
        from meshnn.tensor.readback import decoded_shards

        return np.asarray(decoded_shards(tensor)[0], dtype=np.float32)


def place(values: np.ndarray, dtype: DataType, mesh: object) -> Tensor:
    """``values`` written to every device of ``mesh`` as a TILE tensor of ``dtype`` (DRAM)."""
    if not isinstance(mesh, MeshDevice):
        raise MeshnnTypeError(f"device must be a ttnn.MeshDevice, got {type(mesh).__name__}")
    return Tensor(np.ascontiguousarray(values, dtype=np.float32), dtype, device=mesh, layout=Layout.TILE)


def prepared_on(op: str, name: str, tensor: Tensor, prepare, dtype: DataType, mesh: object) -> Tensor:
    """A host weight or bias made into its device form by ``prepare`` (torch-layout float32 values
    -> the prepared array) on ``mesh``: the same values on every device for a plain or replicated
    tensor; for a tensor distributed with a sharded placement (tt-metal's ``tt_dit`` shards conv
    weights over a mesh axis), each device its own shard's, as ttnn prepares each device's shard."""
    topology = tensor.tensor_topology()
    sharded = len(topology.mesh_coords) > 1 and any(isinstance(p, PlacementShard) for p in topology.placements())
    if not sharded:
        return place(prepare(host_values(op, name, tensor)), dtype, mesh)
    if not isinstance(mesh, MeshDevice):
        raise MeshnnTypeError(f"device must be a ttnn.MeshDevice, got {type(mesh).__name__}")
    if list(topology.mesh_coords) != list(mesh.shape.coords()):
        raise MeshnnValueError(
            f"ttnn.{op}: {name}'s shards lie on {len(topology.mesh_coords)} coordinates, not one on each device "
            f"of the {mesh.shape} mesh"
        )
    shards = [prepare(np.asarray(v, dtype=np.float32)) for v in decoded_shards(tensor)]
    host = [Tensor(np.ascontiguousarray(v, dtype=np.float32), dtype, layout=Layout.TILE) for v in shards]
    return to_device(from_host_shards(host, mesh.shape), mesh)


def weight_matrix(weight: np.ndarray) -> np.ndarray:
    """An ``OIHW`` conv weight as the ``[1, 1, KH*KW*I, O]`` matrix a device multiplies by."""
    o, i, kh, kw = weight.shape
    return weight.transpose(2, 3, 1, 0).reshape(1, 1, kh * kw * i, o)


def weight_oihw(matrix: np.ndarray, kernel: tuple[int, int]) -> np.ndarray:
    """The inverse of :func:`weight_matrix`."""
    rows, o = matrix.shape[-2:]
    kh, kw = kernel
    return matrix.reshape(kh, kw, rows // (kh * kw), o).transpose(3, 2, 0, 1)


def grouped_layout(weight: np.ndarray, groups: int) -> np.ndarray:
    """A grouped conv's ``OIHW`` weight ``[OC, IC/groups, KH, KW]`` zero-padded to ``[OC, IC, KH, KW]``:
    output channel ``o`` of group ``g = o // (OC/groups)`` holds its values at input channels
    ``g*IC/groups ...``, zeros elsewhere (ttnn's grouped layout; ``groups`` 1: ``weight`` itself)."""
    if groups == 1:
        return weight
    oc, icg, kh, kw = weight.shape
    out = np.zeros((groups, oc // groups, groups, icg, kh, kw), dtype=weight.dtype)
    diagonal = np.arange(groups)
    out[diagonal, :, diagonal] = weight.reshape(groups, oc // groups, icg, kh, kw)
    return out.reshape(oc, groups * icg, kh, kw)


def group_blocks(weight: np.ndarray, groups: int) -> np.ndarray:
    """The inverse of :func:`grouped_layout`: each output channel's own group's input channels,
    ``[OC, IC/groups, KH, KW]``."""
    if groups == 1:
        return weight
    oc, ic, kh, kw = weight.shape
    diagonal = np.arange(groups)
    blocks = weight.reshape(groups, oc // groups, groups, ic // groups, kh, kw)[diagonal, :, diagonal]
    return np.ascontiguousarray(blocks.reshape(oc, ic // groups, kh, kw))


def padded_groups(groups: int, in_channels: int, out_channels: int, *, conv1d: bool, has_bias: bool) -> int:
    """The groups a prepared weight is zero-padded over (see the module's text): ``groups``, or 1 for
    a 1-D depthwise conv without bias (tt-metal's is_1d_depthwise_conv)."""
    depthwise_1d = conv1d and groups == in_channels == out_channels and not has_bias
    return 1 if depthwise_1d else groups


def transposed_as_conv(weight: np.ndarray, groups: int, mirror: bool) -> np.ndarray:
    """An ``IOHW`` transposed-conv weight (``[IC, OC/g, KH, KW]``) as the ``OIHW`` weight of the
    equivalent conv over the stride-dilated input (``[OC, IC/g, KH, KW]``)."""
    ic, ocg, kh, kw = weight.shape
    w = (
        weight.reshape(groups, ic // groups, ocg, kh, kw)
        .transpose(0, 2, 1, 3, 4)
        .reshape(groups * ocg, ic // groups, kh, kw)
    )
    return np.ascontiguousarray(w[:, :, ::-1, ::-1] if mirror else w)


def conv_as_transposed(weight: np.ndarray, groups: int) -> np.ndarray:
    """The inverse of :func:`transposed_as_conv` (mirrored): the ``IOHW`` weight torch's
    ``conv_transpose2d`` takes."""
    oc, icg, kh, kw = weight.shape
    w = weight[:, :, ::-1, ::-1].reshape(groups, oc // groups, icg, kh, kw).transpose(0, 2, 1, 3, 4)
    return np.ascontiguousarray(w.reshape(groups * icg, oc // groups, kh, kw))


def check_weight(
    op: str, weight: np.ndarray, out_channels: int, in_per_group: int, kernel: tuple[int, int]
) -> np.ndarray:
    """An ``OIHW`` weight checked against the conv's channels and kernel (conv1d's ``[O, I, K]``
    for a ``(K, 1)`` kernel, or a ``(1, K)`` one as tt-metal of 2026 reads it over a height-1
    input, too); returns it as ``OIHW``."""
    if weight.ndim == 3 and kernel[1] == 1:
        weight = weight[..., None]
    elif weight.ndim == 3 and kernel[0] == 1:
        weight = weight[:, :, None, :]
    want = (out_channels, in_per_group, *kernel)
    if tuple(weight.shape) != want:
        raise MeshnnValueError(
            f"ttnn.{op}: weight_tensor {list(weight.shape)} must be [out_channels, in_channels/groups, kernel_h, "
            f"kernel_w] = {list(want)}"
        )
    return weight


def check_prepared(op: str, weight: Tensor, out_channels: int, in_rows: int, kernel: tuple[int, int]) -> None:
    """A device weight checked to be a prepared one of this conv (``in_rows``: the input channels its
    matrix holds per kernel position, every one for a zero-padded grouped weight)."""
    want = (1, 1, kernel[0] * kernel[1] * in_rows, out_channels)
    if tuple(weight.shape) != want:
        raise MeshnnValueError(
            f"ttnn.{op}: weight_tensor on the device must be prepared for this conv (ttnn.prepare_conv_weights): "
            f"{list(want)}, got {list(weight.shape)}"
        )


def prepared_bias(op: str, bias: object, out_channels: int, dtype: DataType, mesh: object) -> Tensor:
    """A bias (any shape holding ``out_channels`` values) prepared: ``[1, 1, 1, OC]`` TILE."""
    tensor = check_tensor(bias, f"ttnn.{op}: bias_tensor")
    if is_prepared(tensor) and tuple(tensor.shape) == (1, 1, 1, out_channels):
        return tensor

    def prepare(values: np.ndarray) -> np.ndarray:
        if values.size != out_channels:
            raise MeshnnValueError(
                f"ttnn.{op}: bias_tensor {list(values.shape)} must hold out_channels = {out_channels} values"
            )
        return values.reshape(1, 1, 1, out_channels)

    return prepared_on(op, "bias_tensor", tensor, prepare, dtype, mesh)


def conv_args(op: str, in_channels, out_channels, groups, kernel_size) -> tuple[int, int, int, tuple[int, int]]:
    """in_channels, out_channels, groups and kernel_size checked (groups divide both).  ``groups=0`` is
    an ungrouped conv, as in ttnn, whose conv checks only ``groups > 1`` (its basic conv tutorial passes 0)."""
    ic, oc = positive(op, "in_channels", in_channels), positive(op, "out_channels", out_channels)
    g = positive(op, "groups", groups, least=0) or 1
    if ic % g or oc % g:
        raise MeshnnValueError(f"ttnn.{op}: groups {g} must divide in_channels {ic} and out_channels {oc}")
    return ic, oc, g, pair(op, "kernel_size", kernel_size)  # type: ignore[return-value]
