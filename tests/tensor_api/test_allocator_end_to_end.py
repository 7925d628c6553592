"""tests/golden/allocator.json end to end: every step through ttnn.allocate_tensor_on_device and
ttnn.deallocate on an opened mesh: addresses, page sizes, padded shapes, memory views and the
live buffer list after each step, and the failing steps failing with tt-metal's message."""

from __future__ import annotations

import json
import pathlib

import pytest

import meshnn as ttnn

GOLDEN = json.loads((pathlib.Path(__file__).parents[1] / "golden" / "allocator.json").read_text())
SYSTEM_OF = {"wormhole_n150": "n150", "wormhole_n150_l1small_trace": "n150", "wormhole_t3k": "t3k"}
DTYPES = {
    "bf16": ttnn.bfloat16,
    "f32": ttnn.float32,
    "bfp8": ttnn.bfloat8_b,
    "bfp4": ttnn.bfloat4_b,
    "u8": ttnn.uint8,
    "u32": ttnn.uint32,
}
SHARD_GRIDS = {"s1": ttnn.CoreGrid(x=8, y=1), "s2": ttnn.CoreGrid(x=4, y=1), "s3": ttnn.CoreGrid(x=2, y=2)}


def memory_config(step: dict) -> ttnn.MemoryConfig:
    memory = step["memory"]
    if memory == "DRAM":
        return ttnn.DRAM_MEMORY_CONFIG
    if memory == "L1":
        return ttnn.L1_MEMORY_CONFIG
    if memory == "L1_SMALL":
        return ttnn.MemoryConfig(ttnn.TensorMemoryLayout.INTERLEAVED, ttnn.BufferType.L1_SMALL)
    strategy = {
        "L1_HEIGHT_SHARDED": ttnn.ShardStrategy.HEIGHT,
        "L1_WIDTH_SHARDED": ttnn.ShardStrategy.WIDTH,
        "L1_BLOCK_SHARDED": ttnn.ShardStrategy.BLOCK,
    }[memory]
    return ttnn.create_sharded_memory_config(step["shape"], SHARD_GRIDS[step["name"][:2]], strategy)


def buffer_listing(mesh: ttnn.MeshDevice) -> list[dict]:
    rows = []
    for buffer in mesh.live_buffers():
        layout = buffer.layout
        if layout.shard is None:
            pages_per_bank = -(-layout.num_pages // mesh.get_memory_view(layout.buffer_type).num_banks)
        else:
            pages_per_bank = layout.shard.pages_per_shard
        rows.append(
            {
                "address": buffer.address(),
                "type": str(layout.buffer_type),
                "layout": str(layout.memory_layout),
                "device_id": 0,
                "max_size_per_bank": pages_per_bank * layout.page_size,
            }
        )
    return rows  # live_buffers() lists by buffer type, then address, as ttnn's report does


@pytest.mark.parametrize("config", GOLDEN["configs"], ids=lambda c: c["config"]["name"])
def test_the_golden_script_through_tensors(config):
    kwargs = config["config"]["open_kwargs"]
    mesh = ttnn.open_mesh_device(
        ttnn.MeshShape(config["config"]["mesh"]), system=SYSTEM_OF[config["config"]["name"]], **kwargs
    )
    live: dict[str, ttnn.Tensor] = {}
    for step in config["steps"]:
        if step["op"] == "dealloc":
            ttnn.deallocate(live.pop(step["name"]))
        else:
            layout = ttnn.TILE_LAYOUT if step["layout"] == "TILE" else ttnn.ROW_MAJOR_LAYOUT
            args = (ttnn.Shape(step["shape"]), DTYPES[step["dtype"]], layout, mesh, memory_config(step))
            if "result" in step:
                with pytest.raises(ttnn.MeshnnError) as failure:
                    ttnn.allocate_tensor_on_device(*args)
                assert str(failure.value).startswith(step["result"].split("info: | ", 1)[1])
            else:
                tensor = ttnn.allocate_tensor_on_device(*args)
                got = (
                    tensor.buffer_address(),
                    tensor.buffer_page_size(),
                    tensor.buffer_aligned_page_size(),
                    tensor.buffer_num_pages(),
                    list(tensor.padded_shape),
                )
                expected = (
                    step["buffer_address"],
                    step["buffer_page_size"],
                    step["buffer_aligned_page_size"],
                    step["buffer_num_pages"],
                    step["padded_shape"],
                )
                assert got == expected, step["name"]
                live[step["name"]] = tensor
        if "after" in step:
            for buffer_type in ("DRAM", "L1"):
                view = ttnn.get_memory_view(mesh, getattr(ttnn.BufferType, buffer_type))
                assert view.as_dict(with_blocks=False) == step["after"][buffer_type], (step["name"], buffer_type)
            assert len(mesh.live_buffers()) == step["after"]["get_buffers_count_per_device"]["0"]
            assert buffer_listing(mesh) == step["after"]["get_buffers_first_device"], step["name"]
    mesh.close()
