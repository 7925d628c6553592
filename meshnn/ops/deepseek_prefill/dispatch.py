"""``ttnn.experimental.deepseek_prefill.dispatch``: each token sent to the devices of its experts,
into one flat buffer per device where every expert's tokens sit in a region of its own.

Per device (row-major index ``d``, a member of its dispatch group: its column with ``cluster_axis``
0, the whole mesh in row-major order without one): ``input_tensor`` ``[1, S, H]`` bfloat16 (TILE or
ROW_MAJOR), ``weights_tensor`` ``[1, S, K]`` bfloat16, ``indices_tensor`` ``[1, S, K]`` uint16,
``expert_offsets_tensor`` ``[1, n]`` int32 / uint32 (this device's first row in each expert's
region: ``offset_cumsum``'s offsets), ``expert_dispatch_table_tensor`` ``[1, n]`` int32 (each
expert's chip in the group, -1 where it belongs to another group).  For every token ``t`` in order
and slot ``k``: ``e = indices[t, k]``; skipped when ``table[e] == -1``; else its row is
``offsets[e]``, counted up once per token sent to ``e`` -- one past ``max_dispatch_buffer_token_size``
drops the token (tt-metal's overflow guard) -- on the group's chip ``table[e]``, which gets

- ``dispatched[row] = input[t]`` (bytes moved unchanged; fp8_e4m3 when ``use_fp8_dispatch``),
- ``metadata[row, :5] = [d, t, k, e, w]``, ``w`` the weight's bfloat16 bits as a signed int16.

Outputs ``[1, 1, max_dispatch_buffer_token_size, H]`` and ``[1, 1, max, metadata_len]`` int32, ROW_MAJOR,
``memory_config`` (default the input's), sharded on both mesh dims; rows no token reached are 0
(ttnn: never written).

ttnn's checks (tt-metal 2026-06, ``dispatch`` and ``DispatchDeviceOperation``): ``cluster_axis`` None
or 0, 1 to 4 links, Linear or Ring; weights, indices, offsets and table ROW_MAJOR; input and weights
bfloat16, indices uint16, offsets int32 or uint32, table int32; fp8 only off Wormhole and with a TILE
input; an interleaved output memory config.  meshnn's (where the kernel would read past a tensor):
the tokens, weights and ids of one token count, ``num_experts_per_tok`` ids a token, the offsets and
table ``n = num_routed_experts`` long, ``metadata_len >= 5``, and an id past ``n`` or a chip past
``dispatch_group_size`` refused when met.

May import: :mod:`meshnn.errors`, :mod:`meshnn.formats`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor`,
the ops' checks, launch, outputs, values and registry, and the collectives' arguments.
"""

from __future__ import annotations

import math

import numpy as np

from meshnn.device.arch import Arch
from meshnn.device.buffer import TensorMemoryLayout
from meshnn.errors import MeshnnValueError
from meshnn.formats.bfloat16 import float32_to_bfloat16_bits
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout, untilize
from meshnn.mesh.coord import MeshCoordinate
from meshnn.mesh.op_keywords import ttnn_keywords
from meshnn.ops.ccl.arguments import FABRIC_KEYWORDS, Topology, check_subdevice
from meshnn.ops.ccl.broadcast import whole_mesh
from meshnn.ops.ccl.point_to_point import local_only
from meshnn.ops.checks import device_input, same_mesh
from meshnn.ops.deepseek_prefill.arguments import (
    bool_arg,
    exchange_options,
    group_device,
    mesh_sharded,
    output_config,
    require,
    uint_arg,
    worker_line,
)
from meshnn.ops.launch import Kernel, launch
from meshnn.ops.outputs import Output
from meshnn.ops.registry import OpKind, register
from meshnn.ops.values import encode_values, logical_values
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig, TensorSpec
from meshnn.tensor.tensor import Tensor

OP = "experimental.deepseek_prefill.dispatch"
METADATA_FIELDS = 5
NAMES = ("input_tensor", "weights_tensor", "indices_tensor", "expert_offsets_tensor", "expert_dispatch_table_tensor")


def bf16_bits(rows: np.ndarray, spec: TensorSpec) -> np.ndarray:
    """``(k, *shape)`` bfloat16 bits of ``k`` devices' rows: ROW_MAJOR a view, interleaved bfloat16
    TILE untilized as bits (no float copy), anything else decoded."""
    k, size = rows.shape[0], spec.compute_packed_buffer_size_bytes()
    if spec.layout is Layout.ROW_MAJOR:
        return rows[:, :size].view(np.uint16).reshape(k, *tuple(spec.shape))
    interleaved = spec.memory_config.memory_layout is TensorMemoryLayout.INTERLEAVED
    if spec.dtype is DataType.BFLOAT16 and interleaved and spec.explicit_padded_shape is None:
        padded = tuple(spec.padded_shape)
        out = np.empty((k, *tuple(spec.shape)), np.uint16)
        for i in range(k):
            whole = untilize(rows[i, :size].view(np.uint16), padded, spec.tile)
            out[i] = whole[tuple(slice(0, d) for d in spec.shape)]
        return out
    return float32_to_bfloat16_bits(np.ascontiguousarray(logical_values(rows, spec), np.float32))


def route(ids: np.ndarray, table: np.ndarray, offsets: np.ndarray, capacity: int, groups: int) -> tuple:
    """One source device's sends, as arrays ``(token, slot, expert, chip, row)`` in the kernel's order
    (token by token, slot by slot): each expert's ``offsets`` entry counted up per token sent to it,
    the sends whose row is past ``capacity`` dropped (see the module's text)."""
    n = table.size
    tokens, slots = np.divmod(np.arange(ids.size), ids.shape[1])
    experts = ids.reshape(-1).astype(np.int64)
    if experts.size and int(experts.max()) >= n:
        at = int(np.argmax(experts >= n))
        raise MeshnnValueError(
            f"ttnn.{OP}: expert id {experts[at]} (token {tokens[at]}, slot {slots[at]}) is past the {n} routed experts"
        )
    chips = table.astype(np.int64)[experts]
    sent = chips != -1
    tokens, slots, experts, chips = tokens[sent], slots[sent], experts[sent], chips[sent]
    bad = (chips < 0) | (chips >= groups)
    if bad.any():
        at = int(np.argmax(bad))
        raise MeshnnValueError(
            f"ttnn.{OP}: expert {experts[at]}'s chip {chips[at]} is outside the dispatch group of {groups}"
        )
    order = np.argsort(experts, kind="stable")  # each expert's sends in the kernel's order
    first = np.searchsorted(experts[order], experts[order])  # where each expert's run starts
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size) - first
    rows = offsets.astype(np.int64)[experts] + rank
    kept = rows < capacity
    return tokens[kept], slots[kept], experts[kept], chips[kept], rows[kept]


def _check_tensors(named: dict[str, Tensor], fp8: bool, arch: Arch) -> None:
    for name in NAMES[1:]:
        require(OP, name, named[name], tuple(DataType), Layout.ROW_MAJOR)
    require(OP, "input_tensor", named["input_tensor"], (DataType.BFLOAT16,), None)
    require(OP, "weights_tensor", named["weights_tensor"], (DataType.BFLOAT16,), None)
    require(OP, "indices_tensor", named["indices_tensor"], (DataType.UINT16,), None)
    require(OP, "expert_offsets_tensor", named["expert_offsets_tensor"], (DataType.INT32, DataType.UINT32), None)
    require(OP, "expert_dispatch_table_tensor", named["expert_dispatch_table_tensor"], (DataType.INT32,), None)
    if fp8 and arch is Arch.WORMHOLE_B0:
        raise MeshnnValueError(f"ttnn.{OP}: FP8 dispatch is not supported on Wormhole_B0 (use_fp8_dispatch)")
    if fp8 and named["input_tensor"].layout is Layout.ROW_MAJOR:
        raise MeshnnValueError(f"ttnn.{OP}: FP8 output needs a TILE input_tensor, not ROW_MAJOR (use_fp8_dispatch)")


def _check_shapes(named: dict[str, Tensor], sizes: dict[str, int]) -> tuple[int, int]:
    """(tokens, hidden) after meshnn's shape checks."""
    x, w, ids = (tuple(named[n].shape) for n in NAMES[:3])
    tokens = math.prod(x[:-1])
    if math.prod(w[:-1]) != tokens or math.prod(ids[:-1]) != tokens or w[-1] != ids[-1]:
        raise MeshnnValueError(
            f"ttnn.{OP}: input_tensor {list(x)}, weights_tensor {list(w)} and indices_tensor {list(ids)} must hold "
            "the same tokens, and weights and indices the same top-k"
        )
    if ids[-1] < sizes["num_experts_per_tok"]:
        raise MeshnnValueError(f"ttnn.{OP}: indices_tensor holds {ids[-1]} ids a token, fewer than num_experts_per_tok")
    for name in NAMES[3:]:
        if math.prod(tuple(named[name].shape)) != sizes["num_routed_experts"]:
            raise MeshnnValueError(
                f"ttnn.{OP}: {name} {list(named[name].shape)} must hold num_routed_experts "
                f"({sizes['num_routed_experts']}) values"
            )
    if sizes["metadata_len"] < METADATA_FIELDS:
        raise MeshnnValueError(
            f"ttnn.{OP}: metadata_len must be at least {METADATA_FIELDS}, got {sizes['metadata_len']}"
        )
    if sizes["dispatch_group_size"] == 0:
        raise MeshnnValueError(f"ttnn.{OP}: dispatch_group_size must be > 0")
    return tokens, x[-1]


@register(OP, kind=OpKind.COLLECTIVE, family=OpFamily.ALL_TO_ALL_DISPATCH, device_operation="DispatchDeviceOperation")
@ttnn_keywords(records=("use_l1_small_for_semaphores", "num_untilizers_per_sender"))
def dispatch(
    input_tensor: Tensor,
    weights_tensor: Tensor,
    indices_tensor: Tensor,
    expert_offsets_tensor: Tensor,
    expert_dispatch_table_tensor: Tensor,
    *,
    dispatch_group_size: int,
    experts_per_chip: int,
    num_routed_experts: int,
    num_experts_per_tok: int,
    metadata_len: int,
    max_dispatch_buffer_token_size: int,
    memory_config: MemoryConfig | None = None,
    subdevice_id: object = None,
    cluster_axis: int | None = None,
    num_links: int = 1,
    topology: Topology = Topology.Linear,
    use_l1_small_for_semaphores: bool = False,
    use_fp8_dispatch: bool = False,
    num_untilizers_per_sender: int = 2,
) -> tuple[Tensor, Tensor]:
    """(dispatched buffer, metadata) of every device: its dispatch group's tokens for its experts (see
    the module's text)."""
    given = (input_tensor, weights_tensor, indices_tensor, expert_offsets_tensor, expert_dispatch_table_tensor)
    named = {name: device_input(OP, name, t) for name, t in zip(NAMES, given, strict=True)}
    mesh = same_mesh(OP, named)
    local_only(OP, mesh)
    sizes = {
        name: uint_arg(OP, name, value)
        for name, value in (("dispatch_group_size", dispatch_group_size), ("experts_per_chip", experts_per_chip),
                            ("num_routed_experts", num_routed_experts), ("num_experts_per_tok", num_experts_per_tok),
                            ("metadata_len", metadata_len),
                            ("max_dispatch_buffer_token_size", max_dispatch_buffer_token_size),
                            ("num_untilizers_per_sender", num_untilizers_per_sender))
    }  # fmt: skip
    axis, links = exchange_options(OP, cluster_axis, num_links, topology)
    FABRIC_KEYWORDS["subdevice_id"].check(OP, "subdevice_id", subdevice_id)
    check_subdevice(OP, mesh, subdevice_id)
    bool_arg(OP, "use_l1_small_for_semaphores", use_l1_small_for_semaphores)
    fp8 = bool_arg(OP, "use_fp8_dispatch", use_fp8_dispatch)
    config = output_config(OP, memory_config, named["input_tensor"])
    _check_tensors(named, fp8, mesh.arch())
    tokens, hidden = _check_shapes(named, sizes)
    if sizes["num_untilizers_per_sender"] == 0:
        raise MeshnnValueError(f"ttnn.{OP}: num_untilizers_per_sender must be >= 1; got 0")
    worker_line(OP, mesh, subdevice_id, links, sizes["num_untilizers_per_sender"])
    capacity = sizes["max_dispatch_buffer_token_size"]
    dtype = DataType.FP8_E4M3 if fp8 else DataType.BFLOAT16
    specs = (
        TensorSpec((1, 1, capacity, hidden), dtype, Layout.ROW_MAJOR, memory_config=config),
        TensorSpec((1, 1, capacity, sizes["metadata_len"]), DataType.INT32, Layout.ROW_MAJOR, memory_config=config),
    )
    kernel = _kernel([named[n].spec for n in NAMES], specs, sizes, (tokens, hidden), (tuple(mesh.shape), axis))
    k = sizes["num_experts_per_tok"]
    attrs = {"cluster_axis": axis, "num_links": links, "topology": topology, "peers": k, "memory_config": config}
    outs = [Output(s, topology=mesh_sharded(mesh)) for s in specs]
    result = launch(OP, mesh, list(named.values()), outs, kernel, attrs=attrs, coords=whole_mesh(mesh), semaphores=2)
    return result[0], result[1]


def _kernel(in_specs: list[TensorSpec], specs: tuple, sizes: dict[str, int], dims: tuple, where: tuple) -> Kernel:
    """The program: every device's sends, in row-major device order, into zeroed outputs."""
    (tokens, hidden), (shape, axis) = dims, where
    capacity, k, group = (
        sizes["max_dispatch_buffer_token_size"],
        sizes["num_experts_per_tok"],
        sizes["dispatch_group_size"],
    )

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], _coords: tuple[MeshCoordinate, ...]) -> None:
        tok = bf16_bits(in_rows[0], in_specs[0]).reshape(-1, tokens, hidden)
        weights = bf16_bits(in_rows[1], in_specs[1]).reshape(-1, tokens, in_specs[1].shape[-1])
        ids = logical_values(in_rows[2], in_specs[2], as_float=False).reshape(-1, tokens, in_specs[2].shape[-1])
        offsets = logical_values(in_rows[3], in_specs[3], as_float=False).reshape(len(tok), -1)
        table = logical_values(in_rows[4], in_specs[4], as_float=False).reshape(len(tok), -1)
        out = bits_target(out_rows[0], specs[0]).reshape(len(tok), capacity, hidden)
        meta = out_rows[1][:, : specs[1].compute_packed_buffer_size_bytes()].view(np.int32)
        meta.shape = (len(tok), capacity, sizes["metadata_len"])
        meta[...] = 0
        for d in range(len(tok)):
            t, slot, e, chip, row = route(ids[d, :, :k], table[d], offsets[d], capacity, group)
            dest = group_device(shape, d, chip, axis)
            out[dest, row] = tok[d, t]
            fields = (np.full_like(t, d), t, slot, e, weights[d, t, slot].view(np.int16))
            meta[dest, row, :METADATA_FIELDS] = np.stack(fields, axis=-1)
        finish_bits(out_rows[0], out, specs[0])

    return kernel


def bits_target(rows: np.ndarray, spec: TensorSpec) -> np.ndarray:
    """Zeroed ``(k, *shape)`` bfloat16 bits to build an output of ``spec`` in: a view of its rows
    (bfloat16), or an array of its own (fp8: :func:`finish_bits` encodes it)."""
    shape = (rows.shape[0], *tuple(spec.shape))
    if spec.dtype is not DataType.BFLOAT16:
        return np.zeros(shape, np.uint16)
    view = rows[:, : spec.compute_packed_buffer_size_bytes()].view(np.uint16)
    view.shape = shape  # (raises rather than copy: the kernel writes through it)
    view[...] = 0
    return view


def finish_bits(rows: np.ndarray, bits: np.ndarray, spec: TensorSpec) -> None:
    """An fp8 output's values encoded from the bfloat16 ``bits`` built for it (bfloat16: written already)."""
    if spec.dtype is not DataType.BFLOAT16:
        values = (bits.astype(np.uint32) << 16).view(np.float32)
        rows[:, : spec.compute_packed_buffer_size_bytes()] = encode_values(values, spec)
