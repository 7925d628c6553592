"""``ttnn.experimental.deepseek.moe.deepseek_moe_gate``: DeepSeek-V3's MoE gate on one 16x16 face a
core: of 256 router logits, the 8 routed experts and their weights.

Per core (one batch of the ``[*, 16, 16]`` tensors, a 32x32 tile shard each), with ``x`` the logits
as given, ``b`` the bias and ``i`` the indices, both given TRANSPOSED (as tt-metal's kernel reads
them: it transposes the logits' tile and adds the bias tile as it is), so that expert ``e = 16 r + c``
(``x[r, c]``) has bias ``b[c, r]`` and id ``i[c, r]``:

- ``s = bf16(sigmoid(x))`` with ``enable_sigmoid`` (the kernel's 16-bit destination), else ``x``;
- ``v = bf16(s + b^T)`` (the FPU's add into the 16-bit destination);
- 8 groups of 32 experts (logit rows ``2g`` and ``2g + 1``), each ranked by ``bf16(v1 + v2)`` of its two
  largest ``v``; the 4 best groups kept (equal sums: the lower group first);
- of the kept 128, the 8 largest ``v`` (equal values: the lower expert first), largest first;
- their weights ``bf16(s_k * (scale / (sum(s) + eps)))``, the sum in float32 as the kernel's SFPU
  adds (pairs, then pairs of pairs), the reciprocal exact in float32.

Written: row 0, columns 0..7 of each core's ``output_tensor`` tile (bfloat16 weights) and
``output_indices_tensor`` tile (uint16 ids ``i^T[chosen]``); the rest of the two tiles keeps what it
held (the kernel packs its whole working tile there: scratch values no caller reads).  Both tensors
are returned.

tt-metal's checks (2026-06, ``DeepseekMoeGateDeviceOperation``): every tensor on device, one device;
logits, bias, output BFLOAT16, both index tensors UINT16; all sharded; bias and input indices of the
logits' shape, output indices of the output's; rank >= 2 with 256 elements in the last two dims;
bias / input-index shards of the logits' shard shape and orientation on grids containing the logits'
grid; output and output-index shard grids, shapes and orientations equal, containing the logits'
grid; 32x32 tiles and 32x32 shards.  ``eps`` / ``scaling_factor`` are floats (the kernel gets their
float32 bits); ``enable_sigmoid`` a bool.

May import: :mod:`meshnn.errors`, :mod:`meshnn.device`, :mod:`meshnn.formats`, :mod:`meshnn.mesh`,
:mod:`meshnn.tensor` and the ops' checks, launch, outputs, values, shards and registry.
"""

from __future__ import annotations

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.bfloat16 import round_to_bfloat16
from meshnn.formats.dtypes import DataType
from meshnn.mesh.coord import MeshCoordinate
from meshnn.ops.checks import device_input, same_mesh
from meshnn.ops.deepseek_decode.shards import (
    block_of,
    core_shards,
    logical_of,
    padded_2d,
    padded_shape_2d,
    shard_spec,
)
from meshnn.ops.launch import launch
from meshnn.ops.outputs import Output
from meshnn.ops.registry import OpKind, register
from meshnn.ops.values import logical_values, write_values
from meshnn.perf.desc import OpFamily
from meshnn.tensor.tensor import Tensor

OP = "experimental.deepseek.moe.deepseek_moe_gate"
GROUPS, KEPT, CHOSEN = 8, 4, 8
"""DeepSeek-V3's routing, fixed in the kernel: 8 groups of 32 experts, 4 kept, 8 experts chosen."""


def _bf16(values: np.ndarray) -> np.ndarray:
    return round_to_bfloat16(np.ascontiguousarray(values, dtype=np.float32))


def _largest(values: np.ndarray, k: int) -> np.ndarray:
    """Indices of the ``k`` largest along the last axis, largest first, equal values lower index first."""
    return np.argsort(-values, axis=-1, kind="stable")[..., :k]


def choose(v: np.ndarray) -> np.ndarray:
    """The chosen positions ``(n, 8)`` of ``n`` tokens' 256 bias-corrected scores ``v`` (bfloat16
    values): the 4 of 8 groups of 32 whose two largest ``v`` sum (rounded to bfloat16) largest
    (equal sums: the lower group), then the 8 largest ``v`` of those (equal values: the lower
    expert), largest first."""
    grouped = v.reshape(-1, GROUPS, 256 // GROUPS)
    top2 = -np.sort(-grouped, axis=-1)[..., :2]
    sums = _bf16(top2[..., 0] + top2[..., 1])
    keep = np.zeros(sums.shape, dtype=bool)
    np.put_along_axis(keep, _largest(sums, KEPT), True, axis=-1)
    return _largest(np.where(keep[..., None], grouped, -np.inf).reshape(v.shape), CHOSEN)


def gate(logits: np.ndarray, bias_t: np.ndarray, ids_t: np.ndarray, eps: float, scale: float, sigmoid: bool):
    """(weights float32 bfloat16 values, ids) ``(n, 8)`` of ``n`` faces ``(n, 16, 16)`` (bias and ids
    transposed, as given to the op): the module's arithmetic."""
    x = logits.astype(np.float32).reshape(-1, 256)
    s = _bf16(1.0 / (1.0 + np.exp(-x.astype(np.float64)))) if sigmoid else x
    bias = np.swapaxes(bias_t.reshape(-1, 16, 16), -1, -2).reshape(-1, 256).astype(np.float32)
    ids = np.swapaxes(ids_t.reshape(-1, 16, 16), -1, -2).reshape(-1, 256)
    v = _bf16(s + bias)
    chosen = choose(v)
    picked = np.take_along_axis(s, chosen, axis=-1).astype(np.float32)
    pairs = picked[:, 0::2] + picked[:, 1::2]
    total = (pairs[:, 0] + pairs[:, 1]) + (pairs[:, 2] + pairs[:, 3])
    factor = (np.float32(1.0) / (total + np.float32(eps))) * np.float32(scale)
    weights = _bf16(picked * factor[:, None].astype(np.float32))
    return weights, np.take_along_axis(ids, chosen, axis=-1)


def _float(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | np.floating | np.integer):
        raise MeshnnTypeError(f"ttnn.{OP}: {name} must be a float, got {value!r}")
    return float(np.float32(value))


_DTYPES = {
    "input_tensor": DataType.BFLOAT16,
    "bias_tensor": DataType.BFLOAT16,
    "input_indices_tensor": DataType.UINT16,
    "output_tensor": DataType.BFLOAT16,
    "output_indices_tensor": DataType.UINT16,
}


def _check(named: dict[str, Tensor]) -> None:
    """tt-metal's validate() (module text), in its order."""
    for name, tensor in named.items():
        if tensor.dtype is not _DTYPES[name]:
            raise MeshnnValueError(f"ttnn.{OP}: {name} must be {_DTYPES[name].name}, got {tensor.dtype}")
    specs = {name: shard_spec(OP, name, tensor) for name, tensor in named.items()}
    x, out = named["input_tensor"], named["output_tensor"]
    shape = tuple(x.shape)
    for name, like in (("bias_tensor", x), ("input_indices_tensor", x), ("output_indices_tensor", out)):
        if tuple(named[name].shape) != tuple(like.shape):
            raise MeshnnValueError(
                f"ttnn.{OP}: {name} {list(named[name].shape)} must have the shape of "
                f"{'input_tensor' if like is x else 'output_tensor'} {list(like.shape)}"
            )
    if len(shape) < 2 or shape[-1] * shape[-2] != 256:
        raise MeshnnValueError(f"ttnn.{OP}: input_tensor must have 256 elements per shard (last two dims), got {shape}")
    grid = specs["input_tensor"].grid
    for name in ("bias_tensor", "input_indices_tensor"):
        other = specs[name]
        if other.shape != specs["input_tensor"].shape or other.orientation is not specs["input_tensor"].orientation:
            raise MeshnnValueError(f"ttnn.{OP}: input_tensor and {name} shard shapes and orientations must match")
        if not all(other.grid.contains(core) for core in grid.cores()):
            raise MeshnnValueError(f"ttnn.{OP}: {name}'s shard grid must contain input_tensor's shard grid")
    o, oi = specs["output_tensor"], specs["output_indices_tensor"]
    if o.grid != oi.grid or o.shape != oi.shape or o.orientation is not oi.orientation:
        raise MeshnnValueError(f"ttnn.{OP}: output and output-indices shard grids, shapes and orientations must match")
    if not all(o.grid.contains(core) for core in grid.cores()):
        raise MeshnnValueError(f"ttnn.{OP}: output shard grid must contain the input compute grid")
    for name, tensor in named.items():
        if tuple(tensor.spec.tile.tile_shape) != (32, 32):
            raise MeshnnValueError(f"ttnn.{OP}: {name}'s tile must be 32x32, got {list(tensor.spec.tile.tile_shape)}")
    for name in ("input_tensor", "output_tensor"):
        if tuple(specs[name].shape) != (32, 32):
            raise MeshnnValueError(f"ttnn.{OP}: {name}'s shard shape must be 32x32, got {list(specs[name].shape)}")


def _placement(named: dict[str, Tensor]) -> list[tuple[int, int, int, int, tuple[slice, slice]]]:
    """Per active core: (logits face, bias face, indices face, output shard) indices and the output
    shard's block: each core reads its own shard of every tensor."""
    spec = {name: t.spec.memory_config.shard_spec for name, t in named.items()}
    views = {name: padded_shape_2d(t.spec) for name, t in named.items()}
    held = {name: core_shards(spec[name], views[name]) for name in named}
    faces = {name: int(np.prod(tuple(named[name].shape)[:-2], dtype=np.int64)) for name in named}
    result = []
    for core, k in held["input_tensor"].items():
        if k >= faces["input_tensor"]:
            continue  # a padding shard (the kernel's result there lands in no logical element)
        bias_k, ids_k = held["bias_tensor"].get(core), held["input_indices_tensor"].get(core)
        out_k = held["output_tensor"].get(core)
        if bias_k is None or ids_k is None or out_k is None:
            raise MeshnnValueError(f"ttnn.{OP}: core {core} holds a logits shard but no bias, indices or output shard")
        block = block_of(out_k, views["output_tensor"], (32, 32))
        result.append((k, bias_k, ids_k, out_k, block))
    return result


@register(OP, kind=OpKind.SAMPLING, family=OpFamily.REDUCTION, device_operation="DeepseekMoeGateDeviceOperation")
def deepseek_moe_gate(
    input_tensor: Tensor,
    *,
    bias_tensor: Tensor,
    input_indices_tensor: Tensor,
    output_tensor: Tensor,
    output_indices_tensor: Tensor,
    eps: float = 1e-20,
    scaling_factor: float = 2.5,
    enable_sigmoid: bool = False,
) -> tuple[Tensor, Tensor]:
    """(output_tensor, output_indices_tensor), written with each core's 8 routed experts' weights
    and ids (see the module's text)."""
    given = {
        "input_tensor": input_tensor,
        "bias_tensor": bias_tensor,
        "input_indices_tensor": input_indices_tensor,
        "output_tensor": output_tensor,
        "output_indices_tensor": output_indices_tensor,
    }
    named = {name: device_input(OP, name, tensor) for name, tensor in given.items()}
    mesh = same_mesh(OP, named)
    eps_value, scale = _float("eps", eps), _float("scaling_factor", scaling_factor)
    if not isinstance(enable_sigmoid, bool | np.bool_):
        raise MeshnnTypeError(f"ttnn.{OP}: enable_sigmoid must be a bool, got {enable_sigmoid!r}")
    sigmoid = bool(enable_sigmoid)
    _check(named)
    places = _placement(named)
    specs = [t.spec for t in named.values()]
    out_spec, idx_spec = named["output_tensor"].spec, named["output_indices_tensor"].spec

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], _coords: tuple[MeshCoordinate, ...]) -> None:
        values = [logical_values(r, s) for r, s in zip(in_rows, specs, strict=True)]
        weights_out = np.array(values[3], dtype=np.float32)
        ids_out = np.array(values[4], dtype=np.float32)
        for device in range(weights_out.shape[0]):
            faces = [v[device].reshape(-1, 16, 16) for v in values[:3]]
            picks = [(faces[0][k], faces[1][b], faces[2][i]) for k, b, i, _o, _blk in places]
            if not picks:
                continue
            weights, ids = gate(*(np.stack(p) for p in zip(*picks, strict=True)), eps_value, scale, sigmoid)
            w2d, i2d = padded_2d(weights_out[device], out_spec), padded_2d(ids_out[device], idx_spec)
            for n, (*_k, block) in enumerate(places):
                w2d[block][0, :CHOSEN] = weights[n]
                i2d[block][0, :CHOSEN] = ids[n]
            weights_out[device] = logical_of(w2d, out_spec)
            ids_out[device] = logical_of(i2d, idx_spec)
        write_values(out_rows[0], weights_out, out_spec)
        write_values(out_rows[1], ids_out, idx_spec)

    attrs = {"eps": eps_value, "scaling_factor": scale, "enable_sigmoid": sigmoid}
    outputs = [Output(out_spec), Output(idx_spec)]
    into = [named["output_tensor"], named["output_indices_tensor"]]
    result = launch(OP, mesh, list(named.values()), outputs, kernel, into=into, rowwise=True, attrs=attrs)
    return result[0], result[1]
