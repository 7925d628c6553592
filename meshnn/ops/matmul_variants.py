"""Matmul's relatives: ``ttnn.addmm`` (``beta * input + alpha * (mat1 @ mat2)`` of 2-D tensors, in
one float32 computation rounded once) and ``ttnn.sparse_matmul`` (batched products of which a
sparsity tensor says which to compute, ttnn's three modes; the products it skips are zeros here,
where a device leaves them unwritten).  The sparsity tensor may have any shape of the mode's batch
count (A's batches times B's with only B sparse, B's with both, A's with only A): tt-metal checks
its volume, and reads it in row-major order.

Both take ttnn's program and kernel configs, checked as a matmul checks them and recorded.

May import: :mod:`meshnn.errors`, :mod:`meshnn.formats`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor`
and the ops' registry, checks, config, launch, outputs and values modules.
"""

from __future__ import annotations

import math

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout, Tile
from meshnn.mesh.coord import MeshCoordinate
from meshnn.ops.checks import device_input, same_mesh
from meshnn.ops.config import check_compute_kernel_config
from meshnn.ops.launch import launch
from meshnn.ops.matmul_config import MatmulMultiCoreReuseMultiCast1DProgramConfig
from meshnn.ops.outputs import Output, out_spec_like, output_into
from meshnn.ops.registry import OpKind, register, torch_golden
from meshnn.ops.values import logical_values, write_values
from meshnn.perf.desc import OpFamily
from meshnn.tensor.memory_config import DRAM_MEMORY_CONFIG
from meshnn.tensor.spec import MemoryConfig, TensorSpec
from meshnn.tensor.tensor import Tensor

_FLOATS = (DataType.BFLOAT16, DataType.FLOAT32, DataType.BFLOAT8_B, DataType.BFLOAT4_B)


def _operand(op: str, name: str, value: object) -> Tensor:
    tensor = device_input(op, name, value)
    if tensor.layout is not Layout.TILE:
        raise MeshnnValueError(f"ttnn.{op}: {name} must be TILE, it is {tensor.layout}")
    if tensor.dtype not in _FLOATS:
        raise MeshnnTypeError(
            f"ttnn.{op}: {name} must be bfloat16, float32, bfloat8_b or bfloat4_b, got {tensor.dtype}"
        )
    return tensor


def _number(op: str, name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | np.number):
        raise MeshnnTypeError(f"ttnn.{op}: {name} must be a number, got {value!r}")
    return float(value)


def _golden_addmm(torch, input_tensor, mat1_tensor, mat2_tensor, *_, alpha=1.0, beta=1.0, **__):
    return torch.addmm(input_tensor, mat1_tensor, mat2_tensor, alpha=alpha, beta=beta)


def _addmm_operands(
    op: str, input_tensor: object, mat1_tensor: object, mat2_tensor: object, be: float
) -> tuple[Tensor, Tensor, Tensor, tuple[int, int]]:
    """addmm's three device tensors, checked as ttnn checks them, and the product's shape."""
    x = device_input(op, "input_tensor", input_tensor)
    a, b = device_input(op, "mat1_tensor", mat1_tensor), device_input(op, "mat2_tensor", mat2_tensor)
    supported = (DataType.BFLOAT16, DataType.FLOAT32, DataType.BFLOAT8_B)
    for name, t in (("input_tensor", x), ("mat1_tensor", a), ("mat2_tensor", b)):
        if t.dtype not in supported and (name != "input_tensor" or be != 0.0):
            raise MeshnnTypeError(
                f"ttnn.{op}: only ttnn.bfloat16, ttnn.float32 and ttnn.bfloat8_b types are supported for {name}"
            )
    if len(a.shape) != 2 or len(b.shape) != 2 or a.shape[1] != b.shape[0]:
        raise MeshnnValueError(
            f"ttnn.{op}: mat1_tensor {list(a.shape)} and mat2_tensor {list(b.shape)} must be 2-D and multiply"
        )
    shape = (a.shape[0], b.shape[1])
    if be != 0.0 and tuple(x.shape) != shape:
        raise MeshnnValueError(
            f"ttnn.{op}: input_tensor must have shape matching one of result of mat1_tensor @ mat2_tensor "
            f"(input_tensor {list(x.shape)}, the product {list(shape)})"
        )
    return x, a, b, shape


@register(kind=OpKind.MATMUL, family=OpFamily.MATMUL, golden=torch_golden(_golden_addmm))
def addmm(
    input_tensor: Tensor,
    mat1_tensor: Tensor,
    mat2_tensor: Tensor,
    *,
    alpha: float = 1.0,
    beta: float = 1.0,
    memory_config: MemoryConfig | None = None,
    dtype: DataType | None = None,
    program_config: object = None,
    compute_kernel_config: object = None,
    core_grid: object = None,
    output_tile: Tile | None = None,
    optional_output_tensor: Tensor | None = None,
) -> Tensor:
    """``beta * input_tensor + alpha * (mat1_tensor @ mat2_tensor)`` of 2-D tensors ``[M, K]`` and
    ``[K, N]``, ``input_tensor`` ``[M, N]`` (ignored when ``beta`` is 0), with ttnn's checks; the
    output is the product's (mat1's dtype, DRAM) unless ``dtype`` / ``memory_config`` /
    ``optional_output_tensor`` say otherwise."""
    op = "addmm"
    if output_tile is not None:
        raise MeshnnValueError(f"ttnn.{op}: output_tile must not be provided")
    al, be = _number(op, "alpha", alpha), _number(op, "beta", beta)
    if al == 0.0:
        raise MeshnnValueError(f"ttnn.{op}: alpha parameter cannot be 0")
    x, a, b, shape = _addmm_operands(op, input_tensor, mat1_tensor, mat2_tensor, be)
    mesh = same_mesh(op, {"input_tensor": x, "mat1_tensor": a, "mat2_tensor": b})
    if dtype is None and isinstance(optional_output_tensor, Tensor) and optional_output_tensor.is_allocated():
        dtype = optional_output_tensor.dtype
    spec = out_spec_like(a, shape=shape, dtype=dtype, memory_config=memory_config or DRAM_MEMORY_CONFIG, op=op)
    into = None
    if optional_output_tensor is not None:
        into = [output_into(op, mesh, optional_output_tensor, spec, a.storage.coords)]  # type: ignore[union-attr]

    in_specs = (x.spec, a.spec, b.spec)  # (the kernel holds no tensor: a trace must not keep it allocated)

    def kernel(in_rows, out_rows, coords: tuple[MeshCoordinate, ...]) -> None:
        xv, av, bv = (logical_values(r, sp) for r, sp in zip(in_rows, in_specs, strict=True))
        result = al * np.matmul(av.astype(np.float64), bv.astype(np.float64))
        if be != 0.0:
            result = result + be * xv
        write_values(out_rows[0], result.astype(np.float32), spec)

    attrs = {
        "alpha": al,
        "beta": be,
        "memory_config": spec.memory_config,
        "dtype": spec.dtype,
        "program_config": program_config,
        "compute_kernel_config": check_compute_kernel_config(op, compute_kernel_config),
        "core_grid": core_grid,
    }
    return launch(op, mesh, [x, a, b], [Output(spec)], kernel, into=into, rowwise=True, attrs=attrs)[0]


def _golden_sparse(torch, a, b, *_, sparsity=None, is_input_a_sparse=False, is_input_b_sparse=True, **__):
    return _sparse_products(torch, a, b, sparsity, is_input_a_sparse, is_input_b_sparse)


def _sparse_products(lib, a, b, mask, a_sparse: bool, b_sparse: bool):
    """The products a sparse matmul computes (``lib`` is torch or numpy; skipped ones are zeros)."""
    if a_sparse and b_sparse:  # [1, E, M, K] x [1, E, K, N], mask of E entries
        keep = (mask.reshape(-1) != 0).reshape(1, -1, 1, 1)
        return lib.matmul(a, b) * keep
    if b_sparse:  # [A, B, M, K] x [1, E, K, N], mask of A*B*E entries -> [A, B, 1, E, M, N]
        out = lib.matmul(a[:, :, None, None], b[0][None, None, None])
        keep = (mask != 0).reshape(a.shape[0], a.shape[1], 1, b.shape[1], 1, 1)
        return out * keep
    out = lib.matmul(a, b)  # [A, E, M, K] x [1, E, K, N], mask of A*E entries -> [A, E, M, N]
    keep = (mask.reshape(a.shape[0], a.shape[1]) != 0)[:, :, None, None]
    return out * keep


def _check_sparse_arguments(op: str, program_config: object, mask: Tensor, nnz: object, output_tile: object) -> None:
    """sparse_matmul's program config (1-D, in0 multicast), mask format, ``nnz`` and tile, as ttnn checks them."""
    if not isinstance(program_config, MatmulMultiCoreReuseMultiCast1DProgramConfig) or not program_config.mcast_in0:
        raise MeshnnTypeError(
            f"ttnn.{op}: program_config must be a ttnn.MatmulMultiCoreReuseMultiCast1DProgramConfig with "
            f"mcast_in0=True, got {program_config!r}"
        )
    if mask.dtype is not DataType.BFLOAT16 or mask.layout is not Layout.ROW_MAJOR:
        raise MeshnnValueError(f"ttnn.{op}: sparsity must be bfloat16 ROW_MAJOR, got {mask.dtype} {mask.layout}")
    if nnz is not None and (isinstance(nnz, bool) or not isinstance(nnz, int) or nnz < 0):
        raise MeshnnTypeError(f"ttnn.{op}: nnz must be an int >= 0 or None, got {nnz!r}")
    if output_tile is not None and not isinstance(output_tile, Tile):
        raise MeshnnTypeError(f"ttnn.{op}: output_tile must be a ttnn.Tile, got {output_tile!r}")


@register(
    kind=OpKind.MATMUL,
    family=OpFamily.MATMUL,
    device_operation="SparseMatmulDeviceOperation",
    golden=torch_golden(_golden_sparse),
)
def sparse_matmul(
    input_tensor_a: Tensor,
    input_tensor_b: Tensor,
    *,
    sparsity: Tensor,
    program_config: MatmulMultiCoreReuseMultiCast1DProgramConfig,
    nnz: int | None = None,
    is_input_a_sparse: bool = False,
    is_input_b_sparse: bool = True,
    memory_config: MemoryConfig | None = None,
    dtype: DataType | None = None,
    compute_kernel_config: object = None,
    core_grid: object = None,
    output_tile: Tile | None = None,
    optional_output_tensor: Tensor | None = None,
    global_cb: object = None,
    sub_device_id: object = None,
) -> Tensor:
    """The batched products of rank-4 ``input_tensor_a`` and ``input_tensor_b`` that ``sparsity``
    (bfloat16, ROW_MAJOR) marks non-zero, in ttnn's three modes (see the module's text); ``nnz``
    (how many the mask holds, which a device trusts to size its work) is checked as a count and
    recorded: the mask itself decides which products are computed."""
    op = "sparse_matmul"
    a, b = _operand(op, "input_tensor_a", input_tensor_a), _operand(op, "input_tensor_b", input_tensor_b)
    mask = device_input(op, "sparsity", sparsity)
    mesh = same_mesh(op, {"input_tensor_a": a, "input_tensor_b": b, "sparsity": mask})
    _check_sparse_arguments(op, program_config, mask, nnz, output_tile)
    shape = _sparse_shape(op, tuple(a.shape), tuple(b.shape), tuple(mask.shape), is_input_a_sparse, is_input_b_sparse)
    out_dtype = dtype or a.dtype
    config = memory_config or DRAM_MEMORY_CONFIG
    spec = TensorSpec(shape, out_dtype, Layout.TILE, tile=output_tile or a.spec.tile, memory_config=config)
    into = None
    if optional_output_tensor is not None:
        into = [output_into(op, mesh, optional_output_tensor, spec, a.storage.coords)]  # type: ignore[union-attr]

    in_specs = (a.spec, b.spec, mask.spec)  # (the kernel holds no tensor: a trace must not keep it allocated)

    def kernel(in_rows, out_rows, coords: tuple[MeshCoordinate, ...]) -> None:
        av, bv, mv = (logical_values(r, sp) for r, sp in zip(in_rows, in_specs, strict=True))
        products = [
            _sparse_products(np, av[i], bv[i], mv[i], is_input_a_sparse, is_input_b_sparse) for i in range(len(av))
        ]
        write_values(out_rows[0], np.stack(products).astype(np.float32), spec)

    attrs = {
        "program_config": program_config,
        "nnz": nnz,
        "is_input_a_sparse": is_input_a_sparse,
        "is_input_b_sparse": is_input_b_sparse,
        "memory_config": config,
        "dtype": out_dtype,
        "compute_kernel_config": check_compute_kernel_config(op, compute_kernel_config),
        "core_grid": core_grid,
        "global_cb": global_cb,
        "sub_device_id": sub_device_id,
    }
    return launch(op, mesh, [a, b, mask], [Output(spec)], kernel, into=into, rowwise=True, attrs=attrs)[0]


def _sparse_shape(op: str, a, b, mask, a_sparse: bool, b_sparse: bool) -> tuple[int, ...]:
    """The output shape of ttnn's supported modes, or a refusal naming the shapes."""
    ok = len(a) == 4 and len(b) == 4 and b[0] == 1 and a[3] == b[2]
    if ok and a_sparse and b_sparse and a[0] == 1 and a[1] == b[1] and math.prod(mask) == b[1]:
        return (1, b[1], a[2], b[3])
    if ok and b_sparse and not a_sparse and math.prod(mask) == a[0] * a[1] * b[1]:  # tt-metal: its volume
        return (a[0], a[1], 1, b[1], a[2], b[3])
    if ok and a_sparse and not b_sparse and a[1] == b[1] and math.prod(mask) == a[0] * a[1]:
        return (a[0], a[1], a[2], b[3])
    raise MeshnnValueError(
        f"ttnn.{op}: input_tensor_a {list(a)}, input_tensor_b {list(b)} and sparsity {list(mask)} are no supported "
        f"mode (is_input_a_sparse={a_sparse}, is_input_b_sparse={b_sparse})"
    )
