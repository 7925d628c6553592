"""A constant tensor's bytes (``ttnn.full`` / ``zeros`` / ``ones`` on a device), made in device
memory itself: every element, or every row of tiles, of a constant tensor encodes to the same
bytes, so one element (ROW_MAJOR) or one full row of tiles and the last, padded one (TILE) are
encoded, and repeated into each device's memory through a :class:`~meshnn.mesh.HostEncoder`.  No
host copy of the values is made: the host holds at most two rows of tiles, not the whole tensor
in float32 (1 GiB for a 512 MiB bfloat16 tensor) and again in its dtype.  The bytes are those of
encoding the whole tensor (tested against it for every dtype, layout and padding).

May import: :mod:`meshnn.errors`, :mod:`meshnn.formats`, :mod:`meshnn.mesh` and :mod:`meshnn.tensor`.
"""

from __future__ import annotations

import math

import numpy as np

from meshnn.formats.codec import encode
from meshnn.formats.layout import Layout
from meshnn.mesh.transfers import HostEncoder, ShardDataTransfer
from meshnn.tensor.tensor import Tensor


def fill_device_tensor(target: Tensor, value: np.generic) -> bool:
    """Write ``value`` (one element of the dtype's value kind) into every element of the
    replicated device tensor ``target``, padding as the host conversion pads (zeros); False
    (nothing written) for a spec the repetition does not describe (a TILE tensor of rank 1, an
    explicit padded shape)."""
    spec = target.spec
    dims, dtype, layout = tuple(spec.shape), spec.dtype, spec.layout
    size = spec.compute_packed_buffer_size_bytes()
    if spec.explicit_padded_shape is not None or (layout is Layout.TILE and len(dims) < 2):
        return False
    if layout is Layout.ROW_MAJOR:
        unit = encode(np.full((1,) * max(1, len(dims)), value), dtype, layout, tile=spec.tile)
        rows, last = None, None
    else:
        height, width = dims[-2], dims[-1]
        tile_height = spec.tile.tile_shape[0]
        rows = encode(np.full((tile_height, width), value), dtype, layout, tile=spec.tile)
        last = None
        if height % tile_height:
            last = encode(np.full((height % tile_height, width), value), dtype, layout, tile=spec.tile)
        unit = None
    matrices = math.prod(dims[:-2]) if len(dims) >= 2 else 1
    tile_rows = -(-dims[-2] // spec.tile.tile_shape[0]) if len(dims) >= 2 else 1
    if unit is not None and size % unit.size:
        return False

    def make(out: np.ndarray) -> None:
        if unit is not None:
            out.reshape(-1, unit.size)[...] = unit
            return
        grid = out.reshape(matrices, tile_rows, rows.size)
        whole = tile_rows - (last is not None)
        grid[:, :whole] = rows
        if last is not None:
            grid[:, whole] = last

    buffer = target.storage.mesh_buffer
    mesh = buffer.device()
    encoder = HostEncoder(size, make)
    transfers = [ShardDataTransfer(c, encoder) for c in target.storage.coords if mesh.is_local(c)]
    mesh.mesh_command_queue(0).enqueue_write_shards(buffer, transfers, True)
    return True
