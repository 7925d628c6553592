"""Host <-> device transfers under a perf capture (meshnn.perf.host_transfers): each write to a mesh
and read back is timed per device shard with meshnn.perf.transfer (a remote chip through the
Ethernet tunnel), listed in the summary and never added to a device's time."""

from __future__ import annotations

import numpy as np
import pytest

import meshnn as ttnn
from meshnn.errors import MeshnnValueError
from meshnn.perf.desc import Layout, TensorDesc
from meshnn.perf.host_transfers import Direction, is_remote, page_bytes, time_transfer
from meshnn.perf.systems import machine
from meshnn.perf.transfer import host_read_ns, host_write_ns


def test_pages_are_tiles_or_rows():
    assert page_bytes(TensorDesc((32, 64))) == 2048  # a bfloat16 tile
    assert page_bytes(TensorDesc((32, 64), "BFLOAT8_B")) == 1088
    assert page_bytes(TensorDesc((4, 100), "FLOAT32", Layout.ROW_MAJOR)) == 400


def test_remote_chips_are_the_ones_without_pcie():
    n300, t3k = machine("n300", (1, 2)), machine("t3k", (2, 4))
    assert [is_remote(n300, d) for d in (0, 1)] == [False, True]
    assert [d for d in range(8) if not is_remote(t3k, d)] == [1, 2, 5, 6]
    assert not any(is_remote(machine("galaxy", (8, 4)), d) for d in range(32))
    assert not is_remote(machine("n150", (1, 1)), 0)
    # a 1x2 mesh of a T3000 is its first row's first two chips: chip 0 remote, chip 1 PCIe
    assert [is_remote(machine("t3k", (1, 2)), d) for d in (0, 1)] == [True, False]


def test_a_transfer_is_each_device_shard_in_turn():
    n300 = machine("n300", (1, 2))
    tensor = TensorDesc((1, 32, 2048))  # 64 tiles of 2 KiB a device
    write = time_transfer(n300, "from_torch", Direction.WRITE, tensor, (0, 1))
    local, remote = (
        host_write_ns("wormhole_b0", 64 * 2048, 2048),
        host_write_ns("wormhole_b0", 64 * 2048, 2048, remote=True),
    )
    assert write.ns == pytest.approx(local + remote) and remote > local
    assert (write.nbytes, write.page_bytes, write.remote_devices) == (2 * 64 * 2048, 2048, 1)
    read = time_transfer(n300, "to_torch", Direction.READ, tensor, (0,))
    assert read.ns == pytest.approx(host_read_ns("wormhole_b0", 64 * 2048, 2048)) and read.remote_devices == 0


def test_bad_transfers_are_refused():
    n150 = machine("n150", (1, 1))
    with pytest.raises(MeshnnValueError, match="Direction"):
        time_transfer(n150, "to_torch", "read", TensorDesc((32, 32)), (0,))
    with pytest.raises(MeshnnValueError, match="no device"):
        time_transfer(n150, "to_torch", Direction.READ, TensorDesc((32, 32)), ())


def test_a_capture_times_writes_and_reads_apart_from_the_devices(open_mesh):
    mesh = open_mesh((1, 2))
    values = np.ones((1, 1, 32, 4096), np.float32)
    with ttnn.perf_capture() as capture:
        x = ttnn.from_torch(values, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh,
                            mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=3))  # fmt: skip
        ttnn.from_torch(values)  # a host tensor: no transfer
        y = ttnn.add(x, x)
        ttnn.to_torch(y, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=3))
    assert capture.skipped == []
    write, read = capture.transfers
    assert capture.transfers_of(mesh) == [write, read]
    assert (write.op, write.direction, write.devices) == ("from_torch", Direction.WRITE, (0, 1))
    assert (read.op, read.direction, read.bytes_per_device) == ("to_torch", Direction.READ, 64 * 2048)
    assert read.remote_devices == 1 and read.ns > write.ns > 0  # the tunnel reads back at half its writes' rate
    recorder = capture.recorder(mesh)
    assert len(recorder) == 1  # the add alone: its devices' totals hold no transfer
    assert recorder.total_ns() == pytest.approx(
        sum(r.prediction.kernel_ns + r.prediction.gap_ns for r in recorder.records)
    )
    summary = capture.summary()
    assert "host transfers: 1 write (256.0 KiB), 1 read (256.0 KiB)" in summary
    assert "not in the device totals above" in summary


def test_a_write_with_to_device_is_timed(open_mesh):
    mesh = open_mesh((1, 1), system="p150")
    host = ttnn.from_torch(np.ones((64, 64), np.float32), dtype=ttnn.float32, layout=ttnn.ROW_MAJOR_LAYOUT)
    with ttnn.perf_capture() as capture:
        ttnn.to_device(host, mesh)
    (write,) = capture.transfers
    assert (write.op, write.page_bytes, write.nbytes) == ("to_device", 256, 64 * 256)
    assert write.ns == pytest.approx(host_write_ns("blackhole", 64 * 256, 256))
