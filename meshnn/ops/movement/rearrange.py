"""The kernels every data movement op runs: a *rearrangement* (each device's shard decoded to
its logical values, rearranged with numpy, encoded into the output's format), a *copy* (the
bytes as they are, into a buffer of another memory config: a device's bytes are in host page
order whatever its memory config; made from the input's memo while its bytes are still a deferred
write of those values, :func:`~meshnn.ops.values.copied_values`) and a *join of whole tiles*
(tensors of one tile format joined where no tile straddles two of them: their tiles' bytes, in the
output's page order).

May import: :mod:`meshnn.mesh`, :mod:`meshnn.tensor` and the ops' checks, launch, memo, outputs,
tile_rows and values modules.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from meshnn.formats.codec import encode
from meshnn.mesh.coord import MeshCoordinate
from meshnn.ops.checks import same_mesh
from meshnn.ops.launch import launch
from meshnn.ops.memo import settled
from meshnn.ops.outputs import Output
from meshnn.ops.tile_rows import tile_grid
from meshnn.ops.values import copied_values, logical_values, write_values
from meshnn.tensor.spec import TensorSpec
from meshnn.tensor.tensor import Tensor


def rearranged(
    op: str,
    tensor: Tensor,
    spec: TensorSpec,
    rearrange: Callable[..., np.ndarray],
    extra: Sequence[Tensor] = (),
    *,
    new_values: bool = False,
    into: Tensor | None = None,
    tile_pad: float | None = None,
    source_spec: TensorSpec | None = None,
    attrs: Mapping[str, object] | None = None,
) -> Tensor:
    """Decode every device's shard, ``rearrange`` the stacked (device-first) values, encode.
    ``new_values``: ``rearrange`` adds values of its own (pad's), which the output dtype rounds.
    ``extra``: more inputs, their values passed after the first's.  ``into``: a preallocated
    output of ``spec`` (checked by the caller) written instead of a new one.  ``tile_pad``: the
    value a TILE output's tile padding holds (its bytes beyond the logical shape; else zeros).
    ``source_spec``: the spec ``tensor``'s bytes are decoded as (the same bytes under another
    shape, such as a TILE tensor's padded shape, so its padding is read too).  ``attrs``: more of what the op
    was configured with, for the observers (permute's ``dims``)."""
    inputs = [tensor, *extra]
    mesh = same_mesh(op, {f"input {i}": t for i, t in enumerate(inputs)})
    specs = [t.spec for t in inputs]
    if source_spec is not None:
        specs[0] = source_spec
    # values of spec's (non-block) dtype, only moved: already what the output's bytes decode to
    exact = not new_values and not spec.dtype.is_block_float and all(s.dtype is spec.dtype for s in specs)

    several = bool(extra)  # (the kernel holds no tensor: a trace must not keep it allocated)

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]) -> None:
        values = [logical_values(r, s, as_float=False) for r, s in zip(in_rows, specs, strict=True)]
        result = rearrange(*values) if several else rearrange(values[0])
        if tile_pad is None:
            write_values(out_rows[0], np.ascontiguousarray(result), spec, exact=exact)
            return
        kind = {"tile": spec.tile, "pad_value": tile_pad}
        for row, values_of_row in zip(out_rows[0], result, strict=True):
            row[: spec.compute_packed_buffer_size_bytes()] = encode(values_of_row, spec.dtype, spec.layout, **kind)

    attrs = {"memory_config": spec.memory_config, "dtype": spec.dtype, **(attrs or {})}
    targets = None if into is None else [into]
    memos = into is None  # an in-place write reads its target's bytes as they are
    return launch(op, mesh, inputs, [Output(spec)], kernel, rowwise=True, reads_memos=memos, attrs=attrs, into=targets)[
        0
    ]


def copied(op: str, tensor: Tensor, spec: TensorSpec) -> Tensor:
    """A byte-for-byte copy into a buffer of ``spec`` (same bytes, other memory config); a copy
    between a sharded ROW_MAJOR tensor padded to its shard width and an unpadded one moves values."""
    if tuple(spec.encoded_shape) != tuple(tensor.spec.encoded_shape):
        return rearranged(op, tensor, spec, lambda x: x)
    mesh = same_mesh(op, {"input_tensor": tensor})
    size = spec.compute_packed_buffer_size_bytes()

    tensor_spec = tensor.spec  # (the kernel holds no tensor: a trace must not keep it allocated)

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]) -> None:
        if not copied_values(in_rows[0], out_rows[0], tensor_spec, spec):
            out_rows[0][:, :size] = settled(in_rows[0])[:, :size]

    attrs = {"memory_config": spec.memory_config, "dtype": spec.dtype}
    return launch(op, mesh, [tensor], [Output(spec)], kernel, rowwise=True, reads_memos=True, attrs=attrs)[0]


def joined_tiles(op: str, tensors: Sequence[Tensor], spec: TensorSpec, axis: int) -> Tensor | None:
    """``tensors`` joined along ``axis`` as whole tiles: each one's bytes cut into runs of the
    tiles after ``axis`` and laid side by side in the output's page order (the same bytes as
    decoding, joining and encoding, block floats included: a tile's bytes hold its values alone).
    None when a tile holds padding, the tile formats differ, or the output's is another."""
    grids = [tile_grid(t.spec) for t in tensors]
    out_grid = tile_grid(spec)
    fmt = (spec.dtype, spec.tile)
    if out_grid is None or any(g is None for g in grids) or any((t.dtype, t.spec.tile) != fmt for t in tensors):
        return None
    tile_bytes = spec.tile.get_tile_size(spec.dtype)
    outer = math.prod(out_grid[:axis])
    runs = [math.prod(g[axis:]) * tile_bytes for g in grids]  # type: ignore[index]
    mesh = same_mesh(op, {f"input_tensors[{i}]": t for i, t in enumerate(tensors)})

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]) -> None:
        out = out_rows[0][:, : outer * sum(runs)].reshape(len(out_rows[0]), outer, sum(runs))
        start = 0
        for rows, run in zip(in_rows, runs, strict=True):
            out[:, :, start : start + run] = rows[:, : outer * run].reshape(len(rows), outer, run)
            start += run

    attrs = {"memory_config": spec.memory_config, "dtype": spec.dtype}
    return launch(op, mesh, list(tensors), [Output(spec)], kernel, rowwise=True, attrs=attrs)[0]
