"""``ttnn.matmul`` and ``ttnn.linear``: per-device matrix products, batched and broadcast.

Each device multiplies its own shards (data or tensor parallelism is the caller's sharding); the
product of every device is one stacked ``np.matmul`` in float32.  ``matmul`` checks its operands,
makes the output spec and launches :class:`~meshnn.ops.matmul_kernel.Product`, the kernel with its
compute paths.

May import: :mod:`meshnn.errors`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor` and the ops' launch,
checks, outputs, memo, values, shared_rows modules and the element-wise functions.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from meshnn.device.core import CoreGrid
from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.mesh.mesh_device import MeshDevice
from meshnn.ops import goldens
from meshnn.ops.checks import check_queue_id, device_input, same_mesh
from meshnn.ops.config import check_compute_kernel_config
from meshnn.ops.eltwise.activations import FUSABLE, activation_steps, apply_steps
from meshnn.ops.launch import launch
from meshnn.ops.matmul_config import (
    MatmulMultiCoreReuseMultiCast1DProgramConfig,
    check_batched_dram_sharded,
    check_matmul_program_config,
    output_shard_spec,
    validate_program_config,
)
from meshnn.ops.matmul_kernel import Product
from meshnn.ops.outputs import Output, out_spec_like, output_into
from meshnn.ops.prefetcher import check_matmul_prefetch, take_prefetched
from meshnn.ops.registry import OpKind, register
from meshnn.ops.shard_specs import needs_shard_spec
from meshnn.perf.desc import OpFamily
from meshnn.tensor.memory_config import DRAM_MEMORY_CONFIG
from meshnn.tensor.spec import MemoryConfig, TensorSpec
from meshnn.tensor.tensor import Tensor


def _matmul_shape(a: tuple[int, ...], b: tuple[int, ...], op: str) -> tuple[int, ...]:
    if len(a) < 1 or len(b) < 1:
        raise MeshnnValueError(f"ttnn.{op}: operands need rank >= 1, got {list(a)} and {list(b)}")
    a2 = a if len(a) > 1 else (1, *a)
    b2 = b if len(b) > 1 else (*b, 1)
    if a2[-1] != b2[-2]:
        raise MeshnnValueError(
            f"ttnn.{op}: the inner dimensions must match: input_tensor_a {list(a)} x input_tensor_b {list(b)} "
            f"({a2[-1]} != {b2[-2]})"
        )
    try:
        batch = np.broadcast_shapes(a2[:-2], b2[:-2])
    except ValueError:
        raise MeshnnValueError(f"ttnn.{op}: batch dimensions of {list(a)} and {list(b)} do not broadcast") from None
    out = (*batch, a2[-2], b2[-1])
    if len(a) == 1:
        out = (*out[:-2], out[-1])
    if len(b) == 1:
        out = out[:-1]
    return tuple(out)


def _transposed(shape: tuple[int, ...], flag: bool) -> tuple[int, ...]:
    return (*shape[:-2], shape[-1], shape[-2]) if flag and len(shape) >= 2 else shape


def _activation(name: object, op: str) -> object:
    """``activation`` (a unary op name, a ttnn.UnaryOpType or a ttnn.UnaryWithParam) as a function
    of float32 values."""
    if name is None:
        return None
    if isinstance(name, str) and name.lower() not in FUSABLE:
        raise MeshnnValueError(f"ttnn.{op}: activation {name!r} is not one of {sorted(FUSABLE)}")
    steps = activation_steps(op, "activation", name)
    return lambda x: apply_steps(steps, x)


@register(kind=OpKind.MATMUL, family=OpFamily.MATMUL, golden=goldens.matmul, operator="matmul")
def matmul(
    input_tensor_a: Tensor,
    input_tensor_b: Tensor,
    *,
    transpose_a: bool = False,
    transpose_b: bool = False,
    memory_config: MemoryConfig | None = None,
    dtype: DataType | None = None,
    bias: Tensor | None = None,
    activation: str | None = None,
    program_config: object = None,
    compute_kernel_config: object = None,
    core_grid: object = None,
    output_tile: object = None,
    optional_output_tensor: object = None,
    global_cb: object = None,
    sub_device_id: object = None,
    queue_id: int = 0,
    op: str = "matmul",
    recorded: dict[str, object] | None = None,
) -> Tensor:
    """``a @ b`` on every device (with ``bias`` added and ``activation`` applied for linear), on
    command queue ``queue_id``, into ``optional_output_tensor`` when given (its spec must be the
    output's).  ``program_config`` and ``compute_kernel_config`` are checked as ttnn checks them
    (against the device's grid and the operands) and change no value, but a program config's
    ``fused_activation`` is applied; ``global_cb`` and ``sub_device_id`` are checked
    (:func:`~meshnn.ops.prefetcher.check_matmul_prefetch`) and recorded; ``recorded``: more of the calling op's
    arguments to record with it (the minimal matmul's ``config``)."""
    inputs, mesh, shape = checked_operands(op, input_tensor_a, input_tensor_b, bias, transpose_a, transpose_b)
    queue_id = check_queue_id(op, mesh, queue_id)
    a = inputs[0]
    configs = (transpose_a, activation, program_config, compute_kernel_config, core_grid, memory_config)
    extra = (dtype, bias, global_cb, sub_device_id)
    act, kernel_config, config, spec = _output(op, mesh, inputs, shape, configs, extra)
    kernel = _product(inputs, spec, shape, (transpose_a, transpose_b), act, kernel_config)
    into = None
    if optional_output_tensor is not None:
        into = [output_into(op, mesh, optional_output_tensor, spec, a.storage.coords)]  # type: ignore[union-attr]
    names = ("core_grid", "activation", "transpose_a", "transpose_b", "output_tile", "global_cb", "sub_device_id")
    given = (core_grid, activation, transpose_a, transpose_b, output_tile, global_cb, sub_device_id)
    attrs = {"program_config": config, "compute_kernel_config": kernel_config, "memory_config": spec.memory_config}
    attrs.update(dtype=spec.dtype, **dict(zip(names, given, strict=True)), **(recorded or {}))
    out = launch(
        op,
        mesh,
        inputs,
        [Output(spec)],
        kernel,
        queue_id=queue_id,
        into=into,
        rowwise=True,
        reads_memos=True,
        attrs=attrs,
    )
    take_prefetched(global_cb)
    return out[0]


def _product(
    inputs: list[Tensor], spec: TensorSpec, shape: tuple[int, ...], transposes: tuple[bool, bool], act, kernel_config
) -> Product:
    """The kernel of a matmul of ``inputs`` into an output of ``spec``: its paths, and whether its
    destination register holds 32-bit values (ttnn's default: for a float32 output only, as
    ``matmul_op.cpp`` sets it; else the compute-kernel config's ``fp32_dest_acc_en``)."""
    a = inputs[0]
    direct = spec.dtype is DataType.FLOAT32 and spec.layout is Layout.ROW_MAJOR and spec.explicit_padded_shape is None
    # x @ a weight matrix sharded by columns (column-parallel linear): one product when x is the same
    # on every device, of x with the shards side by side (see _one_product)
    columns = not any(transposes) and len(a.shape) >= 2 and len(inputs[1].shape) == 2 and not direct
    fp32_dest = spec.dtype is DataType.FLOAT32 if kernel_config is None else kernel_config.fp32_dest_acc_en
    specs = [t.spec for t in inputs]
    return Product(specs, spec, shape, transposes=transposes, act=act, paths=(columns, direct), fp32_dest=fp32_dest)


def _out_layout(op: str, config: object, dtype: DataType) -> Layout | None:
    """ROW_MAJOR when ``ttnn.matmul``'s 1-D program config asks ``untilize_out`` (tt-metal's matmul
    reads the flag off that config only; its output dtype must then be bfloat16 or float32), else
    None (the input's TILE layout)."""
    if op != "matmul" or not isinstance(config, MatmulMultiCoreReuseMultiCast1DProgramConfig):
        return None
    if not config.untilize_out:
        return None
    if dtype not in (DataType.BFLOAT16, DataType.FLOAT32):
        raise MeshnnValueError(f"ttnn.{op}: Unsupported data type: {dtype} (untilize_out gives bfloat16 or float32)")
    return Layout.ROW_MAJOR


def product_spec(op: str, a: object, b: object, options: dict[str, object]) -> TensorSpec:
    """The spec of ``matmul(a, b, **options)``'s output after every check that matmul makes
    before it allocates (``options``: matmul's keywords but bias, optional_output_tensor and
    queue_id), so that a fused op can check the part it runs on the product first."""
    transpose_a = options.get("transpose_a", False)
    inputs, mesh, shape = checked_operands(op, a, b, None, transpose_a, options.get("transpose_b", False))
    given = tuple(options.get(k) for k in ("activation", "program_config", "compute_kernel_config", "core_grid"))
    extra = (options.get("dtype"), None, options.get("global_cb"), options.get("sub_device_id"))
    return _output(op, mesh, inputs, shape, (transpose_a, *given, options.get("memory_config")), extra)[-1]


def _output(
    op: str, mesh: MeshDevice, inputs: list[Tensor], shape: tuple[int, ...], given: tuple, extra: tuple
) -> tuple[object, object, object, TensorSpec]:
    """The activation, the checked compute-kernel and program configs, and the output's spec of
    a matmul of checked ``inputs``: :func:`_configs` of ``given``, the prefetch checks, the
    output layout (``extra``: the output dtype, bias, global_cb and sub_device_id)."""
    dtype, bias, global_cb, sub_device_id = extra
    a = inputs[0]
    act, kernel_config, config, out_config = _configs(op, mesh, a, shape, given)
    check_matmul_prefetch(op, mesh, (a, inputs[1], bias, global_cb, sub_device_id), config, out_config)
    k_tiles = -(-_transposed(tuple(a.spec.padded_shape), given[0])[-1] // a.tile.tile_shape[1])
    check_batched_dram_sharded(op, config, a, inputs[1], out_config, k_tiles)
    layout = _out_layout(op, config, dtype or a.dtype)
    spec = out_spec_like(a, shape=shape, dtype=dtype, layout=layout, memory_config=out_config, op=op)
    return act, kernel_config, config, spec


def _configs(
    op: str, mesh: MeshDevice, a: Tensor, shape: tuple[int, ...], given: tuple
) -> tuple[object, object, object, MemoryConfig]:
    """The activation to apply, the checked compute-kernel and program configs (validated against
    the device and ``a``) and the output memory config (a spec-less sharded one given its spec)."""
    transpose_a, activation, program_config, compute_kernel_config, core_grid, memory_config = given
    act = _activation(activation, op)
    kernel_config = check_compute_kernel_config(op, compute_kernel_config)
    config = check_matmul_program_config(op, program_config)
    if core_grid is not None and not isinstance(core_grid, CoreGrid):
        raise MeshnnTypeError(f"ttnn.{op}: core_grid must be a ttnn.CoreGrid or None, got {core_grid!r}")
    k_tiles = -(-_transposed(tuple(a.spec.padded_shape), transpose_a)[-1] // a.tile.tile_shape[1])
    validate_program_config(op, config, mesh.compute_with_storage_grid_size(), k_tiles, kernel_config)
    out_config = memory_config if memory_config is not None else DRAM_MEMORY_CONFIG
    if config is not None and needs_shard_spec(out_config):
        out_config = _derived_config(op, out_config, config, a, shape)
    return _with_fused(act, config, op), kernel_config, config, out_config


def _with_fused(act: object, config: object, op: str) -> object:
    """The activation to apply: ``act`` then the program config's ``fused_activation`` (if any)."""
    fused = getattr(config, "fused_activation", None)
    if fused is None:
        return act
    steps = activation_steps(op, "program_config.fused_activation", fused)
    if act is None:
        return lambda x: apply_steps(steps, x)
    return lambda x: apply_steps(steps, act(x))  # type: ignore[operator]


def _derived_config(
    op: str, config: MemoryConfig, program_config: object, a: Tensor, shape: tuple[int, ...]
) -> MemoryConfig:
    """A spec-less sharded output config with the shard spec ttnn derives from the program config."""
    th, tw = a.tile.tile_shape
    rows = int(np.prod(shape[:-1], dtype=np.int64)) if len(shape) > 1 else 1
    m_tiles, n_tiles = -(-rows // th), -(-shape[-1] // tw)
    input_spec = a.spec.memory_config.shard_spec
    shard = output_shard_spec(op, program_config, m_tiles, n_tiles, (th, tw), input_spec)
    return MemoryConfig(config.memory_layout, config.buffer_type, shard)


def checked_operands(
    op: str, input_tensor_a: object, input_tensor_b: object, bias: object, transpose_a: object, transpose_b: object
) -> tuple[list[Tensor], MeshDevice, tuple[int, ...]]:
    """The operands (a, b and the bias when given) checked, their mesh, and the product's shape."""
    a = device_input(op, "input_tensor_a", input_tensor_a)
    b = device_input(op, "input_tensor_b", input_tensor_b)
    named = {"input_tensor_a": a, "input_tensor_b": b}
    if bias is not None:
        named["bias"] = device_input(op, "bias", bias)
    mesh = same_mesh(op, named)
    if not isinstance(transpose_a, bool) or not isinstance(transpose_b, bool):
        raise MeshnnTypeError(f"ttnn.{op}: transpose_a / transpose_b must be bools")
    a_shape, b_shape = _transposed(tuple(a.shape), transpose_a), _transposed(tuple(b.shape), transpose_b)
    shape = _matmul_shape(a_shape, b_shape, op)
    if bias is not None and not _one_tile_row_bias(named["bias"], shape):
        try:
            np.broadcast_shapes(tuple(named["bias"].shape), shape)
        except ValueError:
            raise MeshnnValueError(
                f"ttnn.{op}: bias {list(named['bias'].shape)} does not broadcast to {list(shape)}"
            ) from None
    return list(named.values()), mesh, shape


def _one_tile_row_bias(bias: Tensor, shape: Sequence[int]) -> bool:
    """Whether ``bias`` is ttnn's fused bias of one tile row (batch 1, padded height one tile, the
    output's width), whose first row ttnn's kernel adds to every output row."""
    dims = tuple(bias.shape)
    tile_height = bias.spec.tile.tile_shape[0]
    return (
        bias.layout is Layout.TILE
        and len(dims) >= 2
        and 1 < dims[-2] <= tile_height
        and math.prod(dims[:-2]) == 1
        and dims[-1] == shape[-1]
    )


@register(kind=OpKind.MATMUL, family=OpFamily.MATMUL, golden=goldens.linear)
def linear(
    input_tensor_a: Tensor,
    input_tensor_b: Tensor,
    *,
    bias: Tensor | None = None,
    transpose_a: bool = False,
    transpose_b: bool = False,
    memory_config: MemoryConfig | None = None,
    dtype: DataType | None = None,
    program_config: object = None,
    activation: str | None = None,
    compute_kernel_config: object = None,
    core_grid: object = None,
    output_tile: object = None,
    optional_output_tensor: object = None,
    global_cb: object = None,
    sub_device_id: object = None,
    queue_id: int = 0,
) -> Tensor:
    """``input @ weight + bias`` (``weight`` is (in, out), as ttnn stores it), then ``activation``."""
    return matmul(
        input_tensor_a,
        input_tensor_b,
        transpose_a=transpose_a,
        transpose_b=transpose_b,
        memory_config=memory_config,
        dtype=dtype,
        bias=bias,
        activation=activation,
        program_config=program_config,
        compute_kernel_config=compute_kernel_config,
        core_grid=core_grid,
        output_tile=output_tile,
        optional_output_tensor=optional_output_tensor,
        global_cb=global_cb,
        sub_device_id=sub_device_id,
        queue_id=queue_id,
        op="linear",
    )
