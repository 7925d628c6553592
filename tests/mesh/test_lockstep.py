"""Lock-step: every device of a mesh holds every buffer at the same address, the one a single chip
would give for the same sequence."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from meshnn.device.arch import SYSTEMS
from meshnn.device.bank import DeviceAllocator
from meshnn.device.buffer import BufferLayout, BufferType
from meshnn.errors import OutOfMemoryError
from meshnn.mesh import (
    DeviceLocalBufferConfig,
    MeshBuffer,
    MeshShape,
    ReplicatedBufferConfig,
    ShardedBufferConfig,
    open_mesh_device,
)

step = st.one_of(
    st.tuples(st.just("replicated"), st.integers(1, 4096), st.sampled_from([BufferType.DRAM, BufferType.L1])),
    st.tuples(st.just("sharded"), st.integers(1, 64), st.sampled_from([BufferType.DRAM, BufferType.L1])),
    st.tuples(st.just("free"), st.integers(0, 10**6), st.just(None)),
)


@settings(max_examples=60, deadline=None)
@given(steps=st.lists(step, max_size=60))
def test_random_sequences_stay_in_lock_step_with_a_single_chip(steps):
    mesh = open_mesh_device(MeshShape(2, 4), system="t3k")
    chip = DeviceAllocator(SYSTEMS["t3k"])
    live: list[tuple[MeshBuffer, BufferType, int]] = []
    try:
        for kind, amount, buffer_type in steps:
            if kind == "free":
                if live:
                    buffer, buffer_type, address = live.pop(amount % len(live))
                    buffer.deallocate()
                    chip.deallocate(buffer_type, address)
                continue
            if kind == "replicated":
                config = ReplicatedBufferConfig(amount * 1024)
            else:  # amount tiles of 32x32 uint32 per device, as a 2x4 grid of shards
                config = ShardedBufferConfig(8 * amount * 4096, (64, 128 * amount), (32, 32 * amount))
            buffer = MeshBuffer.create(config, DeviceLocalBufferConfig(1024, buffer_type), mesh)
            expected = chip.allocate(BufferLayout(buffer.device_local_size(), 1024, buffer_type))
            assert buffer.address() == expected
            live.append((buffer, buffer_type, expected))
            for coord in mesh.shape.coords():
                assert buffer.get_device_buffer(coord).address() == buffer.address()
            for view_type in (BufferType.DRAM, BufferType.L1):
                views = {mesh.get_memory_view(view_type, coord) for coord in mesh.shape.coords()}
                assert views == {chip.memory_view(view_type)}
                assert mesh.get_memory_view(view_type).block_table == chip.memory_view(view_type).block_table
    finally:
        mesh.close()


def test_a_failed_creation_leaves_no_allocation_on_any_device():
    mesh = open_mesh_device(MeshShape(2, 4), system="t3k")
    keep = MeshBuffer.create(ReplicatedBufferConfig(1 << 20), DeviceLocalBufferConfig(4096, BufferType.L1), mesh)
    before = [mesh.get_memory_view(BufferType.L1, c) for c in mesh.shape.coords()]
    try:
        MeshBuffer.create(ReplicatedBufferConfig(1 << 30), DeviceLocalBufferConfig(4096, BufferType.L1), mesh)
    except OutOfMemoryError:
        pass
    else:
        raise AssertionError("expected an out-of-memory error")
    assert [mesh.get_memory_view(BufferType.L1, c) for c in mesh.shape.coords()] == before
    assert mesh.live_buffers() == [keep]
    mesh.close()
