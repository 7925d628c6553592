"""``ttnn.experimental.nlp_create_qkv_heads_segformer``: SegFormer's head split, with the head size
fixed at one tile (32).  A ``[b, 1, s, w]`` TILE tensor (float32, bfloat16 or bfloat8_b; ``s`` and
``w`` whole tiles in its padded shape) becomes ``[b, w / 32, s, 32]``: each 32 columns one head, as
``nlp_create_qkv_heads`` splits a query.  The op returns three tensors of that spec, as ttnn's does;
its kernel writes only the first (the model code takes ``[0]``): the other two are allocated and,
in ttnn, left as the allocator gave them; here they hold zeros.  Values are moved, not computed (no
rounding).  The output is interleaved (``memory_config`` defaults to the input's; a sharded one is
refused as ttnn refuses it).

May import: :mod:`meshnn.errors`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor`, the ops' launch,
checks, outputs and values modules and :mod:`meshnn.ops.transformer.checks`.
"""

from __future__ import annotations

import numpy as np

from meshnn.device.buffer import TensorMemoryLayout
from meshnn.errors import MeshnnValueError
from meshnn.mesh.coord import MeshCoordinate
from meshnn.ops.checks import same_mesh
from meshnn.ops.launch import launch
from meshnn.ops.outputs import Output, out_spec_like
from meshnn.ops.registry import OpKind, register
from meshnn.ops.transformer.checks import of_rank, tile_input, unsupported
from meshnn.ops.transformer.heads import NLP_DTYPES
from meshnn.ops.values import logical_values, write_values
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor

HEAD_SIZE = 32
"""The op's head size in elements: one tile's width, fixed by ttnn's kernel."""


@register(
    "experimental.nlp_create_qkv_heads_segformer",
    kind=OpKind.TRANSFORMER,
    family=OpFamily.COPY,
    device_operation="NlpCreateHeadsSegformerDeviceOperation",
)
def nlp_create_qkv_heads_segformer(
    input: Tensor, *, memory_config: MemoryConfig | None = None, output_tensors: object = None
) -> tuple[Tensor, Tensor, Tensor]:
    """``[b, 1, s, w]`` to three ``[b, w / 32, s, 32]`` tensors, the first the heads of ``input``
    (the module's rules); ``s`` and ``w`` are the padded shape's."""
    op = "experimental.nlp_create_qkv_heads_segformer"
    x = tile_input(op, "input", input, NLP_DTYPES)
    unsupported(op, output_tensors=output_tensors)
    mesh = same_mesh(op, {"input": x})
    b, one, _, _ = of_rank(op, "input", x, 4, "[batch, 1, sequence, width]")
    if one != 1:
        raise MeshnnValueError(f"ttnn.{op}: input must be [batch, 1, sequence, width], got {list(x.shape)}")
    s, width = (int(d) for d in tuple(x.padded_shape)[2:])
    if s % HEAD_SIZE or width % HEAD_SIZE:
        raise MeshnnValueError(f"ttnn.{op}: input's padded sequence {s} and width {width} must be multiples of 32")
    heads = width // HEAD_SIZE
    spec = out_spec_like(x, shape=(b, heads, s, HEAD_SIZE), memory_config=memory_config, op=op)
    if spec.memory_config.memory_layout is not TensorMemoryLayout.INTERLEAVED:
        raise MeshnnValueError(f"ttnn.{op}: memory_config must be interleaved (the input's when not given)")
    logical = tuple(int(d) for d in x.shape)
    exact = not x.dtype.is_block_float

    x_spec = x.spec  # (the kernel holds no tensor: a trace must not keep it allocated)

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]) -> None:
        values = logical_values(in_rows[0], x_spec, as_float=False)
        n = values.shape[0]
        padded = np.zeros((n, b, 1, s, width), dtype=values.dtype)
        padded[:, :, :, : logical[2], : logical[3]] = values
        query = padded.reshape(n, b, s, heads, HEAD_SIZE).transpose(0, 1, 3, 2, 4)
        write_values(out_rows[0], np.ascontiguousarray(query), spec, exact=exact)
        for out in out_rows[1:]:
            write_values(out, np.zeros((n, b, heads, s, HEAD_SIZE), dtype=values.dtype), spec, exact=exact)

    outputs = [Output(spec) for _ in range(3)]
    attrs = {"memory_config": spec.memory_config}
    q, k, v = launch(op, mesh, [x], outputs, kernel, rowwise=True, reads_memos=True, attrs=attrs)
    return q, k, v
