"""Host <-> device sockets: ``ttnn.H2DSocket`` / ``ttnn.D2HSocket`` and
``ttnn.experimental.recv_async_h2d`` / ``send_async_d2h``.

A socket moves pages unchanged: every page read equals the page written, byte for byte, whatever
the dtype, through a FIFO smaller than the tensor (the ring wraps, each side waits for the other).
The FIFO's state is tt-metal's: ``bytes_sent`` / ``bytes_acked`` counters, each side's page size and
pointer, a page-size change moving the pointer to the next page boundary (to the start, the tail
counted, when none is left).  A read of an empty socket and a write to a full one wait (blocking, as
tt-metal's host spins) and fail after ``MESHNN_WAIT_TIMEOUT``.  The sizes are tt-metal's: PCIe
alignment 64 bytes on Blackhole, 32 on Wormhole; the H2D config page of 44 bytes on the socket core.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import meshnn as ttnn

from .test_op_contract import snapshot

C = ttnn.MeshCoordinate
RM, L1 = ttnn.ROW_MAJOR_LAYOUT, ttnn.L1_MEMORY_CONFIG


@pytest.fixture(scope="module")
def p150():
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 1), system="p150")
    yield mesh
    mesh.close()


def core(x=0, y=0, coord=(0, 0)):
    return ttnn.MeshCoreCoord(C(*coord), ttnn.CoreCoord(x, y))


def h2d(mesh, fifo, page=None, mode=ttnn.H2DMode.HOST_PUSH, at=None):
    socket = ttnn.H2DSocket(mesh, at or core(), ttnn.BufferType.L1, fifo, mode)
    if page:
        socket.set_page_size(page)
    return socket


def d2h(mesh, fifo, page=None, at=None):
    socket = ttnn.D2HSocket(mesh, at or core(1, 0), fifo)
    if page:
        socket.set_page_size(page)
    return socket


def zeros_like(mesh, t, dtype):
    return ttnn.from_torch(torch.zeros_like(t), dtype=dtype, layout=RM, device=mesh, memory_config=L1)


DTYPES = [
    (ttnn.uint32, torch.int32, 16),
    (ttnn.int32, torch.int32, 16),
    (ttnn.float32, torch.float32, 16),
    (ttnn.bfloat16, torch.bfloat16, 32),
]


@pytest.mark.parametrize("dtype, torch_dtype, width", DTYPES)
def test_h2d_pages_arrive_unchanged_through_a_smaller_fifo(p150, dtype, torch_dtype, width):
    socket = h2d(p150, 192, 64)  # 3 pages of 64 B; the tensor has 10: the ring wraps 3 times
    for it in range(3):
        data = (torch.randn(10, width) * 1000).to(torch_dtype)
        data.view(torch.uint8).view(-1)[:4] = torch.tensor([0xFF, 0x7F, 0x80, 0xC0], dtype=torch.uint8)  # a NaN
        out = zeros_like(p150, data, dtype)
        assert ttnn.experimental.recv_async_h2d(out, socket) == [out]  # dispatched first: it waits for the host
        socket.write_tensor(data)
        ttnn.synchronize_device(p150)
        got = ttnn.to_torch(out).to(torch_dtype)
        assert torch.equal(got.view(torch.uint8), data.view(torch.uint8)), it
    assert socket.fifo.pending_bytes() == 0 and socket.fifo.bytes_sent == 3 * 10 * 64
    socket.barrier(timeout_ms=1000)


@pytest.mark.parametrize("dtype, torch_dtype, width", DTYPES)
def test_d2h_pages_arrive_unchanged_through_a_smaller_fifo(p150, dtype, torch_dtype, width):
    socket = d2h(p150, 128, 64)  # 2 pages; the kernel waits for the host's reads
    data = (torch.randn(7, width) * 1000).to(torch_dtype)
    t = ttnn.from_torch(data, dtype=dtype, layout=RM, device=p150, memory_config=L1)
    assert ttnn.experimental.send_async_d2h(t, socket) == []
    got = torch.zeros_like(data)
    socket.read_tensor(got)
    ttnn.synchronize_device(p150)
    assert torch.equal(got.view(torch.uint8), data.view(torch.uint8))
    socket.barrier(timeout_ms=1000)


def test_a_read_of_an_empty_socket_waits_then_fails(p150, monkeypatch):
    monkeypatch.setenv("MESHNN_WAIT_TIMEOUT", "0.2")
    socket = d2h(p150, 256, 64)
    with pytest.raises(ttnn.QueueError, match="no page"):
        socket.read_tensor(np.zeros(16, dtype=np.uint32))
    assert socket.fifo.pending_bytes() == 0 and socket.discard_pending_pages() == 0


def test_a_write_to_a_full_socket_waits_then_fails_and_keeps_what_fit(p150, monkeypatch):
    monkeypatch.setenv("MESHNN_WAIT_TIMEOUT", "0.2")
    socket = h2d(p150, 128, 64)
    with pytest.raises(ttnn.QueueError, match="full"):
        socket.write_tensor(np.arange(48, dtype=np.uint32))  # 3 pages, room for 2, no receiver
    assert socket.fifo.pending_bytes() == 128 and socket.fifo.free_bytes() == 0
    with pytest.raises(ttnn.QueueError, match="acknowledgement"):
        socket.barrier(timeout_ms=10)
    out = ttnn.from_torch(torch.zeros(2, 16, dtype=torch.int32), dtype=ttnn.uint32, layout=RM, device=p150)
    ttnn.experimental.recv_async_h2d(out, socket)  # drains the two pages that fit
    ttnn.synchronize_device(p150)
    assert ttnn.to_torch(out).flatten().tolist() == list(range(32))
    socket.barrier(timeout_ms=1000)


def test_d2h_discard_acknowledges_the_available_pages_unread(p150):
    socket = d2h(p150, 256, 64)
    t = ttnn.from_torch(torch.arange(48, dtype=torch.int32).reshape(3, 16), dtype=ttnn.uint32, layout=RM, device=p150)
    ttnn.experimental.send_async_d2h(t, socket)
    ttnn.synchronize_device(p150)  # 3 pages fit: the kernel is done
    assert socket.discard_pending_pages() == 3
    assert socket.fifo.pending_bytes() == 0 and socket.fifo.consumer.ptr == 192
    ttnn.experimental.send_async_d2h(t, socket)  # the next pages wrap and still arrive in order
    got = np.zeros(48, dtype=np.uint32)
    socket.read_tensor(got)
    assert got.tolist() == list(range(48))


def test_an_unnotified_read_leaves_the_space_unseen_by_the_sender(p150):
    socket = d2h(p150, 128, 64)  # 2 pages
    t = ttnn.from_torch(torch.arange(64, dtype=torch.int32).reshape(4, 16), dtype=ttnn.uint32, layout=RM, device=p150)
    ttnn.experimental.send_async_d2h(t, socket)
    first = np.zeros(32, dtype=np.uint32)
    socket.read_tensor(first, notify_sender=False)
    assert first.tolist() == list(range(32))
    assert socket.fifo.pending_bytes() == 0 and socket.fifo.free_bytes() == 0  # the kernel still waits
    assert socket.discard_pending_pages() == 0  # nothing to drop, but it notifies the sender
    rest = np.zeros(32, dtype=np.uint32)
    socket.read_tensor(rest)
    ttnn.synchronize_device(p150)
    assert rest.tolist() == list(range(32, 64))


def test_a_page_size_change_moves_both_pointers_to_the_next_boundary(p150):
    socket = h2d(p150, 320, 64)  # 5 pages of 64 B
    first = ttnn.from_torch(torch.zeros(3, 16, dtype=torch.int32), dtype=ttnn.uint32, layout=RM, device=p150)
    ttnn.experimental.recv_async_h2d(first, socket)
    socket.write_tensor(torch.arange(48, dtype=torch.int32))
    ttnn.synchronize_device(p150)
    assert socket.fifo.producer.ptr == 192 and socket.fifo.bytes_sent == 192
    socket.set_page_size(128)  # the next 128 B boundary (256) leaves no whole page: back to 0, 64 B counted
    assert socket.fifo.producer.ptr == 0 and socket.fifo.producer.curr_size == 256 and socket.fifo.bytes_sent == 256
    second = ttnn.from_torch(torch.zeros(3, 32, dtype=torch.int32), dtype=ttnn.uint32, layout=RM, device=p150)
    ttnn.experimental.recv_async_h2d(second, socket)  # the kernel's page size: the consumer skips the same tail
    data = torch.arange(96, dtype=torch.int32).reshape(3, 32) + 1000
    socket.write_tensor(data)
    ttnn.synchronize_device(p150)
    assert torch.equal(ttnn.to_torch(second).to(torch.int32), data)
    assert socket.fifo.bytes_acked == socket.fifo.bytes_sent == 256 + 3 * 128 + 64  # the second page wrapped: 64 B tail


def test_raw_address_write_and_read_move_whole_pages(p150):
    up, down = h2d(p150, 256, 64), d2h(p150, 256, 64)
    src = np.arange(32, dtype=np.uint32)
    out = ttnn.from_torch(torch.zeros(2, 16, dtype=torch.int32), dtype=ttnn.uint32, layout=RM, device=p150)
    ttnn.experimental.recv_async_h2d(out, up)
    up.write(src.ctypes.data, 2)
    ttnn.experimental.send_async_d2h(out, down)
    dst = np.zeros(32, dtype=np.uint32)
    down.read(dst.ctypes.data, 2)
    assert np.array_equal(dst, src)


def test_a_connector_shares_the_fifo_and_the_ops_refuse_it(p150):
    owner = h2d(p150, 256, 64)
    assert owner.export_descriptor("hd53_test") == "/dev/shm/tt_h2d_hd53_test.bin"
    connector = ttnn.H2DSocket.connect("hd53_test", timeout_ms=1000)
    assert connector.get_mesh_device() is None and connector.get_page_size() == 64
    out = ttnn.from_torch(torch.zeros(1, 16, dtype=torch.int32), dtype=ttnn.uint32, layout=RM, device=p150)
    with pytest.raises(ttnn.MeshnnValueError, match="owner-side"):
        ttnn.experimental.recv_async_h2d(out, connector)
    ttnn.experimental.recv_async_h2d(out, owner)
    connector.write_tensor(torch.arange(16, dtype=torch.int32) + 7)
    ttnn.synchronize_device(p150)
    assert ttnn.to_torch(out).flatten().tolist() == list(range(7, 23))
    with pytest.raises(ttnn.QueueError, match="no socket exported"):
        ttnn.D2HSocket.connect("hd53_test", timeout_ms=10)  # an H2D id is not a D2H one


def test_wormhole_aligns_pages_to_32_bytes():
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 2), system="n300")
    try:
        socket = h2d(mesh, 96, 32, at=core(coord=(0, 1)))  # the second device
        with pytest.raises(ttnn.MeshnnValueError, match="PCIE-aligned"):
            socket.set_page_size(48)
        data = torch.arange(64, dtype=torch.int32).reshape(8, 8)
        mapper = ttnn.ReplicateTensorToMesh(mesh)
        out = ttnn.from_torch(torch.zeros_like(data), dtype=ttnn.uint32, layout=RM, device=mesh, mesh_mapper=mapper)
        ttnn.experimental.recv_async_h2d(out, socket)
        socket.write_tensor(data)
        ttnn.synchronize_device(mesh)
        shards = ttnn.get_device_tensors(out)
        assert torch.equal(ttnn.to_torch(shards[1]).to(torch.int32), data)  # the socket's device only
        assert not ttnn.to_torch(shards[0]).any()
    finally:
        mesh.close()


def test_buffers_are_tt_metals(p150):
    before = snapshot(p150)
    socket = h2d(p150, 1024, mode=ttnn.H2DMode.HOST_PUSH)
    grid = p150.compute_with_storage_grid_size()
    assert socket.config_buffer.size() == 44 and socket.data_buffer.size() == (1024 + 64) * grid.x * grid.y
    assert socket.get_config_buffer_address() == socket.config_buffer.address()
    assert socket.get_active_cores() == [core()] and socket.get_h2d_mode() is ttnn.H2DMode.HOST_PUSH
    pull = h2d(p150, 1024, mode=ttnn.H2DMode.DEVICE_PULL)
    assert pull.data_buffer is None  # its FIFO is in pinned host memory
    down = d2h(p150, 1024)
    assert down.config_buffer.size() == 64 and down.data_buffer is None  # 7 words, 1, 4: each to 16 B
    del socket, pull, down
    assert snapshot(p150) == before


def _refused(mesh, call, error, match):
    before = snapshot(mesh)
    with pytest.raises(error, match=match):
        call()
    assert snapshot(mesh) == before


def test_the_ops_refuse_what_ttnn_refuses_before_anything_runs(p150):
    up, down = h2d(p150, 256, 64), d2h(p150, 256, 64)
    wide = ttnn.from_torch(torch.zeros(2, 32, dtype=torch.int32), dtype=ttnn.uint32, layout=RM, device=p150)
    host = ttnn.from_torch(torch.zeros(2, 16, dtype=torch.int32), dtype=ttnn.uint32, layout=RM)
    pull = h2d(p150, 256, 64, mode=ttnn.H2DMode.DEVICE_PULL)
    recv, send = ttnn.experimental.recv_async_h2d, ttnn.experimental.send_async_d2h
    _refused(p150, lambda: recv(wide, up), ttnn.MeshnnValueError, r"page size \(64\) must equal .* \(128\)")
    _refused(p150, lambda: send(wide, down), ttnn.MeshnnValueError, r"page size \(64\) must equal .* \(128\)")
    _refused(p150, lambda: recv(wide, pull), ttnn.MeshnnValueError, "HOST_PUSH")
    _refused(p150, lambda: recv(host, up), ttnn.MeshnnValueError, "output_tensor")
    _refused(p150, lambda: recv(wide, down), ttnn.MeshnnTypeError, "h2d_socket")
    _refused(p150, lambda: send(wide, up), ttnn.MeshnnTypeError, "d2h_socket")
    _refused(p150, lambda: up.write_tensor(np.zeros(20, dtype=np.uint32)), ttnn.MeshnnValueError, "multiple")
    fresh = h2d(p150, 256)
    _refused(p150, lambda: fresh.write_tensor(np.zeros(16, dtype=np.uint32)), ttnn.MeshnnValueError, "page_size")
    _refused(p150, lambda: fresh.set_page_size(512), ttnn.MeshnnValueError, "FIFO size")
    _refused(p150, lambda: h2d(p150, 100), ttnn.MeshnnValueError, "PCIE-aligned")
    _refused(p150, lambda: d2h(p150, 32), ttnn.MeshnnValueError, "PCIe-aligned")  # Blackhole: 64
    args = (p150, core(), ttnn.BufferType.DRAM, 256, ttnn.H2DMode.HOST_PUSH)
    _refused(p150, lambda: ttnn.H2DSocket(*args), ttnn.MeshnnValueError, "SRAM")
    _refused(p150, lambda: d2h(p150, 256, at=core(99, 0)), ttnn.MeshnnValueError, "worker grid")
    _refused(p150, lambda: d2h(p150, 256, at=core(coord=(0, 1))), ttnn.MeshnnValueError, "not a device")
    # a width whose page is not a multiple of 64: set with page size 0, the kernel's own page size
    socket = h2d(p150, 256)
    assert socket.get_page_size() == 0
    _refused(p150, lambda: recv(host, socket), ttnn.MeshnnValueError, "output_tensor")


def test_a_perf_capture_times_both_ops(p150):
    up, down = h2d(p150, 256, 64), d2h(p150, 256, 64)
    out = ttnn.from_torch(torch.zeros(2, 16, dtype=torch.int32), dtype=ttnn.uint32, layout=RM, device=p150)
    with ttnn.perf_capture() as capture:
        ttnn.experimental.recv_async_h2d(out, up)
        up.write_tensor(torch.arange(32, dtype=torch.int32))
        ttnn.experimental.send_async_d2h(out, down)
        down.read_tensor(np.zeros(32, dtype=np.uint32))
        ttnn.synchronize_device(p150)
    assert capture.skipped == []
    records = capture.recorder(p150).records
    assert [r.desc.op_code for r in records] == ["RecvAsyncH2DDeviceOperation", "SendAsyncD2HDeviceOperation"]
    assert all(r.prediction.total_ns > 0 for r in records)
