"""``ttnn.transformer.scaled_dot_product_attention``: softmax(q k^T * scale + mask) v per head,
causal or with an additive mask, grouped-query heads (``nqh`` a multiple of ``nkv``), one
MeshWorkload that computes in float32 and rounds once into its output dtype.  Its checks are
tt-metal's SDPA's (TILE inputs, interleaved in DRAM or L1, of bfloat16 / bfloat8_b / bfloat4_b, no
padding but on the sequence axes, a ``[b, nqh, s, s_k]`` mask in DRAM (batch or heads 1: broadcast),
chunk sizes of the ``SDPAProgramConfig`` whole tiles); they are apart
from the compute (:func:`_attention_kernel`).  The math of one attention, :func:`attend`, and the
checks (:func:`sdpa_inputs`, :func:`sdpa_dims`) are shared with
``ring_distributed_scaled_dot_product_attention`` (:mod:`.attention_ring`).

May import: :mod:`meshnn.errors`, :mod:`meshnn.device`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor`,
the ops' launch, checks, outputs, values and config modules and :mod:`meshnn.ops.transformer.checks`.
"""

from __future__ import annotations

import math

import numpy as np

from meshnn.device.buffer import BufferType
from meshnn.errors import MeshnnTypeError, MeshnnValueError, NotImplementedByMeshnn
from meshnn.formats.dtypes import DataType
from meshnn.mesh.coord import MeshCoordinate
from meshnn.mesh.mesh_device import MeshDevice
from meshnn.ops import goldens
from meshnn.ops.checks import check_queue_id, same_mesh
from meshnn.ops.config import SDPAProgramConfig, check_compute_kernel_config
from meshnn.ops.launch import Kernel, launch
from meshnn.ops.outputs import Output, out_spec_like
from meshnn.ops.registry import OpKind, register
from meshnn.ops.transformer.checks import of_rank, tile_input
from meshnn.ops.transformer.products import product
from meshnn.ops.values import logical_values, write_values
from meshnn.perf.desc import OpFamily
from meshnn.tensor.memory_config import DRAM_MEMORY_CONFIG
from meshnn.tensor.spec import MemoryConfig, TensorSpec
from meshnn.tensor.tensor import Tensor

SDPA_DTYPES = (DataType.BFLOAT16, DataType.BFLOAT8_B, DataType.BFLOAT4_B)
"""The dtypes tt-metal's SDPA reads (inputs and mask)."""


@register(
    "transformer.scaled_dot_product_attention",
    kind=OpKind.TRANSFORMER,
    family=OpFamily.SDPA,
    golden=goldens.scaled_dot_product_attention,
)
def scaled_dot_product_attention(
    input_tensor_q: Tensor,
    input_tensor_k: Tensor,
    input_tensor_v: Tensor,
    *,
    attn_mask: Tensor | None = None,
    is_causal: bool = True,
    scale: float | None = None,
    sliding_window_size: int | None = None,
    memory_config: MemoryConfig | None = None,
    program_config: SDPAProgramConfig | None = None,
    compute_kernel_config: object = None,
    attention_sink: Tensor | None = None,
    queue_id: int = 0,
) -> Tensor:
    """``softmax(q @ k^T * scale + mask) @ v`` for q ``[b, nqh, s, d]`` and k, v ``[b, nkv, s_k, d]``
    (each k / v head serves ``nqh / nkv`` q heads), on every device.  ``is_causal`` (the default)
    masks key positions after the query's (s == s_k); otherwise ``attn_mask`` ``[b, nqh, s, s_k]`` (either 1: broadcast)
    is added to every head's scores, if given.  ``scale`` defaults to 1 / sqrt(d).  The output
    has q's shape and dtype, in TILE layout.  ``sliding_window_size`` W (causal only): query i
    attends keys ``i - W < j <= i``.  ``attention_sink`` ``[1, nqh, 1, 1]``: head h's softmax
    denominator gains ``exp(scale * sink[h])`` (a logit of the unscaled ``q k``, as tt-metal's
    kernel applies the scale in its exponent)."""
    op = "transformer.scaled_dot_product_attention"
    tensors = (input_tensor_q, input_tensor_k, input_tensor_v)
    named, mesh = sdpa_inputs(op, tensors, attn_mask, is_causal, program_config)
    dims = sdpa_dims(op, named, is_causal, program_config)
    window = _window(op, sliding_window_size, is_causal, attn_mask)
    if attention_sink is not None:
        named["attention_sink"] = _sink_input(op, attention_sink, dims[1])
    scale = sdpa_scale(op, scale, dims[-1])
    queue_id = check_queue_id(op, mesh, queue_id)
    dram = DRAM_MEMORY_CONFIG  # (ttnn's default output config, whatever q's)
    spec = out_spec_like(named["input_tensor_q"], memory_config=memory_config or dram, op=op)
    inputs = list(named.values())
    masked = "attn_mask" in named
    options = (is_causal, masked, window, "attention_sink" in named)
    kernel = _attention_kernel([t.spec for t in inputs], spec, dims, np.float32(scale), options)
    attrs = {
        "sliding_window_size": window,
        "program_config": program_config,
        "compute_kernel_config": check_compute_kernel_config(op, compute_kernel_config),
        "memory_config": spec.memory_config,
        "is_causal": is_causal,
        "scale": float(scale),
    }
    return launch(
        op, mesh, inputs, [Output(spec)], kernel, queue_id=queue_id, rowwise=True, reads_memos=True, attrs=attrs
    )[0]


def sdpa_inputs(
    op: str,
    tensors: tuple[object, object, object],
    attn_mask: object,
    is_causal: object,
    program_config: object,
    dram_only: bool = False,
) -> tuple[dict[str, Tensor], MeshDevice]:
    """q, k, v (and the mask when given) checked to be TILE device tensors of SDPA's dtypes on one mesh;
    and that mesh.  q, k and v interleaved, in DRAM or L1 (tt-metal's SDPA since 2025-11; ``dram_only``:
    DRAM, as its windowed and ring-distributed forms keep), the mask in DRAM."""
    names = ("input_tensor_q", "input_tensor_k", "input_tensor_v")
    named = {name: tile_input(op, name, t, SDPA_DTYPES) for name, t in zip(names, tensors, strict=True)}
    if not isinstance(is_causal, bool):
        raise MeshnnTypeError(f"ttnn.{op}: is_causal must be a bool, got {is_causal!r}")
    if is_causal and attn_mask is not None:
        raise MeshnnValueError(f"ttnn.{op}: is_causal and attn_mask cannot both be given (a causal op makes its mask)")
    if attn_mask is not None:
        named["attn_mask"] = tile_input(op, "attn_mask", attn_mask, SDPA_DTYPES)
    if program_config is not None and not isinstance(program_config, SDPAProgramConfig):
        raise MeshnnTypeError(f"ttnn.{op}: program_config must be a ttnn.SDPAProgramConfig, got {program_config!r}")
    if program_config is not None and program_config.is_decode_form:
        raise MeshnnValueError(
            f"ttnn.{op}: program_config has chunk sizes 0 (the decode form, for scaled_dot_product_attention_decode); "
            "prefill attention needs q_chunk_size and k_chunk_size (multiples of 32)"
        )
    mesh = same_mesh(op, named)
    grid = None if program_config is None else program_config.compute_with_storage_grid_size
    device = mesh.compute_with_storage_grid_size()
    if grid is not None and (grid.x > device.x or grid.y > device.y):
        raise MeshnnValueError(
            f"ttnn.{op}: program_config's compute_with_storage_grid_size ({grid.x}, {grid.y}) must fit within the "
            f"device's compute grid ({device.x}, {device.y})"
        )
    for name, t in named.items():
        config = t.spec.memory_config
        if name != "attn_mask" and not dram_only and config.is_sharded():
            raise MeshnnValueError(f"ttnn.{op}: Operands to SDPA need to be DRAM/L1 interleaved ({name} is sharded)")
        if (name == "attn_mask" or dram_only) and config.buffer_type is not BufferType.DRAM:
            raise MeshnnValueError(f"ttnn.{op}: {name} must be in DRAM, it is in {config.buffer_type}")
    return named, mesh


def sdpa_dims(
    op: str, named: dict[str, Tensor], is_causal: bool, program_config: SDPAProgramConfig | None
) -> tuple[int, int, int, int, int, int]:
    """``(b, nqh, nkv, s, s_k, d)`` of q, k and v, checked to fit together (and with the mask)."""
    q, k, v = named["input_tensor_q"], named["input_tensor_k"], named["input_tensor_v"]
    b, nqh, s, d = of_rank(op, "input_tensor_q", q, 4, "[b, nqh, s, d]")
    kb, nkv, sk, kd = of_rank(op, "input_tensor_k", k, 4, "[b, nkv, s_k, d]")
    vshape = of_rank(op, "input_tensor_v", v, 4, "[b, nkv, s_k, d]")
    if (kb, kd) != (b, d) or vshape != (b, nkv, sk, d):
        raise MeshnnValueError(
            f"ttnn.{op}: input_tensor_k {[kb, nkv, sk, kd]} and input_tensor_v {list(vshape)} must be "
            f"[{b}, nkv, s_k, {d}] (q's batch and head size, the same nkv and s_k)"
        )
    if nkv == 0 or nqh % nkv:
        raise MeshnnValueError(f"ttnn.{op}: q's {nqh} heads must be a multiple of k's and v's {nkv}")
    for name, t in (("input_tensor_q", q), ("input_tensor_k", k), ("input_tensor_v", v)):
        padded = tuple(t.spec.padded_shape)
        if padded[-1] != t.shape[-1]:
            raise MeshnnValueError(
                f"ttnn.{op}: {name} {list(t.shape)} is padded on the head dimension ({padded[-1]}); only the "
                "sequence may be padded"
            )
    if is_causal and s != sk:
        raise MeshnnValueError(f"ttnn.{op}: causal attention needs q and k of one sequence length, got {s} and {sk}")
    if "attn_mask" in named:
        _check_mask(op, named["attn_mask"], (b, nqh, s, sk))
    return b, nqh, nkv, s, sk, d


def _check_mask(op: str, mask: Tensor, shape: tuple[int, int, int, int]) -> None:
    """The mask is ``[b or 1, nqh or 1, s, s_k]`` (a batch or head of 1 broadcast: tt-metal's SDPA since
    2026-01; its sequence lengths need not divide into the chunk sizes since then either)."""
    b, nqh, s, sk = shape
    got = tuple(mask.shape)
    if len(got) != 4 or got[0] not in (1, b) or got[1] not in (1, nqh) or got[2:] != (s, sk):
        raise MeshnnValueError(
            f"ttnn.{op}: attn_mask must be [{b}, {nqh}, {s}, {sk}] (q's batch and heads, each may be 1 to "
            f"broadcast; s x s_k), got {list(mask.shape)}"
        )


def _window(op: str, window: object, is_causal: bool, attn_mask: object) -> int | None:
    """The sliding window, checked (tt-metal: not with a mask); None or 0 is none."""
    if window is None:
        return None
    if isinstance(window, bool) or not isinstance(window, int) or window < 0:
        raise MeshnnTypeError(f"ttnn.{op}: sliding_window_size must be a non-negative int, got {window!r}")
    if window and attn_mask is not None:
        raise MeshnnValueError(
            f"ttnn.{op}: sliding_window_size and attn_mask cannot both be present; bake the sliding-window mask "
            f"into attn_mask. Got sliding_window_size: {window}"
        )
    if window and not is_causal:
        raise NotImplementedByMeshnn(f"{op}(sliding_window_size=..., is_causal=False)")
    return window or None


def _sink_input(op: str, sink: object, heads: int) -> Tensor:
    """The attention sink: TILE, bfloat16 / bfloat8_b / bfloat4_b, in DRAM, ``[1, nqh, 1, 1]``."""
    t = tile_input(op, "attention_sink", sink, SDPA_DTYPES)
    if t.spec.memory_config.buffer_type is not BufferType.DRAM:
        raise MeshnnValueError(f"ttnn.{op}: Attention sink must be in DRAM")
    if tuple(t.shape) != (1, heads, 1, 1):
        raise MeshnnValueError(
            f"ttnn.{op}: Attention sink must have shape [1, {heads}, 1, 1] (one value per q head), got {list(t.shape)}"
        )
    return t


def _attention_kernel(
    specs: list[TensorSpec],
    spec: TensorSpec,
    dims: tuple[int, int, int, int, int, int],
    factor: np.float32,
    options: tuple[bool, bool, int | None, bool],
) -> Kernel:
    """The kernel: every device's heads in one float32 computation of q, k, v (and the mask's,
    the sink's) values, normalised last, as flash attention does.  ``options``: causal, masked,
    the sliding window, a sink (the last input)."""
    s = dims[3]
    is_causal, masked, window, sinked = options

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]) -> None:
        qv, kv, vv = (logical_values(r, sp) for r, sp in zip(in_rows[:3], specs[:3], strict=True))
        bias = None
        if is_causal:
            bias = causal_bias(s) if window is None else window_bias(s, window)
        elif masked:
            bias = mask_bias(logical_values(in_rows[3], specs[3]), dims[2])
        sink = None
        if sinked:  # (n, 1, nqh, 1, 1) -> (n, 1, nkv, group, 1, 1), scaled as the scores
            values = logical_values(in_rows[-1], specs[-1])
            sink = values.reshape(values.shape[0], 1, dims[2], dims[1] // dims[2], 1, 1) * factor
        write_values(out_rows[0], attend(qv, kv, vv, factor, bias, sink), spec, owned=True)

    return kernel


def attend(
    q: np.ndarray, k: np.ndarray, v: np.ndarray, factor: np.float32, bias: np.ndarray | None, sink=None
) -> np.ndarray:
    """``softmax(q @ k^T * factor + bias) @ v`` in float32, every device's heads at once: q
    ``(n, b, nqh, s, d)``, k and v ``(n, b, nkv, s_k, d)`` (n devices; each k / v head serves
    ``nqh / nkv`` consecutive q heads), ``bias`` None or additive, broadcastable to the scores'
    ``(n, b, nkv, nqh / nkv, s, s_k)`` (an ``(s, s_k)`` causal bias, a ``(n, b, 1, 1, s, s_k)``
    mask).  ``sink`` None or a scaled logit per head broadcastable to ``(n, b, nkv, group, 1, 1)``,
    joining each softmax's denominator.  Returns ``(n, b, nqh, s, d)`` float32; a row masked
    everywhere gives NaN, as its softmax does (unless a sink holds it).  Normalised last, as flash
    attention does."""
    n, b, nqh, s, d = q.shape
    nkv, sk, dv = k.shape[2], k.shape[3], v.shape[-1]  # (v's head size may differ: MLA's)
    group = nqh // nkv
    # A k / v head's q heads are stacked as rows of one product (group * s rows): numpy's matmul
    # runs BLAS on whole matrices, but falls back to a loop far slower on a broadcast operand.
    grouped = q.reshape(n, b, nkv, group * s, d) * factor  # (scaling q: s x d values, not s x s_k)
    scores = product(grouped, np.swapaxes(k, -1, -2)).reshape(n, b, nkv, group, s, sk)
    if bias is not None:
        scores += bias
    top = scores.max(axis=-1, keepdims=True)
    if sink is not None:
        top = np.maximum(top, sink)
    with np.errstate(invalid="ignore"):
        scores -= top
    np.exp(scores, out=scores)
    total = scores.sum(axis=-1, keepdims=True)
    if sink is not None:
        total += np.exp(sink - top)
    out = product(scores.reshape(n, b, nkv, group * s, sk), v).reshape(n, b, nkv, group, s, dv)
    out /= total  # (s x d values, not s x s_k)
    return out.reshape((n, b, nqh, s, dv))


def mask_bias(values: np.ndarray, nkv: int) -> np.ndarray:
    """A mask's values ``(n, b or 1, nqh or 1, s, s_k)`` as a bias broadcastable to the scores'
    ``(n, b, nkv, nqh / nkv, s, s_k)``."""
    n, batch, heads, s, sk = values.shape
    return values[:, :, :, None] if heads == 1 else values.reshape(n, batch, nkv, heads // nkv, s, sk)


def sdpa_scale(op: str, scale: object, head_size: int) -> float:
    """An attention's ``scale``: as given (a number), or 1 / sqrt(head size) for None."""
    if scale is None:
        return 1.0 / math.sqrt(head_size)
    if isinstance(scale, bool) or not isinstance(scale, int | float | np.number):
        raise MeshnnTypeError(f"ttnn.{op}: scale must be a number, got {scale!r}")
    return scale


def window_bias(s: int, window: int) -> np.ndarray:
    """``(s, s)`` float32: 0 where ``i - window < j <= i``, -inf elsewhere."""
    rows, cols = np.arange(s)[:, None], np.arange(s)[None]
    return np.where((cols <= rows) & (cols > rows - window), np.float32(0), np.float32(-np.inf))


_CAUSAL: dict[int, np.ndarray] = {}


def causal_bias(s: int) -> np.ndarray:
    """``(s, s)`` float32: 0 where key j <= query i, -inf after (read-only, made once per s)."""
    bias = _CAUSAL.get(s)
    if bias is None:
        bias = np.triu(np.full((s, s), -np.inf, np.float32), 1)
        bias.flags.writeable = False
        _CAUSAL[s] = bias
    return bias
