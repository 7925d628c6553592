"""Falcon-7B's decode attention ops (``ttnn.experimental``): ``attn_matmul``,
``attn_matmul_from_cache``, ``group_attn_matmul`` and ``nlp_create_qkv_heads_falcon7b``.

The three products take ``a = [1, q_heads, batch, k]`` (one token per user, the users in the
rows) and ``b = [batch, kv_heads, k, n]`` (a user a batch): user ``u``'s row of head ``h`` is
multiplied by its own ``b[u, g]``, ``g`` the KV head of ``h`` (``attn_matmul``: one KV head;
``group_attn_matmul``: ``q_heads / kv_heads`` q heads a KV head, 32 users), giving
``[1, q_heads, batch, n]``: ``torch.matmul(a.transpose(0, 2), b).transpose(0, 2)``.
``attn_matmul_from_cache`` reads ``b`` from a KV cache ``[batch, 1, max_len, head_dim]``: its first
``num_tokens`` rounded up to 32 rows, transposed for the pre-softmax product (``transpose_hw``),
as they are for the post-softmax one.  Products are float32 (:mod:`.products`), rounded once to
the output's dtype (``dtype``, else a's); the checks are the device operations'.

``nlp_create_qkv_heads_falcon7b`` splits Falcon-7B's fused ``[b, 1, s, 4672]`` QKV into 71 query
heads of 64 and one key and one value head: ``([b, 71, s, 64], [b, 1, s, 64], [b, 1, s, 64])``.

May import: :mod:`meshnn.errors`, :mod:`meshnn.device`, :mod:`meshnn.formats`, :mod:`meshnn.mesh`,
:mod:`meshnn.tensor` and the ops' checks, launch, outputs, registry, values and the transformer's
checks and products.
"""

from __future__ import annotations

import numpy as np

from meshnn.device.buffer import ShardOrientation, ShardSpec
from meshnn.device.core import CoreCoord, num_cores_to_corerangeset
from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.mesh.coord import MeshCoordinate
from meshnn.ops.checks import device_input, same_mesh
from meshnn.ops.launch import launch
from meshnn.ops.outputs import Output
from meshnn.ops.registry import OpKind, register
from meshnn.ops.transformer.checks import tile_input
from meshnn.ops.transformer.products import product
from meshnn.ops.values import logical_values, write_values
from meshnn.perf.desc import OpFamily
from meshnn.tensor.memory_config import DRAM_MEMORY_CONFIG
from meshnn.tensor.spec import MemoryConfig, TensorMemoryLayout, TensorSpec
from meshnn.tensor.tensor import Tensor

_FUSED_WIDTH, _Q_HEADS, _HEAD = 4672, 71, 64


def _grid(op: str, value: object, mesh_grid: CoreCoord) -> CoreCoord:
    if isinstance(value, tuple) and len(value) == 2:
        value = CoreCoord(*value)
    if not isinstance(value, CoreCoord):
        raise MeshnnTypeError(f"ttnn.{op}: compute_with_storage_grid_size must be a CoreCoord, got {value!r}")
    if value.x > mesh_grid.x or value.y > mesh_grid.y:
        raise MeshnnValueError(f"ttnn.{op}: compute_with_storage_grid_size {value} exceeds the device's {mesh_grid}")
    return value


def _options(op: str, memory_config: object, dtype: object) -> None:
    if memory_config is not None and not isinstance(memory_config, MemoryConfig):
        raise MeshnnTypeError(f"ttnn.{op}: memory_config must be a ttnn.MemoryConfig, got {memory_config!r}")
    if dtype is not None and not isinstance(dtype, DataType):
        raise MeshnnTypeError(f"ttnn.{op}: dtype must be a ttnn.DataType, got {dtype!r}")


def _cache_read(op: str, b: Tensor, num_tokens: object, transpose_hw: object) -> tuple[int, bool]:
    """``attn_matmul_from_cache``'s tokens rounded up to 32, after ttnn's checks."""
    if isinstance(num_tokens, bool) or not isinstance(num_tokens, int | np.integer):
        raise MeshnnTypeError(f"ttnn.{op}: num_tokens must be an int, got {num_tokens!r}")
    if not isinstance(transpose_hw, bool):
        raise MeshnnTypeError(f"ttnn.{op}: transpose_hw must be a bool, got {transpose_hw!r}")
    if num_tokens < 1:
        raise MeshnnValueError(f"ttnn.{op}: num_tokens must be at least 1, got {num_tokens}")
    if num_tokens > b.spec.padded_shape[2]:
        raise MeshnnValueError(
            f"ttnn.{op}: num_tokens {num_tokens} must be at most the cache length (b's shape[2], "
            f"{b.spec.padded_shape[2]})"
        )
    return -(-int(num_tokens) // 32) * 32, transpose_hw


def _shapes(op: str, a: Tensor, b: Tensor, cache: tuple[int, bool] | None, *, grouped: bool) -> int:
    """The product's ``n`` after the device operation's shape checks."""
    ash, bsh = tuple(a.spec.padded_shape), tuple(b.spec.padded_shape)
    if len(ash) != 4 or len(bsh) != 4:
        raise MeshnnValueError(f"ttnn.{op}: a and b must be rank 4, got {list(a.shape)} and {list(b.shape)}")
    if ash[0] != 1:
        raise MeshnnValueError(f"ttnn.{op}: Input q_len must be 1, a is {list(a.shape)}")
    if grouped:
        if ash[1] % bsh[1]:
            raise MeshnnValueError(f"ttnn.{op}: Number of q_heads ({ash[1]}) must be divisible by kv_heads ({bsh[1]})")
    elif bsh[1] != 1:
        raise MeshnnValueError(f"ttnn.{op}: Number of kv_heads must be 1, b is {list(b.shape)}")
    if ash[2] != bsh[0]:
        raise MeshnnValueError(f"ttnn.{op}: Num of users must match: a's shape[2] {ash[2]}, b's shape[0] {bsh[0]}")
    if grouped and bsh[0] != 32:
        raise MeshnnValueError(f"ttnn.{op}: Only batch 32 is supported for group attention matmul, got {bsh[0]}")
    if cache is None:
        if ash[3] != bsh[2]:
            raise MeshnnValueError(f"ttnn.{op}: Dimension K (a.shape[3] and b.shape[2]) must match: {ash} and {bsh}")
        return int(b.shape[3])
    tokens, transpose = cache
    if transpose and ash[3] != bsh[3]:
        raise MeshnnValueError(f"ttnn.{op}: for the pre-attention product a.shape[3] must match b.shape[3]")
    if not transpose and ash[3] != tokens:
        raise MeshnnValueError(
            f"ttnn.{op}: for the post-attention product a.shape[3] ({ash[3]}) must be the {tokens} cache rows read"
        )
    return tokens if transpose else int(b.shape[3])


def _product(
    op: str,
    a: Tensor,
    b: Tensor,
    spec: TensorSpec,
    cache: tuple[int, bool] | None,
    output: object,
    attrs: dict[str, object],
) -> Tensor:
    mesh = same_mesh(op, {"input_tensor_a": a, "input_tensor_b": b})
    a_spec, b_spec = a.spec, b.spec

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]) -> None:
        x = logical_values(in_rows[0], a_spec).astype(np.float32, copy=False)  # (d, 1, H, B, K)
        w = logical_values(in_rows[1], b_spec).astype(np.float32, copy=False)  # (d, B, G, K|T, N)
        if cache is not None:
            w = w[:, :, :, : cache[0]]
            if cache[1]:
                w = w.swapaxes(-1, -2)
        d, _, heads, users, k = x.shape
        groups = w.shape[2]
        # a KV head's q heads are consecutive: their rows one (r, K) matrix times that head's (K, N),
        # never the KV heads repeated per q head ((1, 64, 71, 64, 2048) float32 was 2.2 GiB)
        rows = x[:, 0].transpose(0, 2, 1, 3).reshape(d, users, groups, heads // groups, k)  # (d, B, G, r, K)
        out = product(np.ascontiguousarray(rows), np.ascontiguousarray(w)).reshape(d, users, heads, -1)
        write_values(out_rows[0], np.ascontiguousarray(out.transpose(0, 2, 1, 3))[:, None], spec)

    into = None if output is None else [device_input(op, "output_tensor", output)]
    return launch(op, mesh, [a, b], [Output(spec)], kernel, rowwise=True, into=into, attrs=attrs)[0]


def _out_config(op: str, a: Tensor, memory_config: MemoryConfig | None, output: object) -> MemoryConfig:
    """The output's memory config: ``memory_config``, else a preallocated output's own (ttnn then
    computes no spec of its own), else a's."""
    if memory_config is not None:
        return memory_config
    if output is not None:
        return device_input(op, "output_tensor", output).memory_config()
    return a.memory_config()


def _prepared(
    op: str, a: object, b: object, grid: object, memory_config: object, dtype: object
) -> tuple[Tensor, Tensor, CoreCoord]:
    """The products' arguments checked: both inputs TILE device tensors, the grid within the
    device's, the memory config and dtype of their kinds."""
    x, w = tile_input(op, "input_tensor_a", a), tile_input(op, "input_tensor_b", b)
    checked = _grid(op, grid, same_mesh(op, {"input_tensor_a": x}).compute_with_storage_grid_size())
    _options(op, memory_config, dtype)
    return x, w, checked


@register(
    "experimental.attn_matmul",
    kind=OpKind.MATMUL,
    family=OpFamily.MATMUL,
    device_operation="AttnMatmulDeviceOperation",
)
def attn_matmul(
    input_tensor_a: Tensor,
    input_tensor_b: Tensor,
    *,
    compute_with_storage_grid_size: CoreCoord,
    dtype: DataType | None = None,
    compute_kernel_config: object = None,
    memory_config: MemoryConfig | None = None,
    output_tensor: Tensor | None = None,
) -> Tensor:
    """``[1, H, B, K] x [B, 1, K, N] -> [1, H, B, N]``, each user's rows times its own ``b``."""
    op = "experimental.attn_matmul"
    a, b, grid = _prepared(op, input_tensor_a, input_tensor_b, compute_with_storage_grid_size, memory_config, dtype)
    n = _shapes(op, a, b, None, grouped=False)
    config = _out_config(op, a, memory_config, output_tensor)
    spec = TensorSpec((1, a.shape[1], a.shape[2], n), dtype or a.dtype, Layout.TILE, memory_config=config)
    attrs = {"compute_with_storage_grid_size": grid, "compute_kernel_config": compute_kernel_config}
    return _product(op, a, b, spec, None, output_tensor, attrs)


@register(
    "experimental.attn_matmul_from_cache",
    kind=OpKind.MATMUL,
    family=OpFamily.MATMUL,
    device_operation="AttnMatmulDeviceOperation",
)
def attn_matmul_from_cache(
    input_tensor_a: Tensor,
    input_tensor_b: Tensor,
    *,
    num_tokens: int,
    transpose_hw: bool,
    compute_with_storage_grid_size: CoreCoord,
    memory_config: MemoryConfig | None = None,
    dtype: DataType | None = None,
    compute_kernel_config: object = None,
    output_tensor: Tensor | None = None,
) -> Tensor:
    """:func:`attn_matmul` with ``b`` the first ``num_tokens`` (rounded up to 32) rows of a KV cache
    ``[B, 1, max_len, head_dim]``, transposed when ``transpose_hw`` (the pre-softmax product)."""
    op = "experimental.attn_matmul_from_cache"
    a, b, grid = _prepared(op, input_tensor_a, input_tensor_b, compute_with_storage_grid_size, memory_config, dtype)
    cache = _cache_read(op, b, num_tokens, transpose_hw)
    n = _shapes(op, a, b, cache, grouped=False)
    config = _out_config(op, a, memory_config, output_tensor)
    spec = TensorSpec((1, a.shape[1], a.shape[2], n), dtype or a.dtype, Layout.TILE, memory_config=config)
    attrs = {"num_tokens": cache[0], "transpose_hw": transpose_hw, "compute_with_storage_grid_size": grid}
    return _product(op, a, b, spec, cache, output_tensor, attrs)


def _group_config(op: str, a: Tensor, b: Tensor, config: MemoryConfig, grid: CoreCoord, shape: tuple) -> MemoryConfig:
    """The output's memory config: a height-sharded one without a shard spec gets a head a core on
    the first ``q_heads`` cores of the grid, in the inputs' shard orientation."""
    row_major = False
    for t in (a, b):
        if t.memory_config().is_sharded():
            spec = t.memory_config().shard_spec
            if t.memory_config().memory_layout is not TensorMemoryLayout.HEIGHT_SHARDED:
                raise MeshnnValueError(f"ttnn.{op}: a sharded input must be HEIGHT_SHARDED, got {t.memory_config()}")
            row_major = spec is not None and spec.orientation is ShardOrientation.ROW_MAJOR
            break
    else:
        if config.is_sharded() and config.shard_spec is not None:
            row_major = config.shard_spec.orientation is ShardOrientation.ROW_MAJOR
    if not config.is_sharded():
        return config
    if config.memory_layout is not TensorMemoryLayout.HEIGHT_SHARDED:
        raise MeshnnValueError(f"ttnn.{op}: the output memory config must be HEIGHT_SHARDED, got {config}")
    cores = num_cores_to_corerangeset(shape[1], grid, row_major)
    orientation = ShardOrientation.ROW_MAJOR if row_major else ShardOrientation.COL_MAJOR
    derived = ShardSpec(cores, (shape[2], shape[3]), orientation)
    if config.shard_spec is not None and config.shard_spec != derived:
        raise MeshnnValueError(f"ttnn.{op}: the output's shard spec must be {derived}, got {config.shard_spec}")
    return MemoryConfig(config.memory_layout, config.buffer_type, derived)


@register(
    "experimental.group_attn_matmul",
    kind=OpKind.MATMUL,
    family=OpFamily.MATMUL,
    device_operation="GroupAttnMatmulDeviceOperation",
)
def group_attn_matmul(
    input_tensor_a: Tensor,
    input_tensor_b: Tensor,
    *,
    compute_with_storage_grid_size: CoreCoord,
    memory_config: MemoryConfig = DRAM_MEMORY_CONFIG,
    dtype: DataType | None = None,
    compute_kernel_config: object = None,
    optional_output_tensor: Tensor | None = None,
) -> Tensor:
    """``[1, H, 32, K] x [32, G, K, N] -> [1, H, 32, N]``: each q head uses KV head ``h // (H / G)``."""
    op = "experimental.group_attn_matmul"
    a, b, grid = _prepared(op, input_tensor_a, input_tensor_b, compute_with_storage_grid_size, memory_config, dtype)
    n = _shapes(op, a, b, None, grouped=True)
    if max(a.spec.padded_shape[1], 32) > grid.x * grid.y:
        raise MeshnnValueError(
            f"ttnn.{op}: compute grid {grid} is too small: max(q_heads, 32) cores are needed, one q head a core"
        )
    shape = (1, a.shape[1], a.shape[2], n)
    config = _group_config(op, a, b, memory_config if memory_config is not None else a.memory_config(), grid, shape)
    spec = TensorSpec(shape, dtype or a.dtype, Layout.TILE, memory_config=config)
    attrs = {"compute_with_storage_grid_size": grid, "compute_kernel_config": compute_kernel_config}
    return _product(op, a, b, spec, None, optional_output_tensor, attrs)


@register(
    "experimental.nlp_create_qkv_heads_falcon7b",
    kind=OpKind.TRANSFORMER,
    family=OpFamily.COPY,
    device_operation="NlpCreateHeadsFalcon7BDeviceOperation",
)
def nlp_create_qkv_heads_falcon7b(
    input: Tensor, *, memory_config: MemoryConfig | None = None
) -> tuple[Tensor, Tensor, Tensor]:
    """Falcon-7B's fused ``[b, 1, s, 4672]`` QKV as 71 query heads and one key and value head of 64."""
    op = "experimental.nlp_create_qkv_heads_falcon7b"
    x = tile_input(op, "input", input, (DataType.FLOAT32, DataType.BFLOAT16, DataType.BFLOAT8_B))
    padded = tuple(x.spec.padded_shape)
    if padded[2] % 32:
        raise MeshnnValueError(f"ttnn.{op}: input shape[2] ({padded[2]}) must be divisible by 32")
    if len(padded) != 4 or padded[1] != 1 or padded[3] != _FUSED_WIDTH:
        raise MeshnnValueError(f"ttnn.{op}: Unsupported input shape {list(x.shape)} (expected [b, 1, s, 4672])")
    _options(op, memory_config, None)
    config = memory_config if memory_config is not None else x.memory_config()
    if config.is_sharded():
        raise MeshnnValueError(f"ttnn.{op}: the output memory config must be interleaved, got {config}")
    b, s = padded[0], padded[2]
    specs = [TensorSpec((b, heads, s, _HEAD), x.dtype, Layout.TILE, memory_config=config) for heads in (_Q_HEADS, 1, 1)]
    exact = not x.dtype.is_block_float

    x_spec = x.spec  # (the kernel holds no tensor: a trace must not keep it allocated)

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]) -> None:
        fused = logical_values(in_rows[0], x_spec, as_float=False)  # (d, b, 1, s, 4672)
        split = fused[:, :, 0].reshape(fused.shape[0], b, s, _Q_HEADS + 2, _HEAD).transpose(0, 1, 3, 2, 4)
        parts = (split[:, :, :_Q_HEADS], split[:, :, -2:-1], split[:, :, -1:])
        for out, part, spec in zip(out_rows, parts, specs, strict=True):
            write_values(out, np.ascontiguousarray(part), spec, exact=exact)

    mesh = same_mesh(op, {"input": x})
    q, k, v = launch(op, mesh, [x], [Output(s) for s in specs], kernel, rowwise=True, attrs={"memory_config": config})
    return q, k, v
