"""What the adversarial pass after issue 32 found, on cases the issue did not name: each test
failed before its fix.  Every wait is bounded."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import meshnn as ttnn

from .accounting import check_books, snapshot

L1 = ttnn.L1_MEMORY_CONFIG


def fill_l1_leaving(mesh, pages: int):
    """An L1 tensor that leaves ``pages`` bfloat16 tiles (2 KiB) free in each L1 bank."""
    view = mesh.get_memory_view(ttnn.BufferType.L1)
    tiles = (view.largest_contiguous_bytes_free_per_bank // 2048 - pages) * view.num_banks
    return ttnn.allocate_tensor_on_device(ttnn.Shape([tiles * 32, 32]), ttnn.bfloat16, ttnn.TILE_LAYOUT, mesh, L1)


def test_a_split_that_runs_out_of_memory_midway_leaves_nothing_while_the_error_lives():
    """split makes one slice per piece: the pieces made before the one that did not fit are freed
    at once, not when the error's traceback (which holds them) is dropped."""
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 1), system="n150")
    try:
        x = ttnn.from_torch(np.ones((32, 64 * 32), np.float32), layout=ttnn.TILE_LAYOUT, device=mesh)
        fill = fill_l1_leaving(mesh, 3)  # three of the 32 two-tile pieces fit
        before = snapshot(mesh)
        with pytest.raises(ttnn.OutOfMemoryError) as caught:
            ttnn.split(x, 64, dim=1, memory_config=L1)
        assert caught.value.__traceback__ is not None and snapshot(mesh) == before
        check_books(mesh)
        assert len(mesh.live_buffers()) == 2  # x and fill
        ttnn.deallocate(fill)
    finally:
        ttnn.close_mesh_device(mesh)


# ---------------------------------------------------------------------- settings from the environment

SETTINGS = [
    ("MESHNN_QUEUE_DEPTH", "²", "MESHNN_QUEUE_DEPTH must be a queue depth"),  # "²".isdigit() holds; int("²") fails
    ("MESHNN_SLAB_POOL_BYTES", "²", "MESHNN_SLAB_POOL_BYTES must be a number of bytes"),
    ("MESHNN_DECODED_BYTES", "²", "MESHNN_DECODED_BYTES must be a non-negative integer"),
    ("MESHNN_VALUES_MEMO_BYTES", "²", "MESHNN_VALUES_MEMO_BYTES must be a non-negative integer"),
    ("MESHNN_WIDE_BYTES", "²", "MESHNN_WIDE_BYTES must be a non-negative integer"),
    ("MESHNN_HOST_THREADS", "²", "MESHNN_HOST_THREADS must be a positive integer"),
    ("MESHNN_HOST_THREADS", "100000", "MESHNN_HOST_THREADS must be a positive integer of at most 256"),
    ("PMI_SIZE", "²", "OK"),  # not meshnn's: read as "not launched by MPI"
]

USE = """
import numpy as np, meshnn as ttnn
try:
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 1), system="n150")
    x = ttnn.from_torch(np.ones((1024, 1024), np.float32), dtype=ttnn.bfloat8_b, layout=ttnn.TILE_LAYOUT, device=mesh)
    assert float(ttnn.to_torch(ttnn.add(x, x)).float().mean()) == 2.0
    print("OK")
except ttnn.MeshnnValueError as error:
    print(error)
"""


@pytest.mark.parametrize(("name", "value", "says"), SETTINGS, ids=[f"{n}={v}" for n, v, _ in SETTINGS])
def test_a_setting_that_is_not_a_plain_count_is_refused_by_name(name, value, says):
    """Each of meshnn's counts from the environment is refused by a MeshnnValueError naming it
    (they had raised a raw ValueError from int(), or started 100,000 threads), at import or at use."""
    result = subprocess.run(
        [sys.executable, "-c", USE], capture_output=True, text=True, timeout=120, env=os.environ | {name: value}
    )
    output = result.stdout + result.stderr
    assert says in output and "invalid literal" not in output and "can't start new thread" not in output, output


# ------------------------------------------------------------------------------- zero-size shapes


@pytest.mark.parametrize("dtype", [ttnn.bfloat16, ttnn.float32, ttnn.bfloat8_b], ids=str)
@pytest.mark.parametrize("mkn", [(32, 0, 32), (0, 32, 32), (32, 32, 0)], ids=str)
def test_a_matmul_with_a_zero_size_dim_gives_torchs_zeros(dtype, mkn):
    """A zero-size inner dim sums nothing (torch's zeros); a zero-size outer dim gives an empty
    result.  (The operand decoder had divided by the zero width: a ZeroDivisionError from the queue.)"""
    torch = pytest.importorskip("torch")
    m, k, n = mkn
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 1), system="n150")
    try:
        a, b = (
            ttnn.from_torch(torch.zeros(*shape), dtype=dtype, layout=ttnn.TILE_LAYOUT, device=mesh)
            for shape in ((m, k), (k, n))
        )
        for result in (ttnn.matmul(a, b), ttnn.linear(a, b)):
            values = ttnn.to_torch(result)
            assert tuple(values.shape) == (m, n) and not values.any()
    finally:
        ttnn.close_mesh_device(mesh)


# ------------------------------------------------------------------ errors name the call the user made


@pytest.mark.parametrize("op", ["add", "multiply", "exp", "relu"])
def test_out_of_memory_in_an_element_wise_op_names_it_and_the_users_line(op):
    """The element-wise ops meshnn compiles from tables (frames of ``<ttnn.NAME>``) are meshnn's:
    the error names ``ttnn.add`` at the user's line, not ``ttnn._call.<locals>.call (called at
    <ttnn.add>:2)``."""
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 1), system="n150", execute=False)  # no bytes
    try:
        x = ttnn.allocate_tensor_on_device(ttnn.Shape([32768, 65536]), ttnn.float32, ttnn.TILE_LAYOUT, mesh)
        function = getattr(ttnn, op)
        with pytest.raises(ttnn.OutOfMemoryError) as caught:
            function(x, x) if op in ("add", "multiply") else function(x)
        assert f"In ttnn.{op} (called at {__file__}:" in str(caught.value), str(caught.value)
    finally:
        ttnn.close_mesh_device(mesh)


@pytest.mark.parametrize("path", ["/no/such/folder/config.json", "/"])
def test_a_config_path_that_cannot_be_read_is_refused_by_name(path):
    """$TTNN_CONFIG_PATH naming a missing file or a folder: a MeshnnValueError naming the variable
    and the file (it had been a raw FileNotFoundError / IsADirectoryError out of ``import meshnn``)."""
    result = subprocess.run(
        [sys.executable, "-c", "import meshnn; meshnn.CONFIG"],
        capture_output=True,
        text=True,
        timeout=60,
        env=os.environ | {"TTNN_CONFIG_PATH": path},
    )
    assert result.returncode != 0, result.stdout
    assert f"MeshnnValueError: $TTNN_CONFIG_PATH='{path}' cannot be read: " in result.stderr, result.stderr


# ------------------------------------------------- issue 32's own items, shown through the public calls

BLOCKING_READ = """
import numpy as np, meshnn as ttnn
try:
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 1), system="n150")
    x = ttnn.from_torch(np.ones((32, 32), np.float32), layout=ttnn.TILE_LAYOUT, device=mesh)
    ttnn.synchronize_device(mesh)
    print("READ", float(ttnn.to_torch(ttnn.add(x, x)).float().mean()))
except ttnn.MeshnnValueError as error:
    print(error)
"""


@pytest.mark.parametrize("value", ["nan", "0", "-1", "abc"])
def test_a_bad_wait_timeout_is_refused_by_the_first_call_that_waits(value):
    """Finding 10's MESHNN_WAIT_TIMEOUT values through the public calls (not meshnn.host.settings):
    a MeshnnValueError naming the variable, never a raw ValueError, a wait of NaN seconds or an
    instant timeout."""
    result = subprocess.run(
        [sys.executable, "-c", BLOCKING_READ],
        capture_output=True,
        text=True,
        timeout=60,
        env=os.environ | {"MESHNN_WAIT_TIMEOUT": value},
    )
    assert f"MESHNN_WAIT_TIMEOUT must be a positive number of seconds (at most 1e+09), got '{value}'" in (
        result.stdout
    ), result.stdout + result.stderr


def test_a_zero_size_tensor_round_trips_sharded_over_a_mesh():
    """Finding 10's 0-size dims: a tensor with a 0-size dim allocates and reads back as ttnn's
    (it had been refused with "page_size must be positive")."""
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 2), system="n300")
    try:
        for layout in (ttnn.ROW_MAJOR_LAYOUT, ttnn.TILE_LAYOUT):
            t = ttnn.from_torch(
                np.zeros((2, 0, 32), np.float32),
                dtype=ttnn.float32,
                layout=layout,
                device=mesh,
                mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0),
            )
            back = ttnn.to_torch(t, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0))
            assert tuple(back.shape) == (2, 0, 32) and list(t.shape) == [1, 0, 32]
    finally:
        ttnn.close_mesh_device(mesh)
