"""Whether an op over replicated inputs may compute one device's rows and copy them: every input
replicated (by its topology) and its bytes the same on every device (known from a memo made when
they were copied from one device, or compared), and enough bytes that comparing costs less than
computing them all.  Also the values criterion a kernel may choose its path by
(:func:`same_values_on_every_device`).

May import: :mod:`meshnn.mesh`, :mod:`meshnn.tensor` and :mod:`meshnn.ops.memo`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from meshnn.formats.dtypes import DataType
from meshnn.mesh.mesh_buffer import MeshBuffer
from meshnn.mesh.slab import EQUAL_ROWS
from meshnn.ops.decoded import Decoded
from meshnn.ops.memo import Known
from meshnn.tensor.spec import TensorSpec
from meshnn.tensor.tensor import Tensor
from meshnn.tensor.topology import PlacementReplicate, TensorTopology

SHARED_ROWS_MIN_BYTES = 16 << 10
"""Per-device bytes of an op's largest input or output from which a replicated op computes one
device's rows and copies them (below, comparing the devices' bytes costs more than computing them
all)."""


def all_replicated(inputs: Sequence[Tensor]) -> bool:
    """Whether every one of ``inputs`` is replicated over the mesh (by its topology)."""
    seen = None
    for t in inputs:
        topology = t.tensor_topology()
        if topology is seen:  # e.g. add(x, x): asked once
            continue
        if not _replicated(topology):
            return False
        seen = topology
    return True


KNOWN_ROWS_MIN_BYTES = 32 << 10
"""Bytes over every local device of an op's largest input or output from which a replicated op
whose inputs a memo knows equal on every device computes one device's rows and copies them
(measured on a 32x32 bfloat16 add: on 8 devices computing them all is cheaper, on 32 copying)."""


def inputs_alike(rows: Sequence[np.ndarray], buffers: Sequence[MeshBuffer], specs: Sequence[TensorSpec]) -> bool:
    """Whether a kernel over the slab ``rows`` (the inputs' first, then the outputs') may run on
    the first device's rows only: every input (its buffer and spec) holds the same bytes on every
    device, compared when its largest rows reach :data:`SHARED_ROWS_MIN_BYTES`; smaller rows cost
    less to compute than to compare, and are only known equal from a memo, when all the devices'
    rows reach :data:`KNOWN_ROWS_MIN_BYTES`."""
    widest = 0
    for r in rows:  # (loops: cheaper than generators for an op's few buffers)
        if r.shape[1] > widest:
            widest = r.shape[1]
    if widest >= SHARED_ROWS_MIN_BYTES:
        return all(_equal_rows(r, b, spec) for r, b, spec in zip(rows, buffers, specs, strict=False))
    if widest * rows[0].shape[0] < KNOWN_ROWS_MIN_BYTES:
        return False
    return not [b for b, spec in zip(buffers, specs, strict=False) if not _known_equal(b, spec)]


def _known_equal(buffer: MeshBuffer, spec: TensorSpec) -> bool:
    """Whether a memo says every device holds the same bytes of ``buffer`` (nothing compared)."""
    known = buffer.memo
    if known is EQUAL_ROWS:
        return True
    if type(known) is Decoded or type(known) is Known:
        return known.equal_rows and (type(known) is Known or known.spec is spec or known.spec == spec)
    return False


def same_values_on_every_device(values: np.ndarray) -> bool:
    """Whether the stacked ``(k, ...)`` float32 ``values`` of a kernel's input are bit for bit the
    same on every device: at once when they come from a memo of one device's values (broadcast),
    else compared.  A criterion of the values alone, so a kernel that chooses its path by it
    gives the same bytes with memos on and off."""
    if values.shape[0] < 2 or values.strides[0] == 0:
        return True
    bits = values.view(np.uint32) if values.dtype == np.float32 else values
    return _same_on_every_device(bits.reshape(bits.shape[0], -1))  # a row a device (a copy only if strided)


def _equal_rows(rows: np.ndarray, buffer: MeshBuffer, spec: TensorSpec) -> bool:
    """Whether every device holds the same bytes in ``rows``: known from a memo made when they
    were copied from one device, or compared."""
    known = buffer.memo
    if known is EQUAL_ROWS:  # written from one host array to every device
        return True
    if type(known) is Decoded and known.equal_rows and (known.spec is spec or known.spec == spec):
        return True  # (one row of values for every device: made from bytes known equal on all)
    if type(known) is Known:
        if known.equal_rows:
            return True
        exact = spec.dtype in (DataType.BFLOAT16, DataType.FLOAT32)
        if exact and (known.spec is spec or known.spec == spec) and known.values.shape[0] == rows.shape[0]:
            # the values are the logical bytes widened (bfloat16 << 16): equal values, equal bytes
            if not _same_on_every_device(known.values.reshape(rows.shape[0], -1).view(np.uint32)):
                return False
            if spec.explicit_padded_shape is None and tuple(spec.padded_shape) == tuple(spec.shape):
                return True  # no tile padding: the values are all the bytes
    if buffer.has_deferred_write():
        buffer.settle()
    return _same_on_every_device(rows)


def _replicated(topology: TensorTopology) -> bool:
    return all(type(p) is PlacementReplicate for p in topology.placements)


def _same_on_every_device(rows: np.ndarray) -> bool:
    """Whether the ``(k, bytes)`` rows are all equal (8 bytes at a time when they can be)."""
    if rows.shape[0] < 2:
        return True
    if rows.flags.c_contiguous and rows.shape[1] % 8 == 0:
        rows = rows.view(np.uint64)
    if not (rows[1:, :8] == rows[:1, :8]).all():
        return False  # most tensors that differ do so at once
    return bool((rows[1:] == rows[:1]).all())
