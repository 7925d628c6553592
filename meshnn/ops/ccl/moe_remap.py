"""``ttnn.moe_expert_token_remap``: MoE routing metadata turned from global experts to each device's
own experts, after an ``all_to_all_dispatch``.

Per device ``d`` (its row-major index in the mesh): ``topk_tensor`` ``[1, B, S, E]`` (the tokens'
top-k scores by global expert, ROW_MAJOR), ``expert_mapping_tensor`` ``[1, 1, E, D]`` uint16 (1
where expert ``e`` lives on device ``d``), ``expert_metadata_tensor`` ``[1, B, S, K]`` uint16 (each
token's K selected global experts).  The device's local experts are the ``e`` with
``mapping[e, d] == 1``, ascending, ``E / D`` of them.  Outputs:

- ``[1, B, S, E/D]`` in ``topk_tensor``'s dtype and layout: for token ``(b, s)`` and local expert
  ``j`` (global ``e``), ``topk[b, s, e]`` when ``e`` is among the token's K experts, else 0 (the
  score's bytes, moved unchanged);
- ``[1, 1, B*S // reduction_size, E/D]`` uint16: per chunk of ``reduction_size`` tokens (in
  ``(b, s)`` order), 1 where the chunk selected that local expert.  The row count is ttnn's: the
  integer quotient (tt-metal's ``std::ceil`` of an integer division).

ttnn's checks: ``topk_tensor`` and the metadata ROW_MAJOR, the metadata and the mapping uint16 and
the mapping ROW_MAJOR, the mapping's last dim the mesh's devices, its dim 2 the topk's last dim,
the metadata's batch the topk's.  Outputs default to DRAM interleaved; preallocated outputs
(``optional_output_mapping_tensor``, ``optional_output_reduced_tensor``) are written in place.

May import: :mod:`meshnn.errors`, :mod:`meshnn.formats`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor`,
the ops' checks, launch, outputs, values and registry, and the collectives' modules.
"""

from __future__ import annotations

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.mesh.coord import MeshCoordinate
from meshnn.ops.ccl.a2a_routes import mapping_tables
from meshnn.ops.checks import device_input, same_mesh
from meshnn.ops.launch import launch
from meshnn.ops.outputs import Output, output_into
from meshnn.ops.registry import OpKind, register
from meshnn.ops.values import logical_values
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig, TensorSpec
from meshnn.tensor.tensor import Tensor

REDUCTION_SIZE = 16
"""ttnn's default tokens per chunk of the reduced output."""

_UNSIGNED = {1: np.uint8, 2: np.uint16, 4: np.uint32}


def _checks(op: str, topk: Tensor, mapping: Tensor, meta: Tensor, devices: int) -> None:
    for name, tensor in (("topk_tensor", topk), ("expert_mapping_tensor", mapping), ("expert_metadata_tensor", meta)):
        if tensor.layout is not Layout.ROW_MAJOR:
            raise MeshnnValueError(f"ttnn.{op}: {name} must be in row major layout, got {tensor.layout}")
        if len(tensor.shape) != 4:
            raise MeshnnValueError(f"ttnn.{op}: {name} must be rank 4, got {list(tensor.shape)}")
    for name, tensor in (("expert_metadata_tensor", meta), ("expert_mapping_tensor", mapping)):
        if tensor.dtype is not DataType.UINT16:
            raise MeshnnValueError(f"ttnn.{op}: {name} must be uint16, got {tensor.dtype}")
    if topk.dtype.is_block_float:
        raise MeshnnValueError(f"ttnn.{op}: topk_tensor must have an element size, got {topk.dtype}")
    if mapping.shape[-1] != devices:
        raise MeshnnValueError(
            f"ttnn.{op}: Last mapping_tensor dim should be num_devices {devices}, got {mapping.shape[-1]}"
        )
    if mapping.shape[-2] != topk.shape[-1]:
        raise MeshnnValueError(
            f"ttnn.{op}: Expected mapping shape dim 2 to be equal to topk dim 3 (number of experts), got "
            f"{mapping.shape[-2]} and {topk.shape[-1]} respectively"
        )
    if meta.shape[1] != topk.shape[1]:
        raise MeshnnValueError(
            f"ttnn.{op}: Expected metadata dim 1 to be equal to topk dim 1 (batch size), got {meta.shape[1]} and "
            f"{topk.shape[1]}, respectively"
        )


def _elements(rows: np.ndarray, spec: TensorSpec) -> np.ndarray:
    """The ``(k, *shape)`` elements of ROW_MAJOR rows as unsigned integers of the dtype's size: a view."""
    size = spec.compute_packed_buffer_size_bytes()
    view = rows[:, :size].view(_UNSIGNED[spec.dtype.row_major_element_size])
    view.shape = (rows.shape[0], *tuple(spec.shape))
    return view


def remap_rows(topk: np.ndarray, tables: np.ndarray, chosen: np.ndarray, lin: list[int], size: int) -> tuple:
    """(mapping ``(k, 1, B, S, L)``, reduced ``(k, 1, 1, R, L)``) of every device's ``topk``
    ``(k, 1, B, S, E)`` elements, mapping tables ``(k, E, D)`` and chosen experts ``(k, 1, B, S, K)``."""
    devices, _, batch, seq, _ = topk.shape
    local = tables.shape[1] // tables.shape[2]
    mapped = np.zeros((devices, 1, batch, seq, local), dtype=topk.dtype)
    hit = np.zeros((devices, batch * seq, local), dtype=bool)
    for row in range(devices):
        experts = np.flatnonzero(tables[row][:, lin[row]])[:local]
        picked = (chosen[row, 0][..., None] == experts).any(axis=-2)  # (B, S, n) a token selected expert j
        n = len(experts)
        mapped[row, 0, :, :, :n] = np.where(picked, topk[row, 0][..., experts], 0)
        hit[row, :, :n] = picked.reshape(batch * seq, n)
    chunks = batch * seq // size
    reduced = hit[:, : chunks * size].reshape(devices, chunks, size, local).any(axis=2).astype(np.uint16)
    return mapped, reduced.reshape(devices, 1, 1, chunks, local)


@register(kind=OpKind.DATA_MOVEMENT, family=OpFamily.COPY, device_operation="MoeExpertTokenRemapDeviceOperation")
def moe_expert_token_remap(
    topk_tensor: Tensor,
    expert_mapping_tensor: Tensor,
    expert_metadata_tensor: Tensor,
    *,
    memory_config: MemoryConfig | None = None,
    optional_output_mapping_tensor: Tensor | None = None,
    optional_output_reduced_tensor: Tensor | None = None,
    reduction_size: int = REDUCTION_SIZE,
) -> tuple[Tensor, Tensor]:
    """Each device's local-expert scores of its tokens, and their chunked activity (see the module's text)."""
    op = "moe_expert_token_remap"
    names = ("topk_tensor", "expert_mapping_tensor", "expert_metadata_tensor")
    given = (topk_tensor, expert_mapping_tensor, expert_metadata_tensor)
    topk, mapping, meta = (device_input(op, name, value) for name, value in zip(names, given, strict=True))
    mesh = same_mesh(op, dict(zip(names, (topk, mapping, meta), strict=True)))
    coords = topk.storage.coords  # type: ignore[union-attr]
    for name, tensor in (("expert_mapping_tensor", mapping), ("expert_metadata_tensor", meta)):
        if set(tensor.storage.coords) != set(coords):  # type: ignore[union-attr]
            raise MeshnnValueError(f"ttnn.{op}: {name} populates other devices than topk_tensor")
    _checks(op, topk, mapping, meta, mesh.get_num_devices())
    if memory_config is not None and not isinstance(memory_config, MemoryConfig):
        raise MeshnnTypeError(f"ttnn.{op}: memory_config must be a ttnn.MemoryConfig, got {memory_config!r}")
    if isinstance(reduction_size, bool) or not isinstance(reduction_size, int) or reduction_size < 1:
        raise MeshnnValueError(f"ttnn.{op}: reduction_size must be a positive int, got {reduction_size!r}")
    config = memory_config or MemoryConfig()
    _, batch, seq, _ = tuple(meta.shape)
    local = mapping.shape[-2] // mesh.get_num_devices()
    mapped = TensorSpec((1, batch, seq, local), topk.dtype, Layout.ROW_MAJOR, memory_config=config)
    rows = batch * seq // reduction_size
    reduced = TensorSpec((1, 1, rows, local), DataType.UINT16, Layout.ROW_MAJOR, memory_config=config)
    outputs = (optional_output_mapping_tensor, optional_output_reduced_tensor)
    into = None
    if any(t is not None for t in outputs):
        if any(t is None for t in outputs):
            raise MeshnnValueError(f"ttnn.{op}: give both optional output tensors or neither")
        into = [output_into(op, mesh, t, s, coords) for t, s in zip(outputs, (mapped, reduced), strict=True)]
    lin = [c.to_linear_index(mesh.shape) for c in coords]

    # (the kernel holds no tensor: a trace must not keep it allocated)
    mapping_spec, meta_spec, topk_spec, topk_shape = mapping.spec, meta.spec, topk.spec, topk.shape

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], _coords: tuple[MeshCoordinate, ...]) -> None:
        tables = mapping_tables(logical_values(in_rows[1], mapping_spec, as_float=False))
        chosen = np.asarray(logical_values(in_rows[2], meta_spec, as_float=False)).astype(np.int64)
        k = in_rows[0].shape[0]
        scores = _elements(in_rows[0], topk_spec).reshape(k, 1, *tuple(topk_shape)[1:])
        values, active = remap_rows(scores, tables, chosen.reshape(k, 1, batch, seq, -1), lin, reduction_size)
        _elements(out_rows[0], mapped)[...] = values.reshape(k, *mapped.shape)
        _elements(out_rows[1], reduced)[...] = active.reshape(k, *reduced.shape)

    attrs = {"memory_config": config, "reduction_size": reduction_size}
    outs = [Output(mapped, coords=coords), Output(reduced, coords=coords)]
    result = launch(op, mesh, [topk, mapping, meta], outs, kernel, coords=coords, attrs=attrs, into=into)
    return result[0], result[1]
