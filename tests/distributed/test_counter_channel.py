"""ttnn.InterProcessCounterChannel: tt-metal's segment layout (a C++ peer reads the same bytes), the
owner / connector protocol across two processes, u32 wrap-around, and its refusals."""

from __future__ import annotations

import os
import pathlib
import struct
import subprocess
import sys
import uuid

import pytest

import meshnn as ttnn
from meshnn.distributed import counter_channel as cc


@pytest.fixture
def name():
    shm = f"/meshnn_test_{uuid.uuid4().hex[:12]}"
    yield shm
    if os.path.exists(cc.SHM_ROOT + shm):
        os.unlink(cc.SHM_ROOT + shm)


def raw(shm: str) -> tuple[int, int, int, int]:
    data = pathlib.Path(cc.SHM_ROOT + shm).read_bytes()
    return len(data), *(struct.unpack_from("<I", data, offset)[0] for offset in (0, 64, 68))


def test_the_segment_is_tt_metals_layout(name):
    owner = ttnn.InterProcessCounterChannel(name)
    assert raw(name) == (128, 0, 0, 1)  # clean prior stamped by the owner
    owner.inject(5)
    connector = ttnn.InterProcessCounterChannel.connect(name, connect_timeout_ms=0)
    assert raw(name) == (128, 5, 0, 0) and connector.had_clean_prior_shutdown()
    assert connector.try_consume_all() == 5 and raw(name)[2] == 5
    connector.shutdown()
    assert raw(name)[3] == 1
    owner.shutdown()
    assert not os.path.exists(cc.SHM_ROOT + name)


def test_another_process_injects(name):
    code = (
        "import sys, time; sys.path.insert(0, sys.argv[2]);"
        "from meshnn.distributed.counter_channel import InterProcessCounterChannel as C;"
        "o = C(sys.argv[1]); [o.inject(1) for _ in range(7)];"
        "sys.stdout.write('ready\\n'); sys.stdout.flush(); sys.stdin.readline(); o.shutdown()"
    )
    root = str(pathlib.Path(cc.__file__).resolve().parents[2])  # the checkout meshnn is imported from
    child = subprocess.Popen([sys.executable, "-c", code, name, root], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert child.stdout.readline() == b"ready\n"
        connector = ttnn.InterProcessCounterChannel.connect(name, connect_timeout_ms=5000)
        assert connector.pending() == 7 and connector.try_consume_all() == 7 and connector.pending() == 0
        connector.shutdown()
    finally:
        child.stdin.write(b"\n")
        child.stdin.close()
        child.wait(timeout=30)
    assert not os.path.exists(cc.SHM_ROOT + name)


def test_counts_wrap_modulo_2_to_the_32(name):
    owner = ttnn.InterProcessCounterChannel(name)
    connector = ttnn.InterProcessCounterChannel.connect(name)
    owner.inject(2**32 - 3)
    assert connector.try_consume_all() == 2**32 - 3
    owner.inject(10)  # the counter wraps past 0
    assert connector.pending() == 10 and connector.try_consume_all() == 10
    connector.shutdown()
    owner.shutdown()


def test_refusals(name):
    owner = ttnn.InterProcessCounterChannel(name)
    with pytest.raises(RuntimeError, match="File exists"):
        ttnn.InterProcessCounterChannel(name)
    with pytest.raises(RuntimeError, match="requires a connector"):
        owner.try_consume_all()
    connector = ttnn.InterProcessCounterChannel.connect(name)
    with pytest.raises(RuntimeError, match="requires a owner"):
        connector.inject(1)
    owner.shutdown()
    owner.shutdown()  # idempotent
    with pytest.raises(RuntimeError, match="timed out"):
        ttnn.InterProcessCounterChannel.connect(name, connect_timeout_ms=20)
    with pytest.raises(ValueError, match="shm_name"):
        ttnn.InterProcessCounterChannel("no_slash")
    connector.shutdown()
