"""The head moves of attention: ``ttnn.transformer.split_query_key_value_and_split_heads`` (a
fused ``[b, s, (nh + 2 nkv) * d]`` projection into ``q [b, nh, s, d]``, ``k [b, nkv, d, s]`` (or
``[b, nkv, s, d]``) and ``v [b, nkv, s, d]``), ``ttnn.transformer.concatenate_heads`` (``[b, nh,
s, d]`` back to ``[b, s, nh * d]``), and ``ttnn.experimental.nlp_create_qkv_heads`` /
``nlp_concat_heads``: the same two moves for the ``[b, 1, s, w]`` tensors of tt-metal's model
code.  Values are moved, not computed: no rounding but a block float's.

May import: :mod:`meshnn.errors`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor`, the ops' launch,
checks, outputs and values modules and :mod:`meshnn.ops.transformer.checks`.
"""

from __future__ import annotations

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError, NotImplementedByMeshnn
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.mesh.coord import MeshCoordinate
from meshnn.ops import goldens
from meshnn.ops.checks import device_input, same_mesh
from meshnn.ops.launch import Kernel, launch
from meshnn.ops.outputs import Output, out_spec_like
from meshnn.ops.registry import OpKind, alias, register
from meshnn.ops.transformer.checks import of_rank, tile_input, unsupported
from meshnn.ops.transformer.heads_sharded import sharded_split
from meshnn.ops.values import logical_values, write_values
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig, TensorSpec
from meshnn.tensor.tensor import Tensor


@register(
    "transformer.split_query_key_value_and_split_heads",
    kind=OpKind.TRANSFORMER,
    family=OpFamily.COPY,
    device_operation="CreateQKVHeadsDeviceOperation",
    golden=goldens.split_query_key_value_and_split_heads,
)
def split_query_key_value_and_split_heads(
    input_tensor: Tensor,
    kv_input_tensor: Tensor | None = None,
    *,
    num_heads: int,
    num_kv_heads: int | None = None,
    transpose_key: bool = True,
    memory_config: MemoryConfig | None = None,
) -> tuple[Tensor, Tensor, Tensor]:
    """Split a fused projection ``[b, s, (num_heads + 2 num_kv_heads) * d]`` (q's heads, then k's,
    then v's; with ``kv_input_tensor``, q ``[b, s, num_heads * d]`` and k, v from
    ``[b, s, 2 num_kv_heads * d]``) into q ``[b, num_heads, s, d]``, k ``[b, num_kv_heads, d, s]``
    (``[b, num_kv_heads, s, d]`` when not ``transpose_key``) and v ``[b, num_kv_heads, s, d]``."""
    return _split_heads(
        "transformer.split_query_key_value_and_split_heads",
        ("input_tensor", input_tensor),
        ("kv_input_tensor", kv_input_tensor),
        num_heads,
        num_kv_heads,
        ("transpose_key", transpose_key),
        memory_config,
        rank=3,
    )


@register(
    "experimental.nlp_create_qkv_heads",
    kind=OpKind.TRANSFORMER,
    family=OpFamily.COPY,
    device_operation="NlpCreateHeadsDeviceOperation",
)
def nlp_create_qkv_heads(
    input: Tensor,
    input_kv: Tensor | None = None,
    *,
    num_heads: int,
    num_kv_heads: int | None = None,
    transpose_k_heads: bool = True,
    kv_tied: bool = False,
    memory_config: MemoryConfig | None = None,
    output_tensors: object = None,
    head_split: bool = False,
) -> tuple[Tensor, Tensor, Tensor]:
    """``ttnn.experimental.nlp_create_qkv_heads``: the head split of a fused ``[b, 1, s, (num_heads
    + 2 num_kv_heads) * d]`` projection (TILE, float32 / bfloat16 / bfloat8_b), as
    :func:`split_query_key_value_and_split_heads` does for ``[b, s, ...]``.  ``head_split`` only
    changes how tt-metal shares the work out (the output is the same)."""
    op = "experimental.nlp_create_qkv_heads"
    unsupported(op, output_tensors=output_tensors)
    if kv_tied:
        raise NotImplementedByMeshnn(f"{op}(kv_tied=True)")
    return _split_heads(
        op,
        ("input", input),
        ("input_kv", input_kv),
        num_heads,
        num_kv_heads,
        ("transpose_k_heads", transpose_k_heads),
        memory_config,
        rank=4,
    )


NLP_DTYPES = (DataType.FLOAT32, DataType.BFLOAT16, DataType.BFLOAT8_B)
"""The dtypes tt-metal's nlp_* head ops take."""


def _split_heads(
    op: str,
    q_input: tuple[str, object],
    kv_input: tuple[str, object],
    num_heads: object,
    num_kv_heads: object,
    transpose: tuple[str, object],
    memory_config: MemoryConfig | None,
    *,
    rank: int,
) -> tuple[Tensor, Tensor, Tensor]:
    """The head split of both ops: inputs ``[b, s, w]`` (rank 3) or ``[b, 1, s, w]`` (rank 4, the
    nlp op's, TILE of its dtypes), each ``(name, value)`` for the messages."""
    x = tile_input(op, *q_input, NLP_DTYPES) if rank == 4 else device_input(op, *q_input)
    named = {q_input[0]: x}
    if kv_input[1] is not None:
        named[kv_input[0]] = device_input(op, kv_input[0], kv_input[1])
    # the nlp op of a fused input takes num_kv_heads=0 (queries only: empty K and V, DeepSeek's MLA)
    no_kv = 0 if rank == 4 and kv_input[1] is None else 1
    for name, count, least in (("num_heads", num_heads, 1), ("num_kv_heads", num_kv_heads, no_kv)):
        if (count is not None or name == "num_heads") and (
            isinstance(count, bool) or not isinstance(count, int | np.integer) or count < least
        ):
            kind = "a positive" if least else "a non-negative"
            raise MeshnnValueError(f"ttnn.{op}: {name} must be {kind} int, got {count!r}")
    transpose_name, transpose_key = transpose
    if not isinstance(transpose_key, bool):
        raise MeshnnTypeError(f"ttnn.{op}: {transpose_name} must be a bool, got {transpose_key!r}")
    heads = int(num_heads)  # type: ignore[call-overload]
    kv_heads = heads if num_kv_heads is None else int(num_kv_heads)  # type: ignore[call-overload]
    mesh = same_mesh(op, named)
    b, s, d = _split_dims(op, named, (q_input[0], kv_input[0]), heads, kv_heads, rank)
    if rank == 4 and x.memory_config().is_sharded():  # tt-metal's sharded program: a KV group a shard
        kv = named.get(kv_input[0])
        return sharded_split(op, mesh, x, kv, (b, s, heads, kv_heads, d), transpose_key, memory_config)
    key_shape = (b, kv_heads, d, s) if transpose_key else (b, kv_heads, s, d)
    shapes = ((b, heads, s, d), key_shape, (b, kv_heads, s, d))
    layout = Layout.TILE if rank == 4 else None  # (the nlp op's outputs are tiles)
    out_specs = [out_spec_like(x, shape=shape, layout=layout, memory_config=memory_config, op=op) for shape in shapes]
    specs = [t.spec for t in named.values()]
    kernel = _split_kernel(specs, out_specs, (b, s, heads, kv_heads, d), transpose_key, not x.dtype.is_block_float)
    outputs = [Output(spec) for spec in out_specs]
    attrs = {"memory_config": out_specs[0].memory_config}
    q, k, v = launch(op, mesh, list(named.values()), outputs, kernel, rowwise=True, reads_memos=True, attrs=attrs)
    return q, k, v


def _split_dims(
    op: str, named: dict[str, Tensor], names: tuple[str, str], heads: int, kv_heads: int, rank: int
) -> tuple[int, int, int]:
    """``(b, s, d)`` of the fused projection (and the separate k / v one, when given), checked to
    split into the heads."""
    q_name, kv_name = names
    x = named[q_name]
    if rank == 4:
        b, one, s, width = of_rank(op, q_name, x, 4, "[batch, 1, sequence, width]")
        if one != 1:
            raise MeshnnValueError(f"ttnn.{op}: {q_name} must be [batch, 1, sequence, width], got {list(x.shape)}")
    else:
        b, s, width = of_rank(op, q_name, x, 3, "[batch, sequence, hidden]")
    lead = tuple(x.shape[:-1])
    if kv_name not in named:
        if width % (heads + 2 * kv_heads):
            raise MeshnnValueError(
                f"ttnn.{op}: {q_name}'s width {width} does not split into {heads} + 2 x {kv_heads} heads"
            )
        return b, s, width // (heads + 2 * kv_heads)
    kv = named[kv_name]
    if kv.dtype is not x.dtype or kv.layout is not x.layout:
        raise MeshnnValueError(f"ttnn.{op}: {kv_name} must have {q_name}'s dtype and layout")
    if width % heads:
        raise MeshnnValueError(f"ttnn.{op}: {q_name}'s width {width} does not split into {heads} heads")
    d = width // heads
    if tuple(kv.shape) != (*lead, 2 * kv_heads * d):
        raise MeshnnValueError(
            f"ttnn.{op}: {kv_name} must be {[*lead, 2 * kv_heads * d]} (2 x {kv_heads} heads of {d}), "
            f"got {list(kv.shape)}"
        )
    return b, s, d


def _split_kernel(
    specs: list[TensorSpec],
    out_specs: list[TensorSpec],
    dims: tuple[int, int, int, int, int],
    transpose_key: bool,
    exact: bool,
) -> Kernel:
    """The kernel: the fused values (q's and kv's side by side) split into q, k and v heads."""
    b, s, heads, kv_heads, d = dims

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]) -> None:
        parts = [logical_values(r, sp, as_float=False) for r, sp in zip(in_rows, specs, strict=True)]
        fused = parts[0] if len(parts) == 1 else np.concatenate(parts, axis=-1)
        n = fused.shape[0]
        split = fused.reshape(n, b, s, heads + 2 * kv_heads, d)
        query = split[:, :, :, :heads].transpose(0, 1, 3, 2, 4)
        key = split[:, :, :, heads : heads + kv_heads].transpose(0, 1, 3, 2, 4)
        value = split[:, :, :, heads + kv_heads :].transpose(0, 1, 3, 2, 4)
        if transpose_key:
            key = key.swapaxes(-1, -2)
        for out, values, spec in zip(out_rows, (query, key, value), out_specs, strict=True):
            write_values(out, np.ascontiguousarray(values), spec, exact=exact)

    return kernel


@register(
    "transformer.concatenate_heads",
    kind=OpKind.TRANSFORMER,
    family=OpFamily.COPY,
    device_operation="ConcatenateHeadsDeviceOperation",
    golden=goldens.concatenate_heads,
)
def concatenate_heads(input_tensor: Tensor, *, memory_config: MemoryConfig | None = None) -> Tensor:
    """``[b, num_heads, s, d]`` to ``[b, s, num_heads * d]``: each position's heads side by side."""
    return _concat_heads("transformer.concatenate_heads", input_tensor, memory_config, keep_one=False)


@register(
    "experimental.nlp_concat_heads",
    kind=OpKind.TRANSFORMER,
    family=OpFamily.COPY,
    device_operation="NLPConcatHeadsDeviceOperation",
)
def nlp_concat_heads(input_tensor: Tensor, *, memory_config: MemoryConfig | None = None) -> Tensor:
    """``ttnn.experimental.nlp_concat_heads``: ``[b, num_heads, s, d]`` (TILE) to
    ``[b, 1, s, num_heads * d]``."""
    return _concat_heads("experimental.nlp_concat_heads", input_tensor, memory_config, keep_one=True)


def _concat_heads(op: str, input_tensor: object, memory_config: MemoryConfig | None, *, keep_one: bool) -> Tensor:
    x = (
        tile_input(op, "input_tensor", input_tensor, NLP_DTYPES)
        if keep_one
        else device_input(op, "input_tensor", input_tensor)
    )
    mesh = same_mesh(op, {"input_tensor": x})
    b, heads, s, d = of_rank(op, "input_tensor", x, 4, "[batch, num_heads, sequence, head_size]")
    shape = (b, 1, s, heads * d) if keep_one else (b, s, heads * d)
    spec = out_spec_like(x, shape=shape, memory_config=memory_config, op=op)
    exact = not x.dtype.is_block_float

    x_spec = x.spec  # (the kernel holds no tensor: a trace must not keep it allocated)

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]) -> None:
        values = logical_values(in_rows[0], x_spec, as_float=False)
        moved = np.ascontiguousarray(values.transpose(0, 1, 3, 2, 4)).reshape(values.shape[0], *shape)
        write_values(out_rows[0], moved, spec, exact=exact, owned=True)

    attrs = {"memory_config": spec.memory_config}
    return launch(op, mesh, [x], [Output(spec)], kernel, rowwise=True, reads_memos=True, attrs=attrs)[0]


alias("experimental.concatenate_heads", "transformer.concatenate_heads")  # ttnn binds it under both names
