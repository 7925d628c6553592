"""``ttnn.transformer.joint_scaled_dot_product_attention``: the MM-DiT's attention over two
sequences at once.  The spatial q, k, v ``[b, nh, N, d]`` and the prompt's (the "joint") q, k, v
``[b, nh, L, d]`` are joined along the sequence, the prompt's rows last (``joint_strategy
"rear"``, the only one), and one non-causal attention runs over the ``N + L`` rows; its output is
cut back into ``[b, nh, N, d]`` and ``[b, nh, L, d]``.  Each part's sequence padding (a TILE
tensor's rows past ``N`` or ``L``) is left out of the keys, as ttnn's kernel masks it.

The rows are computed by :func:`attend_rows`: a block of query rows at a time (a block's scores
kept under :data:`BLOCK_SCORES` float32 values), ``softmax(q k^T * scale) v`` in float32 with the
row's maximum and sum of exponentials (the pieces of its log-sum-exp, which
``ring_joint_scaled_dot_product_attention``, :mod:`.attention_ring_joint`, returns).

tt-metal's checks (``joint_sdpa_device_operation.cpp``), before anything is allocated: the
strategy ``"rear"``; the six tensors of one dtype, bfloat16 or bfloat8_b, TILE, in DRAM, on one
mesh; one batch; one head size; as many q heads as k heads, the joint ones as many as the
spatial ones; no padding but on the sequence; the program config's chunk sizes multiples of 32.
Outputs: TILE, the inputs' dtype, in ``memory_config`` (DRAM interleaved by default).

May import: :mod:`meshnn.errors`, :mod:`meshnn.device`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor`,
the ops' launch, checks, outputs, values and config modules and the transformer ops' checks and
products.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from meshnn.device.buffer import BufferType
from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.mesh.coord import MeshCoordinate
from meshnn.ops.checks import same_mesh
from meshnn.ops.config import SDPAProgramConfig, check_compute_kernel_config
from meshnn.ops.launch import launch
from meshnn.ops.outputs import Output, out_spec_like
from meshnn.ops.registry import OpKind, register
from meshnn.ops.transformer.checks import of_rank, tile_input
from meshnn.ops.transformer.products import product
from meshnn.ops.values import logical_values, write_values
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor

OP = "transformer.joint_scaled_dot_product_attention"
JOINT_DTYPES = (DataType.BFLOAT16, DataType.BFLOAT8_B)
"""The dtypes tt-metal's joint SDPA reads."""
NAMES = ("input_tensor_q", "input_tensor_k", "input_tensor_v", "joint_tensor_q", "joint_tensor_k", "joint_tensor_v")
BLOCK_SCORES = 1 << 24
"""Float32 scores (64 MiB) of one block of query rows in :func:`attend_rows`."""

Bias = Callable[[int, int], "np.ndarray | None"]
"""An additive bias of the query rows ``start:stop`` against every key, broadcastable to the
scores' ``(n, b, h, rows, keys)``; None for no bias."""


def attend_rows(
    q: np.ndarray, k: np.ndarray, v: np.ndarray, factor: np.float32, bias: Bias | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``softmax(q @ k^T * factor + bias) @ v`` in float32, a block of query rows at a time: q
    ``(n, b, h, s, d)``, k and v ``(n, b, h or 1, s_k, d)``.  Returns the output ``(n, b, h, s, d_v)``
    and each row's maximum scaled score and sum of ``exp(score - maximum)``, ``(n, b, h, s)``.
    A row every key of which is masked gives NaN, as its softmax does."""
    n, b, h, s, _ = q.shape
    sk = k.shape[3]
    rows = max(1, min(s, BLOCK_SCORES // max(1, n * b * h * sk)))
    out = np.empty((n, b, h, s, v.shape[-1]), np.float32)
    top = np.empty((n, b, h, s), np.float32)
    total = np.empty((n, b, h, s), np.float32)
    keys_t = np.swapaxes(k, -1, -2)
    for start in range(0, s, rows):
        stop = min(s, start + rows)
        scores = product(q[:, :, :, start:stop] * factor, keys_t)
        extra = None if bias is None else bias(start, stop)
        if extra is not None:
            scores += extra
        block_top = scores.max(axis=-1, keepdims=True)
        with np.errstate(invalid="ignore"):
            scores -= block_top
        np.exp(scores, out=scores)
        block_total = scores.sum(axis=-1, keepdims=True)
        out[:, :, :, start:stop] = product(scores, v) / block_total
        top[:, :, :, start:stop] = block_top[..., 0]
        total[:, :, :, start:stop] = block_total[..., 0]
    return out, top, total


def joint_inputs(op: str, tensors: tuple[object, ...], names: tuple[str, ...], dtypes) -> dict[str, Tensor]:
    """Each tensor TILE on a device, of ``dtypes``, in DRAM, on one mesh, all of one dtype; by name."""
    named = {name: tile_input(op, name, t, dtypes) for name, t in zip(names, tensors, strict=True)}
    same_mesh(op, named)
    first = next(iter(named.values()))
    for name, t in named.items():
        if t.dtype is not first.dtype:
            raise MeshnnTypeError(
                f"ttnn.{op}: all tensors must have the same dtype; {names[0]} is {first.dtype}, {name} {t.dtype}"
            )
        if t.spec.memory_config.buffer_type is not BufferType.DRAM:
            raise MeshnnValueError(f"ttnn.{op}: {name} must be in DRAM, it is in {t.spec.memory_config.buffer_type}")
        padded = tuple(t.spec.padded_shape)
        if len(padded) == 4 and (padded[0], padded[1], padded[3]) != (t.shape[0], t.shape[1], t.shape[3]):
            raise MeshnnValueError(
                f"ttnn.{op}: {name} {list(t.shape)} is padded ({list(padded)}) on its batch, heads or head size; only "
                "the sequence may be padded"
            )
    return named


def check_strategy(op: str, joint_strategy: object) -> None:
    if joint_strategy != "rear":
        raise MeshnnValueError(f"ttnn.{op}: joint_strategy must be 'rear', got {joint_strategy!r}")


def check_program_config(op: str, program_config: object, required: bool) -> SDPAProgramConfig | None:
    """An SDPAProgramConfig of prefill chunk sizes (multiples of 32, not the decode form's 0)."""
    if program_config is None and not required:
        return None
    if not isinstance(program_config, SDPAProgramConfig):
        raise MeshnnTypeError(f"ttnn.{op}: program_config must be a ttnn.SDPAProgramConfig, got {program_config!r}")
    if program_config.is_decode_form:
        raise MeshnnValueError(
            f"ttnn.{op}: program_config's q_chunk_size and k_chunk_size must be multiples of 32 (> 0), got "
            f"{program_config.q_chunk_size} and {program_config.k_chunk_size}"
        )
    return program_config


def scale_of(op: str, scale: object, d: int) -> np.float32:
    """``scale``, or ``1 / sqrt(d)`` when None."""
    if scale is None:
        return np.float32(1.0 / np.sqrt(d))
    if isinstance(scale, bool) or not isinstance(scale, int | float | np.floating):
        raise MeshnnTypeError(f"ttnn.{op}: scale must be a float or None, got {scale!r}")
    return np.float32(scale)


def _check_shapes(named: dict[str, Tensor]) -> tuple[int, int, int, int, int]:
    """``(b, nh, N, L, d)``, the six shapes checked to fit together as tt-metal checks them."""
    shapes = {name: of_rank(OP, name, t, 4, "[b, nh, s, d]") for name, t in named.items()}
    q, jq = shapes["input_tensor_q"], shapes["joint_tensor_q"]
    b, nh, n, d = q
    for name, (sb, sh, _, sd) in shapes.items():
        if sb != b:
            raise MeshnnValueError(f"ttnn.{OP}: batch sizes must match; input_tensor_q has {b}, {name} {sb}")
        if sd != d:
            raise MeshnnValueError(f"ttnn.{OP}: head dimensions must match; input_tensor_q has {d}, {name} {sd}")
        if sh != nh:
            raise MeshnnValueError(f"ttnn.{OP}: num_heads must match; input_tensor_q has {nh}, {name} {sh}")
    for part, length in (("input_tensor", n), ("joint_tensor", jq[2])):
        for x in ("k", "v"):
            if shapes[f"{part}_{x}"][2] != length:
                raise MeshnnValueError(
                    f"ttnn.{OP}: {part}_{x}'s sequence {shapes[f'{part}_{x}'][2]} must be {part}_q's {length}"
                )
    return b, nh, n, jq[2], d


@register(OP, kind=OpKind.TRANSFORMER, family=OpFamily.SDPA, device_operation="JointSDPADeviceOperation")
def joint_scaled_dot_product_attention(
    input_tensor_q: Tensor,
    input_tensor_k: Tensor,
    input_tensor_v: Tensor,
    joint_tensor_q: Tensor,
    joint_tensor_k: Tensor,
    joint_tensor_v: Tensor,
    *,
    joint_strategy: str,
    program_config: SDPAProgramConfig,
    scale: float | None = None,
    compute_kernel_config: object = None,
) -> tuple[Tensor, Tensor]:
    """Non-causal attention over the spatial and the joint rows together (joint last): returns
    ``(out [b, nh, N, d], joint_out [b, nh, L, d])``, TILE, the inputs' dtype.  ``scale``
    defaults to ``1 / sqrt(d)``."""
    check_strategy(OP, joint_strategy)
    tensors = (input_tensor_q, input_tensor_k, input_tensor_v, joint_tensor_q, joint_tensor_k, joint_tensor_v)
    named = joint_inputs(OP, tensors, NAMES, JOINT_DTYPES)
    check_program_config(OP, program_config, required=True)
    _, _, n, _, d = _check_shapes(named)
    factor = scale_of(OP, scale, d)
    kernel_config = check_compute_kernel_config(OP, compute_kernel_config)
    mesh = same_mesh(OP, named)
    q, jq = named["input_tensor_q"], named["joint_tensor_q"]
    spec = out_spec_like(q, memory_config=MemoryConfig(), op=OP)
    joint_spec = out_spec_like(jq, memory_config=MemoryConfig(), op=OP)
    specs = [t.spec for t in named.values()]

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]) -> None:
        qv, kv, vv, jqv, jkv, jvv = (logical_values(r, sp) for r, sp in zip(in_rows, specs, strict=True))
        out, _, _ = attend_rows(
            np.concatenate([qv, jqv], axis=3), np.concatenate([kv, jkv], axis=3), np.concatenate([vv, jvv], axis=3),
            factor,
        )  # fmt: skip
        write_values(out_rows[0], np.ascontiguousarray(out[:, :, :, :n]), spec, owned=True)
        write_values(out_rows[1], np.ascontiguousarray(out[:, :, :, n:]), joint_spec, owned=True)

    attrs = {
        "joint_strategy": joint_strategy,
        "scale": float(factor),
        "program_config": program_config,
        "compute_kernel_config": kernel_config,
        "output_memory_config": spec.memory_config,
    }
    inputs = list(named.values())
    outs = [Output(spec), Output(joint_spec)]
    out, joint_out = launch(OP, mesh, inputs, outs, kernel, rowwise=True, reads_memos=True, attrs=attrs)
    return out, joint_out
