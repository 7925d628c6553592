"""Sockets between meshes: ``ttnn.create_socket_pair`` and ``ttnn.experimental.send_async`` /
``recv_async`` (and the older binding that takes a mesh and a config), ``send_direct_async`` /
``recv_direct_async``.

A socket moves bytes without arithmetic: every received shard equals the sent one byte for byte,
in every dtype; receives take the sends in order; a receive enqueued first waits for its send.
The buffers are tt-metal's: a sender config page of 64 bytes (the 7-word metadata aligned to 16,
then a 16-byte acknowledgement slot and a 16-byte downstream encoding) per sender core, a 44-byte
receiver page per receiver core, both L1 HEIGHT_SHARDED, and the FIFO of ``fifo_size`` bytes on
every worker core (L1) or every DRAM bank (DRAM) of the receiver.
"""

from __future__ import annotations

import gc

import numpy as np
import pytest
import torch

import meshnn as ttnn

C = ttnn.MeshCoordinate


@pytest.fixture(scope="module")
def t3k():
    ttnn.set_fabric_config(ttnn.FabricConfig.FABRIC_1D)  # sockets between devices need the fabric
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 8), system="t3k")
    ttnn.set_fabric_config(ttnn.FabricConfig.DISABLED)
    yield mesh
    mesh.close()


@pytest.fixture
def halves(t3k):
    """The T3000's two 1x4 halves: the sender and the receiver."""
    return t3k.create_submesh(ttnn.MeshShape(1, 4), C(0, 0)), t3k.create_submesh(ttnn.MeshShape(1, 4), C(0, 4))


def config(shape, storage=ttnn.BufferType.L1, fifo=10 * 1024, send=(0, 0), receive=(0, 1)) -> ttnn.SocketConfig:
    connections = [
        ttnn.SocketConnection(
            ttnn.MeshCoreCoord(c, ttnn.CoreCoord(*send)), ttnn.MeshCoreCoord(c, ttnn.CoreCoord(*receive))
        )
        for c in ttnn.MeshCoordinateRange(shape)
    ]
    return ttnn.SocketConfig(connections, ttnn.SocketMemoryConfig(storage, fifo))


def sharded(mesh, seed: int, dtype, shape=(4, 64, 96)) -> ttnn.Tensor:
    values = torch.from_numpy(np.random.default_rng(seed).normal(size=shape).astype(np.float32))
    if dtype == ttnn.uint32:
        values = (values.abs() * 1000).to(torch.int32)
    return ttnn.from_torch(
        values, dtype=dtype, layout=ttnn.TILE_LAYOUT, device=mesh, mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0)
    )


def shards(tensor: ttnn.Tensor) -> list[bytes]:
    """Each device's bytes, as the device holds them."""
    buffer = tensor.storage.mesh_buffer
    size = tensor.spec.compute_packed_buffer_size_bytes()
    return [bytes(row[:size]) for row in buffer.rows()]


def l1_used(mesh) -> int:
    gc.collect()  # (the sockets of earlier tests)
    return mesh.get_memory_view(ttnn.BufferType.L1).total_bytes_allocated_per_bank


@pytest.mark.parametrize("dtype", [ttnn.bfloat16, ttnn.bfloat8_b, ttnn.float32, ttnn.uint32], ids=str)
@pytest.mark.parametrize("storage", [ttnn.BufferType.L1, ttnn.BufferType.DRAM], ids=["L1", "DRAM"])
def test_each_shard_arrives_byte_for_byte(halves, dtype, storage):
    sender, receiver = halves
    send, receive = ttnn.create_socket_pair(sender, receiver, config(sender.shape, storage))
    sent = sharded(sender, 7, dtype)
    out = ttnn.allocate_tensor_on_device(sent.spec, receiver)
    assert ttnn.experimental.send_async(sent, send) == []
    assert ttnn.experimental.recv_async(out, receive) == []
    ttnn.synchronize_device(sender)
    ttnn.synchronize_device(receiver)
    assert shards(out) == shards(sent)
    assert len(set(shards(sent))) == 4  # four different shards, each to its own device


def test_socket_buffers_are_tt_metals(halves):
    sender, receiver = halves
    send, receive = ttnn.create_socket_pair(sender, receiver, config(sender.shape, fifo=4096))
    grid = receiver.compute_with_storage_grid_size()
    assert send.config_buffer.page_size() == 64 and send.config_buffer.size() == 64  # one sender core
    assert receive.config_buffer.page_size() == 44 and receive.config_buffer.size() == 44  # one receiver core
    assert receive.data_buffer.page_size() == 4096 and receive.data_buffer.size() == 4096 * grid.x * grid.y
    assert send.data_buffer is None and receive.get_data_buffer_address() == receive.data_buffer.address()
    for buffer in (send.config_buffer, receive.config_buffer, receive.data_buffer):
        assert buffer.buffer_type() is ttnn.BufferType.L1
    dram = ttnn.create_socket_pair(sender, receiver, config(sender.shape, ttnn.BufferType.DRAM, 4096))[1]
    banks = receiver.dram_grid_size()
    assert dram.data_buffer.buffer_type() is ttnn.BufferType.DRAM
    assert dram.data_buffer.size() == 4096 * banks.x * banks.y
    words = np.frombuffer(bytes(send.config_buffer.rows()[0][:28]), dtype=np.uint32)
    fifo = receive.data_buffer.address()
    assert list(words) == [0, 1, fifo, receive.get_config_buffer_address(), fifo, 4096, 0]
    assert send.get_socket_endpoint_type() is ttnn.SocketEndpoint.SENDER
    assert [c.core_coord for c in receive.get_active_cores()] == [ttnn.CoreCoord(0, 1)] * 4


def test_buffers_are_freed_with_the_sockets(halves):
    sender, receiver = halves
    before = l1_used(sender)
    pair = ttnn.create_socket_pair(sender, receiver, config(sender.shape))
    assert l1_used(sender) > before
    del pair
    gc.collect()
    assert l1_used(sender) == before


def test_receives_take_the_sends_in_order(halves):
    sender, receiver = halves
    send, receive = ttnn.create_socket_pair(sender, receiver, config(sender.shape))
    first, second = sharded(sender, 1, ttnn.bfloat16), sharded(sender, 2, ttnn.bfloat16)
    ttnn.experimental.send_async(first, send)
    ttnn.experimental.send_async(second, send)
    outs = [ttnn.allocate_tensor_on_device(first.spec, receiver) for _ in range(2)]
    for out in outs:
        ttnn.experimental.recv_async(out, receive)
    ttnn.synchronize_device(receiver)
    assert shards(outs[0]) == shards(first) and shards(outs[1]) == shards(second)


def test_a_receive_enqueued_first_waits_for_its_send(halves):
    sender, receiver = halves
    send, receive = ttnn.create_socket_pair(sender, receiver, config(sender.shape))
    sent = sharded(sender, 3, ttnn.bfloat16)
    out = ttnn.allocate_tensor_on_device(sent.spec, receiver)
    ttnn.experimental.recv_async(out, receive)  # returns at once: the receiver's queue waits
    ttnn.experimental.send_async(sent, send)
    ttnn.synchronize_device(receiver)
    assert shards(out) == shards(sent)


def test_a_receive_without_a_send_times_out_naming_the_op(halves, monkeypatch):
    monkeypatch.setenv("MESHNN_WAIT_TIMEOUT", "0.3")
    sender, receiver = halves
    receive = ttnn.create_socket_pair(sender, receiver, config(sender.shape))[1]
    out = ttnn.allocate_tensor_on_device(sharded(sender, 4, ttnn.bfloat16).spec, receiver)
    ttnn.experimental.recv_async(out, receive)
    with pytest.raises(ttnn.MeshnnError, match=r"recv_async: no send_async reached this socket"):
        ttnn.synchronize_device(receiver)


def test_the_older_binding_pairs_ends_by_config(halves):
    sender, receiver = halves
    cfg = config(sender.shape)
    sent = sharded(sender, 5, ttnn.bfloat8_b)
    out = ttnn.allocate_tensor_on_device(sent.spec, receiver)
    before = l1_used(sender)
    ttnn.experimental.send_async(sent, sender, cfg)
    ttnn.experimental.recv_async(out, receiver, cfg)
    ttnn.synchronize_device(receiver)
    assert shards(out) == shards(sent)
    gc.collect()
    assert l1_used(sender) == before  # each call's socket end is freed after it


def test_a_socket_within_one_mesh_moves_between_cores(t3k):
    pair = t3k.create_submesh(ttnn.MeshShape(1, 2), C(0, 0))
    send, receive = ttnn.create_socket_pair(pair, pair, config(pair.shape))
    sent = sharded(pair, 6, ttnn.float32, shape=(2, 32, 32))
    out = ttnn.allocate_tensor_on_device(sent.spec, pair)
    ttnn.experimental.send_async(sent, send)
    ttnn.experimental.recv_async(out, receive)
    ttnn.synchronize_device(pair)
    assert shards(out) == shards(sent)


def test_out_of_memory_leaves_both_allocators_as_they_were(halves):
    sender, receiver = halves
    before = (sender.get_memory_view(ttnn.BufferType.L1), receiver.get_memory_view(ttnn.BufferType.DRAM))
    with pytest.raises(ttnn.OutOfMemoryError):
        ttnn.create_socket_pair(sender, receiver, config(sender.shape, fifo=1 << 30))
    with pytest.raises(ttnn.OutOfMemoryError):
        ttnn.create_socket_pair(sender, receiver, config(sender.shape, ttnn.BufferType.DRAM, 1 << 31))
    after = (sender.get_memory_view(ttnn.BufferType.L1), receiver.get_memory_view(ttnn.BufferType.DRAM))
    assert after == before


def test_sockets_between_devices_need_the_fabric(open_mesh):
    mesh = open_mesh((1, 2), system="n300")  # opened with the fabric disabled
    cross = [
        ttnn.SocketConnection(
            ttnn.MeshCoreCoord(C(0, 0), ttnn.CoreCoord(0, 0)), ttnn.MeshCoreCoord(C(0, 1), ttnn.CoreCoord(0, 0))
        )
    ]
    memory = ttnn.SocketMemoryConfig(ttnn.BufferType.L1, 4096)
    before = mesh.get_memory_view(ttnn.BufferType.L1)
    with pytest.raises(ttnn.MeshnnValueError, match="fabric enabled"):
        ttnn.create_socket_pair(mesh, mesh, ttnn.SocketConfig(cross, memory))
    assert mesh.get_memory_view(ttnn.BufferType.L1) == before
    send, _ = ttnn.create_socket_pair(mesh, mesh, config(mesh.shape))  # core to core within each device: no fabric
    assert send.is_allocated()


def test_one_socket_end_needs_a_peer_rank(halves):
    sender, _ = halves  # (ends between MPI ranks: tests/distributed/test_ttrun.py)
    before = sender.get_memory_view(ttnn.BufferType.L1)
    with pytest.raises(ttnn.MeshnnValueError, match="sender_rank and receiver_rank"):
        ttnn.MeshSocket(sender, config(sender.shape))
    assert sender.get_memory_view(ttnn.BufferType.L1) == before


def test_h2d_mode_is_ttnns_enum_and_the_host_device_sockets_take_it():
    # ttnn's two modes (tt-metal h2d_socket.hpp: HOST_PUSH, DEVICE_PULL, in that order); the sockets
    # that take them are tests/ops/test_hd_sockets.py's
    assert [m.name for m in ttnn.H2DMode] == ["HOST_PUSH", "DEVICE_PULL"]
    assert ttnn.H2DMode.HOST_PUSH is not ttnn.H2DMode.DEVICE_PULL
    assert ttnn.H2DSocket.__name__ == "H2DSocket" and ttnn.D2HSocket.__name__ == "D2HSocket"


# --- send_direct_async / recv_direct_async: the same bytes as send_async, written straight into the
# receiver's output; the socket's FIFO only handshakes, so it must be in L1 and may be smaller than a
# page (tt-metal's test_socket_perf.py gives it 128 bytes).  Pairings that hang a device (a direct
# send to a FIFO receive, wait_only without a static address, a static address that is not the
# output's) are errors here.

send_direct, recv_direct = ttnn.experimental.send_direct_async, ttnn.experimental.recv_direct_async


def arrived(out, sender, receiver) -> list[bytes]:
    """``out``'s shards once both meshes finished their queues (a receive runs asynchronously)."""
    ttnn.synchronize_device(sender)
    ttnn.synchronize_device(receiver)
    return shards(out)


@pytest.mark.parametrize("dtype", [ttnn.bfloat16, ttnn.bfloat8_b, ttnn.uint32], ids=str)
def test_direct_send_arrives_byte_for_byte_through_a_handshake_sized_fifo(halves, dtype):
    sender, receiver = halves
    send, receive = ttnn.create_socket_pair(sender, receiver, config(sender.shape, fifo=128))
    sent = sharded(sender, 11, dtype)
    out = ttnn.allocate_tensor_on_device(sent.spec, receiver)
    with pytest.raises(ttnn.MeshnnValueError, match="fifo size greater than or equal"):
        ttnn.experimental.send_async(sent, send)  # a FIFO send needs a page-sized FIFO
    assert send_direct(sent, send) == []
    received = recv_direct(out, receive)
    assert len(received) == 1 and received[0] is out
    assert arrived(out, sender, receiver) == shards(sent) and len(set(shards(sent))) == 4


def test_static_address_and_wait_only(halves):
    sender, receiver = halves
    send, receive = ttnn.create_socket_pair(sender, receiver, config(sender.shape))
    sent = sharded(sender, 12, ttnn.bfloat16)
    out = ttnn.allocate_tensor_on_device(sent.spec, receiver)
    send_direct(sent, send, static_dst_address=out.buffer_address())
    recv_direct(out, receive, wait_only=True)
    assert arrived(out, sender, receiver) == shards(sent)
    other = ttnn.allocate_tensor_on_device(sent.spec, receiver)
    send_direct(sent, send, static_dst_address=out.buffer_address())
    with pytest.raises(ttnn.MeshnnValueError, match="static_dst_address"):
        recv_direct(other, receive)
        ttnn.synchronize_device(receiver)
    send_direct(sent, send)
    with pytest.raises(ttnn.MeshnnValueError, match="wait_only needs a send_direct_async given static_dst_address"):
        recv_direct(out, receive, wait_only=True)
        ttnn.synchronize_device(receiver)


def test_direct_and_fifo_ops_do_not_pair(halves):
    sender, receiver = halves
    send, receive = ttnn.create_socket_pair(sender, receiver, config(sender.shape))
    sent = sharded(sender, 13, ttnn.bfloat16)
    out = ttnn.allocate_tensor_on_device(sent.spec, receiver)
    before = shards(out)
    send_direct(sent, send)
    with pytest.raises(ttnn.MeshnnValueError, match="receive it with recv_direct_async"):
        ttnn.experimental.recv_async(out, receive)
        ttnn.synchronize_device(receiver)
    ttnn.experimental.send_async(sent, send)
    with pytest.raises(ttnn.MeshnnValueError, match="receive it with recv_async"):
        recv_direct(out, receive)
        ttnn.synchronize_device(receiver)
    assert arrived(out, sender, receiver) == before  # neither wrong pairing wrote the output


def test_bad_inputs_are_refused_before_anything_is_sent(halves):
    sender, receiver = halves
    send, receive = ttnn.create_socket_pair(sender, receiver, config(sender.shape, ttnn.BufferType.DRAM, 4096))
    sent = sharded(sender, 14, ttnn.bfloat16)
    out = ttnn.allocate_tensor_on_device(sent.spec, receiver)
    with pytest.raises(ttnn.MeshnnValueError, match="send_direct_async requires an L1 socket storage type"):
        send_direct(sent, send)
    with pytest.raises(ttnn.MeshnnValueError, match="recv_direct_async requires an L1 socket storage type"):
        recv_direct(out, receive)
    l1_send, l1_receive = ttnn.create_socket_pair(sender, receiver, config(sender.shape))
    with pytest.raises(ttnn.MeshnnValueError, match="requires a SENDER socket"):
        send_direct(sent, l1_receive)
    with pytest.raises(ttnn.MeshnnValueError, match="requires a RECEIVER socket"):
        recv_direct(out, l1_send)
    with pytest.raises(ttnn.MeshnnTypeError, match="static_dst_address must be a buffer address"):
        send_direct(sent, l1_send, static_dst_address=-4)
    with pytest.raises(ttnn.MeshnnTypeError, match="wait_only must be a bool"):
        recv_direct(out, l1_receive, wait_only=1)
    with pytest.raises(ttnn.MeshnnTypeError, match=r"mesh_socket must be a ttnn\.MeshSocket"):
        send_direct(sent, sender)
    assert len(l1_send.channel._items) == 0  # nothing was sent by a refused call
