"""The on-device ops of a decode loop's tail (``ttnn.argmax`` and ``ttnn.topk`` are in
:mod:`meshnn.ops.reduce`): ``ttnn.sampling`` (top-k / top-p / temperature sampling of
each user's candidates) and ``ttnn.plus_one`` (the in-place step of the decode positions).

``sampling``: per user ``u`` (a row of the ``[1, 1, 32, W]`` candidates), the values divided by
``temp[u]`` are softmaxed, sorted (ties: the lower index first), cut to the ``k[u]`` largest, then to
the shortest prefix whose cumulative probability reaches ``p[u]`` (at least one: ``p = 0`` is
argmax), renormalised, and one is drawn with a uniform number: from numpy's PCG64 seeded with
``seed``, or (``seed=None``) from the user's stream that ``ttnn.manual_seed`` sets
(:mod:`meshnn.ops.reduce.manual_seed`; the device's random stream is not reproduced: the same
seeds give the same tokens here, not the device's).  The output is ``input_indices_tensor[u, drawn]``,
``[1, 1, 1, 32]`` UINT32.

May import: :mod:`meshnn.errors`, :mod:`meshnn.formats`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor`,
the ops' launch, checks, outputs, values and reduce.manual_seed.
"""

from __future__ import annotations

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.ops.checks import device_input, int_arg, same_mesh
from meshnn.ops.launch import launch
from meshnn.ops.outputs import Output, output_into
from meshnn.ops.reduce.manual_seed import uniforms
from meshnn.ops.registry import OpKind, register
from meshnn.ops.values import logical_values, write_values
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import TensorSpec
from meshnn.tensor.tensor import Tensor


def _param(op: str, name: str, tensor: object, dtypes: tuple[DataType, ...], users: int) -> Tensor:
    t = device_input(op, name, tensor)
    if t.dtype not in dtypes or t.layout is not Layout.ROW_MAJOR or t.logical_volume() < users:
        want = " or ".join(d.name for d in dtypes)
        raise MeshnnValueError(
            f"ttnn.{op}: {name} must be a ROW_MAJOR {want} tensor of {users} values, got {list(t.shape)} {t.dtype.name}"
        )
    return t


def _sampling_inputs(
    op: str, input_values_tensor: object, input_indices_tensor: object, k: object, p: object, temp: object
) -> tuple[Tensor, Tensor, dict[str, Tensor]]:
    """The candidates' values and indices and the per-user ``k``, ``p``, ``temp`` tensors, checked."""
    values_t = device_input(op, "input_values_tensor", input_values_tensor)
    if values_t.dtype is not DataType.BFLOAT16 or values_t.layout is not Layout.TILE:
        raise MeshnnTypeError(
            f"ttnn.{op}: input_values_tensor must be BFLOAT16 TILE, got {values_t.dtype.name} {values_t.layout}"
        )
    shape = tuple(values_t.shape)
    if len(shape) != 4 or shape[:2] != (1, 1) or shape[2] != 32:
        raise MeshnnValueError(f"ttnn.{op}: input_values_tensor must be [1, 1, 32, W] (32 users), got {list(shape)}")
    indices_t = device_input(op, "input_indices_tensor", input_indices_tensor)
    if tuple(indices_t.shape) != shape or indices_t.dtype not in (DataType.INT32, DataType.UINT32, DataType.UINT16):
        raise MeshnnValueError(
            f"ttnn.{op}: input_indices_tensor must be an integer tensor of the values' shape {list(shape)}"
        )
    params = {
        "k": _param(op, "k", k, (DataType.UINT32, DataType.INT32), 32),
        "p": _param(op, "p", p, (DataType.BFLOAT16, DataType.FLOAT32), 32),
        "temp": _param(op, "temp", temp, (DataType.BFLOAT16, DataType.FLOAT32), 32),
    }
    return values_t, indices_t, params


@register(kind=OpKind.SAMPLING, family=OpFamily.COPY, device_operation="SamplingDeviceOperation", modelled=False)
def sampling(
    input_values_tensor: Tensor,
    input_indices_tensor: Tensor,
    k: Tensor,
    p: Tensor,
    temp: Tensor,
    *,
    seed: int | None = None,
    sub_core_grids: object = None,
    output_tensor: Tensor | None = None,
    queue_id: int = 0,
    optional_output_tensor: Tensor | None = None,
) -> Tensor:
    """One token per user drawn from its candidates (see the module docstring)."""
    op = "sampling"
    values_t, indices_t, params = _sampling_inputs(op, input_values_tensor, input_indices_tensor, k, p, temp)
    seed = None if seed is None else int_arg(op, "seed", seed)
    if output_tensor is not None and optional_output_tensor is not None:
        raise MeshnnValueError(f"ttnn.{op}: give output_tensor (optional_output_tensor is its older name), not both")
    optional_output_tensor = output_tensor if output_tensor is not None else optional_output_tensor
    mesh = same_mesh(op, {"input_values_tensor": values_t, "input_indices_tensor": indices_t, **params})
    spec = TensorSpec(
        (1, 1, 1, 32),
        DataType.UINT32,
        Layout.ROW_MAJOR,
        memory_config=values_t.spec.memory_config if not values_t.spec.memory_config.is_sharded() else None,
    )
    into = (
        None
        if optional_output_tensor is None
        else [output_into(op, mesh, optional_output_tensor, spec, values_t.storage.coords)]
    )  # type: ignore[union-attr]
    inputs = [values_t, indices_t, *params.values()]
    specs = [t.spec for t in inputs]
    draws = uniforms(mesh, seed, len(values_t.storage.coords))  # type: ignore[union-attr]  (taken at the call)

    def kernel(in_rows, out_rows, coords) -> None:
        vals = logical_values(in_rows[0], specs[0])[:, 0, 0]  # (n, 32, W)
        idx = np.asarray(logical_values(in_rows[1], specs[1], as_float=False))[:, 0, 0].astype(np.int64)
        ks, ps, ts = (
            np.asarray(logical_values(r, s)).reshape(vals.shape[0], -1)[:, :32]
            for r, s in zip(in_rows[2:], specs[2:], strict=True)
        )
        tokens = _draw(vals, idx, ks.astype(np.int64), ps.astype(np.float32), ts.astype(np.float32), draws)
        write_values(out_rows[0], tokens.astype(np.uint32).reshape(-1, 1, 1, 1, 32), spec)

    attrs = {"seed": seed, "sub_core_grids": sub_core_grids}  # (the draws are data: not in the program's key)
    return launch(op, mesh, inputs, [Output(spec)], kernel, queue_id=queue_id, into=into, attrs=attrs)[0]


def _draw(values: np.ndarray, indices: np.ndarray, ks, ps, temps, draws: np.ndarray) -> np.ndarray:
    """``(n, 32)`` drawn indices (see the module docstring)."""
    n, _, width = values.shape
    temps = np.where(temps == 0, 1.0, temps)
    scaled = values / temps[..., None]
    order = np.argsort(-scaled, axis=-1, kind="stable")
    ranked = np.take_along_axis(scaled, order, axis=-1)
    probs = np.exp(ranked - ranked[..., :1])
    probs /= probs.sum(axis=-1, keepdims=True)
    rank = np.arange(width)
    keep = rank < np.clip(ks, 1, width)[..., None]
    cumulative = np.cumsum(np.where(keep, probs, 0.0), axis=-1)
    keep &= (cumulative - np.where(keep, probs, 0.0) < ps[..., None]) | (rank == 0)
    kept = np.where(keep, probs, 0.0)
    kept /= kept.sum(axis=-1, keepdims=True)
    draws = draws[:n]
    chosen = np.minimum((np.cumsum(kept, axis=-1) <= draws[..., None]).sum(axis=-1), keep.sum(axis=-1) - 1)
    picked = np.take_along_axis(order, chosen[..., None], axis=-1)
    return np.take_along_axis(indices, picked, axis=-1)[..., 0]


@register(kind=OpKind.SAMPLING, family=OpFamily.COPY, device_operation="PlusOneDeviceOperation", modelled=False)
def plus_one(
    input_tensor: Tensor, sub_core_grids: object = None, skip_negative_entries: bool = False, *, queue_id: int = 0
) -> Tensor:
    """Add 1 to every entry of an INT32 / UINT32 ROW_MAJOR tensor, in place (its address kept);
    with ``skip_negative_entries`` a negative entry (a finished user's position) stays as it is."""
    op = "plus_one"
    x = device_input(op, "input_tensor", input_tensor)
    if x.dtype not in (DataType.INT32, DataType.UINT32):
        raise MeshnnTypeError(f"ttnn.{op}: Only INT32 and UINT32 are supported (input_tensor is {x.dtype.name})")
    if x.layout is not Layout.ROW_MAJOR or not 1 <= len(x.shape) <= 4:
        raise MeshnnValueError(
            f"ttnn.{op}: Only a ROW_MAJOR tensor of 1 to 4 dimensions is supported, got {list(x.shape)} {x.layout}"
        )
    if not isinstance(skip_negative_entries, bool):
        raise MeshnnTypeError(f"ttnn.{op}: skip_negative_entries must be a bool, got {skip_negative_entries!r}")
    mesh = same_mesh(op, {"input_tensor": x})

    x_spec = x.spec  # (the kernel holds no tensor: a trace must not keep it allocated)

    def kernel(in_rows, out_rows, coords) -> None:
        values = np.asarray(logical_values(in_rows[0], x_spec, as_float=False))
        stepped = np.where(values < 0, values, values + 1) if skip_negative_entries else values + 1
        write_values(out_rows[0], stepped.astype(values.dtype), x_spec)

    attrs = {"skip_negative_entries": skip_negative_entries, "sub_core_grids": sub_core_grids}
    launch(op, mesh, [x], [Output(x.spec)], kernel, queue_id=queue_id, into=[x], attrs=attrs)
    return x
