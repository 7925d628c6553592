"""Inputs an adversarial pass tried (issue 26) beyond the bad-input table: integers out of a
dtype's range (ttnn's rule: they wrap, as the golden ctor conversions show), and conversions that
need more host memory than there is (a HostMemoryError naming the sizes, before any device memory
is taken)."""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest
import torch

import meshnn as ttnn
from meshnn.host import memory

GOLDEN = pathlib.Path(__file__).parents[1] / "golden"


def test_out_of_range_integers_wrap_as_ttnn_does():
    """ttnn 0.81.1's ctor wraps integers modulo the target width (golden np.int64->int32 and
    int32->uint8 conversions are 'ok', not errors): 2**40 as int32 is 0, -1 as uint8 is 255."""
    calls = json.loads((GOLDEN / "typecast.json").read_text())["calls"]
    assert calls["np.int64->int32:ctor"] == "ok" and calls["np.int32->uint8:ctor"] == "ok"
    golden = np.load(GOLDEN / "typecast.npz")
    source = golden["np_int64_input"].reshape(-1)
    assert np.array_equal(golden["np_int64_to_int32_ctor"].view(np.int32).reshape(-1), source.astype(np.int32))
    big = ttnn.from_torch(torch.tensor([2**40, 2**40 + 5, -(2**40) - 1]), dtype=ttnn.int32)
    assert ttnn.to_torch(big).tolist() == [0, 5, -1]
    byte = ttnn.from_torch(np.array([-1, 256, 257], np.int32), dtype=ttnn.uint8)
    assert ttnn.to_torch(byte).tolist() == [255, 0, 1]


def test_a_small_conversion_does_not_ask_the_hosts_memory(monkeypatch):
    """Under ``CHECK_MIN_BYTES`` a conversion is not checked (the file read costs more than it);
    from there on it is, and refused when the host lacks the memory."""
    asked = []
    monkeypatch.setattr(memory, "available_bytes", lambda: asked.append(1) or 1 << 19)  # 512 KiB free
    small = ttnn.from_torch(np.ones((64, 1024), np.float32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    assert small.shape == (64, 1024) and not asked  # 128 KiB of bfloat16 and 256 KiB of scratch
    with pytest.raises(ttnn.HostMemoryError):
        ttnn.from_torch(np.ones((256, 1024), np.float32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    assert asked


@pytest.mark.parametrize("on_mesh", [True, False], ids=["onto a mesh", "on the host"])
def test_a_conversion_bigger_than_host_memory_is_refused_before_device_memory(monkeypatch, on_mesh):
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(2, 4), system="t3k")
    try:
        monkeypatch.setattr(memory, "available_bytes", lambda: 1 << 20)  # a machine with 1 MiB free
        x = np.ones((8 * 64, 256), np.float32)  # 512 KiB; eight of it: 2 MiB in bfloat16
        kwargs = {"device": mesh, "mesh_mapper": ttnn.ShardTensorToMesh(mesh, dim=0)} if on_mesh else {}
        before = ttnn.get_memory_view(mesh, ttnn.BufferType.DRAM)
        with pytest.raises(
            ttnn.HostMemoryError, match=r"needs about .* of host memory .* 1.00 MiB available"
        ) as caught:
            ttnn.from_torch(np.concatenate([x] * 8), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, **kwargs)
        assert isinstance(caught.value, MemoryError) and caught.value.available == 1 << 20
        assert caught.value.needed > caught.value.available
        assert ttnn.get_memory_view(mesh, ttnn.BufferType.DRAM) == before and not mesh.live_buffers()
        monkeypatch.setattr(memory, "available_bytes", lambda: 1 << 30)
        small = ttnn.from_torch(x, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, **kwargs)
        assert small.shape == ((64, 256) if on_mesh else (512, 256))  # a shard on each device, or the whole
    finally:
        mesh.close()
