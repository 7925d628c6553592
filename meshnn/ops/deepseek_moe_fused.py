"""DeepSeek-V3's MoE decode ops of tt-metal 2026 around the experts' combine:

``ttnn.experimental.deepseek_moe_post_combine_tilize``: a ROW_MAJOR bfloat16 interleaved tensor
tilized into an L1 sharded output of one 32-row shard per core (the combine's tokens before the
score multiply).  Values move unchanged.

``ttnn.experimental.deepseek_moe_fast_reduce_nc_fused``: ``deepseek_moe_fast_reduce_nc`` with the
experts' scores applied inside the reduce: ``out[t] = sum_k act[k, t] * w[t mod 32, k]`` in float32
(k ascending), rounded into the input's dtype and cut on the last dim into ``width / split_size``
outputs.  The weights are those of the kernel's score tiles: for a routed slot ``k`` (the first
``K - num_shared_experts``) and token row ``t`` below the scores' token count, the score (page ``t``
of the ROW_MAJOR scores, element ``k``) when the expert ``expert_indices[t][k]`` is owned on this
device's cluster axis (``expert_mapping``'s row -- its only row, else the device's linear index
``row * cols + col`` -- names the owner's linear index; axis 0: the owner's column is the device's,
axis 1: its row), else 0; for a shared slot the ``shared_expert_scale`` truncated to bfloat16; 0 for
rows at or past the token count.  Without ``scores_tensor`` it is ``deepseek_moe_fast_reduce_nc``.

Checks are ttnn's (tt-metal 2026-06) and, where its kernel would read past a tensor, meshnn's: the
indices and mapping are read as uint16 ROW_MAJOR pages (other dtypes are refused), the scores' token
count fits the kernel's one 32-row score tile, the indices cover every (token, slot) read, a mapping
of several rows has one per device, and an expert id past the mapping's width is refused when met.

May import: :mod:`meshnn.errors`, :mod:`meshnn.formats`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor`
and the ops' checks, config, launch, outputs, values, rearrange and fast-reduce modules.
"""

from __future__ import annotations

import math

import numpy as np

from meshnn.device.buffer import BufferType, TensorMemoryLayout
from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.mesh.coord import MeshCoordinate
from meshnn.ops.checks import device_input, int_arg, same_mesh
from meshnn.ops.config import check_compute_kernel_config
from meshnn.ops.fast_reduce import deepseek_moe_fast_reduce_nc
from meshnn.ops.launch import launch
from meshnn.ops.movement.rearrange import rearranged
from meshnn.ops.outputs import Output, out_spec_like
from meshnn.ops.registry import OpKind, register
from meshnn.ops.values import logical_values, write_values
from meshnn.perf.desc import OpFamily
from meshnn.tensor.memory_config import DRAM_MEMORY_CONFIG
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor

TILE = 32
"""A tile's side: the post-combine tilize's shard height and the fused reduce's score tile rows."""


@register(
    "experimental.deepseek_moe_post_combine_tilize",
    kind=OpKind.DATA_MOVEMENT,
    family=OpFamily.TILIZE,
    device_operation="DeepseekMoEPostCombineTilizeDeviceOperation",
)
def deepseek_moe_post_combine_tilize(input_tensor: Tensor, *, output_memory_config: MemoryConfig) -> Tensor:
    """``input_tensor`` (ROW_MAJOR, bfloat16, interleaved, rank >= 2) as TILE in an L1 sharded
    ``output_memory_config`` whose 2-D shards are one tile high and a whole number of tiles wide,
    tiling the tensor's 2-D view with exactly one shard per core of its grid."""
    op = "experimental.deepseek_moe_post_combine_tilize"
    tensor = device_input(op, "input_tensor", input_tensor)
    if not isinstance(output_memory_config, MemoryConfig):
        raise MeshnnTypeError(f"ttnn.{op}: output_memory_config must be a MemoryConfig, got {output_memory_config!r}")
    shape = tuple(tensor.spec.padded_shape)
    if len(shape) < 2:
        raise MeshnnValueError(f"ttnn.{op} requires rank >= 2, but input_tensor has {len(shape)}")
    if tensor.dtype is not DataType.BFLOAT16:
        raise MeshnnValueError(f"ttnn.{op} requires input_tensor to be bfloat16, but it is {tensor.dtype}")
    if tensor.spec.memory_config.memory_layout is not TensorMemoryLayout.INTERLEAVED:
        raise MeshnnValueError(f"ttnn.{op} requires input_tensor to be interleaved")
    if tensor.layout is not Layout.ROW_MAJOR:
        raise MeshnnValueError(f"ttnn.{op} requires input_tensor to be ROW_MAJOR")
    nd = output_memory_config.nd_shard_spec
    if not output_memory_config.is_sharded() or nd is None:
        raise MeshnnValueError(f"ttnn.{op} requires a sharded output_memory_config")
    if output_memory_config.buffer_type is not BufferType.L1:
        raise MeshnnValueError(f"ttnn.{op} requires an L1 output_memory_config")
    if len(nd.shard_shape) != 2:
        raise MeshnnValueError(f"ttnn.{op} requires a 2-D output shard shape, got {list(nd.shard_shape)}")
    height, (shard_h, shard_w) = math.prod(shape[:-1]), nd.shard_shape
    if shard_w % TILE or shape[-1] % shard_w:
        raise MeshnnValueError(
            f"ttnn.{op}: the output shard width {shard_w} must be whole tiles and divide the width {shape[-1]}"
        )
    if shard_h != TILE or height % shard_h:
        raise MeshnnValueError(
            f"ttnn.{op}: the output shard height {shard_h} must be one tile (32) dividing the height {height}"
        )
    if (shape[-1] // shard_w) * (height // shard_h) != nd.grid.num_cores():
        raise MeshnnValueError(
            f"ttnn.{op} requires one output shard per core: {(shape[-1] // shard_w) * (height // shard_h)} "
            f"shards on {nd.grid.num_cores()} cores of output_memory_config"
        )
    spec = out_spec_like(tensor, shape=shape, layout=Layout.TILE, memory_config=output_memory_config, op=op)
    return rearranged(op, tensor, spec, lambda x: x)


@register(
    "experimental.deepseek_moe_fast_reduce_nc_fused",
    kind=OpKind.REDUCTION,
    family=OpFamily.REDUCTION,
    device_operation="DeepseekMoEFastReduceNCFusedDeviceOperation",
)
def deepseek_moe_fast_reduce_nc_fused(
    input_tensor: Tensor,
    expert_indices_tensor: Tensor,
    expert_mapping_tensor: Tensor,
    reduce_dim: int,
    *,
    split_size: int,
    cluster_axis: int,
    output_memory_config: MemoryConfig = DRAM_MEMORY_CONFIG,
    scores_tensor: Tensor | None = None,
    num_shared_experts: int = 0,
    shared_expert_scale: float = 1.0,
    compute_kernel_config: object = None,
) -> list[Tensor]:
    """The experts' score-weighted sum over ``reduce_dim`` (kept as 1), split on the last dim into
    tensors of ``split_size`` columns (see the module's text); without ``scores_tensor``, ttnn's
    fallback ``deepseek_moe_fast_reduce_nc`` (the indices, mapping and axis unused)."""
    op = "experimental.deepseek_moe_fast_reduce_nc_fused"
    if scores_tensor is None:
        return deepseek_moe_fast_reduce_nc(
            input_tensor,
            reduce_dim,
            split_size=split_size,
            output_memory_config=output_memory_config,
            compute_kernel_config=compute_kernel_config,
        )
    named = {
        "input_tensor": device_input(op, "input_tensor", input_tensor),
        "scores_tensor": device_input(op, "scores_tensor", scores_tensor),
        "expert_indices_tensor": device_input(op, "expert_indices_tensor", expert_indices_tensor),
        "expert_mapping_tensor": device_input(op, "expert_mapping_tensor", expert_mapping_tensor),
    }
    mesh = same_mesh(op, named)
    tensor, scores = named["input_tensor"], named["scores_tensor"]
    axis, size = int_arg(op, "reduce_dim", reduce_dim), int_arg(op, "split_size", split_size)
    cluster = int_arg(op, "cluster_axis", cluster_axis)
    shared = int_arg(op, "num_shared_experts", num_shared_experts)
    if isinstance(shared_expert_scale, bool) or not isinstance(shared_expert_scale, (int, float)):
        raise MeshnnTypeError(f"ttnn.{op}: shared_expert_scale must be a float, got {shared_expert_scale!r}")
    if not 0 <= cluster <= 1:
        raise MeshnnValueError(f"ttnn.{op}: cluster_axis must be 0 or 1 (got {cluster_axis})")
    if not isinstance(output_memory_config, MemoryConfig):
        raise MeshnnTypeError(f"ttnn.{op}: output_memory_config must be a MemoryConfig, got {output_memory_config!r}")
    axis, parts = _check_fused(op, mesh, named, axis, size, shared)
    kernel_config = check_compute_kernel_config(op, compute_kernel_config)
    shape = list(tensor.shape)
    shape[axis], shape[-1] = 1, shape[-1] // parts
    spec = out_spec_like(tensor, shape=tuple(shape), memory_config=output_memory_config, op=op)
    bits = np.array([shared_expert_scale], np.float32).view(np.uint32) & np.uint32(0xFFFF0000)
    scale = float(bits.view(np.float32)[0])  # the upper 16 bits: bfloat16 by truncation, as the kernel packs it
    inputs = [tensor, scores, named["expert_indices_tensor"], named["expert_mapping_tensor"]]
    weigh = _Weights(inputs, mesh_columns(mesh), cluster, shared, scale)

    kernel = _fused_kernel(tensor.spec, spec, axis, weigh)
    attrs = {"reduce_dim": axis, "split_size": size, "cluster_axis": cluster, "memory_config": spec.memory_config}
    attrs.update(num_shared_experts=shared, shared_expert_scale=scale, compute_kernel_config=kernel_config)
    outs = [Output(spec) for _ in range(parts)]
    return launch(op, mesh, inputs, outs, kernel, reads_memos=True, attrs=attrs)


def _fused_kernel(in_spec, spec, axis: int, weigh: _Weights):
    """The fused reduce's kernel: each device's float32 multiply-accumulate over the reduce dim,
    slot by slot, its sum cut into the outputs of ``spec``."""

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]) -> None:
        values = logical_values(in_rows[0], in_spec)  # (devices, *shape)
        weights = weigh(in_rows, coords)  # (devices, K, 32)
        tokens = values.shape[-2]
        w = weights[:, :, np.arange(tokens) % TILE]  # (devices, K, tokens): the reduce dim precedes the tokens'
        w = w.reshape(w.shape[0], *_broadcast(values.shape[1:], axis))
        kept = (values.shape[0], *(1 if i == axis else d for i, d in enumerate(values.shape[1:])))
        total = np.zeros(kept, np.float32)
        for k in range(values.shape[axis + 1]):  # float32 multiply-accumulate, slot by slot
            total += np.take(values, [k], axis=axis + 1) * np.take(w, [k], axis=axis + 1)
        width = spec.shape[-1]
        for i, rows in enumerate(out_rows):
            write_values(rows, total[..., i * width : (i + 1) * width], spec)

    return kernel


def mesh_columns(mesh) -> int:
    """The mesh's columns (``get_view().num_cols()``): its last dim, 1 for an empty shape."""
    dims = tuple(mesh.shape)
    return int(dims[-1]) if dims else 1


def _broadcast(shape: tuple[int, ...], axis: int) -> tuple[int, ...]:
    """The weights' per-device broadcast shape: the reduce dim and the token dim kept, others 1."""
    return tuple(d if i in (axis, len(shape) - 2) else 1 for i, d in enumerate(shape))


def _check_fused(op: str, mesh, named: dict[str, Tensor], axis: int, size: int, shared: int) -> tuple[int, int]:
    """ttnn's checks of the fused path (and meshnn's of what its kernel reads); the normalized
    reduce dim and the number of outputs."""
    tensor, scores = named["input_tensor"], named["scores_tensor"]
    if tensor.dtype not in (DataType.BFLOAT16, DataType.BFLOAT8_B) or tensor.layout is not Layout.TILE:
        raise MeshnnValueError(f"ttnn.{op}: input_tensor must be bfloat16 or bfloat8_b TILE, got {tensor.dtype}")
    shape = tuple(tensor.spec.padded_shape)
    rank = len(shape)
    if rank <= 2:
        raise MeshnnValueError(f"ttnn.{op}: input tensor rank must be greater than 2, but has {rank}")
    dim = axis + rank if axis < 0 else axis
    if not 0 <= dim <= rank - 3:
        raise MeshnnValueError(f"ttnn.{op}: reduction dim must be between 0 and {rank - 3}, but has {axis}")
    width = shape[-1]
    if size < 1 or width // size < 1 or width % (width // size * TILE):
        raise MeshnnValueError(
            f"ttnn.{op}: input tensor width must be divisible by {max(1, width // max(size, 1)) * 32}"
        )
    if scores.dtype is not DataType.BFLOAT16 or scores.layout is not Layout.ROW_MAJOR:
        raise MeshnnValueError(
            f"ttnn.{op}: scores_tensor must be bfloat16 ROW_MAJOR, got {scores.dtype} {scores.layout}"
        )
    if len(scores.shape) != 4 or rank != 4:
        raise MeshnnValueError(
            f"ttnn.{op}: scores_tensor and input_tensor must be rank 4, got {len(scores.shape)}, {rank}"
        )
    slots = shape[dim]
    if not 0 <= shared <= slots:
        raise MeshnnValueError(f"ttnn.{op}: num_shared_experts ({shared}) must not exceed reduction dim size ({slots})")
    if scores.shape[-1] != slots - shared:
        raise MeshnnValueError(
            f"ttnn.{op}: scores_tensor's last dim ({scores.shape[-1]}) must equal num_routed_experts "
            f"({slots - shared} = reduction dim size {slots} - num_shared_experts {shared})"
        )
    tokens = scores.shape[0]
    if not shape[-2] - TILE < tokens <= shape[-2]:
        raise MeshnnValueError(
            f"ttnn.{op}: scores_tensor dim 0 (tokens in slice = {tokens}) must be between "
            f"{shape[-2] - TILE + 1} and {shape[-2]} for the current fused kernel"
        )
    if tokens > TILE:
        raise MeshnnValueError(f"ttnn.{op}: scores_tensor's {tokens} tokens exceed the kernel's 32-row score tile")
    _check_routing(op, mesh, named, tokens, slots - shared)
    return dim, width // size


def _check_routing(op: str, mesh, named: dict[str, Tensor], tokens: int, routed: int) -> None:
    """The indices and mapping as the kernel reads them: uint16 ROW_MAJOR pages, enough of them."""
    for name in ("expert_indices_tensor", "expert_mapping_tensor"):
        t = named[name]
        if t.dtype is not DataType.UINT16 or t.layout is not Layout.ROW_MAJOR:
            raise MeshnnValueError(f"ttnn.{op}: {name} is read as uint16 ROW_MAJOR pages, got {t.dtype} {t.layout}")
    indices, mapping = named["expert_indices_tensor"].shape, named["expert_mapping_tensor"].shape
    if math.prod(indices[:-1]) < tokens or indices[-1] < routed:
        raise MeshnnValueError(
            f"ttnn.{op}: expert_indices_tensor {list(indices)} must hold {tokens} rows of {routed} expert ids"
        )
    rows = math.prod(mapping[:-1])
    if rows != 1 and rows < mesh.get_num_devices():
        raise MeshnnValueError(
            f"ttnn.{op}: expert_mapping_tensor {list(mapping)} has neither one row nor one per device "
            f"({mesh.get_num_devices()})"
        )


class _Weights:
    """Each device's score tiles: ``(devices, K, 32)`` float32 weights (see the module's text)."""

    def __init__(self, inputs: list[Tensor], columns: int, cluster: int, shared: int, scale: float) -> None:
        self.specs = [t.spec for t in inputs]
        self.columns, self.cluster, self.shared, self.scale = columns, cluster, shared, scale

    def __call__(self, in_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]) -> np.ndarray:
        scores_spec = self.specs[1]
        routed, tokens = scores_spec.shape[-1], scores_spec.shape[0]
        scores = logical_values(in_rows[1], scores_spec).reshape(len(coords), -1, routed)[:, :tokens]
        ids = logical_values(in_rows[2], self.specs[2], as_float=False)
        ids = ids.reshape(len(coords), -1, ids.shape[-1])[:, :tokens, :routed].astype(np.int64)
        table = logical_values(in_rows[3], self.specs[3], as_float=False)
        table = table.reshape(len(coords), -1, table.shape[-1]).astype(np.int64)
        weights = np.zeros((len(coords), routed + self.shared, TILE), np.float32)
        for d, coord in enumerate(coords):
            row, col = (int(coord[0]), int(coord[1])) if len(tuple(coord)) > 1 else (0, int(coord[0]))
            mapping = table[d, 0 if table.shape[1] == 1 else row * self.columns + col]
            if (ids[d] >= mapping.shape[0]).any():
                bad = int(ids[d].max())
                raise MeshnnValueError(
                    f"expert_indices_tensor names expert {bad} past the mapping's {mapping.shape[0]}"
                )
            owner = mapping[ids[d]]  # (tokens, routed)
            on = owner % self.columns == col if self.cluster == 0 else owner // self.columns == row
            weights[d, :routed, :tokens] = np.where(on, scores[d], 0).T
            weights[d, routed:, :tokens] = self.scale
        return weights
