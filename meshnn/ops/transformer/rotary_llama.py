"""``ttnn.experimental.rotary_embedding_llama`` and ``rotary_embedding_llama_fused_qk``: rotary
embeddings as tt-metal's Llama models apply them, ``x * cos + (x @ T) * sin``, where ``T`` is the
32x32 transformation matrix applied to every 32-wide tile of the head dimension (tt-metal's
``get_rot_transformation_mat`` rotates interleaved pairs: ``T[2i, 2i+1] = 1``, ``T[2i+1, 2i] =
-1``); the matrix given is used as it is.

Prefill (``is_decode_mode=False``): x ``[b, heads, s, d]`` interleaved, cos / sin ``[1 or b, 1,
s_cache >= s, d]``, row ``i`` of the sequence taking row ``i`` of the caches.  Decode: x ``[1,
users, heads, d]`` height-sharded (one user per core), cos / sin ``[1, users, 1 (32), d]``
height-sharded, every head of user ``u`` taking row ``[0, u, 0]``; the matrix is ``[1, 1, 32 x
cores, 32]`` height-sharded (the first tile is used: every core holds the same).  The fused form
rotates q and k at once with caches of ``2 x users`` rows (q's users first); given ROW_MAJOR q and
k (tt-metal's ``row_major_QK``: each user's ``heads x d`` must be one tile's 1024 values, as
Llama-70B's 8 x 128), cos and sin are ROW_MAJOR too, one row per head.  Computed in float32
and rounded once into bfloat16 (every tensor is bfloat16, as tt-metal requires).

May import: :mod:`meshnn.errors`, :mod:`meshnn.device`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor`,
the ops' launch, checks, outputs and values and :mod:`meshnn.ops.transformer.checks`.
"""

from __future__ import annotations

import numpy as np

from meshnn.device.buffer import TensorMemoryLayout
from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.ops.checks import device_input, same_mesh
from meshnn.ops.launch import launch
from meshnn.ops.outputs import Output, out_spec_like
from meshnn.ops.registry import OpKind, register
from meshnn.ops.transformer.checks import tile_input
from meshnn.ops.values import logical_values, write_values
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig, TensorSpec
from meshnn.tensor.tensor import Tensor

TILE = 32


def _inputs(op: str, named: dict[str, object], row_major: bool = False) -> dict[str, Tensor]:
    """bfloat16 device tensors, TILE (ROW_MAJOR for the fused op's row-major q / k form)."""
    tensors = {name: _rm_input(op, name, t) if row_major else tile_input(op, name, t) for name, t in named.items()}
    for name, t in tensors.items():
        if t.dtype is not DataType.BFLOAT16:
            raise MeshnnTypeError(f"ttnn.{op}: All input tensors must have dtype = bfloat16 ({name} is {t.dtype.name})")
    return tensors


def _rm_input(op: str, name: str, value: object) -> Tensor:
    t = device_input(op, name, value)
    if t.layout is not Layout.ROW_MAJOR:
        raise MeshnnValueError(f"ttnn.{op}: {name} must be in layout ROW_MAJOR (q and k are), it is {t.layout}")
    return t


def _check_head_dim(op: str, x: Tensor, cos: Tensor, sin: Tensor) -> int:
    d = x.shape[-1]
    if d % TILE or d > 256:
        raise MeshnnValueError(f"ttnn.{op}: Head dim must be a multiple of TILE_WIDTH and at most 256, got {d}")
    if tuple(cos.shape) != tuple(sin.shape):
        raise MeshnnValueError(f"ttnn.{op}: Cos and Sin dims must match, got {list(cos.shape)} and {list(sin.shape)}")
    if len(cos.shape) != 4 or cos.shape[-1] != d:
        raise MeshnnValueError(f"ttnn.{op}: cos / sin must be [*, *, rows, {d}], got {list(cos.shape)}")
    return d


def _check_trans_mat(op: str, trans: Tensor, decode: bool) -> None:
    shape = tuple(trans.shape)
    if len(shape) != 4 or shape[:2] != (1, 1) or shape[-1] != TILE or shape[-2] % TILE or shape[-2] == 0:
        raise MeshnnValueError(f"ttnn.{op}: Transformation matrix must be [1, 1, 32 (x cores), 32], got {list(shape)}")
    if not decode and shape[-2] != TILE:
        raise MeshnnValueError(f"ttnn.{op}: Transformation matrix must have 3rd dim equal to TILE_HEIGHT")


def _check_decode(op: str, named: dict[str, Tensor], users: int, cos_users: int, row_major: bool = False) -> None:
    for name, t in named.items():
        if t.spec.memory_config.memory_layout is not TensorMemoryLayout.HEIGHT_SHARDED:
            raise MeshnnValueError(f"ttnn.{op}: Sharded inputs for RoPE must be HEIGHT_SHARDED ({name} is not)")
    first = next(iter(named.values()))
    mesh = first.storage.mesh_buffer.device()  # type: ignore[union-attr]
    grid = mesh.compute_with_storage_grid_size()
    if users > grid.x * grid.y:
        raise MeshnnValueError(f"ttnn.{op}: batch size must be less than or equal to the number of cores")
    cos = named["cos_cache"]
    if cos.shape[1] != cos_users or cos.shape[0] != 1:
        raise MeshnnValueError(
            f"ttnn.{op}: Cos and Sin must have the same batch size as the input ({cos_users}), got {list(cos.shape)}"
        )
    if not row_major and cos.spec.memory_config.shard_spec.shape[0] != TILE:  # type: ignore[union-attr]
        raise MeshnnValueError(f"ttnn.{op}: In decode mode, RoPE only supports a cos / sin shard height of TILE_HEIGHT")


@register(
    "experimental.rotary_embedding_llama",
    kind=OpKind.TRANSFORMER,
    family=OpFamily.BINARY,
    device_operation="RotaryEmbeddingLlamaDeviceOperation",
)
def rotary_embedding_llama(
    input_tensor: Tensor,
    cos_cache: Tensor,
    sin_cache: Tensor,
    trans_mat: Tensor,
    is_decode_mode: bool = False,
    memory_config: MemoryConfig | None = None,
    compute_kernel_config: object = None,
    queue_id: int = 0,
) -> Tensor:
    """``x * cos + (x @ T) * sin`` (see the module docstring for the two modes' shapes)."""
    op = "experimental.rotary_embedding_llama"
    if not isinstance(is_decode_mode, bool):
        raise MeshnnTypeError(f"ttnn.{op}: is_decode_mode must be a bool, got {is_decode_mode!r}")
    named = _inputs(op, {"input_tensor": input_tensor, "cos_cache": cos_cache, "sin_cache": sin_cache})
    trans = _inputs(op, {"trans_mat": trans_mat})["trans_mat"]
    x, cos, sin = named["input_tensor"], named["cos_cache"], named["sin_cache"]
    mesh = same_mesh(op, {**named, "trans_mat": trans})
    _check_head_dim(op, x, cos, sin)
    _check_trans_mat(op, trans, is_decode_mode)
    if is_decode_mode:
        if len(x.shape) != 4 or x.shape[0] != 1:
            raise MeshnnValueError(f"ttnn.{op}: in decode mode the input is [1, users, heads, d], got {list(x.shape)}")
        _check_decode(op, {**named, "trans_mat": trans}, x.shape[1], x.shape[1])
    else:
        _check_prefill(op, x, cos)
    spec = out_spec_like(x, memory_config=memory_config, op=op)
    if spec.memory_config.memory_layout is not x.spec.memory_config.memory_layout:
        raise MeshnnValueError(f"ttnn.{op}: Input tensor and output tensor must have same memory layout")
    kernel = _kernel([x.spec], [spec], cos.spec, sin.spec, trans.spec, is_decode_mode)
    attrs = {
        "is_decode_mode": is_decode_mode,
        "memory_config": spec.memory_config,
        "compute_kernel_config": compute_kernel_config,
    }
    inputs = [x, cos, sin, trans]
    return launch(
        op, mesh, inputs, [Output(spec)], kernel, queue_id=queue_id, rowwise=True, reads_memos=True, attrs=attrs
    )[0]


def _check_prefill(op: str, x: Tensor, cos: Tensor) -> None:
    if x.spec.memory_config.is_sharded():
        raise MeshnnValueError(f"ttnn.{op}: Input tensor must be interleaved in prefill mode")
    if len(x.shape) != 4:
        raise MeshnnValueError(f"ttnn.{op}: the input is [batch, heads, seq, head_dim], got {list(x.shape)}")
    if cos.shape[1] != 1 or cos.shape[0] not in (1, x.shape[0]):
        raise MeshnnValueError(
            f"ttnn.{op}: Cos dims must match input dims: [1 or {x.shape[0]}, 1, s, d], got {list(cos.shape)}"
        )
    if cos.shape[2] < x.shape[2]:
        raise MeshnnValueError(f"ttnn.{op}: cos / sin's {cos.shape[2]} rows do not cover the input's {x.shape[2]}")


@register(
    "experimental.rotary_embedding_llama_fused_qk",
    kind=OpKind.TRANSFORMER,
    family=OpFamily.COPY,
    device_operation="RotaryEmbeddingLlamaFusedQKDeviceOperation",
    modelled=False,
)
def rotary_embedding_llama_fused_qk(
    q_input_tensor: Tensor,
    k_input_tensor: Tensor,
    cos_cache: Tensor,
    sin_cache: Tensor,
    trans_mat: Tensor,
    compute_kernel_config: object = None,
    queue_id: int = 0,
) -> tuple[Tensor, Tensor]:
    """Decode-mode rotary embedding of q ``[1, users, q heads, d]`` and k ``[1, users, k heads, d]``
    at once; cos / sin ``[1, 2 x users, 1, d]`` (q's users first, then k's)."""
    op = "experimental.rotary_embedding_llama_fused_qk"
    row_major = all(getattr(t, "layout", None) is Layout.ROW_MAJOR for t in (q_input_tensor, k_input_tensor))
    names = ("q_input_tensor", "k_input_tensor", "cos_cache", "sin_cache")
    named = _inputs(
        op, dict(zip(names, (q_input_tensor, k_input_tensor, cos_cache, sin_cache), strict=True)), row_major
    )
    trans = _inputs(op, {"trans_mat": trans_mat})["trans_mat"]
    q, k, cos, sin = (named[n] for n in names)
    mesh = same_mesh(op, {**named, "trans_mat": trans})
    _check_head_dim(op, q, cos, sin)
    _check_trans_mat(op, trans, True)
    if len(q.shape) != 4 or len(k.shape) != 4 or q.shape[0] != 1 or k.shape[0] != 1 or q.shape[1] != k.shape[1]:
        raise MeshnnValueError(
            f"ttnn.{op}: q and k must be [1, users, heads, d] with the same users, "
            f"got {list(q.shape)} and {list(k.shape)}"
        )
    if k.shape[-1] != q.shape[-1]:
        raise MeshnnValueError(f"ttnn.{op}: q and k must have the same head dim")
    for name, t in (("Q", q), ("K", k)):
        if row_major and t.shape[-2] * t.shape[-1] != TILE * TILE:
            raise MeshnnValueError(f"ttnn.{op}: For row major, {name} input tensor must be wrapped to tile size")
    _check_decode(op, {**named, "trans_mat": trans}, 2 * q.shape[1], 2 * q.shape[1], row_major)
    specs = [out_spec_like(q, op=op), out_spec_like(k, op=op)]
    kernel = _kernel([q.spec, k.spec], specs, cos.spec, sin.spec, trans.spec, True)
    attrs = {"compute_kernel_config": compute_kernel_config}
    inputs = [q, k, cos, sin, trans]
    outputs = [Output(s) for s in specs]
    outs = launch(op, mesh, inputs, outputs, kernel, queue_id=queue_id, rowwise=True, reads_memos=True, attrs=attrs)
    return outs[0], outs[1]


def _kernel(
    x_specs: list[TensorSpec],
    specs: list[TensorSpec],
    cos_spec: TensorSpec,
    sin_spec: TensorSpec,
    trans_spec: TensorSpec,
    decode: bool,
):
    """The kernel of one or two (fused) inputs: each rotated with its users' rows of the caches."""
    n = len(x_specs)

    def kernel(in_rows, out_rows, coords) -> None:
        cos = logical_values(in_rows[n], cos_spec)
        sin = logical_values(in_rows[n + 1], sin_spec)
        trans = logical_values(in_rows[n + 2], trans_spec)[:, 0, 0, :TILE, :]  # (k, 32, 32)
        start = 0
        for i in range(n):
            x = logical_values(in_rows[i], x_specs[i])  # (k, b, h, s, d) or (k, 1, users, h, d)
            if decode:  # a row-major (wrapped) user takes its cos / sin row per head, a tiled one row 0
                users, rows = x.shape[2], x.shape[3] if cos_spec.layout is Layout.ROW_MAJOR else 1
                c = cos[:, 0, start : start + users, :rows, :]  # (k, users, 1 or heads, d)
                s = sin[:, 0, start : start + users, :rows, :]
                c, s, start = c[:, None], s[:, None], start + users
            else:
                c, s = cos[:, :, :, : x.shape[3], :], sin[:, :, :, : x.shape[3], :]
            out = llama_rotated(x, c, s, trans)
            write_values(out_rows[i], out.astype(np.float32, copy=False), specs[i], owned=True)

    return kernel


def llama_rotated(x: np.ndarray, c: np.ndarray, s: np.ndarray, trans: np.ndarray) -> np.ndarray:
    """``x * c + (x @ T) * s`` in float32 for ``k`` devices' values ``x`` ``(k, ..., d)``, ``T`` each
    device's 32x32 matrix ``trans`` ``(k, 32, 32)`` applied to every 32-wide tile of the last dim;
    ``c`` and ``s`` broadcast against ``x``."""
    k, d = x.shape[0], x.shape[-1]
    tiles = x.reshape(*x.shape[:-1], d // TILE, TILE)
    rotated = np.matmul(tiles, trans.reshape(k, *(1,) * (tiles.ndim - 3), TILE, TILE)).reshape(x.shape)
    return x * c + rotated * s
