"""``ttnn.experimental.deepseek_prefill.post_combine_reduce``: the experts' outputs of each token,
weighted by the gate and summed, tilized for the reduce-scatter that follows (one fused kernel where
tt_moe.py ran to_layout, mul and sum).

Per device: ``combine_output`` ``[..., T, K, E]`` bfloat16 ROW_MAJOR (``expert_dim`` the dim of the
``K`` top-k slots, the one before the embedding; its leading dims the tokens), ``weights`` of the same
rank and leading dims (``[..., T, K, 1]``: the slot's weight is its row's first element), optional
``indices`` (uint16 ROW_MAJOR, ``T * K`` ids: each slot's global expert) and ``expert_dispatch_table``
(int32 ROW_MAJOR ``[n]``: the chip of each expert in the dispatch group, -1 for experts of other
groups).  For each token, in slot order, as tt-metal's kernel accumulates (bfloat16 products, fp32
destination off, packer accumulation into a bfloat16 buffer):

``out = bf16(... bf16(bf16(p_a) + p_b) ...)`` over the active slots, ``p_k = bf16(combine[k] * w_k)``,

the active slots being (DeepSeek, ``indices`` and table given) those whose expert's table entry is
not -1 -- when none is, the last slot with weight 0 (zeros); (GPT-OSS, neither given) the first slot
and every slot whose weight is not +0.0.  Output: ``combine_output``'s shape without ``expert_dim``,
TILE, ``combine_output``'s dtype, ``output_memory_config`` (default L1 interleaved).

ttnn's checks (tt-metal 2026-06, ``PostCombineReduceDeviceOperation`` and its program): tensors on
device; ``indices`` and the table together or neither; ``combine_output`` rank >= 2 and
``expert_dim`` below it; ``weights`` of its rank, equal on every dim but the last; combine and
weights bfloat16 ROW_MAJOR; ``indices`` uint16 ROW_MAJOR, the table int32 ROW_MAJOR; the embedding a
multiple of 32 and at most 8192 (8 destination tiles of 1024); the tokens a positive multiple of 32.
meshnn's own (where tt-metal's kernel would read past a tensor or misread it): ``expert_dim`` is the
dim before the embedding, ``indices`` hold ``T * K`` ids, and an id past the table is refused when met.

May import: :mod:`meshnn.errors`, :mod:`meshnn.formats`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor`
and the ops' checks, launch, outputs, values and registry.
"""

from __future__ import annotations

import math

import numpy as np

from meshnn.device.buffer import TensorMemoryLayout
from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.bfloat16 import bfloat16_bits_to_float32, round_to_bfloat16
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
from meshnn.tensor.memory_config import L1_MEMORY_CONFIG
from meshnn.tensor.spec import MemoryConfig, TensorSpec
from meshnn.tensor.tensor import Tensor

OP = "experimental.deepseek_prefill.post_combine_reduce"
TOKENS_PER_CHUNK = 32
MAX_EMBEDDING = 8 * 1024
"""Eight destination tiles of 1024 bfloat16 values: the widest embedding the kernel batches."""
CHUNK_ELEMENTS = 1 << 22
"""Combine values decoded at a time (float32): bounds the kernel's host memory."""


def weighted_sum(combine: np.ndarray, weights: np.ndarray, active: np.ndarray) -> np.ndarray:
    """``(T, E)`` float32 (bfloat16 values) of ``combine`` ``(T, K, E)``, ``weights`` ``(T, K)``
    and the ``active`` slots ``(T, K)``, accumulated as the kernel does (see the module's text)."""
    tokens, slots, _ = combine.shape
    out = np.zeros((tokens, combine.shape[2]), np.float32)
    started = np.zeros(tokens, dtype=bool)
    for k in range(slots):
        on = active[:, k]
        if not on.any():
            continue
        product = np.ascontiguousarray(combine[on, k] * weights[on, k][:, None], dtype=np.float32)
        product = round_to_bfloat16(product, in_place=True)
        total = np.where(started[on][:, None], out[on] + product, product).astype(np.float32)
        out[on] = round_to_bfloat16(np.ascontiguousarray(total), in_place=True)
        started |= on
    return out


def active_slots(weights: np.ndarray, local: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """(active ``(T, K)``, weights with the forced slot's weight 0) for the DeepSeek path (``local``:
    each slot's expert is on this dispatch group) or the GPT-OSS path (``local`` None)."""
    if local is None:
        active = weights.view(np.uint32) != 0 if weights.dtype == np.float32 else weights != 0
        active = active.copy()
        active[:, 0] = True
        return active, weights
    none = ~local.any(axis=1)
    active = local.copy()
    active[none, -1] = True
    weights = weights.copy()
    weights[none, -1] = 0.0
    return active, weights


def _check_shapes(combine: Tensor, weights: Tensor, expert_dim: int) -> None:
    """ttnn's shape checks of the device operation."""
    shape, w_shape = tuple(combine.spec.padded_shape), tuple(weights.spec.padded_shape)
    rank = len(shape)
    if rank < 2:
        raise MeshnnValueError(f"ttnn.{OP}: combine_output rank must be at least 2, got {rank}")
    if expert_dim >= rank:
        raise MeshnnValueError(f"ttnn.{OP}: expert_dim {expert_dim} must be less than combine_output rank {rank}")
    if len(w_shape) != rank:
        raise MeshnnValueError(f"ttnn.{OP}: weights rank {len(w_shape)} must match combine_output rank {rank}")
    for dim in range(rank - 1):
        if w_shape[dim] != shape[dim]:
            raise MeshnnValueError(
                f"ttnn.{OP}: weights padded_shape[{dim}] ({w_shape[dim]}) must match combine_output "
                f"padded_shape[{dim}] ({shape[dim]})"
            )


def _check_program(combine: Tensor, expert_dim: int) -> tuple[int, int, int]:
    """(tokens, slots, embedding) after meshnn's check of ``expert_dim`` and the program's checks."""
    shape = tuple(combine.spec.padded_shape)
    rank = len(shape)
    if expert_dim != rank - 2:
        raise MeshnnValueError(
            f"ttnn.{OP}: expert_dim {expert_dim} must be the dim before the embedding ({rank - 2}): the kernel "
            "reads [tokens, experts, embedding] rows"
        )
    embedding, tokens = shape[-1], math.prod(shape[:expert_dim])
    if embedding % 32 or embedding > MAX_EMBEDDING:
        raise MeshnnValueError(
            f"ttnn.{OP}: the embedding dimension {embedding} must be a multiple of 32 and at most {MAX_EMBEDDING}"
        )
    if tokens == 0 or tokens % TOKENS_PER_CHUNK:
        raise MeshnnValueError(
            f"ttnn.{OP}: the number of tokens {tokens} must be a positive multiple of {TOKENS_PER_CHUNK}"
        )
    return tokens, shape[expert_dim], embedding


def _check_tensors(named: dict[str, Tensor | None]) -> None:
    require(OP, "combine_output", named["combine_output"], (DataType.BFLOAT16,), Layout.ROW_MAJOR)
    require(OP, "weights", named["weights"], (DataType.BFLOAT16,), Layout.ROW_MAJOR)
    indices, table = named["indices"], named["expert_dispatch_table"]
    if indices is None or table is None:
        return
    require(OP, "indices", indices, (DataType.UINT16,), Layout.ROW_MAJOR)
    require(OP, "expert_dispatch_table", table, (DataType.INT32,), Layout.ROW_MAJOR)


def _check_indices(indices: Tensor | None, tokens_slots: int) -> None:
    if indices is not None and math.prod(tuple(indices.shape)) != tokens_slots:
        raise MeshnnValueError(
            f"ttnn.{OP}: indices {list(indices.shape)} must hold one expert id per token and slot ({tokens_slots})"
        )


def _inputs(combine_output, weights, indices, expert_dispatch_table) -> dict[str, Tensor | None]:
    if (indices is None) != (expert_dispatch_table is None):
        raise MeshnnValueError(
            f"ttnn.{OP}: indices and expert_dispatch_table must be provided together or omitted together; got "
            f"indices={indices is not None}, expert_dispatch_table={expert_dispatch_table is not None}"
        )
    given = {"combine_output": combine_output, "weights": weights}
    given |= {"indices": indices, "expert_dispatch_table": expert_dispatch_table}
    return {name: None if t is None else device_input(OP, name, t) for name, t in given.items()}


@register(OP, kind=OpKind.REDUCTION, family=OpFamily.REDUCTION, device_operation="PostCombineReduceDeviceOperation")
def post_combine_reduce(
    combine_output: Tensor,
    weights: Tensor,
    indices: Tensor | None = None,
    expert_dispatch_table: Tensor | None = None,
    *,
    expert_dim: int = 3,
    output_memory_config: MemoryConfig | None = None,
) -> Tensor:
    """Each token's expert outputs weighted and summed over ``expert_dim``, TILE (see the module's text)."""
    named = _inputs(combine_output, weights, indices, expert_dispatch_table)
    mesh = same_mesh(OP, {k: v for k, v in named.items() if v is not None})
    dim = uint_arg(OP, "expert_dim", expert_dim)
    if output_memory_config is not None and not isinstance(output_memory_config, MemoryConfig):
        raise MeshnnTypeError(
            f"ttnn.{OP}: output_memory_config must be a ttnn.MemoryConfig or None, got {output_memory_config!r}"
        )
    combine = named["combine_output"]
    _check_shapes(combine, named["weights"], dim)
    _check_tensors(named)
    tokens, slots, embedding = _check_program(combine, dim)
    _check_indices(named["indices"], tokens * slots)
    shape = tuple(d for i, d in enumerate(combine.spec.padded_shape) if i != dim)
    config = output_memory_config or L1_MEMORY_CONFIG
    spec = out_spec_like(combine, shape=shape, layout=Layout.TILE, memory_config=config, op=OP)
    inputs = [t for t in named.values() if t is not None]
    specs = [t.spec for t in inputs]

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], _coords: tuple[MeshCoordinate, ...]) -> None:
        out = np.stack([_device(in_rows, specs, i, (tokens, slots, embedding)) for i in range(in_rows[0].shape[0])])
        write_values(out_rows[0], out.reshape(len(out), *shape), spec, exact=True)

    attrs = {"expert_dim": dim, "output_memory_config": config}
    return launch(OP, mesh, inputs, [Output(spec)], kernel, rowwise=True, attrs=attrs)[0]


def _device(in_rows: list[np.ndarray], specs: list[TensorSpec], i: int, sizes: tuple[int, int, int]) -> np.ndarray:
    """Device ``i``'s ``(T, E)`` sums, the combine values decoded a chunk of tokens at a time."""
    tokens, slots, embedding = sizes
    weights = logical_values(in_rows[1][i : i + 1], specs[1]).reshape(tokens, slots, -1)[..., 0]
    local = None
    if len(in_rows) == 4:
        ids = logical_values(in_rows[2][i : i + 1], specs[2], as_float=False).reshape(tokens, slots).astype(np.int64)
        table = logical_values(in_rows[3][i : i + 1], specs[3], as_float=False).reshape(-1)
        if ids.size and int(ids.max()) >= table.size:
            raise MeshnnValueError(
                f"ttnn.{OP}: expert id {int(ids.max())} is past expert_dispatch_table's {table.size} entries"
            )
        local = table[ids] != -1
    active, weights = active_slots(np.ascontiguousarray(weights, np.float32), local)
    if specs[0].memory_config.memory_layout is TensorMemoryLayout.INTERLEAVED:  # its bytes: the rows in order
        bits = np.ascontiguousarray(in_rows[0][i, : tokens * slots * embedding * 2]).view(np.uint16)
        values = bits.reshape(tokens, slots, embedding)
    else:
        values = logical_values(in_rows[0][i : i + 1], specs[0]).reshape(tokens, slots, embedding)
    out = np.empty((tokens, embedding), np.float32)
    step = max(1, CHUNK_ELEMENTS // (slots * embedding))
    for start in range(0, tokens, step):
        part = slice(start, min(tokens, start + step))
        chunk = values[part]
        chunk = bfloat16_bits_to_float32(chunk) if chunk.dtype == np.uint16 else chunk
        out[part] = weighted_sum(chunk, weights[part], active[part])
    return out
