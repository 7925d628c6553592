"""Tensor files that try to crash or hang the reader, and files that must not lose data:
anything but a regular file, headers that break a JSON parser, a NUL in a path, a file truncated
under a loaded tensor, topology fields that contradict each other or the data, corruption that a
sum of words misses, old versions, permissions, and partial caches (what one MPI rank of several
used to write).  Every refusal is a TensorFileError naming the file; the ones that could hang run
in a subprocess with a timeout."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import textwrap
import zlib

import numpy as np
import pytest
import torch

import meshnn as ttnn


def sharded_file(tmp_path, name="t.tensorbin", mesh_shape=(2, 4)):
    """A 2x4-sharded bfloat16 host tensor's file and bytes (no mesh needed: a host mapper)."""
    x = torch.arange(8 * 32 * 64, dtype=torch.float32).reshape(8 * 32, 64)
    tensor = ttnn.from_torch(
        x,
        dtype=ttnn.bfloat16,
        layout=ttnn.TILE_LAYOUT,
        mesh_mapper=ttnn.ShardTensorToMesh(ttnn.MeshShape(*mesh_shape), dim=0),
    )
    path = tmp_path / name
    ttnn.dump_tensor(path, tensor)
    return path, path.read_bytes()


def with_header(good: bytes, change=None, raw: bytes | None = None) -> bytes:
    """``good`` with its header changed by ``change`` (or replaced by ``raw``), checksum redone."""
    length = struct.unpack_from("<I", good, 12)[0]
    if raw is None:
        header = json.loads(good[20 : 20 + length])
        change(header)
        raw = json.dumps(header).encode()
    return good[:12] + struct.pack("<II", len(raw), zlib.crc32(raw)) + raw + good[20 + length :]


def run_python(code: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=timeout
    )


def test_a_fifo_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "pipe.tensorbin"
    os.mkfifo(fifo)
    result = run_python(f"""
        import meshnn as ttnn
        try:
            ttnn.load_tensor({str(fifo)!r})
        except ttnn.TensorFileError as error:
            print("REFUSED", error)
    """)
    assert "REFUSED" in result.stdout and "not a regular file" in result.stdout, result.stdout + result.stderr
    directory = tmp_path / "folder.tensorbin"
    directory.mkdir()
    with pytest.raises(ttnn.TensorFileError, match="not a regular file"):
        ttnn.load_tensor(directory)


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        (b"[" * 200_000 + b"]" * 200_000, "RecursionError"),
        (b'{"spec": ' + b"9" * 100_000 + b"}", "ValueError"),
        (b"[1, 2]", "not a JSON object"),
    ],
    ids=["nested 200,000 deep", "a 100,000-digit integer", "a list"],
)
def test_headers_that_break_a_json_parser_are_file_errors(tmp_path, raw, problem):
    path, good = sharded_file(tmp_path)
    path.write_bytes(with_header(good, raw=raw))
    with pytest.raises(ttnn.TensorFileError, match=problem) as failure:
        ttnn.load_tensor(path)
    assert str(path) in str(failure.value)


def test_a_nul_in_a_path_is_a_file_error(tmp_path):
    for call in (
        lambda: ttnn.load_tensor(str(tmp_path / "a\0b")),
        lambda: ttnn.dump_tensor("x\0y", ttnn.from_torch(torch.ones(2))),
    ):
        with pytest.raises(ttnn.TensorFileError, match="NUL"):
            call()


def test_a_loaded_host_tensor_survives_its_file_being_truncated(tmp_path):
    """Once loaded, a host tensor has its own bytes: truncating the file in place must not kill the
    process (SIGBUS on a mapped file) nor change the values."""
    path = tmp_path / "big.tensorbin"
    result = run_python(f"""
        import numpy as np, meshnn as ttnn
        x = np.arange(1 << 20, dtype=np.float32).reshape(1024, 1024)
        ttnn.dump_tensor({str(path)!r}, ttnn.from_torch(x))
        loaded = ttnn.load_tensor({str(path)!r})
        with open({str(path)!r}, "r+b") as f:
            f.truncate(100)
        assert np.array_equal(ttnn.to_torch(loaded).numpy(), x)
        print("INTACT")
    """)
    assert result.returncode == 0 and "INTACT" in result.stdout, (result.returncode, result.stderr)


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (lambda h: h["topology"].update(distribution_shape=[(1 << 40) - 1]), "distribution_shape .* positions"),
        (lambda h: h["topology"]["placements"].__setitem__(0, {"shard": 99}), "shard dim 99 is out of range"),
        (lambda h: h["topology"]["placements"].__setitem__(0, {"shard": -99}), "shard dim -99 is out of range"),
        (lambda h: h["shards"].__setitem__(1, dict(h["shards"][0])), "listed twice"),
        (lambda h: h["topology"]["mesh_coords"].__setitem__(1, [0, 0]), "coordinate twice"),
        (lambda h: h["topology"].update(placements=[{"replicate": True}]), "Replicate, but the shards at"),
        (lambda h: h["shards"].pop(), "holds no shard at \\(1, 3\\) of its 8"),
    ],
    ids=[
        "distribution of 2^40-1",
        "shard dim 99",
        "shard dim -99",
        "a shard twice",
        "a coordinate twice",
        "replicate over different bytes",
        "a shard missing",
    ],
)
def test_topology_fields_are_checked_against_each_other_and_the_data(tmp_path, change, problem):
    path, good = sharded_file(tmp_path)
    path.write_bytes(with_header(good, change))
    with pytest.raises(ttnn.TensorFileError, match=problem):
        ttnn.load_tensor(path)


def test_two_compensating_bit_flips_are_caught(tmp_path):
    """+2^k in one 64-bit word and -2^k in another leave a sum of words as it was (version 1's
    checksum loaded such a file as valid): caught for every k tried, the words next to each other,
    one checksum row apart (the same column) and elsewhere."""
    x = np.random.default_rng(5).standard_normal((1024, 64)).astype(np.float32)  # 256 KiB: 8 rows
    path = tmp_path / "t.tensorbin"
    ttnn.dump_tensor(path, ttnn.from_torch(x))
    good = path.read_bytes()
    start = 20 + struct.unpack_from("<I", good, 12)[0]  # the payload (aligned)
    words = np.frombuffer(good, "<u8", offset=start)
    for k in (0, 13, 31, 62, 63):
        for distance in (1, 4096, 5000):
            up = next(i for i in range(10, len(words)) if not (int(words[i]) >> k) & 1)
            down = next(i for i in range(up + distance, len(words)) if (int(words[i]) >> k) & 1)
            changed = words.copy()
            changed[up] += np.uint64(1 << k)  # the bit was 0: +2^k
            changed[down] -= np.uint64(1 << k)  # the bit was 1: -2^k
            assert changed.sum(dtype=np.uint64) == words.sum(dtype=np.uint64)
            path.write_bytes(good[:start] + changed.tobytes())
            with pytest.raises(ttnn.TensorFileError, match="checksum mismatch"):
                ttnn.load_tensor(path)


def test_a_version_1_file_is_refused_by_name(tmp_path):
    path, good = sharded_file(tmp_path)
    path.write_bytes(good[:8] + struct.pack("<I", 1) + good[12:])
    with pytest.raises(ttnn.TensorFileError, match="format version 1, whose payload checksum misses"):
        ttnn.load_tensor(path)


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
def test_files_get_the_users_umask(tmp_path, umask):
    saved = os.umask(umask)
    try:
        path, _ = sharded_file(tmp_path)
    finally:
        os.umask(saved)
    assert path.stat().st_mode & 0o777 == 0o666 & ~umask


def test_a_partial_cache_is_rebuilt(tmp_path):
    """A cache file lacking a shard (as one rank of several wrote them) is a TensorFileError to the
    cache, which converts again and rewrites it whole."""
    mesh_shape = ttnn.MeshShape(2, 4)
    calls = []

    def cached():
        return ttnn.as_tensor(
            torch.arange(8 * 32 * 64, dtype=torch.float32).reshape(8 * 32, 64),
            dtype=ttnn.bfloat16,
            layout=ttnn.TILE_LAYOUT,
            mesh_mapper=ttnn.ShardTensorToMesh(mesh_shape, dim=0),
            cache_file_name=str(tmp_path / "w"),
            preprocess=lambda v: calls.append(1) or v,
        )

    first = cached()
    (cache,) = tmp_path.iterdir()
    cache.write_bytes(with_header(cache.read_bytes(), lambda h: h["shards"].pop()))
    again = cached()
    assert len(calls) == 2, "the partial cache must be converted again"
    assert all(
        np.array_equal(np.asarray(a.data), np.asarray(b.data))
        for a, b in zip(
            first.host_buffer().local_shards().values(), again.host_buffer().local_shards().values(), strict=True
        )
    )
    cached()
    assert len(calls) == 2, "the rewritten cache is whole"
