"""``ttnn.experimental.deepseek_prefill.combine``: the experts' outputs sent back to the devices and
token slots they were dispatched from (the inverse of ``dispatch``).

Per device (mesh row ``r``, column ``c``): ``dispatched_buffer`` ``[1, 1, M, H]`` (bfloat16 ROW_MAJOR or
TILE, or bfloat8_b TILE), ``dispatched_metadata`` ``[1, 1, M, 5+]`` int32 (``dispatch``'s), and
``expert_token_counts`` / ``expert_region_offsets`` of ``n`` values (int32 or uint32).  The device's
experts: ``g * experts_per_chip * dispatch_group_size + r * experts_per_chip + j`` for
``j < experts_per_chip``, ``g = c mod (n / (experts_per_chip * dispatch_group_size))`` its dispatch
group.  Their regions follow one another from row 0, each ``count`` rows rounded up to whole tiles
(32) -- the kernel's running sum, which is ``offset_cumsum``'s expert regions -- a region's rows
clamped to ``M``.  Each row ``i`` of a region, with metadata ``[s, t, k, ...]``, goes to the device of
row-major index ``s``: ``out[t, k] = dispatched[i]`` (values of the buffer's dtype, as bfloat16).
Output ``[1, 1, seq_len_per_chip, num_experts_per_tok, H]`` bfloat16 ROW_MAJOR in ``memory_config``
(default the buffer's), sharded on both mesh dims; slots no row reached are 0 (``init_zeros``; without
it tt-metal leaves them unwritten, meshnn's are still 0).

ttnn's checks (tt-metal 2026-06, ``combine`` and ``CombineDeviceOperation``): ``cluster_axis`` None or
0, 1 to 4 links, Linear or Ring; the layouts and dtypes above; the offsets and counts of one shape;
an interleaved output; fp8 only on Blackhole with a TILE buffer; the buffer, metadata and counts of
one leading dim, the buffer's and metadata's rows equal; ``n`` a multiple of ``experts_per_chip``.
meshnn's (where the kernel would write past the output): a metadata row naming a device, token or
slot outside it is refused when met.

May import: :mod:`meshnn.errors`, :mod:`meshnn.formats`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor`,
the ops' checks, launch, outputs, values and registry, and the collectives' arguments.
"""

from __future__ import annotations

import math

import numpy as np

from meshnn.device.arch import Arch
from meshnn.errors import MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.mesh.coord import MeshCoordinate
from meshnn.mesh.op_keywords import ttnn_keywords
from meshnn.ops.ccl.arguments import FABRIC_KEYWORDS, Topology, check_subdevice
from meshnn.ops.ccl.broadcast import whole_mesh
from meshnn.ops.ccl.point_to_point import local_only
from meshnn.ops.checks import device_input, same_mesh
from meshnn.ops.deepseek_prefill.arguments import (
    bool_arg,
    exchange_options,
    mesh_sharded,
    output_config,
    require,
    uint_arg,
    worker_line,
)
from meshnn.ops.deepseek_prefill.dispatch import bf16_bits, bits_target, finish_bits
from meshnn.ops.launch import Kernel, launch
from meshnn.ops.outputs import Output
from meshnn.ops.registry import OpKind, register
from meshnn.ops.values import logical_values
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig, TensorSpec
from meshnn.tensor.tensor import Tensor

OP = "experimental.deepseek_prefill.combine"
NAMES = ("dispatched_buffer", "dispatched_metadata", "expert_token_counts", "expert_region_offsets")
TILE_HEIGHT = 32


def local_regions(counts: np.ndarray, first: int, per_chip: int, capacity: int) -> list[tuple[int, int]]:
    """``(start, rows)`` of the device's experts ``first .. first + per_chip``, packed from row 0 in
    whole tiles and clamped to ``capacity`` rows, as the kernel walks them."""
    regions, start = [], 0
    for e in range(first, first + per_chip):
        rows = int(counts[e])
        rows = 0 if start >= capacity else min(rows, capacity - start)
        regions.append((start, rows))
        start += -(-rows // TILE_HEIGHT) * TILE_HEIGHT
    return regions


def _check(named: dict[str, Tensor], per_chip: int, fp8: bool, arch: Arch) -> None:
    buffer, meta, counts, offsets = (named[n] for n in NAMES)
    if buffer.layout is Layout.TILE:
        require(OP, "dispatched_buffer", buffer, (DataType.BFLOAT16, DataType.BFLOAT8_B), None)
    else:
        require(OP, "dispatched_buffer", buffer, (DataType.BFLOAT16,), Layout.ROW_MAJOR)
    for name in NAMES[1:]:
        require(OP, name, named[name], tuple(DataType), Layout.ROW_MAJOR)
    require(OP, "dispatched_metadata", meta, (DataType.INT32,), None)
    require(OP, "expert_token_counts", counts, (DataType.INT32, DataType.UINT32), None)
    require(OP, "expert_region_offsets", offsets, (DataType.INT32, DataType.UINT32), None)
    if tuple(offsets.shape) != tuple(counts.shape):
        raise MeshnnValueError(
            f"ttnn.{OP}: expert_region_offsets shape {list(offsets.shape)} must match expert_token_counts shape "
            f"{list(counts.shape)}"
        )
    if fp8 and arch is not Arch.BLACKHOLE:
        raise MeshnnValueError(f"ttnn.{OP}: use_fp8_combine=True requires Blackhole hardware (got {arch})")
    if fp8 and buffer.layout is not Layout.TILE:
        raise MeshnnValueError(f"ttnn.{OP}: use_fp8_combine=True requires a TILE dispatched_buffer")
    b, m, c = tuple(buffer.shape), tuple(meta.shape), tuple(counts.shape)
    if len(b) != 4 or len(m) != 4 or b[0] != m[0] or b[0] != c[0]:
        raise MeshnnValueError(
            f"ttnn.{OP}: dispatched_buffer {list(b)}, dispatched_metadata {list(m)} and expert_token_counts "
            f"{list(c)} must be 4-D buffers of one first dimension (per-device batch)"
        )
    if b[2] != m[2]:
        raise MeshnnValueError(f"ttnn.{OP}: flat buffer dim must match: dispatched[2]={b[2]} vs metadata[2]={m[2]}")
    if m[3] < 3:
        raise MeshnnValueError(f"ttnn.{OP}: dispatched_metadata needs at least 3 fields a row, got {m[3]}")
    if per_chip == 0 or c[-1] % per_chip:
        raise MeshnnValueError(
            f"ttnn.{OP}: counter last dim (num_routed_experts={c[-1]}) must be divisible by experts_per_chip={per_chip}"
        )


@register(OP, kind=OpKind.COLLECTIVE, family=OpFamily.ALL_TO_ALL_COMBINE, device_operation="CombineDeviceOperation")
@ttnn_keywords(records=("use_l1_small_for_semaphores",))
def combine(
    dispatched_buffer: Tensor,
    dispatched_metadata: Tensor,
    expert_token_counts: Tensor,
    expert_region_offsets: Tensor,
    *,
    dispatch_group_size: int,
    experts_per_chip: int,
    num_experts_per_tok: int,
    seq_len_per_chip: int,
    memory_config: MemoryConfig | None = None,
    subdevice_id: object = None,
    cluster_axis: int | None = None,
    num_links: int = 1,
    topology: Topology = Topology.Linear,
    init_zeros: bool = True,
    use_l1_small_for_semaphores: bool = False,
    use_fp8_combine: bool = False,
) -> Tensor:
    """Each device's ``[1, 1, seq_len_per_chip, num_experts_per_tok, H]`` expert outputs, back at the
    token slots they were dispatched from (see the module's text)."""
    given = (dispatched_buffer, dispatched_metadata, expert_token_counts, expert_region_offsets)
    named = {name: device_input(OP, name, t) for name, t in zip(NAMES, given, strict=True)}
    mesh = same_mesh(OP, named)
    local_only(OP, mesh)
    group = uint_arg(OP, "dispatch_group_size", dispatch_group_size)
    per_chip = uint_arg(OP, "experts_per_chip", experts_per_chip)
    k, seq = (
        uint_arg(OP, "num_experts_per_tok", num_experts_per_tok),
        uint_arg(OP, "seq_len_per_chip", seq_len_per_chip),
    )
    axis, links = exchange_options(OP, cluster_axis, num_links, topology)
    FABRIC_KEYWORDS["subdevice_id"].check(OP, "subdevice_id", subdevice_id)
    check_subdevice(OP, mesh, subdevice_id)
    bool_arg(OP, "init_zeros", init_zeros)
    bool_arg(OP, "use_l1_small_for_semaphores", use_l1_small_for_semaphores)
    fp8 = bool_arg(OP, "use_fp8_combine", use_fp8_combine)
    config = output_config(OP, memory_config, named["dispatched_buffer"])
    _check(named, per_chip, fp8, mesh.arch())
    worker_line(OP, mesh, subdevice_id, links, None)
    n = math.prod(tuple(named["expert_token_counts"].shape))
    if group == 0 or n % (per_chip * group):
        raise MeshnnValueError(
            f"ttnn.{OP}: num_routed_experts ({n}) must be a multiple of experts_per_chip * dispatch_group_size "
            f"({per_chip} * {group})"
        )
    hidden = named["dispatched_buffer"].shape[-1]
    dtype = DataType.FP8_E4M3 if fp8 else DataType.BFLOAT16
    spec = TensorSpec((1, 1, seq, k, hidden), dtype, Layout.ROW_MAJOR, memory_config=config)
    cols = tuple(mesh.shape)[1] if len(tuple(mesh.shape)) > 1 else 1
    kernel = _kernel([named[name].spec for name in NAMES], spec, (group, per_chip, n // (per_chip * group), cols))
    attrs = {"cluster_axis": axis, "num_links": links, "topology": topology, "memory_config": config}
    attrs["init_zeros"] = init_zeros
    out = Output(spec, topology=mesh_sharded(mesh))
    return launch(OP, mesh, list(named.values()), [out], kernel, attrs=attrs, coords=whole_mesh(mesh), semaphores=2)[0]


def _kernel(in_specs: list[TensorSpec], spec: TensorSpec, layout: tuple[int, int, int, int]) -> Kernel:
    """The program: every device's regions sent back, in row-major device order, into a zeroed output."""
    _, _, seq, k, hidden = tuple(spec.shape)

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], _coords: tuple[MeshCoordinate, ...]) -> None:
        devices = in_rows[0].shape[0]
        rows = bf16_bits(in_rows[0], in_specs[0]).reshape(devices, -1, hidden)
        meta = logical_values(in_rows[1], in_specs[1], as_float=False).reshape(devices, rows.shape[1], -1)
        counts = logical_values(in_rows[2], in_specs[2], as_float=False).reshape(devices, -1)
        out = bits_target(out_rows[0], spec).reshape(devices, seq, k, hidden)
        for d in range(devices):
            _send(out, rows[d], meta[d], _experts(counts[d], d, layout, rows.shape[1]))
        finish_bits(out_rows[0], out, spec)

    return kernel


def _experts(counts: np.ndarray, device: int, layout: tuple[int, int, int, int], capacity: int) -> list:
    """The rows of device ``device``'s experts: ``(start, rows)`` each (see the module's text)."""
    group, per_chip, groups, cols = layout
    row, col = divmod(device, cols)
    first = (col % groups) * per_chip * group + row * per_chip
    return local_regions(counts, first, per_chip, capacity)


def _send(out: np.ndarray, rows: np.ndarray, meta: np.ndarray, regions: list[tuple[int, int]]) -> None:
    """Every region row to its metadata's device, token and slot of ``out`` ``(devices, S, K, H)``."""
    devices, seq, k, _ = out.shape
    index = np.concatenate([np.arange(start, start + count) for start, count in regions] or [np.zeros(0, int)])
    source, token, slot = (meta[index, j].astype(np.int64) for j in range(3))
    bad = (source < 0) | (source >= devices) | (token < 0) | (token >= seq) | (slot < 0) | (slot >= k)
    if bad.any():
        at = int(np.argmax(bad))
        raise MeshnnValueError(
            f"ttnn.{OP}: dispatched_metadata row {index[at]} names device {source[at]}, token {token[at]}, slot "
            f"{slot[at]}: outside the {devices} devices' [{seq}, {k}] outputs"
        )
    out[source, token, slot] = rows[index]
