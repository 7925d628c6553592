"""The float32 matrix products of the attention kernels: ``a @ b`` over stacked (broadcast)
batches, on torch's float32 ``matmul`` when the program imported torch, else numpy's.

Why not numpy alone: an attention is many small products (a head's ``s x d`` by ``d x s_k``);
numpy hands each batch to OpenBLAS, whose threads wait for each other on every one of them, so
on a shared 2-core host a prefill attention's products took 40 to 60 times their single-thread
time (measured: 46 ms against 0.9 ms for a ``[8, 512, 64] @ [8, 64, 128]``), while torch's
batched product took 2 to 9 ms in the same runs (it now runs on the kernel's thread alone, a large
one on torch's threads: :mod:`meshnn.host.omp`).  Both are float32
products and float32 sums (torch's ``matmul`` of float32 is IEEE float32, never a bfloat16 or
TF32 shortcut on the CPU); the order of the sums is each library's, so the path is chosen by
whether torch is imported, never by the data, and a replay takes the path its eager step took.

May import: :mod:`meshnn.host.omp`, :mod:`meshnn.formats.bfp_torch`'s read-only view (numpy, and torch when the
program has imported it).
"""

from __future__ import annotations

import math
import sys

import numpy as np

from meshnn.formats.bfp_torch import read_only_tensor
from meshnn.host import omp


def product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``np.matmul(a, b)`` (batch axes broadcast as numpy broadcasts them): for float32 operands
    of rank 2 or more, torch's product when torch is loaded, a float32 array of its own."""
    torch = sys.modules.get("torch")
    if torch is None or a.ndim < 2 or b.ndim < 2 or a.dtype != np.float32 or b.dtype != np.float32:
        return np.matmul(a, b)
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    left, right = (_as_torch(torch, x, batch) for x in (a, b))
    with omp.wide(math.prod(batch) * a.shape[-2] * a.shape[-1] * b.shape[-1]):
        return torch.matmul(left, right).numpy()


def _as_torch(torch, array: np.ndarray, batch: tuple[int, ...]):
    """``array`` as a torch tensor sharing its memory (torch only reads it: a read-only memo's
    values need no copy), its batch axes expanded to ``batch``."""
    if any(s < 0 for s in array.strides):
        array = np.ascontiguousarray(array)
    return read_only_tensor(torch, array).expand(*batch, *array.shape[-2:])


def softmax_values(scores: np.ndarray, values: np.ndarray, sink: np.ndarray | None) -> np.ndarray:
    """``softmax(scores) @ values`` of a decode attention, over the last axis of each batch matrix
    (a user's kv head), normalised last; a ``sink`` logit (broadcast as ``scores``' row maxima)
    joins the denominator.  A row masked everywhere gives NaN (its output is replaced by the caller)."""
    top = scores.max(axis=-1, keepdims=True)
    if sink is not None:
        top = np.maximum(top, sink)
    with np.errstate(invalid="ignore", divide="ignore"):
        weights = np.exp(scores - top)
        total = weights.sum(axis=-1, keepdims=True)
        if sink is not None:
            total = total + np.exp(sink - top)
        return product(weights, values) / total  # (..., group, d)
