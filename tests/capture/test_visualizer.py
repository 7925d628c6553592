"""ttnn-visualizer 0.108.0 opens a report meshnn wrote, and serves its operations, tensors and buffers.

The visualizer pins tt-perf-report 1.4.0 and pandas < 3, so it lives in a venv of its own:
``$MESHNN_TTNN_VISUALIZER`` names its ``ttnn-visualizer`` executable, else ``.venv-viz/`` of the
repository (``.ci/run`` installs it there), else one on ``PATH``.  The test skips only when none
of them exists.  It starts the visualizer on 127.0.0.1 only, with its data directories under the
test's temporary folder and usage recording off, opens the report through the visualizer's own
``/api/instance/local-paths``, compares what its API serves with the run, and stops it by the
process id it started (the process group it leads), every wait bounded.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

import meshnn as ttnn
from meshnn.capture.tensors import tensor_id

from .reporting import reporting, small_run

REPO = Path(__file__).resolve().parents[2]
ENV = "MESHNN_TTNN_VISUALIZER"
START_TIMEOUT_S = 120
STOP_TIMEOUT_S = 20


def visualizer() -> str | None:
    named = os.environ.get(ENV)
    if named:
        assert Path(named).is_file(), f"${ENV}={named} names no file"
        return named
    local = REPO / ".venv-viz" / "bin" / "ttnn-visualizer"
    return str(local) if local.is_file() else shutil.which("ttnn-visualizer")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """A visualizer process on 127.0.0.1:``port``."""

    def __init__(self, executable: str, data: Path) -> None:
        self.port = free_port()
        env = dict(os.environ)
        env.update(
            APP_DATA_DIRECTORY=str(data),
            REPORT_DATA_DIRECTORY=str(data / "reports"),
            USAGE_RECORDING_DISABLED="true",
            LAUNCH_BROWSER_ON_START="false",
            GUNICORN_WORKERS="1",
        )
        self.log = (data / "visualizer.log").open("w")
        command = [executable, "--host", "127.0.0.1", "--port", str(self.port)]
        self.process = subprocess.Popen(
            command, env=env, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True
        )

    def url(self, route: str) -> str:
        return f"http://127.0.0.1:{self.port}/api/{route}"

    def wait_up(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            assert self.process.poll() is None, f"the visualizer exited with {self.process.returncode}"
            try:
                with urllib.request.urlopen(self.url("up"), timeout=5) as answer:
                    if answer.status == 200:
                        return
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                time.sleep(0.25)
        raise AssertionError(f"the visualizer did not answer within {START_TIMEOUT_S} s")

    def get(self, route: str, instance: str) -> object:
        joiner = "&" if "?" in route else "?"
        with urllib.request.urlopen(self.url(f"{route}{joiner}instanceId={instance}"), timeout=30) as answer:
            assert answer.status == 200, route
            return json.loads(answer.read())

    def open_report(self, profiler: Path, performance: Path) -> str:
        body = json.dumps({"profiler_path": str(profiler), "performance_path": str(performance)}).encode()
        request = urllib.request.Request(
            self.url("instance/local-paths"), body, headers={"Content-Type": "application/json"}, method="POST"
        )
        with urllib.request.urlopen(request, timeout=30) as answer:
            return json.loads(answer.read())["instance_id"]

    def stop(self) -> None:
        """TERM to the process group the started process leads (its id is the group's), then wait
        until no process of the group is alive; KILL the group if one lingers."""
        group = self.process.pid
        for sig in (signal.SIGTERM, signal.SIGKILL):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(group, sig)
            deadline = time.monotonic() + STOP_TIMEOUT_S
            while time.monotonic() < deadline and (self.process.poll() is None or alive_in_group(group)):
                time.sleep(0.1)
            if self.process.poll() is not None and not alive_in_group(group):
                break
        self.log.close()
        assert self.process.poll() is not None and not alive_in_group(group), "the visualizer did not stop"


def alive_in_group(group: int) -> list[int]:
    """The processes of process group ``group`` that are alive (not zombies), from /proc."""
    alive = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError):
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[2]) == group and fields[0] != "Z":
                alive.append(int(stat.parent.name))
    return alive


@pytest.fixture
def server(tmp_path):
    executable = visualizer()
    if executable is None:
        pytest.skip(f"ttnn-visualizer is not installed (.ci/run puts it in .venv-viz/; or set ${ENV})")
    data = tmp_path / "visualizer"
    data.mkdir()
    running = Server(executable, data)
    try:
        running.wait_up()
        yield running
    finally:
        running.stop()
    with socket.socket() as s, pytest.raises(ConnectionRefusedError):  # nothing listens there any more
        s.connect(("127.0.0.1", running.port))


def test_the_visualizer_serves_the_operations_tensors_and_buffers_of_a_meshnn_run(tmp_path, open_mesh, server):
    mesh = open_mesh((1, 2))
    with reporting(tmp_path / "reports", enable_detailed_buffer_report=True) as path:
        t = small_run(mesh)
    instance = server.open_report(path, path / "perf")
    ids = {name: tensor_id(t[name]) for name in ("x", "w", "y", "z", "s")}

    operations = server.get("operations", instance)
    assert [(o["id"], o["name"]) for o in operations] == [(1, "ttnn.add"), (2, "ttnn.matmul"), (3, "ttnn.softmax")]
    assert all("small_run" in o["stack_trace"] for o in operations)
    assert ttnn.graph.extract_calltrace(operations[1]["device_operations"])[:2] == [
        "ttnn::matmul",
        "MatmulDeviceOperation",
    ]

    matmul = server.get("operations/2", instance)
    assert [i["id"] for i in matmul["inputs"]] == [ids["y"], ids["w"]]
    assert [o["id"] for o in matmul["outputs"]] == [ids["z"]]
    assert {b["address"] for b in matmul["buffers"]} >= {t["x"].buffer_address(), t["z"].buffer_address()}

    tensors = {x["id"]: x for x in server.get("tensors", instance)}
    assert set(tensors) == set(ids.values())
    assert tensors[ids["x"]]["address"] == t["x"].buffer_address() and tensors[ids["x"]]["shape"] == "Shape([64, 128])"
    assert tensors[ids["w"]]["buffer_type"] == ttnn.BufferType.DRAM.value

    after_softmax = server.get("operation-buffers/3", instance)
    served = {(b["device_id"], b["address"], b["buffer_type"]) for b in after_softmax["buffers"]}
    live = [(t["x"].buffer_address(), 1), (t["y_address"], 1), (t["w"].buffer_address(), 0)]
    live += [(t["z"].buffer_address(), 0), (t["s"].buffer_address(), 0)]
    assert served == {(d, address, kind) for d in (0, 1) for address, kind in live}
    l1 = server.get("buffers?buffer_type=1", instance)
    assert {(b["device_id"], b["address"]) for b in l1} == {(d, a) for d in (0, 1) for a, k in live if k == 1}

    devices = server.get("devices", instance)
    assert [d["device_id"] for d in devices] == [0, 1]
    performance = server.get("performance/perf-results", instance)
    assert len(performance) == 6  # three ops on two devices
