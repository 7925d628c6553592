"""The device ports of the MoE weight packers (``ttnn.experimental.prepare_w0_w1_tensor_for_moe_compute``
and the rest, tt-metal's C++ ports of its torch helpers): each device's shard of a mesh tensor packed
as :mod:`meshnn.ops.ccl.moe_weight_packs` packs it (the bytes move through the host: a reorder of
weights at load time), and the shard maps and memory configs of a mesh.

May import: :mod:`meshnn.errors`, :mod:`meshnn.device`, :mod:`meshnn.tensor`, the ops' registry and
the MoE helper modules.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from meshnn.device.core import CoreRangeSet
from meshnn.errors import MeshnnValueError
from meshnn.ops.ccl.moe_weight_packs import (
    get_weight_core_shard_maps,
    get_weight_mem_configs,
    prepare_w0_w1_tensor_for_moe_compute,
    prepare_w0_w1_tensor_with_bias,
    prepare_w2_tensor_for_moe_compute,
    prepare_w2_tensor_with_bias,
)
from meshnn.ops.registry import DeviceWork, OpKind, register
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig


@dataclass(frozen=True)
class WeightCoreShardMaps:
    """``ttnn.experimental.get_weight_core_shard_maps``' result."""

    w0_w1_shard_map: list[int]
    w2_shard_map: list[tuple[int, int]]
    dram_core_range_set: CoreRangeSet


@dataclass(frozen=True)
class WeightMemConfigs:
    """``ttnn.experimental.get_weight_mem_configs``' result."""

    w0_w1: MemoryConfig
    w2: MemoryConfig
    k_for_shard: int
    w2_n_total: int


def _per_device(tensors: list[Any], pack) -> Any:
    """A mesh tensor whose device ``i`` holds ``pack`` of device ``i``'s shards of ``tensors``."""
    import torch

    from meshnn.tensor.interop import from_torch, to_torch
    from meshnn.tensor.mappers import ShardTensorToMesh
    from meshnn.tensor.reshape import reshape
    from meshnn.tensor.shards import get_device_tensors
    from meshnn.tensor.tensor import Tensor

    if not all(isinstance(t, Tensor) and t.is_allocated() and hasattr(t.storage, "mesh_buffer") for t in tensors):
        raise MeshnnValueError(f"the weights must be device tensors, got {[type(t).__name__ for t in tensors]}")
    mesh = tensors[0].device()
    shards = [[to_torch(s) for s in get_device_tensors(t)] for t in tensors]
    packed = torch.stack([pack(*per) for per in zip(*shards, strict=True)])
    mapper = ShardTensorToMesh(mesh, dim=0)
    out = from_torch(packed, dtype=tensors[0].dtype, layout=tensors[0].layout, device=mesh, mesh_mapper=mapper)
    return reshape(out, list(packed.shape[1:]))


@register("experimental.prepare_w0_w1_tensor_for_moe_compute", kind=OpKind.DATA_MOVEMENT, family=OpFamily.PERMUTE)
def port_prepare_w0_w1(w0, w1, *, L: int, E: int, K: int, N: int):
    """``ttnn.experimental.prepare_w0_w1_tensor_for_moe_compute``: each device's experts packed."""
    shard_map, _, _ = get_weight_core_shard_maps(w0.device(), K, N)
    return _per_device([w0, w1], lambda a, b: prepare_w0_w1_tensor_for_moe_compute(a, b, L, E, K, N, shard_map))


@register("experimental.prepare_w2_tensor_for_moe_compute", kind=OpKind.DATA_MOVEMENT, family=OpFamily.PERMUTE)
def port_prepare_w2(w2, *, L: int, E: int, N: int, K: int):
    """``ttnn.experimental.prepare_w2_tensor_for_moe_compute``: each device's experts packed."""
    w0_w1_map, w2_map, _ = get_weight_core_shard_maps(w2.device(), K, N)
    return _per_device([w2], lambda a: prepare_w2_tensor_for_moe_compute(a, L, E, N, K, w2_map, w0_w1_map))


@register("experimental.prepare_w0_w1_tensor_with_bias", kind=OpKind.DATA_MOVEMENT, family=OpFamily.PERMUTE)
def port_prepare_w0_w1_with_bias(w0, w1, b0, b1, *, L: int, E: int, K: int, N: int):
    """``ttnn.experimental.prepare_w0_w1_tensor_with_bias``: each device's experts packed."""
    shard_map, _, _ = get_weight_core_shard_maps(w0.device(), K, N)
    pack = lambda a, b, c, d: prepare_w0_w1_tensor_with_bias(a, b, c, d, L, E, K, N, shard_map)  # noqa: E731
    return _per_device([w0, w1, b0, b1], pack)


@register("experimental.prepare_w2_tensor_with_bias", kind=OpKind.DATA_MOVEMENT, family=OpFamily.PERMUTE)
def port_prepare_w2_with_bias(w2, b2, *, L: int, E: int, N: int, K: int):
    """``ttnn.experimental.prepare_w2_tensor_with_bias``: each device's experts packed."""
    w0_w1_map, w2_map, _ = get_weight_core_shard_maps(w2.device(), K, N)
    return _per_device([w2, b2], lambda a, b: prepare_w2_tensor_with_bias(a, b, L, E, N, K, w2_map, w0_w1_map))


@register("experimental.add_shared_expert_weights", kind=OpKind.DATA_MOVEMENT, family=OpFamily.PERMUTE)
def port_add_shared(routed_w0, routed_w1, routed_w2, shared_w0, shared_w1, shared_w2, *, cluster_axis: int):
    """``ttnn.experimental.add_shared_expert_weights`` on a line (``cluster_axis`` along it): each
    device's routed experts then its shared ones (dim 1)."""
    import torch

    if isinstance(cluster_axis, bool) or cluster_axis not in (0, 1):
        raise MeshnnValueError(f"cluster_axis must be 0 or 1, got {cluster_axis!r}")
    mesh = routed_w0.device()
    if mesh is not None and mesh.shape[1 - cluster_axis] != 1:
        raise MeshnnValueError(f"meshnn packs shared experts on a line; the mesh is {list(mesh.shape)}")
    pairs = ((routed_w0, shared_w0), (routed_w1, shared_w1), (routed_w2, shared_w2))
    return tuple(_per_device([r, s], lambda a, b: torch.cat([a, b], dim=1)) for r, s in pairs)


@register(
    "experimental.get_weight_core_shard_maps",
    kind=OpKind.PYTHON,
    family=OpFamily.COPY,
    modelled=False,
    runs=DeviceWork.HOST,
)
def port_shard_maps(mesh_device: Any, hidden_size: int, intermediate_size: int) -> WeightCoreShardMaps:
    """``ttnn.experimental.get_weight_core_shard_maps``."""
    return WeightCoreShardMaps(*get_weight_core_shard_maps(mesh_device, hidden_size, intermediate_size))


@register(
    "experimental.get_weight_mem_configs",
    kind=OpKind.PYTHON,
    family=OpFamily.COPY,
    modelled=False,
    runs=DeviceWork.HOST,
)
def port_mem_configs(mesh_device: Any, *, num_layers: int, experts_per_device: int, hidden_size: int,
                     intermediate_size: int, has_bias: bool = False) -> WeightMemConfigs:  # fmt: skip
    """``ttnn.experimental.get_weight_mem_configs``."""
    maps = get_weight_core_shard_maps(mesh_device, hidden_size, intermediate_size)
    return WeightMemConfigs(*get_weight_mem_configs(num_layers, experts_per_device, hidden_size, intermediate_size,
                                                    *maps, has_bias=has_bias))  # fmt: skip


@register(
    "experimental.quantize_weights_via_host", kind=OpKind.DATA_MOVEMENT, family=OpFamily.TYPECAST, runs=DeviceWork.HOST
)
def quantize_weights_via_host(device_tensor: Any, *, dtype: Any, memory_config: MemoryConfig | None):
    """``ttnn.experimental.quantize_weights_via_host``: the tensor read back, cast to ``dtype`` on
    the host, and written to its mesh under ``memory_config`` (None: the host tensor returned)."""
    from meshnn.formats.dtypes import DataType
    from meshnn.ops.checks import device_input
    from meshnn.tensor.conversions import to_dtype
    from meshnn.tensor.placement import to_device
    from meshnn.tensor.readback import from_device

    op = "experimental.quantize_weights_via_host"
    checked = device_input(op, "device_tensor", device_tensor)
    if not isinstance(dtype, DataType):
        raise MeshnnValueError(f"ttnn.{op}: dtype must be a ttnn.DataType, got {dtype!r}")
    if memory_config is not None and not isinstance(memory_config, MemoryConfig):
        raise MeshnnValueError(f"ttnn.{op}: memory_config must be a ttnn.MemoryConfig or None, got {memory_config!r}")
    cast = to_dtype(from_device(checked), dtype)
    return cast if memory_config is None else to_device(cast, checked.device(), memory_config)
