"""``ttnn.experimental.create_qkv_heads`` and ``create_qkv_heads_from_separate_tensors``: q, k and
v heads from BLOCK_SHARDED inputs (one batch a grid row), out as height-sharded tensors.

- ``create_qkv_heads(input, num_heads=, num_kv_heads=)``: ``[b, 1, s, kv_heads x (g + 2) x d]``
  (``g = num_heads / num_kv_heads``), each KV group's columns ``[its g q heads | its k head | its v
  head]``, to q ``[b, num_heads, s, d]``, k ``[b, kv_heads, s, d]`` (``[.., d, s]`` with
  ``transpose_k_heads``, the default) and v ``[b, kv_heads, s, d]``;
- ``create_qkv_heads_from_separate_tensors(input, input_kv, ...)``: q from ``[b, 1, s_q, heads x
  d]`` (its heads side by side), k and v from ``[b, 1, s_kv, kv_heads x 2 x d]`` (each KV head's
  ``[k | v]``).

The outputs are sharded on the input's grid and orientation, with the memory layout and buffer
type of ``memory_config`` (default: the input's, which ttnn then refuses: it must be
HEIGHT_SHARDED), shards of ``[b x heads x rows / cores, last dim]`` as ttnn computes them.  The
checks are the device operations' (the L1 budget of the separate form's program excepted).  The
heads move unchanged: exact formats are copied exactly.

May import: every layer below the ops and the ops' launch, checks, outputs and values modules.
"""

from __future__ import annotations

import numpy as np

from meshnn.device.buffer import ShardOrientation, ShardSpec, TensorMemoryLayout
from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.mesh.coord import MeshCoordinate
from meshnn.ops.checks import same_mesh
from meshnn.ops.launch import launch
from meshnn.ops.outputs import Output, output_into
from meshnn.ops.registry import OpKind, register
from meshnn.ops.transformer.checks import tile_input
from meshnn.ops.values import logical_values, write_values
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig, TensorSpec
from meshnn.tensor.tensor import Tensor

_DTYPES = (DataType.FLOAT32, DataType.BFLOAT16, DataType.BFLOAT8_B)
_TILE = 32


def _heads(op: str, num_heads: object, num_kv_heads: object) -> tuple[int, int]:
    """``(num_heads, num_kv_heads)``: positive ints, the kv count defaulting to the q count."""
    kv = num_heads if num_kv_heads is None else num_kv_heads
    for name, value in (("num_heads", num_heads), ("num_kv_heads", kv)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise MeshnnTypeError(f"ttnn.{op}: {name} must be an int, got {value!r}")
        if value <= 0:
            raise MeshnnValueError(f"ttnn.{op}: {name} must be positive, got {value}")
    return num_heads, kv  # type: ignore[return-value]


def _block_input(op: str, name: str, tensor: object) -> Tensor:
    x = tile_input(op, name, tensor, _DTYPES)
    config = x.memory_config()
    if config.memory_layout is not TensorMemoryLayout.BLOCK_SHARDED or config.shard_spec is None:
        raise MeshnnValueError(f"ttnn.{op}: {name} memory layout must be BLOCK_SHARDED, got {config.memory_layout}")
    if len(x.padded_shape) != 4 or x.padded_shape[1] != 1:
        raise MeshnnValueError(f"ttnn.{op}: {name} must be [batch, 1, sequence, hidden], got {list(x.padded_shape)}")
    return x


def _cores(op: str, x: Tensor, grid: object) -> tuple[int, int, int]:
    """``(height cores, width cores, bounding-box cores)`` of the input's shard grid."""
    spec = x.memory_config().shard_spec
    box = spec.grid.bounding_box()  # type: ignore[union-attr]
    if box.end.x >= grid.x or box.end.y >= grid.y:  # type: ignore[attr-defined]
        raise MeshnnValueError(f"ttnn.{op}: the input's shard grid {box} is past the compute grid {grid}")
    rows, cols = box.end.y + 1, box.end.x + 1
    if spec.orientation is not ShardOrientation.ROW_MAJOR:  # type: ignore[union-attr]
        rows, cols = cols, rows
    if x.padded_shape[0] != rows:
        raise MeshnnValueError(f"ttnn.{op}: Batch size {x.padded_shape[0]} must be equal to num cores {rows}")
    if x.padded_shape[3] % (cols * _TILE):
        raise MeshnnValueError(
            f"ttnn.{op}: the hidden dimension {x.padded_shape[3]} must be a multiple of width cores {cols} x {_TILE}"
        )
    return rows, cols, box.num_cores()


def _out_specs(op: str, x: Tensor, config: object, shapes: tuple[tuple[int, ...], ...], cores: int) -> list[TensorSpec]:
    config = x.memory_config() if config is None else config
    if not isinstance(config, MemoryConfig):
        raise MeshnnTypeError(f"ttnn.{op}: memory_config must be a ttnn.MemoryConfig, got {config!r}")
    if config.memory_layout is not TensorMemoryLayout.HEIGHT_SHARDED:
        raise MeshnnValueError(f"ttnn.{op}: Output memory config layout must be HEIGHT_SHARDED, got {config}")
    source = x.memory_config().shard_spec
    specs = []
    for shape in shapes:
        shard = ShardSpec(source.grid, (shape[0] * shape[1] * shape[2] // cores, shape[3]), source.orientation)  # type: ignore[union-attr]
        out_config = MemoryConfig(config.memory_layout, config.buffer_type, shard)
        specs.append(TensorSpec(shape, x.dtype, Layout.TILE, memory_config=out_config))
    return specs


def _run(op: str, inputs: list[Tensor], specs: list[TensorSpec], split, output_tensors: object) -> tuple:
    """Launch the split: ``split(values of each input)`` gives q, k, v as ``(n, b, heads, s, d)``."""
    mesh = same_mesh(op, {f"input {i}": t for i, t in enumerate(inputs)})
    into = None
    if output_tensors is not None:
        if not isinstance(output_tensors, (list, tuple)) or len(output_tensors) != 3:
            raise MeshnnTypeError(f"ttnn.{op}: output_tensors must be 3 tensors (q, k, v), got {output_tensors!r}")
        where = inputs[0].storage.coords  # type: ignore[union-attr]
        into = [output_into(op, mesh, t, s, where) for t, s in zip(output_tensors, specs, strict=True)]
    in_specs, exact = [t.spec for t in inputs], not inputs[0].dtype.is_block_float

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]) -> None:
        parts = [logical_values(r, sp, as_float=False)[:, :, 0] for r, sp in zip(in_rows, in_specs, strict=True)]
        for out, values, spec in zip(out_rows, split(parts), specs, strict=True):
            write_values(out, np.ascontiguousarray(values), spec, exact=exact)

    attrs = {"memory_config": specs[0].memory_config, "shapes": tuple(s.shape for s in specs)}
    outs = launch(op, mesh, inputs, [Output(s) for s in specs], kernel, into=into, rowwise=True, attrs=attrs)
    return tuple(outs)


def _qkv_shapes(b: int, seqs: tuple[int, int], heads: tuple[int, int], d: int, transpose: bool) -> tuple:
    (sq, skv), (h, kv) = seqs, heads
    return ((b, h, sq, d), (b, kv, d, skv) if transpose else (b, kv, skv, d), (b, kv, skv, d))


def _bool(op: str, transpose_k_heads: object) -> bool:
    if not isinstance(transpose_k_heads, bool):
        raise MeshnnTypeError(f"ttnn.{op}: transpose_k_heads must be a bool, got {transpose_k_heads!r}")
    return transpose_k_heads


@register(
    "experimental.create_qkv_heads",
    kind=OpKind.TRANSFORMER,
    family=OpFamily.COPY,
    device_operation="CreateQKVHeadsDeviceOperation",
)
def create_qkv_heads(
    input: Tensor,
    *,
    num_heads: int,
    num_kv_heads: int | None = None,
    transpose_k_heads: bool = True,
    memory_config: MemoryConfig | None = None,
    output_tensors: list[Tensor] | None = None,
) -> tuple[Tensor, Tensor, Tensor]:
    """q, k, v heads of a BLOCK_SHARDED fused input grouped by KV head (see the module's docstring)."""
    op = "experimental.create_qkv_heads"
    h, kv = _heads(op, num_heads, num_kv_heads)  # ttnn's binding refuses a wrong type first
    transpose = _bool(op, transpose_k_heads)
    x = _block_input(op, "input", input)
    b, _, s, hidden = tuple(x.padded_shape)
    if hidden % (h + 2 * kv):
        raise MeshnnValueError(
            f"ttnn.{op}: the hidden dimension {hidden} must be a multiple of num_heads {h} + 2 x num_kv_heads {kv}"
        )
    if h % kv:
        raise MeshnnValueError(f"ttnn.{op}: num_heads {h} must be a multiple of num_kv_heads {kv}")
    d, g = hidden // (h + 2 * kv), h // kv
    mesh = same_mesh(op, {"input": x})
    cores = _cores(op, x, mesh.compute_with_storage_grid_size())[2]
    specs = _out_specs(op, x, memory_config, _qkv_shapes(b, (s, s), (h, kv), d, transpose), cores)

    def split(parts: list[np.ndarray]) -> tuple[np.ndarray, ...]:
        groups = parts[0].reshape(-1, b, s, kv, g + 2, d)
        q = groups[..., :g, :].reshape(-1, b, s, h, d).transpose(0, 1, 3, 2, 4)
        k, v = (groups[..., i, :].transpose(0, 1, 3, 2, 4) for i in (g, g + 1))
        return q, (k.swapaxes(-1, -2) if transpose else k), v

    return _run(op, [x], specs, split, output_tensors)


@register(
    "experimental.create_qkv_heads_from_separate_tensors",
    kind=OpKind.TRANSFORMER,
    family=OpFamily.COPY,
    device_operation="CreateQKVHeadsSeparateTensorsDeviceOperation",
)
def create_qkv_heads_from_separate_tensors(
    input: Tensor,
    input_kv: Tensor,
    *,
    num_heads: int,
    num_kv_heads: int | None = None,
    transpose_k_heads: bool = True,
    memory_config: MemoryConfig | None = None,
    output_tensors: list[Tensor] | None = None,
) -> tuple[Tensor, Tensor, Tensor]:
    """q heads of a BLOCK_SHARDED q input, k and v of a fused ``[k | v]``-per-head KV input."""
    op = "experimental.create_qkv_heads_from_separate_tensors"
    h, kv = _heads(op, num_heads, num_kv_heads)  # ttnn's binding refuses a wrong type first
    transpose = _bool(op, transpose_k_heads)
    x, y = _block_input(op, "input", input), _block_input(op, "input_kv", input_kv)
    if y.dtype is not x.dtype:
        raise MeshnnTypeError(f"ttnn.{op}: input_kv's dtype {y.dtype} must be the q input's {x.dtype}")
    (b, _, sq, hidden), (bkv, _, skv, hidden_kv) = tuple(x.padded_shape), tuple(y.padded_shape)
    if hidden % h or bkv != b or hidden_kv % (2 * kv) or hidden // h != hidden_kv // (2 * kv):
        raise MeshnnValueError(
            f"ttnn.{op}: input {list(x.padded_shape)} with num_heads {h} and input_kv {list(y.padded_shape)} with "
            f"num_kv_heads {kv} must share the batch and the head dim"
        )
    mesh = same_mesh(op, {"input": x, "input_kv": y})
    rows, cols, cores = _cores(op, x, mesh.compute_with_storage_grid_size())
    if h % cols or kv % cols:
        raise MeshnnValueError(f"ttnn.{op}: num_heads {h} and num_kv_heads {kv} must fit evenly into {cols} cores")
    if hidden_kv % (cols * _TILE) or (b * sq) % (rows * _TILE) or (b * skv) % (rows * _TILE):
        raise MeshnnValueError(f"ttnn.{op}: each of the {rows} x {cols} cores must get whole tiles of both inputs")
    d = hidden // h
    specs = _out_specs(op, x, memory_config, _qkv_shapes(b, (sq, skv), (h, kv), d, transpose), cores)

    def split(parts: list[np.ndarray]) -> tuple[np.ndarray, ...]:
        q = parts[0].reshape(-1, b, sq, h, d).transpose(0, 1, 3, 2, 4)
        pairs = parts[1].reshape(-1, b, skv, kv, 2, d)
        k, v = (pairs[..., i, :].transpose(0, 1, 3, 2, 4) for i in (0, 1))
        return q, (k.swapaxes(-1, -2) if transpose else k), v

    return _run(op, [x, y], specs, split, output_tensors)
