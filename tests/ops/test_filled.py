"""``ttnn.full`` / ``zeros`` / ``ones`` on a device make their bytes in device memory: the same
bytes as encoding the whole tensor on the host (every dtype, layout, padding), without a host copy
of the values (traced host memory stays within the device bytes themselves)."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

import meshnn as ttnn

CASES = [
    (dtype, layout, shape)
    for dtype in (ttnn.bfloat16, ttnn.float32, ttnn.bfloat8_b, ttnn.bfloat4_b, ttnn.int32, ttnn.uint16, ttnn.uint8)
    for layout in (ttnn.ROW_MAJOR_LAYOUT, ttnn.TILE_LAYOUT)
    for shape in ((2, 64, 96), (3, 50, 70), (7,), (1, 1, 33, 32))
    if not (dtype.is_block_float and layout is ttnn.ROW_MAJOR_LAYOUT)
]


def device_bytes(tensor: ttnn.Tensor) -> list[bytes]:
    host = ttnn.from_device(tensor).host_buffer()
    return [bytes(np.asarray(host.get_shard(c).data)) for c in host.shard_coords()]


@pytest.fixture(scope="module")
def mesh():
    opened = ttnn.open_mesh_device(ttnn.MeshShape(1, 2), system="t3k")
    yield opened
    opened.close()


@pytest.mark.parametrize(("dtype", "layout", "shape"), CASES, ids=str)
def test_full_on_a_device_has_the_bytes_of_the_whole_tensor_encoded(mesh, dtype, layout, shape):
    value = -1.375 if dtype.is_float else 3
    made = ttnn.full(shape, value, dtype, layout, mesh)
    kind = np.float32 if dtype.is_float else dtype.storage_dtype
    expected = ttnn.from_torch(np.full(shape, value, kind), dtype=dtype, layout=layout, device=mesh)
    assert made.tensor_topology() == expected.tensor_topology()
    assert device_bytes(made) == device_bytes(expected)
    assert device_bytes(ttnn.zeros(shape, dtype, layout, mesh)) == device_bytes(
        ttnn.from_torch(np.zeros(shape, kind), dtype=dtype, layout=layout, device=mesh)
    )


def test_full_makes_no_host_copy_of_the_values(mesh):
    """A 32 MiB bfloat16 tensor on 1x2: the host memory traced while it is made is the two
    devices' 32 MiB each (the simulator keeps device memory on the host) and a row of tiles, not
    a float32 copy (64 MiB) and a bfloat16 one (32 MiB) besides."""
    shape, size = (4096, 4096), 4096 * 4096 * 2
    tracemalloc.start()
    try:
        made = ttnn.full(shape, 0.5, ttnn.bfloat16, ttnn.TILE_LAYOUT, mesh)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 2 * size + (4 << 20), f"peak {peak / 2**20:.1f} MiB for 2 x {size / 2**20:.0f} MiB of device bytes"
    assert float(ttnn.to_torch(ttnn.get_device_tensors(made)[1])[4095, 4095]) == 0.5
