"""``ttnn.experimental.indexer_score``: DeepSeek-V3.2's lightning-indexer scores (tt-metal 2026-06,
``IndexerScoreDeviceOperation``, Blackhole only)::

    score[b, 0, s, t] = sum_h relu(q[b, h, s, :] . k[b, 0, t, :]) * weights[b, h, s, 0]

for the keys a query sees (``t <= chunk_start_idx + s``), -inf for the others; ``[B, 1, Sq, T]``
BFLOAT16 ROW_MAJOR in q's memory config.  The arithmetic is the kernel's, whose destination register
holds 16-bit (bfloat16) values (``fp32_dest_acc_en`` must be off): each head's ``q . k`` summed over
``D`` and rounded to bfloat16 (as meshnn's ``ttnn.matmul`` rounds a 16-bit destination's product),
the relu, the product with the head's gate rounded to bfloat16, and the heads summed in bfloat16 —
in head order within a chunk of ``qk_batch_heads`` heads (one register sum, rounded at each add),
the chunks' sums added into the L1 accumulator (rounded at each add; see
:func:`~meshnn.ops.transformer.indexer_config.head_chunk`).  Not modelled: the matrix engine's
fidelity (``math_fidelity``: HiFi2 by default, LoFi when q and k are both bfloat8_b), recorded.

ttnn's checks: Blackhole; the compute-kernel config's ``fp32_dest_acc_en`` and ``dst_full_sync_en``
off; q, k, weights on device, interleaved, rank 4: q ``[B, Hi, Sq, D]``, k ``[B, 1, T, D]``,
weights ``[B, Hi, Sq, 1]``, ``B`` = 1; weights BFLOAT16, q and k BFLOAT16 or BFLOAT8_B, all TILE;
then the tile alignment, the chunk window and the program config
(:func:`~meshnn.ops.transformer.indexer_config.check_config`).  Not modelled: an oversized config
failing at circular-buffer allocation on the device.

May import: :mod:`meshnn.errors`, :mod:`meshnn.formats`, :mod:`meshnn.device`, :mod:`meshnn.mesh`,
:mod:`meshnn.tensor` and the ops' checks, config, launch, outputs, values, operands, registry, the
prefill arguments and the indexer's config.
"""

from __future__ import annotations

import numpy as np

from meshnn.device.arch import Arch
from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.bfloat16 import round_to_bfloat16
from meshnn.formats.bfp_torch import read_only_tensor
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.mesh.coord import MeshCoordinate
from meshnn.ops.checks import device_input, same_mesh
from meshnn.ops.config import check_compute_kernel_config, init_device_compute_kernel_config
from meshnn.ops.deepseek_prefill.arguments import require, uint_arg
from meshnn.ops.launch import launch
from meshnn.ops.operands import bf16_products, bf16_torch
from meshnn.ops.outputs import Output, out_spec_like
from meshnn.ops.registry import OpKind, register
from meshnn.ops.transformer.indexer_config import (
    IndexerScoreProgramConfig,
    check_config,
    circular_buffer_bytes,
    head_chunk,
)
from meshnn.ops.values import logical_values, write_values
from meshnn.perf.desc import OpFamily
from meshnn.perf.fidelity import MathFidelity
from meshnn.tensor.tensor import Tensor

OP = "experimental.indexer_score"
MATMUL_DTYPES = (DataType.BFLOAT16, DataType.BFLOAT8_B)


def _bf16(values: np.ndarray) -> np.ndarray:
    return round_to_bfloat16(np.ascontiguousarray(values, dtype=np.float32), in_place=True)


def _head_sums_numpy(q: np.ndarray, k: np.ndarray, w: np.ndarray, chunk: int) -> np.ndarray:
    """The unmasked score ``(Sq, T)`` of one batch's q ``(Hi, Sq, D)``, k ``(T, D)``, w ``(Hi, Sq, 1)``."""
    total = None
    for first in range(0, q.shape[0], chunk):
        part = None
        for h in range(first, first + chunk):
            gated = _bf16(np.maximum(_bf16(q[h] @ k.T), 0.0) * w[h])
            part = gated if part is None else _bf16(part + gated)
        total = part if total is None else _bf16(total + part)
    return total  # type: ignore[return-value]


def _head_sums_torch(torch, q: np.ndarray, k: np.ndarray, w: np.ndarray, chunk: int) -> np.ndarray:
    """:func:`_head_sums_numpy` in torch's bfloat16 arithmetic (float32 sums rounded to nearest even:
    the same rounding, faster)."""
    qt, kt, wt = (read_only_tensor(torch, np.ascontiguousarray(a, np.float32)).to(torch.bfloat16) for a in (q, k, w))
    kt = kt.T
    total = None
    for first in range(0, q.shape[0], chunk):
        part = None
        for h in range(first, first + chunk):
            gated = torch.relu_(qt[h] @ kt).mul_(wt[h])  # (in place: each step rounds to bfloat16 all the same)
            part = gated if part is None else part.add_(gated)
        total = part if total is None else total.add_(part)
    return total.float().numpy()  # type: ignore[union-attr]


def indexer_scores(q: np.ndarray, k: np.ndarray, w: np.ndarray, start: int, chunk: int) -> np.ndarray:
    """The op's ``[B, 1, Sq, T]`` float32 (bfloat16 values) for q ``[B, Hi, Sq, D]``, k ``[B, 1, T, D]``,
    w ``[B, Hi, Sq, 1]`` (values), ``start`` = ``chunk_start_idx`` and heads summed in ``chunk``-head chunks."""
    torch = bf16_torch()
    fast = torch is not None and bf16_products(torch)
    sq, t = q.shape[2], k.shape[2]
    future = np.arange(t)[None, :] > start + np.arange(sq)[:, None]
    out = np.empty((q.shape[0], 1, sq, t), np.float32)
    for b in range(q.shape[0]):
        args = (q[b], k[b, 0], w[b], chunk)
        sums = _head_sums_torch(torch, *args) if fast else _head_sums_numpy(*args)
        out[b, 0] = np.where(future, -np.inf, sums)
    return out


def _resolved_config(arch: Arch, given, both_bfp8: bool):
    """The compute-kernel config the op runs with: the caller's (``given``) fields, an unset fidelity
    (and no config) taking the op's default (LoFi when q and k are both bfloat8_b, else HiFi2)."""
    default = MathFidelity.LoFi if both_bfp8 else MathFidelity.HiFi2
    if given is None:
        return init_device_compute_kernel_config(arch, math_fidelity=default, math_approx_mode=False)
    return init_device_compute_kernel_config(
        arch,
        math_fidelity=given.math_fidelity or default,
        math_approx_mode=given.math_approx_mode,
        fp32_dest_acc_en=given.fp32_dest_acc_en,
        packer_l1_acc=given.packer_l1_acc,
        dst_full_sync_en=given.dst_full_sync_en,
        throttle_level=given.throttle_level,
    )


def _check_tensors(named: dict[str, Tensor]) -> tuple[tuple[int, ...], int]:
    """tt-metal's checks of q, k and weights; returns (q's shape, T)."""
    for name, tensor in named.items():
        if tensor.spec.memory_config.is_sharded():
            raise MeshnnValueError(f"ttnn.{OP}: {name} must use interleaved memory")
    q, k, w = (tuple(t.shape) for t in named.values())
    if len(q) != 4 or len(k) != 4 or len(w) != 4:
        raise MeshnnValueError(f"ttnn.{OP}: q, k, weights must be rank 4, got {list(q)}, {list(k)}, {list(w)}")
    if k[1] != 1:
        raise MeshnnValueError(f"ttnn.{OP}: k must be single-head [B, 1, T, D], got {k[1]} heads")
    if q[3] != k[3]:
        raise MeshnnValueError(f"ttnn.{OP}: q head dim {q[3]} != k head dim {k[3]}")
    if w[1:] != (q[1], q[2], 1):
        raise MeshnnValueError(f"ttnn.{OP}: weights must be [B, Hi, Sq, 1] matching q {list(q)}, got {list(w)}")
    if not q[0] == k[0] == w[0]:
        raise MeshnnValueError(f"ttnn.{OP}: batch mismatch (q {q[0]}, k {k[0]}, weights {w[0]})")
    if q[0] != 1:
        raise MeshnnValueError(f"ttnn.{OP}: batch 1 only, got {q[0]}")
    require(OP, "weights", named["weights"], (DataType.BFLOAT16,), None)
    require(OP, "q", named["q"], MATMUL_DTYPES, None)
    require(OP, "k", named["k"], MATMUL_DTYPES, None)
    if any(t.layout is not Layout.TILE for t in named.values()):
        raise MeshnnValueError(f"ttnn.{OP}: q, k, weights must be TILE layout")
    return q, k[2]


def _check_l1(mesh, config: IndexerScoreProgramConfig, shape: tuple[int, ...], named: dict[str, Tensor]) -> None:
    """The program's circular buffers fit a core's L1 above its reserved base (tt-metal fails at
    their allocation otherwise)."""
    bfp8 = [named[n].dtype is DataType.BFLOAT8_B for n in ("q", "k")]
    arch = mesh.system.arch_spec
    size = arch.l1_unreserved_base + circular_buffer_bytes(config, shape, *bfp8)
    if size > arch.worker_l1_size:
        raise MeshnnValueError(
            f"ttnn.{OP}: the circular buffers grow to {size} B, beyond max L1 size of {arch.worker_l1_size} B; "
            "reduce q_chunk_size, k_chunk_size or head_group_size (program_config)"
        )


@register(OP, kind=OpKind.TRANSFORMER, family=OpFamily.REDUCTION, device_operation="IndexerScoreDeviceOperation")
def indexer_score(
    q: Tensor,
    k: Tensor,
    weights: Tensor,
    *,
    chunk_start_idx: int = 0,
    program_config: IndexerScoreProgramConfig | None = None,
    compute_kernel_config: object = None,
) -> Tensor:
    """``[B, 1, Sq, T]`` BFLOAT16 ROW_MAJOR: the heads' gated relu scores of each query against each key
    it sees, -inf for the others (see the module's text).  ``program_config`` None: the default config."""
    start = uint_arg(OP, "chunk_start_idx", chunk_start_idx)
    config = IndexerScoreProgramConfig() if program_config is None else program_config
    if not isinstance(config, IndexerScoreProgramConfig):
        raise MeshnnTypeError(f"ttnn.{OP}: program_config must be a ttnn.IndexerScoreProgramConfig, got {config!r}")
    given = check_compute_kernel_config(OP, compute_kernel_config)
    named = {name: device_input(OP, name, t) for name, t in (("q", q), ("k", k), ("weights", weights))}
    mesh = same_mesh(OP, named)
    if mesh.arch() is not Arch.BLACKHOLE:
        raise MeshnnValueError(f"ttnn.{OP}: indexer_score is only supported on Blackhole, got {mesh.arch().name}")
    both_bfp8 = named["q"].dtype is DataType.BFLOAT8_B and named["k"].dtype is DataType.BFLOAT8_B
    kernel_config = _resolved_config(mesh.arch(), given, both_bfp8)
    if kernel_config.fp32_dest_acc_en:
        raise MeshnnValueError(f"ttnn.{OP}: requires fp32_dest_acc_en=false (bf16 DEST) (compute_kernel_config)")
    if kernel_config.dst_full_sync_en:
        raise MeshnnValueError(f"ttnn.{OP}: requires dst_full_sync_en=false (half-sync) (compute_kernel_config)")
    q_shape, t = _check_tensors(named)
    check_config(OP, config, q_shape, t, start)
    chunk = head_chunk(config, q_shape[1])
    _check_l1(mesh, config, q_shape, named)
    x = named["q"]
    spec = out_spec_like(x, shape=(q_shape[0], 1, q_shape[2], t), dtype=DataType.BFLOAT16, layout=Layout.ROW_MAJOR,
                         memory_config=x.spec.memory_config, op=OP)  # fmt: skip
    specs = [s.spec for s in named.values()]  # (the kernel holds no tensor: a trace must not keep it allocated)

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], _coords: tuple[MeshCoordinate, ...]) -> None:
        qv, kv, wv = (logical_values(r, s) for r, s in zip(in_rows, specs, strict=True))
        scores = np.stack([indexer_scores(qv[i], kv[i], wv[i], start, chunk) for i in range(qv.shape[0])])
        write_values(out_rows[0], scores, spec, exact=True)

    attrs = {
        "chunk_start_idx": start,
        "program_config": config,
        "compute_kernel_config": kernel_config,
    }
    return launch(OP, mesh, list(named.values()), [Output(spec)], kernel, rowwise=True, attrs=attrs)[0]
