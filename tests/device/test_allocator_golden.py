"""tests/golden/allocator.json reproduced through the device layer: facts, views and addresses.

The golden script allocated tensors through ttnn; here each step is driven with the buffer
sizes the golden file records (page size x page count), so this test pins the allocator alone.
"""

from __future__ import annotations

import json
import pathlib

import pytest

from meshnn.device.arch import SYSTEMS
from meshnn.device.bank import DeviceAllocator
from meshnn.device.buffer import (
    BufferLayout,
    BufferType,
    ShardSpec,
    ShardSpecBuffer,
    TensorMemoryLayout,
)
from meshnn.device.core import CoreGrid
from meshnn.errors import MeshnnError, OutOfMemoryError

GOLDEN = json.loads((pathlib.Path(__file__).parents[1] / "golden" / "allocator.json").read_text())
CONFIGS = {c["config"]["name"]: c for c in GOLDEN["configs"]}
SYSTEM_OF = {"wormhole_n150": "n150", "wormhole_n150_l1small_trace": "n150", "wormhole_t3k": "t3k"}
MEMORY = {
    "DRAM": (BufferType.DRAM, TensorMemoryLayout.INTERLEAVED),
    "L1": (BufferType.L1, TensorMemoryLayout.INTERLEAVED),
    "L1_SMALL": (BufferType.L1_SMALL, TensorMemoryLayout.INTERLEAVED),
    "L1_HEIGHT_SHARDED": (BufferType.L1, TensorMemoryLayout.HEIGHT_SHARDED),
    "L1_WIDTH_SHARDED": (BufferType.L1, TensorMemoryLayout.WIDTH_SHARDED),
    "L1_BLOCK_SHARDED": (BufferType.L1, TensorMemoryLayout.BLOCK_SHARDED),
}
# The golden script's shard specs: (core grid, shard shape in elements, page grid of the tensor).
SHARDS = {
    "s1": ((8, 1), (32, 64), (8, 2)),
    "s2": ((4, 1), (64, 64), (2, 8)),
    "s3": ((2, 2), (64, 64), (4, 4)),
}
TILE_BYTES = {"bf16": 2048, "f32": 4096}


def golden_error_text(result: str) -> str:
    return result.split("info: | ", 1)[1]


def layout_of(step: dict) -> BufferLayout:
    buffer_type, memory_layout = MEMORY[step["memory"]]
    if "buffer_page_size" in step:
        page, pages = step["buffer_page_size"], step["buffer_num_pages"]
    else:  # a failing step records no sizes: every failing step is a tiled tensor
        page = TILE_BYTES[step["dtype"]]
        pages = step["shape"][-1] * step["shape"][-2] // 1024
    shard = None
    if memory_layout.is_sharded:
        grid, shape, pages_2d = SHARDS[step["name"][:2]]
        shard = ShardSpecBuffer(ShardSpec(CoreGrid(*grid).to_core_range_set(), shape), (32, 32), pages_2d)
    return BufferLayout(page * pages, page, buffer_type, memory_layout, shard)


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_device_facts_and_initial_views(name):
    config = CONFIGS[name]
    allocator = DeviceAllocator(SYSTEMS[SYSTEM_OF[name]], **config["config"]["open_kwargs"])
    facts = config["facts"]
    for buffer_type in ("DRAM", "L1", "L1_SMALL", "TRACE"):
        view = allocator.memory_view(BufferType[buffer_type]).as_dict()
        assert view == facts[f"memory_view_{buffer_type}"]
        assert allocator.base_address(BufferType[buffer_type]) == facts[f"allocator_base_address_{buffer_type}"]
    assert allocator.device_info() == facts["device_info"]
    arch = allocator.arch
    assert (arch.dram_alignment, arch.l1_alignment) == (
        facts["get_dram_alignment"],
        facts["get_l1_alignment"],
    )
    assert arch.max_worker_l1_unreserved == facts["get_max_worker_l1_unreserved_size"]


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_every_step_of_the_script(name):
    config = CONFIGS[name]
    allocator = DeviceAllocator(SYSTEMS[SYSTEM_OF[name]], **config["config"]["open_kwargs"])
    live: dict[str, tuple[BufferType, int]] = {}
    for step in config["steps"]:
        if step["op"] == "dealloc":
            allocator.deallocate(*live.pop(step["name"]))
        elif "result" in step:
            before = {t: allocator.memory_view(t) for t in BufferType if t is not BufferType.SYSTEM_MEMORY}
            with pytest.raises(MeshnnError) as failure:
                allocator.allocate(layout_of(step))
            assert str(failure.value).startswith(golden_error_text(step["result"]))
            if "Out of Memory" in step["result"]:
                assert isinstance(failure.value, OutOfMemoryError) and isinstance(failure.value, MemoryError)
            after = {t: allocator.memory_view(t) for t in before}
            assert after == before, "a failed allocation changed the allocator"
            assert [v.block_table for v in after.values()] == [v.block_table for v in before.values()]
        else:
            address = allocator.allocate(layout_of(step))
            assert address == step["buffer_address"], step["name"]
            live[step["name"]] = (MEMORY[step["memory"]][0], address)
        if "after" in step:
            for buffer_type in ("DRAM", "L1"):
                view = allocator.memory_view(BufferType[buffer_type]).as_dict(with_blocks=False)
                assert view == step["after"][buffer_type], (step["name"], buffer_type)
