"""Tensor files: round trips for every dtype and layout, the as_tensor cache, and bad files."""

from __future__ import annotations

import os
import pathlib
import struct

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import meshnn as ttnn

MESHES = {(1, 1): "n150", (2, 4): "t3k", (8, 4): "galaxy"}
DTYPE_LAYOUTS = [
    (d, lay)
    for d in (
        ttnn.float32,
        ttnn.bfloat16,
        ttnn.bfloat8_b,
        ttnn.bfloat4_b,
        ttnn.int32,
        ttnn.uint32,
        ttnn.uint16,
        ttnn.uint8,
    )
    for lay in (ttnn.ROW_MAJOR_LAYOUT, ttnn.TILE_LAYOUT)
    if not (d.is_block_float and lay is ttnn.ROW_MAJOR_LAYOUT)
]


@pytest.fixture(scope="module")
def meshes():
    opened = {s: ttnn.open_mesh_device(ttnn.MeshShape(*s), system=n) for s, n in MESHES.items()}
    yield opened
    for mesh in opened.values():
        mesh.close()


def raw_shards(tensor: ttnn.Tensor) -> dict:
    host = ttnn.from_device(tensor).host_buffer()
    return {c: np.asarray(host.get_shard(c)).copy() for c in host.shard_coords() if host.get_shard(c) is not None}


def values(rng, shape, dtype) -> torch.Tensor:
    if dtype.is_float:
        return torch.from_numpy(rng.standard_normal(shape).astype(np.float32))
    return torch.from_numpy(rng.integers(0, 200, shape).astype(np.int32))


@pytest.mark.parametrize("mesh_shape", list(MESHES), ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize(("dtype", "layout"), DTYPE_LAYOUTS, ids=str)
@pytest.mark.parametrize("placement", ["sharded", "replicated"])
def test_round_trip_keeps_every_byte(tmp_path, meshes, rng, mesh_shape, dtype, layout, placement):
    mesh = meshes[mesh_shape]
    n = mesh.get_num_devices()
    mapper = ttnn.ShardTensorToMesh(mesh, dim=1) if placement == "sharded" else ttnn.ReplicateTensorToMesh(mesh)
    source = values(rng, (3, 20 * n), dtype)
    tensor = ttnn.from_torch(source, dtype=dtype, layout=layout, device=mesh, mesh_mapper=mapper)
    path = tmp_path / "t.tensorbin"
    ttnn.dump_tensor(path, tensor)
    on_device = ttnn.load_tensor(path, device=mesh)
    on_host = ttnn.load_tensor(path)
    assert on_device.storage_type() is ttnn.StorageType.DEVICE and on_host.storage_type() is ttnn.StorageType.HOST
    before = raw_shards(tensor)
    for loaded in (on_device, on_host):
        assert loaded.spec == tensor.spec
        assert loaded.tensor_topology() == tensor.tensor_topology()
        after = raw_shards(loaded)
        assert after.keys() == before.keys()
        assert all(np.array_equal(after[c], before[c]) for c in before)
    if placement == "replicated":  # replicas are stored once
        assert os.path.getsize(path) < 2 * tensor.spec.compute_packed_buffer_size_bytes() + 4096


@pytest.mark.parametrize("nd_shape", [[2, 64, 64], [1, 32, 128]], ids=str)
def test_an_nd_sharded_config_is_made_again_as_it_was_made(tmp_path, meshes, rng, nd_shape):
    """A config made with an N-D shard spec (whether or not it has a 2-D form) loads equal to it,
    on the device and on the host, every byte kept."""
    mesh = meshes[(2, 4)]
    grid = ttnn.CoreRangeSet([ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(2, 2))])
    config = ttnn.MemoryConfig(ttnn.BufferType.L1, ttnn.NdShardSpec(ttnn.Shape(nd_shape), grid))
    tensor = ttnn.from_torch(
        values(rng, (3, 128, 128), ttnn.bfloat16), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh,
        memory_config=config, mesh_mapper=ttnn.ReplicateTensorToMesh(mesh),
    )  # fmt: skip
    ttnn.dump_tensor(tmp_path / "nd.tensorbin", tensor)
    for loaded in (
        ttnn.load_tensor(tmp_path / "nd.tensorbin", device=mesh),
        ttnn.load_tensor(tmp_path / "nd.tensorbin"),
    ):
        assert loaded.spec == tensor.spec and loaded.memory_config() == config
        assert loaded.memory_config().nd_shard_spec == config.nd_shard_spec
        after, before = raw_shards(loaded), raw_shards(tensor)
        assert after.keys() == before.keys() and all(np.array_equal(after[c], before[c]) for c in before)


def test_host_loads_own_their_bytes(tmp_path):
    """A host load reads the file into memory of its own (no map of the file stays behind it)."""
    tensor = ttnn.from_torch(torch.randn(64, 64), dtype=ttnn.float32)
    path = tmp_path / "t.tensorbin"
    ttnn.dump_tensor(path, tensor)
    loaded = ttnn.load_tensor(path)
    base = loaded.host_buffer().get_shard(ttnn.MeshCoordinate(0, 0)).data
    while base.base is not None and not isinstance(base, np.memmap):
        base = base.base
    assert not isinstance(base, np.memmap)
    assert torch.equal(ttnn.to_torch(loaded), ttnn.to_torch(tensor))


def test_writes_are_atomic(tmp_path, monkeypatch):
    path = tmp_path / "t.tensorbin"
    ttnn.dump_tensor(path, ttnn.from_torch(torch.zeros(4, 4), dtype=ttnn.float32))
    before = path.read_bytes()

    def broken_replace(*_):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError):
        ttnn.dump_tensor(path, ttnn.from_torch(torch.ones(8, 8), dtype=ttnn.float32))
    assert path.read_bytes() == before  # the old file is untouched
    assert [p.name for p in tmp_path.iterdir()] == ["t.tensorbin"]  # and no temporary is left


def test_as_tensor_caches_and_rebuilds(tmp_path, meshes):
    mesh = meshes[(2, 4)]
    source = torch.randn(64, 256)
    calls = []

    def preprocess(x):
        calls.append(1)
        return x * 2

    def load(dtype=ttnn.bfloat8_b, dim=1):
        return ttnn.as_tensor(
            source,
            dtype=dtype,
            layout=ttnn.TILE_LAYOUT,
            device=mesh,
            mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=dim),
            cache_file_name=str(tmp_path / "w"),
            preprocess=preprocess,
        )

    first = load()
    assert len(calls) == 1 and len(list(tmp_path.iterdir())) == 1
    second = load()
    assert len(calls) == 1, "the second call must read the cache without converting"
    assert raw_shards(first).keys() == raw_shards(second).keys()
    assert all(
        np.array_equal(a, b) for a, b in zip(raw_shards(first).values(), raw_shards(second).values(), strict=True)
    )
    load(dtype=ttnn.bfloat16)
    assert len(calls) == 2, "a changed dtype rebuilds"
    load(dim=0)
    assert len(calls) == 3, "a changed mapper rebuilds"
    load(dim=0)
    assert len(calls) == 3


@pytest.mark.parametrize("mapper", ["sharded", "rows replicated"])
def test_as_tensor_without_a_cache_file_puts_straight_onto_the_device(meshes, monkeypatch, mapper):
    """With no cache file, ``as_tensor(device=)`` is ttnn's ``from_torch(device=)``: the same bytes
    on every device, its shards encoded straight into the device's memory (no host tensor put
    after; replicas share one), as a model's dummy weights are put."""
    mesh = meshes[(2, 4)]
    source = torch.randn(1, 1, 64, 256).to(torch.bfloat16).transpose(-2, -1)  # a weight read transposed
    dims = (3, 2) if mapper == "sharded" else (None, 3)
    kwargs = dict(dtype=ttnn.bfloat8_b, layout=ttnn.TILE_LAYOUT, memory_config=ttnn.DRAM_MEMORY_CONFIG)
    want = ttnn.from_torch(
        source, device=mesh, mesh_mapper=ttnn.ShardTensor2dMesh(mesh, dims=dims, mesh_shape=(2, 4)), **kwargs
    )

    def no_host_tensor(*args, **kw):
        raise AssertionError("as_tensor put a host tensor onto the device")

    monkeypatch.setattr("meshnn.tensor.files.cache.to_device", no_host_tensor)
    got = ttnn.as_tensor(
        source, device=mesh, mesh_mapper=ttnn.ShardTensor2dMesh(mesh, dims=dims, mesh_shape=(2, 4)), **kwargs
    )
    assert raw_shards(got).keys() == raw_shards(want).keys()
    assert all(np.array_equal(a, b) for a, b in zip(raw_shards(got).values(), raw_shards(want).values(), strict=True))


def test_a_damaged_cache_is_rebuilt(tmp_path):
    source = torch.randn(32, 32)
    args = {"dtype": ttnn.float32, "cache_file_name": str(tmp_path / "w")}
    ttnn.as_tensor(source, **args)
    (cache,) = tmp_path.iterdir()
    cache.write_bytes(cache.read_bytes()[:-7])
    again = ttnn.as_tensor(source, **args)
    assert torch.equal(ttnn.to_torch(again), source)


# ------------------------------------------------------------------------------- bad files


def valid_file(tmp_path: pathlib.Path) -> tuple[pathlib.Path, bytes]:
    tensor = ttnn.from_torch(
        torch.arange(2 * 64 * 32, dtype=torch.float32).reshape(2, 64, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT
    )
    path = tmp_path / "good.tensorbin"
    ttnn.dump_tensor(path, tensor)
    return path, path.read_bytes()


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda b: b[:5], "truncated"),
        (lambda b: b"XXXXXXXX" + b[8:], "magic"),
        (lambda b: b[:8] + struct.pack("<I", 99) + b[12:], "unknown format version 99"),
        (lambda b: b[:12] + struct.pack("<I", 1 << 30) + b[16:], "does not fit"),
        (lambda b: b[:-1], "truncated"),
        (lambda b: b + b"\0", "trailing bytes"),
        (lambda b: b[:-9] + bytes([b[-9] ^ 1]) + b[-8:], "payload checksum mismatch"),
    ],
)
def test_bad_files_raise_naming_the_file_and_the_problem(tmp_path, damage, message):
    path, good = valid_file(tmp_path)
    path.write_bytes(damage(good))
    with pytest.raises(ttnn.TensorFileError, match=message) as failure:
        ttnn.load_tensor(path)
    assert str(path) in str(failure.value) and isinstance(failure.value, ValueError)


def rewritten_header(good: bytes, change) -> bytes:
    import json
    import zlib

    length = struct.unpack_from("<I", good, 12)[0]
    header = json.loads(good[20 : 20 + length])
    change(header)
    raw = json.dumps(header).encode()
    return good[:12] + struct.pack("<II", len(raw), zlib.crc32(raw)) + raw + good[20 + length :]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda h: h["spec"].update(shape=[2, 64, 64]), "payload holds"),
        (lambda h: h["spec"].update(dtype="FLOAT64"), "names no DataType"),
        (lambda h: h["spec"].update(shape=[1 << 50]), "sane integers"),
        (lambda h: h["payloads"][0].update(nbytes=-1), "payload holds"),
        (lambda h: h["shards"][0].update(payload=7), "points at payload 7"),
        (lambda h: h.pop("topology"), "lacks 'topology'"),
        (lambda h: h["spec"].update(layout="__import__('os')"), "names no Layout"),
    ],
)
def test_inconsistent_headers_are_refused(tmp_path, change, message):
    path, good = valid_file(tmp_path)
    path.write_bytes(rewritten_header(good, change))
    with pytest.raises(ttnn.TensorFileError, match=message):
        ttnn.load_tensor(path)


def test_a_bad_file_allocates_nothing_on_the_device(tmp_path, meshes):
    mesh = meshes[(2, 4)]
    path, good = valid_file(tmp_path)
    path.write_bytes(good[:-1] + bytes([good[-1] ^ 0xFF]))
    before = ttnn.get_memory_view(mesh, ttnn.BufferType.DRAM)
    live = len(mesh.live_buffers())
    with pytest.raises(ttnn.TensorFileError):
        ttnn.load_tensor(path, device=mesh)
    assert ttnn.get_memory_view(mesh, ttnn.BufferType.DRAM) == before and len(mesh.live_buffers()) == live


edits = st.one_of(
    st.tuples(st.just("flip"), st.integers(0, 10**9), st.integers(0, 7)),
    st.tuples(st.just("truncate"), st.integers(0, 10**9), st.just(0)),
    st.tuples(st.just("extend"), st.integers(1, 64), st.integers(0, 255)),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(changes=st.lists(edits, min_size=1, max_size=3))
def test_fuzzed_files_load_the_same_tensor_or_raise_a_file_error(tmp_path, meshes, changes):
    mesh = meshes[(1, 1)]
    path, good = valid_file(tmp_path)
    data = bytearray(good)
    for kind, where, value in changes:
        if kind == "flip" and data:
            data[where % len(data)] ^= 1 << value
        elif kind == "truncate":
            del data[where % (len(data) + 1) :]
        elif kind == "extend":
            data += bytes([value]) * where
    path.write_bytes(bytes(data))
    live = len(mesh.live_buffers())
    try:
        loaded = ttnn.load_tensor(path, device=mesh)
    except ttnn.TensorFileError:
        assert len(mesh.live_buffers()) == live, "a failed load left an allocation behind"
        return
    original = ttnn.from_torch(
        torch.arange(2 * 64 * 32, dtype=torch.float32).reshape(2, 64, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT
    )
    assert (
        raw_shards(loaded)[ttnn.MeshCoordinate(0, 0)].tobytes()
        == raw_shards(original)[ttnn.MeshCoordinate(0, 0)].tobytes()
    )
