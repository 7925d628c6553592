"""Reading device tensors back: ``ttnn.from_device`` (every populated shard's bytes, read through
the mesh command queue's ``enqueue_read_shards`` into one host block), the logical values of each
shard (gathered across ranks on a multi-process mesh), and the composed read that puts every shard
straight into its block of the global result.

Layer: tensor.  Imports errors, mesh, the byte formats (encoding) and the tensor modules spec,
storage, composers and tensor.
"""

from __future__ import annotations

import numpy as np

from meshnn.formats.codec import byte_view, decode, decode_many
from meshnn.mesh.coord import MeshCoordinate
from meshnn.mesh.planning import check_executes
from meshnn.mesh.transfers import HostDecoder, ShardDataTransfer
from meshnn.tensor.composers import MeshToTensor
from meshnn.tensor.identity import operation_on
from meshnn.tensor.spec import TensorSpec
from meshnn.tensor.storage import RESULT_ARRAYS, DeviceStorage, DistributedHostBuffer, HostBuffer, HostStorage
from meshnn.tensor.tensor import Tensor, check_tensor


def from_device(
    tensor: Tensor, blocking: bool = True, *, queue_id: int | None = None, cq_id: int | None = None
) -> Tensor:
    """Read a device tensor back into a host tensor with the same shards and topology."""
    check_tensor(tensor)
    if isinstance(tensor.storage, HostStorage):
        return tensor
    buffer, coords = tensor.storage.mesh_buffer, tensor.storage.coords
    mesh = buffer.device()
    check_executes(mesh, f"read the values of a tensor of shape {list(tensor.shape)}")
    size = tensor.spec.compute_packed_buffer_size_bytes()
    local = [c for c in coords if mesh.is_local(c)]
    block = np.empty((len(local), size), np.uint8)  # rows side by side: one copy for all of them
    queue = mesh.mesh_command_queue(queue_of(queue_id, cq_id))
    region = None if size == buffer.device_local_size() else _region(size)
    queue.enqueue_read_shards([ShardDataTransfer(c, block[i], region) for i, c in enumerate(local)], buffer, True)
    host = DistributedHostBuffer(mesh.shape, is_local=mesh.is_local if mesh.context.world_size > 1 else None)
    rows = {c: block[i] for i, c in enumerate(local)}
    for coord in coords:
        host.emplace_shard(coord, lambda c=coord: HostBuffer(rows[c]))
    return Tensor.make(tensor.spec, HostStorage(host), tensor.tensor_topology())


def queue_of(queue_id: int | None, cq_id: int | None) -> int:
    """The command queue a call names (``queue_id`` or its alias ``cq_id``; default 0)."""
    return queue_id if queue_id is not None else (cq_id if cq_id is not None else 0)


def _region(size: int):
    from meshnn.mesh.buffer_config import BufferRegion

    return BufferRegion(0, size)


def composed_from_device(tensor: Tensor, composer: MeshToTensor) -> np.ndarray | None:
    """The composed global array of a device tensor whose shards are all on this process, each
    shard read straight into its block of the result (through the block's byte view, which
    untilizes as it copies) or decoded into it straight out of device memory (a
    :class:`HostDecoder`); None when the tensor does not qualify (then shards are read and
    concatenated).  A large result takes the
    memory of a dropped earlier one (``RESULT_ARRAYS``): its pages are not faulted in again."""
    if not isinstance(tensor.storage, DeviceStorage):
        return None
    buffer, coords = tensor.storage.mesh_buffer, tensor.tensor_topology().mesh_coords
    mesh = buffer.device()
    check_executes(mesh, f"read the values of a tensor of shape {list(tensor.shape)}")
    spec = tensor.spec
    if spec.explicit_padded_shape is not None or not coords or not all(mesh.is_local(c) for c in coords):
        return None
    if set(coords) - set(tensor.storage.coords):
        return None
    shape = tuple(spec.shape)
    global_shape, slots = composer.slots([shape] * len(coords))
    values = np.dtype(np.float32) if spec.dtype.is_block_float else spec.dtype.numpy_dtype
    out = RESULT_ARRAYS.empty(global_shape, values)  # every element is written below
    size = spec.compute_packed_buffer_size_bytes()
    region = None if size == buffer.device_local_size() else _region(size)
    blocks: dict[int, np.ndarray] = {}  # by id of its decoder
    kind = {"dtype": spec.dtype, "layout": spec.layout, "shape": spec.encoded_shape, "tile": spec.tile}

    def together(pairs: list[tuple[HostDecoder, np.ndarray]]) -> None:
        decode_many([(raw, blocks[id(decoder)]) for decoder, raw in pairs], **kind)

    transfers = []
    for coord, slot in zip(coords, slots, strict=True):
        block = out[slot]
        data = byte_view(block, spec.dtype, spec.layout, tile=spec.tile)
        if data is None:
            data = HostDecoder(size, lambda raw, block=block: decode(raw, out=block, **kind), together)
            blocks[id(data)] = block
        transfers.append(ShardDataTransfer(coord, data, region))
    mesh.mesh_command_queue(0).enqueue_read_shards(transfers, buffer, True)
    return out


def decode_shard(raw: np.ndarray, spec: TensorSpec) -> np.ndarray:
    """The logical values of one shard's bytes.  With an explicit padded shape the bytes hold the
    padded array; the logical window is its origin corner, as ttnn reads it."""
    values = decode(raw, spec.dtype, spec.layout, spec.encoded_shape, tile=spec.tile)
    if spec.explicit_padded_shape is None:
        return values
    return np.ascontiguousarray(values[tuple(slice(0, d) for d in spec.shape)])


def decoded_shards(tensor: Tensor) -> list[np.ndarray]:
    """Every shard of ``tensor`` as logical values, in topology order.  A rank that lacks some
    (a mesh spanning ranks) gathers them from the others, each giving every shard of the tensor's
    MeshBuffer it holds: so the ranks that read parts of ``get_device_tensors`` each read the
    parts they hold on their own and meet only for the parts others hold, the k-th such read of
    every rank with the k-th of the others (the same buffer: checked, naming ``tensor``)."""
    what = operation_on("composed read", tensor)
    host = from_device(tensor)
    buffer = host.host_buffer()
    spec = host.spec
    coords = host.tensor_topology().mesh_coords
    local = buffer.local_shards()
    values: dict[MeshCoordinate, np.ndarray] = {}
    for coord in coords:
        if coord in local:
            values[coord] = decode_shard(local[coord].data, spec)
    missing = [c for c in coords if c not in values]
    if missing:
        from meshnn.tensor.device_hooks import gather_remote_shards

        held = _held_shards(tensor) if isinstance(tensor.storage, DeviceStorage) else dict(values)
        values.update(gather_remote_shards(held, missing, what))
    return [values[c] for c in coords]


def padded_values(tensor: Tensor) -> np.ndarray:
    """The values of a one-shard tensor over its padded shape (a TILE tensor's tile padding
    included, as its bytes hold it): ``Tensor.to_torch_with_padded_shape``."""
    host = from_device(tensor)
    spec = host.spec
    shards = list(host.host_buffer().local_shards().values())
    if len(shards) != 1:
        from meshnn.errors import MeshnnValueError

        raise MeshnnValueError(
            f"to_torch_with_padded_shape: the tensor has {len(shards)} shards; read one with get_device_tensors"
        )
    shape = tuple(spec.padded_shape) or (1,)
    return decode(shards[0].data, spec.dtype, spec.layout, shape, tile=spec.tile).reshape(tuple(spec.padded_shape))


def _held_shards(tensor: Tensor) -> dict[MeshCoordinate, np.ndarray]:
    """Every local device's shard of ``tensor``'s MeshBuffer, read with its spec: what this rank
    gives a rank that reads a shard it holds (a part of ``get_device_tensors`` is one coordinate
    of a buffer the parts share)."""
    buffer, spec = tensor.storage.mesh_buffer, tensor.spec  # type: ignore[union-attr]
    mesh = buffer.device()
    local = mesh.local_coords()
    size = spec.compute_packed_buffer_size_bytes()
    block = np.empty((len(local), size), np.uint8)
    region = None if size == buffer.device_local_size() else _region(size)
    transfers = [ShardDataTransfer(c, block[i], region) for i, c in enumerate(local)]
    mesh.mesh_command_queue(0).enqueue_read_shards(transfers, buffer, True)
    return {c: decode_shard(block[i], spec) for i, c in enumerate(local)}
