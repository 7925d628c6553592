"""A free that reaches the allocator in the middle of one of its own calls on the same thread (a
dropped buffer's ``__del__``, run by the garbage collector while an allocation updates the free
list) waits for that call to finish: the free list stays whole."""

from __future__ import annotations

import meshnn as ttnn
from meshnn.device.allocator import FreeList


def _layout(mesh):
    spec = ttnn.TensorSpec((64, 64), ttnn.bfloat16, ttnn.TILE_LAYOUT, memory_config=ttnn.DRAM_MEMORY_CONFIG)
    return spec.buffer_layout()


def test_a_free_from_a_finalizer_mid_allocation_is_deferred(monkeypatch):
    with ttnn.open_mesh_device(ttnn.MeshShape(1, 1), system="n150") as mesh:
        allocator, layout = mesh.allocator, _layout(mesh)
        free_before = allocator.managers[layout.buffer_type].statistics().total_free_bytes
        a = allocator.allocate(layout)
        b = allocator.allocate(layout)
        real, fired = FreeList._index_set, []

        def mid_update(self, *args):  # the collector runs a finalizer inside the free list's update
            if not fired:
                fired.append(True)
                allocator.deallocate(layout.buffer_type, a)
            return real(self, *args)

        monkeypatch.setattr(FreeList, "_index_set", mid_update)
        c = allocator.allocate(layout)
        monkeypatch.undo()
        assert fired and c not in (a, b)
        assert allocator.allocate(layout) == a  # a's block was freed once the allocation was done
        for address in (a, b, c):
            allocator.deallocate(layout.buffer_type, address)
        assert allocator.managers[layout.buffer_type].statistics().total_free_bytes == free_before
