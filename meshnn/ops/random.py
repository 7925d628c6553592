"""Random tensors on a device, as ttnn makes them: ``ttnn.rand`` (a new tensor uniform on
``[low, high)``), ``ttnn.randn`` (tt-metal 2026's: a new tensor of standard normal values),
``ttnn.uniform`` (an existing tensor refilled in place, uniform on ``[from, to)``) and
``ttnn.bernoulli`` (1 with the probability each input element holds, else 0).

Seeds follow ttnn's rule: ``seed=0`` draws a fresh seed for every call (results differ from call to
call); any other seed gives the same values every time for the same shape.  The stream is numpy's
PCG64 seeded with ``seed``, not the device's generator, so values do not match a device's bit for
bit.  ``rand`` draws float32 values in TILE and converts them to the dtype and layout asked, as ttnn
does (integer dtypes get the values truncated toward zero).  Every device of a mesh gets the same
values (the tensor is replicated).

May import: :mod:`meshnn.errors`, :mod:`meshnn.formats`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor`
and the ops' registry, checks, config, launch, outputs and values modules.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.mesh.coord import MeshCoordinate
from meshnn.mesh.mesh_device import MeshDevice
from meshnn.ops.checks import device_input, same_mesh
from meshnn.ops.config import check_compute_kernel_config
from meshnn.ops.launch import launch
from meshnn.ops.outputs import Output, output_into
from meshnn.ops.registry import OpKind, register, torch_golden
from meshnn.ops.values import logical_values, write_values
from meshnn.perf.desc import OpFamily
from meshnn.tensor.memory_config import DRAM_MEMORY_CONFIG
from meshnn.tensor.spec import MemoryConfig, TensorSpec
from meshnn.tensor.tensor import Tensor


def _generator(seed: int) -> np.random.Generator:
    """ttnn's seed rule: 0 draws a fresh seed, any other is used as it is."""
    return np.random.default_rng(None if seed == 0 else seed)


def _draws(rng: np.random.Generator, low: float, high: float, shape: tuple[int, ...], dtype: DataType) -> np.ndarray:
    """float32 values uniform on ``[low, high)``; for a bfloat16 tensor cut to bfloat16 toward zero
    (the device's packer truncates), so that none rounds up to ``high``."""
    values = rng.uniform(low, high, shape).astype(np.float32)
    if dtype is DataType.BFLOAT16:
        values = (values.view(np.uint32) & np.uint32(0xFFFF0000)).view(np.float32)
    return values


def _seed(op: str, seed: object) -> int:
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or not 0 <= seed < 2**32:
        raise MeshnnTypeError(f"ttnn.{op}: seed must be an int in [0, 2**32), got {seed!r}")
    return int(seed)


def _range(op: str, low: object, high: object, names: tuple[str, str]) -> tuple[float, float]:
    for name, value in zip(names, (low, high), strict=True):
        if isinstance(value, bool) or not isinstance(value, int | float | np.number):
            raise MeshnnTypeError(f"ttnn.{op}: {name} must be a number, got {value!r}")
    if not float(low) < float(high):
        raise MeshnnValueError(f"ttnn.{op}: {names[0]} ({low}) must be < {names[1]} ({high})")
    return float(low), float(high)


def _dims(op: str, shape: object) -> tuple[int, ...]:
    if not isinstance(shape, Sequence) or isinstance(shape, str):
        raise MeshnnTypeError(f"ttnn.{op}: shape must be a list or tuple of ints, got {shape!r}")
    dims = tuple(shape)
    if not all(isinstance(d, int | np.integer) and not isinstance(d, bool) and d >= 0 for d in dims):
        raise MeshnnTypeError(f"ttnn.{op}: shape must hold non-negative ints, got {list(dims)}")
    return tuple(int(d) for d in dims)


def _golden_rand(torch, shape, *_, low=0.0, high=1.0, **__):
    return torch.rand(tuple(shape)) * (high - low) + low


@register(
    kind=OpKind.RANDOM,
    family=OpFamily.COPY,
    device_operation="RandDeviceOperation",
    golden=torch_golden(_golden_rand),
    modelled=False,
)
def rand(
    shape: Sequence[int],
    device: MeshDevice,
    *,
    dtype: DataType = DataType.BFLOAT16,
    layout: Layout = Layout.TILE,
    memory_config: MemoryConfig = DRAM_MEMORY_CONFIG,
    low: float = 0.0,
    high: float = 1.0,
    seed: int = 0,
) -> Tensor:
    """A new device tensor of ``shape`` with values uniform on ``[low, high)``."""
    op = "rand"
    dims = _dims(op, shape)
    if not isinstance(device, MeshDevice):
        raise MeshnnTypeError(f"ttnn.{op}: device must be a ttnn device, got {device!r}")
    if not isinstance(dtype, DataType):
        raise MeshnnTypeError(f"ttnn.{op}: dtype must be a ttnn DataType, got {dtype!r}")
    if not isinstance(layout, Layout):
        raise MeshnnTypeError(f"ttnn.{op}: layout must be a ttnn Layout, got {layout!r}")
    if not isinstance(memory_config, MemoryConfig):
        raise MeshnnTypeError(f"ttnn.{op}: memory_config must be a ttnn.MemoryConfig, got {memory_config!r}")
    lo, hi = _range(op, low, high, ("low", "high"))
    rng = _generator(_seed(op, seed))
    spec = TensorSpec(dims, dtype, layout, memory_config=memory_config)

    def draw() -> np.ndarray:
        values = _draws(rng, lo, hi, dims, dtype)
        return np.trunc(values) if dtype.is_integer else values

    attrs = {"dtype": dtype, "layout": layout, "memory_config": memory_config, "low": lo, "high": hi, "seed": seed}
    return _new_random(op, device, spec, draw, attrs)


def _new_random(op: str, device: MeshDevice, spec: TensorSpec, draw: Callable[[], np.ndarray], attrs: dict) -> Tensor:
    """A new tensor of ``spec`` on every local device of ``device``, one program holding ``draw()``'s
    values (drawn once a run, the same on every device)."""
    device.check_open()

    def kernel(in_rows, out_rows, coords: tuple[MeshCoordinate, ...]) -> None:
        write_values(out_rows[0], np.broadcast_to(draw(), (out_rows[0].shape[0], *spec.shape)), spec)

    coords = tuple(device.local)
    return launch(op, device, [], [Output(spec, coords)], kernel, coords=coords, attrs=attrs)[0]


def _golden_randn(torch, shape, *_, **__):
    return torch.randn(tuple(shape))


@register(
    kind=OpKind.RANDOM,
    family=OpFamily.COPY,
    device_operation="RandnDeviceOperation",
    golden=torch_golden(_golden_randn),
    modelled=False,
)
def randn(
    shape: Sequence[int],
    device: MeshDevice,
    *,
    dtype: DataType = DataType.BFLOAT16,
    layout: Layout = Layout.TILE,
    memory_config: MemoryConfig = DRAM_MEMORY_CONFIG,
    compute_kernel_config: object = None,
    seed: int | None = None,
) -> Tensor:
    """A new device tensor of ``shape`` with standard normal values (tt-metal 2026's ``ttnn.randn``:
    bfloat16 or float32, interleaved; ``seed=None`` draws a fresh stream, a seed repeats its values),
    drawn in float32 and rounded into ``dtype``."""
    op = "randn"
    dims = _dims(op, shape)
    if not isinstance(device, MeshDevice):
        raise MeshnnTypeError(f"ttnn.{op}: device must be a ttnn device, got {device!r}")
    if dtype not in (DataType.BFLOAT16, DataType.FLOAT32):
        raise MeshnnTypeError(f"ttnn.{op}: dtype must be ttnn.bfloat16 or ttnn.float32, got {dtype!r}")
    if not isinstance(layout, Layout):
        raise MeshnnTypeError(f"ttnn.{op}: layout must be a ttnn Layout, got {layout!r}")
    if not isinstance(memory_config, MemoryConfig) or memory_config.is_sharded():
        raise MeshnnValueError(f"ttnn.{op}: memory_config must be interleaved (DRAM or L1), got {memory_config!r}")
    kernel_config = check_compute_kernel_config(op, compute_kernel_config)
    rng = np.random.default_rng(None if seed is None else _seed(op, seed))
    spec = TensorSpec(dims, dtype, layout, memory_config=memory_config)
    attrs = {"dtype": dtype, "layout": layout, "memory_config": memory_config, "seed": seed}
    attrs["compute_kernel_config"] = kernel_config
    return _new_random(op, device, spec, lambda: rng.standard_normal(dims, dtype=np.float32), attrs)


def _golden_uniform(torch, input, from_=0.0, to=1.0, *_, **__):
    return torch.empty_like(input).uniform_(from_, to)


@register(
    kind=OpKind.RANDOM,
    family=OpFamily.COPY,
    device_operation="UniformDeviceOperation",
    golden=torch_golden(_golden_uniform),
    modelled=False,
)
def uniform(
    input: Tensor,
    from_: float = 0.0,
    to: float = 1.0,
    seed: int = 0,
    *,
    memory_config: MemoryConfig | None = None,
    compute_kernel_config: object = None,
    **given: object,
) -> Tensor:
    """``input`` refilled in place with values uniform on ``[from, to)``; returns ``input``.  ttnn
    names the lower bound ``from`` (a Python keyword: give it by position, or as ``from=`` in a
    ``**`` mapping; ``from_`` here)."""
    op = "uniform"
    unknown = sorted(set(given) - {"from"})
    if unknown:
        raise MeshnnTypeError(f"ttnn.{op}() got an unexpected keyword argument {unknown[0]!r}")
    from_ = given.get("from", from_)  # type: ignore[assignment]
    tensor = device_input(op, "input", input)
    mesh = same_mesh(op, {"input": tensor})
    if tensor.layout is not Layout.TILE:
        raise MeshnnValueError(f"ttnn.{op}: Uniform: Input tensor must be tilized (input is {tensor.layout})")
    if tensor.dtype not in (DataType.BFLOAT16, DataType.FLOAT32):
        raise MeshnnTypeError(f"ttnn.{op}: input must be bfloat16 or float32, got {tensor.dtype}")
    lo, hi = _range(op, from_, to, ("from", "to"))
    rng = _generator(_seed(op, seed))
    config = check_compute_kernel_config(op, compute_kernel_config)
    shape = tuple(tensor.shape)

    tensor_dtype = tensor.dtype  # (the kernel holds no tensor: a trace must not keep it allocated)
    tensor_spec = tensor.spec

    def kernel(in_rows, out_rows, coords: tuple[MeshCoordinate, ...]) -> None:
        values = _draws(rng, lo, hi, shape, tensor_dtype)
        write_values(out_rows[0], np.broadcast_to(values, (out_rows[0].shape[0], *shape)), tensor_spec)

    attrs = {"from": lo, "to": hi, "seed": seed, "compute_kernel_config": config}
    into = [output_into(op, mesh, tensor, tensor.spec, tensor.storage.coords)]  # type: ignore[union-attr]
    launch(op, mesh, [], [Output(tensor.spec)], kernel, coords=tensor.storage.coords, into=into, attrs=attrs)  # type: ignore[union-attr]
    return tensor


def _golden_bernoulli(torch, input, *_, **__):
    return torch.bernoulli(input)


@register(
    kind=OpKind.RANDOM,
    family=OpFamily.COPY,
    device_operation="BernoulliDeviceOperation",
    golden=torch_golden(_golden_bernoulli),
    modelled=False,
)
def bernoulli(
    input: Tensor,
    seed: int = 0,
    *,
    output: Tensor | None = None,
    dtype: DataType | None = None,
    memory_config: MemoryConfig | None = None,
    compute_kernel_config: object = None,
) -> Tensor:
    """1 where a uniform draw falls below the input's value (a probability), else 0; in ``dtype``
    (default float32), TILE, or into ``output``."""
    op = "bernoulli"
    tensor = device_input(op, "input", input)
    mesh = same_mesh(op, {"input": tensor})
    if tensor.layout is not Layout.TILE:
        raise MeshnnValueError(f"ttnn.{op}: Bernoulli: Input tensor must be tilized (input is {tensor.layout})")
    floats = (DataType.BFLOAT16, DataType.FLOAT32)
    if tensor.dtype not in floats:
        raise MeshnnTypeError(f"ttnn.{op}: input must be bfloat16 or float32, got {tensor.dtype}")
    if dtype is not None and dtype not in floats:
        raise MeshnnTypeError(f"ttnn.{op}: dtype must be bfloat16 or float32, got {dtype!r}")
    if memory_config is not None and not isinstance(memory_config, MemoryConfig):
        raise MeshnnTypeError(f"ttnn.{op}: memory_config must be a ttnn.MemoryConfig, got {memory_config!r}")
    rng = _generator(_seed(op, seed))
    config = check_compute_kernel_config(op, compute_kernel_config)
    target = output.dtype if isinstance(output, Tensor) and output.is_allocated() and dtype is None else dtype
    spec = TensorSpec(
        tuple(tensor.shape),
        target or DataType.FLOAT32,
        Layout.TILE,
        memory_config=memory_config or tensor.memory_config(),
    )
    into = None if output is None else [output_into(op, mesh, output, spec, tensor.storage.coords)]  # type: ignore[union-attr]

    tensor_spec = tensor.spec  # (the kernel holds no tensor: a trace must not keep it allocated)

    def kernel(in_rows, out_rows, coords: tuple[MeshCoordinate, ...]) -> None:
        p = logical_values(in_rows[0], tensor_spec)
        draws = rng.random(p.shape[1:], dtype=np.float32)
        write_values(out_rows[0], (draws < p).astype(np.float32), spec)

    attrs = {"seed": seed, "dtype": spec.dtype, "memory_config": spec.memory_config, "compute_kernel_config": config}
    return launch(op, mesh, [tensor], [Output(spec)], kernel, into=into, attrs=attrs)[0]
