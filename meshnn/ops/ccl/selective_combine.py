"""``ttnn.experimental.selective_reduce_combine``: the MoE combine of tt-metal's fused decode
(DeepSeek, gpt-oss): each expert's dense block of outputs back to its tokens' devices, into the
token's top-k slot.

Per device (``E`` local experts, ``T = batch_size * seq_size`` tokens of the whole cluster line,
``G`` devices along ``cluster_axis``, ``K = select_experts_k``):

- ``dense_token_counts_tensor``: the first ``E`` uint32 values, each local expert's active tokens;
- ``dense_token_maps_tensor`` ``[E, (T+1)*s]`` uint32 (``s = shape[-1] // T``, 4 in tt-metal's
  16 B rows): entry ``p*s`` of row ``e`` is the cluster token id of expert ``e``'s ``p``-th active
  token;
- ``dense_activations_tensor`` ``[.., T*a]`` uint32, ``a`` = ``2E+1`` aligned to the buffer's
  alignment: rows ``[token id, k of each local expert, ...]`` in token order (the expert's ``k``, or
  ``K`` when the token did not pick it);
- ``dense_input_tensor``: L1 HEIGHT_SHARDED bfloat16, read shard by shard as bytes. Worker ``i``
  (of ``worker_cores``, the first ``token_parallel_core_dim * D`` of them) is token part
  ``i // D`` and hidden part ``i % D`` (``D``: the data-parallel parts tt-metal's
  ``data_parallel_split`` makes of a token's bytes, packets of at most 4096 B); its shard holds
  expert ``e``'s block at ``e * seg * (T // token_parallel_core_dim)`` bytes, one ``seg``-byte
  row (the largest part) per token of its share (expert ``e``'s active tokens split evenly over
  the token parts, the first parts taking the remainder).

Output ``[K, T/G, H]`` ROW_MAJOR (DRAM unless ``memory_config``; ``output_tensor`` is written in
place): token ``t``'s row of slot ``k`` on the line's member ``t // (T/G)`` at row ``t % (T/G)``;
rows no token lands on keep what the buffer held.  A token missing from the activations, or a
``k`` of ``K`` or more, is not written (tt-metal's kernel would scan past the metadata or write past
the output).  ``topology``, ``num_links``, ``mux_core_range_set`` and the semaphore choose hardware
resources: checked, recorded.  Perf: all_to_all_combine's (``(G-1)/G`` of the output bytes).

May import: :mod:`meshnn.errors`, :mod:`meshnn.formats`, :mod:`meshnn.device`, :mod:`meshnn.mesh`,
:mod:`meshnn.tensor`, the ops' checks, launch, outputs, values and registry, and the collectives'
modules.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence

import numpy as np

from meshnn.device.buffer import BufferType, TensorMemoryLayout
from meshnn.device.core import CoreCoord, CoreRangeSet
from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.mesh.coord import MeshCoordinate
from meshnn.mesh.mesh_device import MeshDevice
from meshnn.ops.ccl.all_to_all import TRACE_BYTES, _preallocated, _token_bits, group_size_of
from meshnn.ops.ccl.arguments import Topology, checked_input
from meshnn.ops.ccl.broadcast import device_groups, whole_mesh
from meshnn.ops.ccl.point_to_point import FABRIC_PAYLOAD_BYTES, local_only
from meshnn.ops.checks import device_input, same_mesh
from meshnn.ops.launch import launch
from meshnn.ops.outputs import Output, out_spec_like
from meshnn.ops.registry import OpKind, register
from meshnn.ops.values import logical_values
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor

OP = "experimental.selective_reduce_combine"
BF16_PACKET_BYTES = 1 << (FABRIC_PAYLOAD_BYTES.bit_length() - 1)  # bit_floor(4352) = 4096


def data_parallel_split(token_bytes: int, packet_bytes: int, cores: int) -> list[int]:
    """tt-metal's ``data_parallel_split``: a token's bytes in at most ``cores`` parts of
    ``token_bytes // max(cores, token_bytes // packet_bytes)`` (bytes a short split leaves are not sent)."""
    need = max(cores, token_bytes // packet_bytes)
    part = token_bytes // need
    sizes = []
    for _ in range(cores):
        step = min(token_bytes, part)
        sizes.append(step)
        token_bytes -= step
        if token_bytes == 0:
            break
    return sizes


def token_split(count: int, parts: int, part: int) -> tuple[int, int]:
    """(offset, count) of token part ``part`` of ``count`` active tokens (the first parts take the remainder)."""
    chunk, rem = divmod(count, parts)
    sizes = [chunk + (1 if c < rem else 0) for c in range(parts)]
    return sum(sizes[:part]), sizes[part]


def _int(name: str, value: object, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise MeshnnTypeError(f"ttnn.{OP}: {name} must be an int, got {value!r}")
    if value < low:
        raise MeshnnValueError(f"ttnn.{OP}: {name} must be at least {low}, got {value}")
    return value


def _inputs(tensors: dict[str, object]) -> tuple[list[Tensor], MeshDevice]:
    """The four inputs: the dense input bfloat16 L1 HEIGHT_SHARDED, the metadata uint32 ROW_MAJOR."""
    checked = [checked_input(OP, tensors["dense_input_tensor"], None)[0]]  # type: ignore[arg-type]
    checked += [device_input(OP, name, value) for name, value in list(tensors.items())[1:]]
    mesh = same_mesh(OP, dict(zip(tensors, checked, strict=True)))
    dense = checked[0]
    memory = dense.spec.memory_config
    if dense.layout is not Layout.ROW_MAJOR or dense.dtype is not DataType.BFLOAT16:
        raise MeshnnValueError(f"ttnn.{OP}: dense_input_tensor must be bfloat16 ROW_MAJOR, got {dense.dtype}")
    if memory.memory_layout is not TensorMemoryLayout.HEIGHT_SHARDED or memory.buffer_type is not BufferType.L1:
        raise MeshnnValueError(f"ttnn.{OP}: dense_input_tensor must be HEIGHT_SHARDED in L1 (its shards are read)")
    for name, t in zip(list(tensors)[1:], checked[1:], strict=True):
        if t.layout is not Layout.ROW_MAJOR or t.dtype is not DataType.UINT32:
            raise MeshnnValueError(f"ttnn.{OP}: {name} must be uint32 ROW_MAJOR, got {t.dtype} {t.layout}")
    if len(checked[2].shape) != 2:
        raise MeshnnValueError(
            f"ttnn.{OP}: dense_token_maps_tensor must be rank 2 ([experts, per-token-stride]); got rank "
            f"{len(checked[2].shape)}"
        )
    return checked, mesh


def _workers(value: object, needed: int, links: int) -> list[CoreCoord]:
    if not isinstance(value, Sequence) or not all(isinstance(c, CoreCoord) for c in value):
        raise MeshnnTypeError(f"ttnn.{OP}: worker_cores must be a list of ttnn.CoreCoord, got {value!r}")
    if len(value) < needed:
        raise MeshnnValueError(f"ttnn.{OP}: worker_cores has {len(value)} cores; the op uses {needed}")
    if needed % links:
        raise MeshnnValueError(f"ttnn.{OP}: num_worker_cores ({needed}) must be divisible by num_links ({links})")
    return list(value[:needed])


def _core_shards(dense: Tensor, workers: list[CoreCoord], block_bytes: int) -> list[int]:
    """Each worker's shard index in the dense input (its place in the shard grid), checked to hold
    the worker's expert blocks."""
    shard = dense.spec.memory_config.shard_spec
    order = shard.grid.cores(row_wise=shard.orientation.name == "ROW_MAJOR")
    height = int(np.prod(tuple(dense.shape)[:-1]))
    shards = -(-height // shard.shape[0])
    indices = []
    for core in workers:
        if core not in order or order.index(core) >= shards:
            raise MeshnnValueError(f"ttnn.{OP}: worker core {core} holds no shard of dense_input_tensor")
        indices.append(order.index(core))
    if block_bytes > shard.shape[0] * shard.shape[1] * 2:
        raise MeshnnValueError(
            f"ttnn.{OP}: a worker's expert blocks take {block_bytes} B; dense_input_tensor's shards hold "
            f"{shard.shape[0] * shard.shape[1] * 2} B"
        )
    return indices


def _k_lookup(activations: np.ndarray, stride: int, expert: int):
    """A forward scan of the activation rows, as tt-metal's writer scans them: each token id's
    ``k`` for ``expert`` from the first row at or after the previous match."""
    rows = activations[: activations.size // stride * stride].reshape(-1, stride)
    places: dict[int, list[int]] = {}
    for i, token in enumerate(rows[:, 0].tolist()):
        places.setdefault(token, []).append(i)
    at = 0

    def k_of(token: int) -> int | None:
        nonlocal at
        found = places.get(token, [])
        j = bisect.bisect_left(found, at)
        if j == len(found):
            return None
        at = found[j]
        return int(rows[at, 1 + expert])

    return k_of


def combine_device(source: dict[str, np.ndarray], out_rows: list[np.ndarray], group: list[int], plan: dict) -> None:
    """Send one device's dense blocks (``source``: its shards' elements, counts, maps, activations)
    to the line's outputs ``out_rows`` (``[K, T/G, H]`` each, by member)."""
    per_device, parts, sizes = plan["per_device"], plan["token_parts"], plan["sizes"]
    seg, block = max(sizes) // 2, max(sizes) // 2 * (plan["tokens"] // parts)
    maps, stride = source["maps"], plan["map_stride"]
    for i, shard in enumerate(source["shards"]):
        part, d = divmod(i, len(sizes))
        lo, width = sum(sizes[:d]) // 2, sizes[d] // 2
        for e in range(plan["experts"]):
            offset, count = token_split(int(source["counts"][e]), parts, part)
            k_of = _k_lookup(source["activations"], plan["act_stride"], e)
            for dt in range(count):
                token = int(maps[e, (offset + dt) * stride])
                k = k_of(token)
                member = token // per_device
                if k is None or k >= plan["k"] or member >= len(group):
                    continue
                start = e * block + dt * seg
                out_rows[member][k, token % per_device, lo : lo + width] = shard[start : start + width]


def _resources(topology: object, mux_cores: object, memory_config: object) -> None:
    """The hardware-only arguments' types (the fabric topology, the mux cores, the output's memory)."""
    if not isinstance(topology, Topology):
        raise MeshnnTypeError(f"ttnn.{OP}: topology must be a ttnn.Topology, got {topology!r}")
    if not isinstance(mux_cores, CoreRangeSet):
        raise MeshnnTypeError(f"ttnn.{OP}: mux_core_range_set must be a ttnn.CoreRangeSet, got {mux_cores!r}")
    if memory_config is not None and not isinstance(memory_config, MemoryConfig):
        raise MeshnnTypeError(f"ttnn.{OP}: memory_config must be a ttnn.MemoryConfig, got {memory_config!r}")


def _activation_stride(acts: Tensor, tokens: int, experts: int, mesh: MeshDevice) -> int:
    """uint32s a token's activation row takes: ``2E+1`` aligned to the buffer's alignment, as ttnn checks."""
    stride = acts.shape[-1] // tokens
    align = 16 if acts.spec.memory_config.buffer_type is BufferType.L1 else mesh.system.arch_spec.dram_alignment
    if stride != -(-(2 * experts + 1) * 4 // align) * align // 4:
        raise MeshnnValueError(
            f"ttnn.{OP}: The token activations tensor is expected to have aligned 2 * experts_per_device + 1 "
            f"elements per token, got {stride}"
        )
    return stride


def _kernel(inputs: list[Tensor], spec: object, groups: list[list[int]], plan: dict):
    """The kernel: every device of every line sends its blocks to the line's outputs."""
    dense, acts, maps, counts = inputs
    shard_h, shard_w = dense.spec.memory_config.shard_spec.shape
    size, experts = shard_h * shard_w, plan["experts"]

    # (the kernel holds no tensor: a trace must not keep it allocated)
    counts_spec, dense_spec, meta_specs = counts.spec, dense.spec, ((1, acts.spec), (2, maps.spec))

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], _coords: tuple[MeshCoordinate, ...]) -> None:
        flat = _token_bits(in_rows[0], dense_spec).reshape(in_rows[0].shape[0], -1)
        meta = [np.asarray(logical_values(in_rows[i], sp, as_float=False)) for i, sp in meta_specs]
        count_rows = np.asarray(logical_values(in_rows[3], counts_spec, as_float=False))
        outs = _token_bits(out_rows[0], spec)
        for group in groups:
            for src in group:
                shard_rows = [flat[src, s * size : (s + 1) * size] for s in plan["shards"]]
                source = {"shards": shard_rows, "counts": count_rows[src].reshape(-1)[:experts]}
                source.update(maps=meta[1][src].reshape(experts, -1), activations=meta[0][src].reshape(-1))
                combine_device(source, [outs[m] for m in group], group, plan)

    return kernel


@register(
    OP,
    kind=OpKind.COLLECTIVE,
    family=OpFamily.ALL_TO_ALL_COMBINE,
    device_operation="SelectiveReduceCombineDeviceOperation",
)
def selective_reduce_combine(
    dense_input_tensor: Tensor,
    dense_activations_tensor: Tensor,
    dense_token_maps_tensor: Tensor,
    dense_token_counts_tensor: Tensor,
    hidden_size: int,
    batch_size: int,
    seq_size: int,
    select_experts_k: int,
    cluster_axis: int,
    topology: Topology,
    num_links: int,
    token_parallel_core_dim: int,
    data_parallel_core_dim: int,
    worker_cores: list[CoreCoord],
    mux_core_range_set: CoreRangeSet,
    *,
    memory_config: MemoryConfig | None = None,
    output_tensor: Tensor | None = None,
    optional_cross_device_semaphore: object = None,
) -> Tensor:
    """Each expert's dense outputs back to their tokens' devices, in the tokens' top-k slots (see
    the module's text)."""
    names = ("dense_input_tensor", "dense_activations_tensor", "dense_token_maps_tensor", "dense_token_counts_tensor")
    given = (dense_input_tensor, dense_activations_tensor, dense_token_maps_tensor, dense_token_counts_tensor)
    (dense, acts, maps, counts), mesh = _inputs(dict(zip(names, given, strict=True)))
    local_only(OP, mesh)
    scalars = {"hidden_size": hidden_size, "select_experts_k": select_experts_k, "batch_size": batch_size}
    scalars.update(seq_size=seq_size, num_links=num_links, token_parallel_core_dim=token_parallel_core_dim)
    scalars.update(data_parallel_core_dim=data_parallel_core_dim)
    hidden, k, batch, seq, links, parts, dp = (_int(name, value, 1) for name, value in scalars.items())
    _resources(topology, mux_core_range_set, memory_config)
    tokens, g = batch * seq, group_size_of(OP, mesh, cluster_axis)
    if tokens % g:
        raise MeshnnValueError(f"ttnn.{OP}: batch_size * seq_size ({tokens}) must divide by the {g} devices")
    experts = maps.shape[0]
    plan = {"per_device": tokens // g, "token_parts": parts, "tokens": tokens, "k": k, "experts": experts}
    plan.update(sizes=data_parallel_split(hidden * 2, BF16_PACKET_BYTES, dp), map_stride=maps.shape[-1] // tokens)
    plan["act_stride"] = _activation_stride(acts, tokens, experts, mesh)
    workers = _workers(worker_cores, parts * len(plan["sizes"]), links)
    plan["shards"] = _core_shards(dense, workers, experts * max(plan["sizes"]) * (tokens // parts))
    config = memory_config or MemoryConfig(TensorMemoryLayout.INTERLEAVED, BufferType.DRAM)
    spec = out_spec_like(dense, shape=(k, tokens // g, hidden), memory_config=config, op=OP)
    into = None if output_tensor is None else [_preallocated(OP, "output_tensor", output_tensor, spec, mesh)]
    kernel = _kernel([dense, acts, maps, counts], spec, device_groups(OP, dense, mesh, cluster_axis), plan)
    attrs = {"cluster_axis": cluster_axis, "topology": topology, "num_links": links, "select_experts_k": k}
    attrs.update(hidden_size=hidden, batch_size=batch_size, seq_size=seq_size, memory_config=spec.memory_config)
    attrs.update(token_parallel_core_dim=parts, data_parallel_core_dim=data_parallel_core_dim)
    attrs.update(worker_cores=tuple(workers), mux_core_range_set=mux_core_range_set)
    attrs["optional_cross_device_semaphore"] = optional_cross_device_semaphore
    outs = [Output(spec)]
    inputs = [dense, acts, maps, counts]
    coords = whole_mesh(mesh)
    return launch(OP, mesh, inputs, outs, kernel, coords=coords, attrs=attrs, into=into, semaphores=2,
                  trace_bytes=TRACE_BYTES)[0]  # fmt: skip
