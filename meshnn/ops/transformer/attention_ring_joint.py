"""``ttnn.transformer.ring_joint_scaled_dot_product_attention``: joint attention with the spatial
sequence split over a ring of devices (``cluster_axis``), as the MM-DiT models run it.

Each device holds ``[b, nh, N / R, d]`` of q, k and v (``R`` devices on the ring); the op gathers
k and v along the ring into the caller's persistent buffers (``persistent_output_buffer_k`` /
``_v``: ``[b, nh, N, d]``, written in place, exactly ``all_gather_async``'s result), then each
device attends its own query rows, and the joint (prompt) rows when given, against the first
``logical_n`` gathered keys (the rest are the split's padding) and the joint keys.  Outputs
(bfloat16, TILE): ``[b, nh, N / R, d_v]``, ``[b, nh, L, d_v]`` (every device the same) and the
statistics ``[b, nh, 2 * (N / R + L, both padded to tiles), 1]``: each query row's maximum scaled
score in the first half, its sum of ``exp(score - maximum)`` in the second (the pieces of its
log-sum-exp; padding rows 0).

``is_causal`` (no joint tensors): a query attends the keys at or before its global position;
with ``is_balanced`` the ring's pieces are zig-zagged: the device at ring position ``r`` holds the
chunks ``r`` and ``2R - 1 - r`` of ``2R``, its gathered keys in that order too.

tt-metal's checks (``ring_joint_sdpa_device_operation.cpp``), before anything is allocated: the
joint tensors all or none; ``"rear"``; a program config whose grid stays clear of
``ccl_core_grid_offset`` (its rows, or columns with ``use_column_major_ccl``); TILE device tensors
in DRAM of bfloat16 / bfloat8_b / bfloat4_b (one dtype when not causal); no causal joint; ``0 <
logical_n <= N``; one batch; q and k of one head size (v too when not causal); k and v heads equal
(or one k head) and q's as many as v's; a per-device sequence of whole tiles; with
``is_balanced``, half of it a multiple of ``q_chunk_size``; the persistent buffers of the gather's
dtype and shape.  meshnn refuses (``NotImplementedByMeshnn``) what it does not compute: the
chunked and cross-attention forms (a per-device q shorter than k), ``kv_cache_batch_idx`` and
``kv_actual_isl``.

May import: :mod:`meshnn.errors`, :mod:`meshnn.device`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor`,
the ops' launch, checks, outputs, values and config modules, the transformer ops' attention
modules and the collectives' modules.
"""

from __future__ import annotations

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError, NotImplementedByMeshnn
from meshnn.formats.dtypes import DataType
from meshnn.mesh.coord import MeshCoordinate
from meshnn.ops.ccl.all_gather import gathered_spec, run_all_gather
from meshnn.ops.ccl.all_gather_matmul import grid_offset
from meshnn.ops.ccl.async_arguments import link_options, persistent, ring_size, same_mesh_device, semaphores
from meshnn.ops.config import check_compute_kernel_config
from meshnn.ops.launch import launch
from meshnn.ops.outputs import Output, out_spec_like
from meshnn.ops.registry import OpKind, register
from meshnn.ops.transformer.attention import SDPA_DTYPES
from meshnn.ops.transformer.attention_joint import (
    attend_rows,
    check_program_config,
    check_strategy,
    joint_inputs,
    scale_of,
)
from meshnn.ops.transformer.checks import of_rank
from meshnn.ops.values import logical_values, write_values
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor

OP = "transformer.ring_joint_scaled_dot_product_attention"
TILE = 32


def _tile_up(n: int) -> int:
    return -(-n // TILE) * TILE


def check_dims(
    named: dict[str, Tensor], logical_n: object, ring: int, flags: tuple[bool, bool], q_chunk: int, op: str = OP
) -> tuple[int, ...]:
    """``(b, nh, n_local, L, d, d_v)`` checked as tt-metal checks them (with ``logical_n`` and the
    balanced split's ``q_chunk_size``); ``op`` names the op in the errors."""
    is_causal, is_balanced = flags
    if isinstance(logical_n, bool) or not isinstance(logical_n, int | np.integer):
        raise MeshnnTypeError(f"ttnn.{op}: logical_n must be an int, got {logical_n!r}")
    b, nh, n_local, d = of_rank(op, "input_tensor_q", named["input_tensor_q"], 4, "[b, nh, N / R, d]")
    kb, nk, nk_local, kd = of_rank(op, "input_tensor_k", named["input_tensor_k"], 4, "[b, nkv, N / R, d]")
    vb, nv, nv_local, dv = of_rank(op, "input_tensor_v", named["input_tensor_v"], 4, "[b, nkv, N / R, d_v]")
    if n_local < nk_local:
        raise NotImplementedByMeshnn(
            f"ttnn.{op}: a per-device q ({n_local} rows) shorter than k ({nk_local}): the chunked-prefill and "
            "cross-attention forms are not simulated"
        )
    if n_local > nk_local or nv_local != nk_local:
        raise MeshnnValueError(
            f"ttnn.{op}: per-device q, k and v sequences must match, got {n_local}, {nk_local}, {nv_local}"
        )
    if kb != b or vb != b:
        raise MeshnnValueError(f"ttnn.{op}: K and V batch sizes must match Q's {b}, got {kb} and {vb}")
    if kd != d or (not is_causal and dv != d):
        raise MeshnnValueError(f"ttnn.{op}: head dimensions must match; q {d}, k {kd}, v {dv}")
    if nv != nh or nk not in (nv, 1):
        raise MeshnnValueError(f"ttnn.{op}: Q ({nh}) and V ({nv}) num_heads must match, and K's ({nk}) be V's or 1")
    if n_local % TILE:
        raise MeshnnValueError(f"ttnn.{op}: the per-device sequence {n_local} must be divisible by {TILE}")
    if not 0 < logical_n <= n_local * ring:
        raise MeshnnValueError(f"ttnn.{op}: logical_n must be in 1..{n_local * ring} (N), got {logical_n}")
    length = 0
    if "joint_tensor_q" in named:
        if is_causal:
            raise MeshnnValueError(f"ttnn.{op}: causality is enabled only for ring attention (no joint tensors)")
        shapes = [
            of_rank(op, n, named[n], 4, "[b, nh, L, d]") for n in ("joint_tensor_q", "joint_tensor_k", "joint_tensor_v")
        ]
        if any(s[0] != b or s[3] != d for s in shapes) or shapes[1][2] != shapes[0][2] or shapes[2][2] != shapes[0][2]:
            raise MeshnnValueError(f"ttnn.{op}: joint tensors must be [{b}, nh, L, {d}] of one L, got {shapes}")
        if shapes[0][1] != nh or shapes[1][1] != nk or shapes[2][1] != nv:
            raise MeshnnValueError(f"ttnn.{op}: joint tensors' heads must be q's, k's and v's, got {shapes}")
        length = shapes[0][2]
    if is_balanced and not is_causal:
        raise MeshnnValueError(f"ttnn.{op}: is_balanced (zig-zag load balancing) is causal-only")
    if is_balanced and (n_local // 2) % q_chunk:
        raise MeshnnValueError(
            f"ttnn.{op}: with is_balanced, half the per-device sequence ({n_local // 2}) must be a multiple of "
            f"q_chunk_size ({q_chunk})"
        )
    return b, nh, n_local, length, d, dv


def _positions(r: np.ndarray, n_local: int, ring: int, balanced: bool) -> np.ndarray:
    """Global sequence positions ``(devices, n_local)`` of the rows at ring positions ``r``."""
    rows = np.arange(n_local)
    if not balanced:
        return r[:, None] * n_local + rows[None, :]
    half = n_local // 2
    early = r[:, None] * half + rows[None, :half]
    late = (2 * ring - 1 - r)[:, None] * half + rows[None, : n_local - half]
    return np.concatenate([early, late], axis=1)


@register(OP, kind=OpKind.TRANSFORMER, family=OpFamily.SDPA, device_operation="RingJointSDPADeviceOperation")
def ring_joint_scaled_dot_product_attention(
    input_tensor_q: Tensor,
    input_tensor_k: Tensor,
    input_tensor_v: Tensor,
    joint_tensor_q: Tensor | None = None,
    joint_tensor_k: Tensor | None = None,
    joint_tensor_v: Tensor | None = None,
    *,
    persistent_output_buffer_k: Tensor,
    persistent_output_buffer_v: Tensor,
    joint_strategy: str,
    logical_n: int,
    program_config: object,
    scale: float | None = None,
    compute_kernel_config: object = None,
    dim: int,
    multi_device_global_semaphore: object,
    num_links: int,
    cluster_axis: int,
    mesh_device: object,
    topology: object,
    subdevice_id: object = None,
    ccl_core_grid_offset: object,
    use_column_major_ccl: bool = False,
    is_causal: bool = False,
    is_balanced: bool = False,
    is_cross: bool = False,
    kv_cache_batch_idx: int | None = None,
    kv_actual_isl: int | None = None,
) -> tuple[Tensor, Tensor, Tensor]:
    """k and v gathered along the ring into the persistent buffers, then joint attention of this
    device's query rows (and the joint rows): ``(out, joint_out, stats)`` (see the module docstring)."""
    flags_given = {"is_causal": is_causal, "is_balanced": is_balanced, "use_column_major_ccl": use_column_major_ccl}
    unsimulated = {"kv_cache_batch_idx": kv_cache_batch_idx, "kv_actual_isl": kv_actual_isl, "is_cross": is_cross}
    check_strategy(OP, joint_strategy)
    tensors = (input_tensor_q, input_tensor_k, input_tensor_v, joint_tensor_q, joint_tensor_k, joint_tensor_v)
    named = _inputs(tensors, flags_given, unsimulated)
    q = named["input_tensor_q"]
    mesh = q.storage.mesh_buffer.device()  # type: ignore[union-attr]
    same_mesh_device(OP, mesh_device, mesh)
    config, offset = _grid(mesh, program_config, ccl_core_grid_offset, use_column_major_ccl)
    if dim != 2:
        raise MeshnnValueError(f"ttnn.{OP}: the ring gathers the sequence, dim 2; got dim={dim!r}")
    ring = ring_size(OP, mesh, cluster_axis, q)
    b, nh, n_local, length, d, dv = check_dims(named, logical_n, ring, (is_causal, is_balanced), config.q_chunk_size)
    sems = semaphores(OP, "multi_device_global_semaphore", multi_device_global_semaphore, mesh, None)
    options = dict(num_links=num_links, topology=topology, subdevice_id=subdevice_id, cluster_axis=cluster_axis)
    attrs = link_options(OP, mesh, options, links_required=True)
    factor = scale_of(OP, scale, d)
    kernel_config = check_compute_kernel_config(OP, compute_kernel_config)
    attrs.update(dim=2, multi_device_global_semaphore=sems, ccl_core_grid_offset=offset)
    given = {"k": persistent_output_buffer_k, "v": persistent_output_buffer_v}
    gathered = gather_kv(named, mesh, given, cluster_axis, attrs)
    dims = (b, nh, n_local, length, dv)
    flags = (is_causal, is_balanced, int(logical_n), ring, int(cluster_axis))
    extra = {"program_config": config, "compute_kernel_config": kernel_config}
    return attend(named, gathered, dims, flags, factor, extra)


def _inputs(tensors: tuple, flags: dict[str, object], unsimulated: dict[str, object]) -> dict[str, Tensor]:
    """The flags checked, the forms meshnn does not simulate refused, the tensors checked by name."""
    if (
        unsimulated["kv_cache_batch_idx"] is not None
        or unsimulated["kv_actual_isl"] is not None
        or unsimulated["is_cross"]
    ):
        raise NotImplementedByMeshnn(
            f"ttnn.{OP}: kv_cache_batch_idx, kv_actual_isl and is_cross (chunked prefill, cross attention) are not "
            "simulated"
        )
    for name, flag in flags.items():
        if not isinstance(flag, bool):
            raise MeshnnTypeError(f"ttnn.{OP}: {name} must be a bool, got {flag!r}")
    joint = tensors[3:]
    if any(t is None for t in joint) and not all(t is None for t in joint):
        raise MeshnnValueError(f"ttnn.{OP}: joint tensors must be provided all together or omitted altogether")
    names = ["input_tensor_q", "input_tensor_k", "input_tensor_v"]
    if joint[0] is not None:
        names += ["joint_tensor_q", "joint_tensor_k", "joint_tensor_v"]
    given = list(tensors[: len(names)])
    if flags["is_causal"]:
        return _causal_inputs(names, given)
    return joint_inputs(OP, tuple(given), tuple(names), SDPA_DTYPES)


def _grid(mesh, program_config: object, ccl_core_grid_offset: object, column_major: bool):
    """The program config and the gather's grid offset, checked not to overlap."""
    config = check_program_config(OP, program_config, required=True)
    offset = grid_offset(OP, "ccl_core_grid_offset", ccl_core_grid_offset)
    grid = config.compute_with_storage_grid_size or mesh.compute_with_storage_grid_size()
    if (offset.x < grid.x) if column_major else (offset.y < grid.y):
        raise MeshnnValueError(f"ttnn.{OP}: the SDPA core grid {grid} overlaps the all-gather's at {offset}")
    return config, offset


def gather_kv(named: dict[str, Tensor], mesh, given: dict[str, object], cluster_axis: int, attrs: dict, op: str = OP):
    """k and v gathered along the ring into their persistent buffers (both checked before either runs)."""
    buffers = {}
    for x, value in given.items():
        source = named[f"input_tensor_{x}"]
        spec = gathered_spec(op, source, mesh, 2, cluster_axis, None)
        buffers[x] = (source, spec, persistent(op, f"persistent_output_buffer_{x}", value, mesh, spec))
    return {
        x: run_all_gather(op, source, mesh, (2, cluster_axis), spec, dict(attrs), into=into)
        for x, (source, spec, into) in buffers.items()
    }


def _causal_inputs(names: list[str], tensors: list[object]) -> dict[str, Tensor]:
    """Causal inputs: as :func:`joint_inputs` checks them, but each of its own dtype."""
    return {n: joint_inputs(OP, (t,), (n,), SDPA_DTYPES)[n] for n, t in zip(names, tensors, strict=True)}


def attend(named, gathered, dims, flags, factor, attrs, op: str = OP) -> tuple[Tensor, Tensor, Tensor]:
    """The attention program of ``op`` over q, the gathered k and v and the joint tensors."""
    b, nh, n_local, length, dv = dims
    is_causal, is_balanced, logical_n, ring, axis = flags
    q = named["input_tensor_q"]
    mesh = q.storage.mesh_buffer.device()
    memory = MemoryConfig()
    spec = out_spec_like(q, shape=(b, nh, n_local, dv), dtype=DataType.BFLOAT16, memory_config=memory, op=op)
    joint_spec = out_spec_like(q, shape=(b, nh, length, dv), dtype=DataType.BFLOAT16, memory_config=memory, op=op)
    rows = _tile_up(n_local) + _tile_up(length)
    stats_spec = out_spec_like(q, shape=(b, nh, 2 * rows, 1), dtype=DataType.BFLOAT16, memory_config=memory, op=op)
    inputs = [q, gathered["k"], gathered["v"]] + [
        named[n] for n in ("joint_tensor_q", "joint_tensor_k", "joint_tensor_v") if n in named
    ]
    specs = [t.spec for t in inputs]

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]) -> None:
        values = [logical_values(r, sp) for r, sp in zip(in_rows, specs, strict=True)]
        r = np.array([c[axis] for c in coords])
        key_pos = _positions(np.arange(ring), n_local, ring, is_balanced).reshape(-1)  # the gathered rows' positions
        qs, ks, vs = values[0], values[1], values[2]
        if len(values) > 3:
            qs = np.concatenate([qs, values[3]], axis=3)
            ks, vs = np.concatenate([ks, values[4]], axis=3), np.concatenate([vs, values[5]], axis=3)
            key_pos = np.concatenate([key_pos, np.full(length, -1)])  # joint keys: always valid
        valid = (key_pos < logical_n)[None, :]
        query_pos = _positions(r, n_local, ring, is_balanced)
        if length:
            query_pos = np.concatenate([query_pos, np.full((len(coords), length), np.iinfo(np.int64).max)], axis=1)

        def bias(start: int, stop: int) -> np.ndarray:
            allowed = valid & (key_pos[None, None, :] <= query_pos[:, start:stop, None]) if is_causal else valid
            allowed = np.broadcast_to(allowed, (len(coords), stop - start, len(key_pos)))
            return np.where(allowed, np.float32(0), np.float32(-np.inf))[:, None, None]

        out, top, total = attend_rows(qs, ks, vs, factor, bias)
        write_values(out_rows[0], np.ascontiguousarray(out[:, :, :, :n_local]), spec, owned=True)
        write_values(out_rows[1], np.ascontiguousarray(out[:, :, :, n_local:]), joint_spec, owned=True)
        stats = np.zeros((len(coords), b, nh, 2 * rows, 1), np.float32)
        for half, part in ((0, top), (rows, total)):
            stats[:, :, :, half : half + n_local, 0] = part[..., :n_local]
            stats[:, :, :, half + _tile_up(n_local) : half + _tile_up(n_local) + length, 0] = part[..., n_local:]
        write_values(out_rows[2], stats, stats_spec, owned=True)

    attrs = {
        **attrs,
        "logical_n": logical_n,
        "is_causal": is_causal,
        "is_balanced": is_balanced,
        "scale": float(factor),
    }
    outs = [Output(spec), Output(joint_spec), Output(stats_spec)]
    out, joint_out, stats = launch(op, mesh, inputs, outs, kernel, reads_memos=True, attrs=attrs)
    return out, joint_out, stats
