"""What ranks compare before they exchange a tensor's data: the tensor, named the same way on
every rank of a multi-process run.

Lock-step allocation gives a device tensor's MeshBuffer the same address on every rank, so its
buffer type, address and spec (per-shard shape, dtype, layout, memory layout) name it exactly; a
host tensor is named by its spec alone.  A collective or a composed read carries this text in its
rendezvous record (:mod:`meshnn.distributed.rendezvous`): ranks that reach the same operation with
different tensors (two weights read in different orders) are an error naming both, never data.

Layer: tensor.  Imports the tensor modules storage and tensor.
"""

from __future__ import annotations

from meshnn.tensor.storage import DeviceStorage
from meshnn.tensor.tensor import Tensor


def tensor_identity(tensor: Tensor) -> str:
    """``tensor`` as the ranks compare it, e.g. ``DRAM MeshBuffer 0x1a0000 [2, 32, 64] BFLOAT16
    TILE INTERLEAVED`` (a device tensor) or ``host tensor [2, 32, 64] BFLOAT16 TILE``."""
    spec = tensor.spec
    what = f"{list(spec.shape)} {spec.dtype.name} {spec.layout.name}"
    if isinstance(tensor.storage, DeviceStorage):
        buffer = tensor.storage.mesh_buffer
        layout = spec.memory_config.memory_layout.name
        return f"{buffer.buffer_type().name} MeshBuffer {buffer.address():#x} {what} {layout}"
    return f"host tensor {what}"


def operation_on(op: str, tensor: Tensor) -> str:
    """``op`` (a ttnn name) applied to ``tensor``, as the rendezvous records name it."""
    return f"{op} of {tensor_identity(tensor)}"
