"""The checks of ``ttnn.experimental.moe_compute``'s tensors and arguments (tt-metal's
``validate_on_program_cache_miss`` and ``invoke``), made before anything is allocated, and the
fixed format its kernels read (bfloat4_b weights, DRAM-sharded one shard a bank, the packers'
shapes for its ``(hidden, intermediate, bias)``).

May import: :mod:`meshnn.errors`, :mod:`meshnn.formats`, :mod:`meshnn.device`, :mod:`meshnn.mesh`,
:mod:`meshnn.tensor`, the ops' checks and the collectives' modules.
"""

from __future__ import annotations

import math

import numpy as np

from meshnn.device.buffer import BufferType, TensorMemoryLayout
from meshnn.device.core import CoreRangeSet
from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.mesh.mesh_device import MeshDevice
from meshnn.ops.ccl import moe_compute_layout as lay
from meshnn.ops.ccl.arguments import Topology
from meshnn.ops.ccl.moe_compute_utils import BLOCK_TILES_H
from meshnn.ops.ccl.moe_enums import MoEActivationFunction
from meshnn.ops.ccl.point_to_point import local_only
from meshnn.ops.checks import device_input, same_mesh
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor

OP = lay.OP
NAMES = ("tilize_input_tensor", "tilize_expert_indices_tensor", "tilize_expert_scores_tensor",
         "tilize_expert_mapping_tensor", "matmul_w0_w1_tensor", "matmul_w2_tensor")  # fmt: skip


def fail(message: str) -> MeshnnValueError:
    return MeshnnValueError(f"ttnn.{OP}: {message}")


def integer(name: str, value: object, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise MeshnnTypeError(f"ttnn.{OP}: {name} must be an int, got {value!r}")
    if value < low:
        raise fail(f"{name} must be at least {low}, got {value}")
    return value


def mesh_of(mesh_device: object, name: str) -> MeshDevice:
    if not isinstance(mesh_device, MeshDevice):
        raise MeshnnTypeError(f"ttnn.experimental.{name}: mesh_device must be a ttnn.MeshDevice, got {mesh_device!r}")
    return mesh_device


def checked_inputs(given: tuple) -> tuple[list[Tensor], MeshDevice]:
    """The six device tensors on one local mesh, of the ranks, dtypes and layouts ttnn checks."""
    inputs = [device_input(OP, name, t) for name, t in zip(NAMES, given, strict=True)]
    mesh = same_mesh(OP, dict(zip(NAMES, inputs, strict=True)))
    local_only(OP, mesh)
    tokens, ids, scores, mapping = inputs[:4]
    if tokens.layout is not Layout.ROW_MAJOR or tokens.dtype is not DataType.BFLOAT16:
        raise fail(f"Input tensor must be bfloat16 in row major layout, got {tokens.dtype} {tokens.layout}")
    if ids.dtype is not DataType.UINT16 or ids.layout is not Layout.ROW_MAJOR:
        raise fail(f"Indices tensor must be uint16 ROW_MAJOR, got {ids.dtype} {ids.layout}")
    if scores.dtype is not DataType.BFLOAT16 or scores.layout is not Layout.ROW_MAJOR:
        raise fail(f"scores tensor must be bfloat16 ROW_MAJOR (the kernel reads 2-byte scores), got {scores.dtype}")
    ranks = ((NAMES[0], tokens, 3, "[..., tokens, hidden]"), (NAMES[1], ids, 2, "[..., tokens, K]"),
             (NAMES[2], scores, 2, "[..., tokens, K]"))  # fmt: skip
    for name, t, low, what in ranks:
        if len(t.shape) < low:
            raise fail(f"{name} must be rank >= {low} ({what}); got rank {len(t.shape)}")
    if len(mapping.shape) != 2:
        rank = len(mapping.shape)
        raise fail(f"tilize_expert_mapping_tensor must be rank 2 ([num_devices, experts]); got rank {rank}")
    if mapping.dtype is not DataType.UINT16 or mapping.layout is not Layout.ROW_MAJOR:
        raise fail(f"tilize_expert_mapping_tensor must be uint16 ROW_MAJOR, got {mapping.dtype} {mapping.layout}")
    if mapping.shape[0] != mesh.get_num_devices():
        count = mesh.get_num_devices()
        raise fail(f"tilize_expert_mapping_tensor needs a row per device ({count}), got {list(mapping.shape)}")
    for name, t, what in ((NAMES[4], inputs[4], "K"), (NAMES[5], inputs[5], "N")):
        if len(t.shape) != 6:
            raise fail(f"{name} must be rank 6 ([num_cores, L, E, groups_per_core, {what}, 4*TILE_SIZE]); got rank "
                       f"{len(t.shape)}")  # fmt: skip
        _weight_format(name, t)
    return inputs, mesh


def _weight_format(name: str, t: Tensor) -> None:
    if t.dtype is not DataType.BFLOAT4_B or t.layout is not Layout.TILE:
        raise fail(f"{name} must be bfloat4_b TILE (the kernels read Bfp4_b tiles), got {t.dtype} {t.layout}")
    memory = t.spec.memory_config
    if memory.buffer_type is not BufferType.DRAM or memory.memory_layout is not TensorMemoryLayout.HEIGHT_SHARDED:
        raise fail(f"{name} must be HEIGHT_SHARDED in DRAM (ttnn.experimental.get_weight_mem_configs)")


def _weights(mesh: MeshDevice, inputs: list[Tensor], sizes: dict) -> None:
    """The packed weights' shapes for ``(hidden, intermediate, bias)`` on this mesh's ring."""
    from meshnn.ops.ccl.moe_weight_packs import _padded_rows

    w01, w2 = inputs[4], inputs[5]
    hidden, inter, bias = sizes["hidden"], sizes["inter"], sizes["bias"]
    if bias:
        for name, t in ((NAMES[4], w01), (NAMES[5], w2)):
            dim, packer = ("K", "w0_w1") if t is w01 else ("N", "w2")
            if t.shape[4] % (BLOCK_TILES_H * lay.TILE):
                raise fail(
                    f"{name} {dim}-dimension ({t.shape[4]}) must be a multiple of {BLOCK_TILES_H * lay.TILE} elements "
                    f"when has_bias=True. Use moe_compute_utils.prepare_{packer}_tensor_with_bias() to prepare it."
                )
    ring, w01_map, w2_map = lay.shard_maps(mesh, hidden, inter)
    top = max(w01_map) + max(w01_map) % 2
    w2_groups = math.ceil(hidden // lay.TILE / (ring * sum(w2_map[0])))
    want01 = (ring, w01.shape[1], sizes["experts"], top // 2, _padded_rows(hidden // lay.TILE + bias), 4 * lay.TILE)
    want2 = (ring, w01.shape[1], sizes["experts"], w2_groups, _padded_rows(inter // lay.TILE + bias), 4 * lay.TILE)
    for name, t, want in ((NAMES[4], w01, want01), (NAMES[5], w2, want2)):
        if tuple(t.shape) != want:
            raise fail(f"{name} is {list(t.shape)}; hidden_size {hidden}, intermediate_size {inter}"
                       f"{' with a bias' if bias else ''} pack to {list(want)} on a ring of {ring} cores")  # fmt: skip
        if len({c.x for c in t.spec.memory_config.shard_spec.grid.cores()}) != ring:
            raise fail(f"{name}'s shard grid must name the {ring} DRAM banks once each")


def _routing_sizes(inputs: list[Tensor], sizes: dict) -> None:
    tokens = sizes["tokens"]
    for name, t in ((NAMES[1], inputs[1]), (NAMES[2], inputs[2])):
        if int(np.prod(tuple(t.shape)[:-1])) < tokens or t.shape[-1] != sizes["k"]:
            raise fail(f"{name} is {list(t.shape)}: it must hold a row of {sizes['k']} for each of {tokens} tokens")


def _options(named: dict, experts: int) -> dict:
    """The optional arguments, checked; the recorded attributes."""
    attrs = {"layer_id": integer("layer_id", named["layer_id"], 0)}
    attrs["output_height_shard_dim"] = integer("output_height_shard_dim", named["output_height_shard_dim"], 1)
    attrs["intermediate_size"] = integer("intermediate_size", named["intermediate_size"], 1)
    for flag in ("has_bias", "compute_only"):
        if not isinstance(named[flag], bool):
            raise MeshnnTypeError(f"ttnn.{OP}: {flag} must be a bool, got {named[flag]!r}")
        attrs[flag] = named[flag]
    axis, topology = named["cluster_axis"], named["topology"]
    if axis is not None and integer("cluster_axis", axis, 0) > 1:
        raise fail(f"cluster_axis must be 0 or 1, got {axis}")
    if attrs["compute_only"] and axis is not None:
        raise fail(f"compute_only=True is incompatible with cluster_axis (got cluster_axis={axis}). "
                   "compute_only skips the combine path, so cluster_axis has no meaning.")  # fmt: skip
    if not attrs["compute_only"] and axis is None:
        raise fail("cluster_axis is required when compute_only=False (the combine's axis)")
    if topology is not None and topology not in (Topology.Linear, Topology.Ring):
        raise fail(f"combine kernel only supports Topology::Linear or Topology::Ring, got {topology!r}")
    if named["num_links"] is not None:
        integer("num_links", named["num_links"], 1)
    for name, kind in (("mux_core_range_set", CoreRangeSet), ("output_memory_config", MemoryConfig),
                       ("activation_type", MoEActivationFunction)):  # fmt: skip
        if named[name] is not None and not isinstance(named[name], kind):
            raise MeshnnTypeError(f"ttnn.{OP}: {name} must be a {kind.__name__}, got {named[name]!r}")
    shared = named["num_shared_experts_per_device"]
    if shared is not None and integer("num_shared_experts_per_device", shared, 0) > experts:
        raise fail(f"num_shared_experts_per_device ({shared}) must be <= experts_per_device ({experts})")
    attrs.update(cluster_axis=axis, topology=topology, num_links=named["num_links"])
    attrs["num_shared_experts_per_device"] = shared
    attrs.update(mux_core_range_set=named["mux_core_range_set"], activation_type=named["activation_type"])
    attrs["output_memory_config"] = named["output_memory_config"] or MemoryConfig(
        TensorMemoryLayout.INTERLEAVED, BufferType.DRAM
    )
    attrs["optional_cross_device_semaphore"] = named["optional_cross_device_semaphore"]
    return attrs


def checked_attributes(mesh: MeshDevice, inputs: list[Tensor], named: dict, output: object) -> tuple[dict, dict]:
    """``(attrs, plan)``: the recorded attributes and the sizes the kernel needs, every check made."""
    experts = int(inputs[4].shape[2])
    if experts < 1 or inputs[5].shape[2] != experts:
        raise fail(f"the weights' experts_per_device (dim 2) must agree and be >= 1: {inputs[4].shape[2]}, "
                   f"{inputs[5].shape[2]}")  # fmt: skip
    attrs = _options(named, experts)
    if attrs["compute_only"] and output is not None:
        raise fail("compute_only=True requires optional_output_tensor to be None (no combine output is produced)")
    shape = tuple(inputs[0].shape)
    hidden, inter, ring = shape[-1], attrs["intermediate_size"], lay.ring_size(mesh)
    if hidden % lay.TILE or inter % lay.TILE:
        raise fail(f"hidden_size ({hidden}) and intermediate_size ({inter}) must be positive multiples of 32")
    lay.check_ring(hidden, inter, ring)
    width = lay.data_parallel_cores(hidden, ring)
    sizes = {"tokens": shape[0] * shape[1], "hidden": hidden, "inter": inter, "bias": attrs["has_bias"]}
    sizes.update(experts=experts, k=int(inputs[1].shape[-1]), width=width, height=attrs["output_height_shard_dim"])
    most = lay.TOKEN_SIZE * width * sizes["height"]
    if most < sizes["tokens"]:
        raise fail(f"Too many tokens in input, got: {sizes['tokens']} but expected max: {most}")
    if attrs["layer_id"] >= inputs[4].shape[1]:
        raise fail(f"layer_id ({attrs['layer_id']}) must be below the weights' layers ({inputs[4].shape[1]})")
    _routing_sizes(inputs, sizes)
    _weights(mesh, inputs, sizes)
    lay.combine_cores(mesh, sizes["height"], width)
    axis = attrs["cluster_axis"]
    shared = attrs["num_shared_experts_per_device"] or 0
    kind = attrs["activation_type"] or MoEActivationFunction.SILU
    sizes.update(axis=1 if axis is None else axis, layer=attrs["layer_id"], shared=shared, activation=kind.name)
    sizes["tp"] = 1 if axis is None else tuple(mesh.shape)[1 - axis]
    return attrs, sizes
