"""``ttnn.transformer.ring_distributed_scaled_dot_product_attention``: causal prefill attention with
its query rows split over a ring of devices, load-balanced.  The sequence ``s`` is cut into
``2 * ring_size`` chunks of ``c = s / (2 * ring_size)`` rows; the device at ring position ``r``
computes the rows of chunks ``r`` and ``2 * ring_size - 1 - r`` (an early and a late chunk, so
that every device does the same causal work), each query attending the keys up to its own global
position, and outputs them one after the other: ``[b, nqh, 2c, d]``, chunk ``r``'s rows first.
Every device holds the whole q, k and v (``[b, nqh, s, d]`` / ``[b, nkv, s, d]``, GQA as in
:mod:`.attention`); the model gathers the outputs and restores the sequence order itself.

``ring_id`` given: every device computes that position's rows.  ``ring_id`` None: each device's
position is inferred from its mesh coordinate as tt-metal does: when ``ring_size`` equals the
mesh's number of rows, the ring is a mesh column and the position is the device's row; otherwise,
when it equals the number of columns, the ring is a mesh row and the position is the column;
otherwise the call is refused.

tt-metal's checks (``ring_distributed_sdpa_device_operation.cpp``), before anything is allocated:
``0 < ring_size <= 32`` and even, ``ring_id < ring_size``, q, k and v TILE in DRAM of one dtype
(bfloat16 / bfloat8_b / bfloat4_b), ``s_q == s_k``, GQA heads, no padding but on the sequence,
``s / 32 >= 2 * ring_size`` and ``s % (2 * ring_size) == 0``, and the chunk ``c`` a multiple of
the program config's ``q_chunk_size`` (32 by default).  Computed in float32 by
:func:`~.attention.attend`, rounded once into q's dtype.

May import: :mod:`meshnn.errors`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor`, the ops' launch,
checks, outputs, values and config modules and the transformer ops' attention.
"""

from __future__ import annotations

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.mesh.coord import MeshCoordinate
from meshnn.mesh.mesh_device import MeshDevice
from meshnn.mesh.op_keywords import ttnn_keywords
from meshnn.ops.config import DEFAULT_CHUNK, SDPAProgramConfig, check_compute_kernel_config
from meshnn.ops.launch import launch
from meshnn.ops.outputs import Output, out_spec_like
from meshnn.ops.registry import OpKind, register
from meshnn.ops.transformer.attention import attend, sdpa_dims, sdpa_inputs, sdpa_scale
from meshnn.ops.values import logical_values, write_values
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor

MAX_RING = 32
"""tt-metal's largest ring ("ring_size must be <= 32 for practical use")."""


@register(
    "transformer.ring_distributed_scaled_dot_product_attention",
    kind=OpKind.TRANSFORMER,
    family=OpFamily.SDPA,
    device_operation="RingDistributedSdpaDeviceOperation",
)
@ttnn_keywords(
    "transformer.ring_distributed_scaled_dot_product_attention", records=("program_config", "compute_kernel_config")
)
def ring_distributed_scaled_dot_product_attention(
    input_tensor_q: Tensor,
    input_tensor_k: Tensor,
    input_tensor_v: Tensor,
    ring_size: int,
    ring_id: int | None = None,
    *,
    scale: float | None = None,
    memory_config: MemoryConfig | None = None,
    program_config: SDPAProgramConfig | None = None,
    compute_kernel_config: object = None,
) -> Tensor:
    """Causal attention of this device's two query chunks (``ring_id`` and
    ``2 * ring_size - 1 - ring_id`` of ``2 * ring_size``) against all keys up to each query's
    position: q ``[b, nqh, s, d]``, k and v ``[b, nkv, s, d]`` -> ``[b, nqh, s / ring_size, d]``
    in q's dtype, TILE.  ``ring_id`` None: each device's, from its mesh coordinate (see the
    module docstring).  ``scale`` defaults to 1 / sqrt(d)."""
    op = "transformer.ring_distributed_scaled_dot_product_attention"
    ring_size, ring_id = _ring_args(op, ring_size, ring_id)
    named, mesh = sdpa_inputs(
        op, (input_tensor_q, input_tensor_k, input_tensor_v), None, True, program_config, dram_only=True
    )
    b, nqh, _, s, _, d = sdpa_dims(op, named, True, program_config)
    _check_ring_inputs(op, named, ring_size, program_config)
    axis = _ring_axis(op, mesh, ring_size, ring_id)
    scale = sdpa_scale(op, scale, d)
    chunk = s // (2 * ring_size)
    q = named["input_tensor_q"]
    spec = out_spec_like(q, shape=(b, nqh, 2 * chunk, d), memory_config=memory_config, op=op)
    specs = [t.spec for t in named.values()]
    factor = np.float32(scale)

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]) -> None:
        qv, kv, vv = (logical_values(r, sp) for r, sp in zip(in_rows, specs, strict=True))
        ids = [ring_id if axis is None else c[axis] for c in coords]
        out = np.empty((len(coords), b, nqh, 2 * chunk, d), np.float32)
        for r in sorted(set(ids)):  # the devices at one ring position together
            rows = [i for i, x in enumerate(ids) if x == r]
            queries, bias = _rows_and_bias(r, ring_size, chunk)
            keys = int(queries[-1]) + 1  # the later keys are masked for every query of r
            out[rows] = attend(qv[rows][:, :, :, queries], kv[rows, :, :, :keys], vv[rows, :, :, :keys], factor, bias)
        write_values(out_rows[0], out, spec, owned=True)

    attrs = {
        "ring_size": ring_size,
        "ring_id": ring_id,
        "program_config": program_config,
        "compute_kernel_config": check_compute_kernel_config(op, compute_kernel_config),
        "memory_config": spec.memory_config,
        "is_causal": True,
        "scale": float(scale),
    }
    rowwise = ring_id is not None  # an inferred position differs from device to device
    inputs = list(named.values())
    return launch(op, mesh, inputs, [Output(spec)], kernel, rowwise=rowwise, reads_memos=True, attrs=attrs)[0]


def _ring_args(op: str, ring_size: object, ring_id: object) -> tuple[int, int | None]:
    """``ring_size`` (even, 1..32) and ``ring_id`` (None or 0..ring_size-1), checked."""
    if isinstance(ring_size, bool) or not isinstance(ring_size, int | np.integer):
        raise MeshnnTypeError(f"ttnn.{op}: ring_size must be an int, got {ring_size!r}")
    if not 0 < ring_size <= MAX_RING:
        raise MeshnnValueError(f"ttnn.{op}: ring_size must be in 1..{MAX_RING}, got {ring_size}")
    if ring_size % 2:
        raise MeshnnValueError(f"ttnn.{op}: ring_size must be even for balanced distribution, got {ring_size}")
    if ring_id is None:
        return int(ring_size), None
    if isinstance(ring_id, bool) or not isinstance(ring_id, int | np.integer):
        raise MeshnnTypeError(f"ttnn.{op}: ring_id must be an int or None, got {ring_id!r}")
    if not 0 <= ring_id < ring_size:
        raise MeshnnValueError(f"ttnn.{op}: ring_id must be in 0..ring_size-1 ({ring_size - 1}), got {ring_id}")
    return int(ring_size), int(ring_id)


def _check_ring_inputs(
    op: str, named: dict[str, Tensor], ring_size: int, program_config: SDPAProgramConfig | None
) -> None:
    """One dtype for q, k and v, no padding on batch or heads, and a sequence that splits into
    ``2 * ring_size`` chunks of whole q chunks."""
    q = named["input_tensor_q"]
    for name, t in named.items():
        if t.dtype is not q.dtype:
            raise MeshnnTypeError(f"ttnn.{op}: q, k and v must have one dtype; {name} is {t.dtype}, q {q.dtype}")
        padded = tuple(t.spec.padded_shape)
        if padded[:2] != tuple(t.shape[:2]):
            raise MeshnnValueError(f"ttnn.{op}: {name} {list(t.shape)} is padded on its batch or heads ({padded})")
    s = q.shape[2]
    pieces = 2 * ring_size
    if s // 32 < pieces or s % pieces:
        raise MeshnnValueError(
            f"ttnn.{op}: the sequence ({s}) must split into 2 * ring_size = {pieces} chunks of whole tiles "
            f"(at least {pieces} tiles, divisible by {pieces})"
        )
    q_chunk = program_config.q_chunk_size if program_config is not None else DEFAULT_CHUNK
    if (s // pieces) % q_chunk:
        raise MeshnnValueError(
            f"ttnn.{op}: the per-device chunk of the sequence ({s} / {pieces} = {s // pieces} rows) must be a "
            f"multiple of program_config's q_chunk_size ({q_chunk})"
        )


def _ring_axis(op: str, mesh: MeshDevice, ring_size: int, ring_id: int | None) -> int | None:
    """The coordinate axis that gives a device's ring position (None when ``ring_id`` is given):
    0 (its row) for a ring of the mesh's height, else 1 (its column) for a ring of its width."""
    if ring_id is not None:
        return None
    shape = tuple(mesh.shape)
    for axis, size in enumerate(shape):
        if size == ring_size:
            return axis
    raise MeshnnValueError(
        f"ttnn.{op}: ring_size {ring_size} matches neither dimension of the mesh {list(shape)}; give ring_id, or "
        "a ring_size equal to the number of rows or columns"
    )


def _rows_and_bias(r: int, ring_size: int, chunk: int) -> tuple[np.ndarray, np.ndarray]:
    """The global query positions of ring position ``r`` (its two chunks) and their causal bias
    against keys ``0 .. last position``: 0 where key <= query, -inf after."""
    late = 2 * ring_size - 1 - r
    queries = np.concatenate([np.arange(r * chunk, (r + 1) * chunk), np.arange(late * chunk, (late + 1) * chunk)])
    keys = np.arange(queries[-1] + 1)
    bias = np.where(keys[None, :] <= queries[:, None], np.float32(0), np.float32(-np.inf)).astype(np.float32)
    return queries, bias
