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
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

import meshnn as ttnn
from meshnn.capture.tensors import tensor_id

from .graph_repeats import repeats
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


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    executable = visualizer()
    if executable is None:
        pytest.skip(f"ttnn-visualizer is not installed (.ci/run puts it in .venv-viz/; or set ${ENV})")
    data = tmp_path_factory.mktemp("visualizer")
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
    names = ["from_torch", "from_torch", "add", "matmul", "softmax", "deallocate"]  # ttnn's Python ops too
    assert [(o["id"], o["name"]) for o in operations] == [(i, f"ttnn.{n}") for i, n in enumerate(names, 1)]
    assert all("small_run" in o["stack_trace"] for o in operations)
    assert ttnn.graph.extract_calltrace(operations[3]["device_operations"])[:2] == [
        "ttnn::matmul",
        "MatmulDeviceOperation",
    ]

    matmul = server.get("operations/4", instance)
    assert [i["id"] for i in matmul["inputs"]] == [ids["y"], ids["w"]]
    assert [o["id"] for o in matmul["outputs"]] == [ids["z"]]
    assert {b["address"] for b in matmul["buffers"]} >= {t["x"].buffer_address(), t["z"].buffer_address()}

    tensors = {x["id"]: x for x in server.get("tensors", instance)}
    assert set(tensors) == set(ids.values())
    assert tensors[ids["x"]]["address"] == t["x"].buffer_address() and tensors[ids["x"]]["shape"] == "Shape([64, 128])"
    assert tensors[ids["w"]]["buffer_type"] == ttnn.BufferType.DRAM.value

    after_softmax = server.get("operation-buffers/5", instance)
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


# The visualizer's label of an operation: `${id} ${name} (${file}:${line})`, the file and line taken
# from the operation's stack trace by this pattern (its static/assets/index-*.js).
VISUALIZER_LABEL = re.compile(r'File\s+"(?:.+\/)?([^/]+)",\s+line\s+(\d+)')
MODEL = Path(__file__).with_name("viz_model.py")


def meshnn_command() -> list[str]:
    """The ``meshnn`` command of this Python (its console script), else ``python -m meshnn``."""
    script = Path(sys.executable).with_name("meshnn")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "meshnn"]


@pytest.fixture(scope="module")
def model_report(tmp_path_factory) -> Path:
    """The report of ``meshnn run viz_model.py`` run from the script's folder (a relative path),
    asked for as a user asks: $TTNN_CONFIG_OVERRIDES."""
    work = tmp_path_factory.mktemp("model")
    shutil.copy(MODEL, work / MODEL.name)
    overrides = {"enable_fast_runtime_mode": False, "enable_logging": True, "report_name": "viz model"}
    overrides["root_report_path"] = "reports"
    env = {k: v for k, v in os.environ.items() if not k.startswith("TTNN_CONFIG")}
    env |= {"TTNN_CONFIG_OVERRIDES": json.dumps(overrides), "MESHNN_SYSTEM": "t3k"}
    command = [*meshnn_command(), "run", MODEL.name]
    result = subprocess.run(command, cwd=work, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    (report,) = (work / "reports").iterdir()
    return report


def test_every_operation_is_named_by_its_source_line_and_the_topology_has_its_links(model_report, server):
    instance = server.open_report(model_report, model_report / "perf")
    operations = server.get("operations", instance)
    source = MODEL.read_text().splitlines()
    assert len(operations) == 17  # 3 from_torch, exp, 2 x (5 ops and a deallocate), to_torch
    for op in operations:
        label = VISUALIZER_LABEL.search(op["stack_trace"])
        assert label is not None and label.group(1) == MODEL.name, (op["name"], op["stack_trace"])
        line = source[int(label.group(2)) - 1]
        assert op["name"].startswith("ttnn.") and f"{op['name']}(" in line, (op["name"], line)
        assert "<frozen" not in op["stack_trace"] and "meshnn/" not in op["stack_trace"]
        assert op["stack_trace_source_file_id"] == operations[0]["stack_trace_source_file_id"] is not None
    read = server.get(f"remote/stack-trace/read?sourceFileId={operations[0]['stack_trace_source_file_id']}", instance)
    assert read["content"] == MODEL.read_text()

    chips = {int(chip): tuple(place) for chip, place in server.get("mesh-descriptor", instance)["chips"].items()}
    assert chips == {d: divmod(d, 4) for d in range(8)}  # the T3000's 2x4 grid
    links = server.get("cluster-descriptor", instance)["ethernet_connections"]
    pairs = {tuple(sorted((a["chip"], b["chip"]))) for a, b in links}
    neighbours = {(a, b) for a in chips for b in chips if a < b and grid_distance(chips[a], chips[b]) == 1}
    assert len(links) == 20 and pairs == neighbours  # 10 neighbouring pairs, 2 channels each


def grid_distance(a: tuple[int, int], b: tuple[int, int]) -> int:
    return abs(a[0] - b[0]) + abs(a[1] - b[1])


def test_the_graph_page_folds_the_two_identical_blocks(model_report, server):
    instance = server.open_report(model_report, model_report / "perf")
    operations = server.get("operations", instance)
    names = [op["name"] for op in operations]
    first = names.index("ttnn.rms_norm")
    block = ["ttnn.rms_norm", "ttnn.linear", "ttnn.deallocate", "ttnn.relu", "ttnn.linear", "ttnn.all_reduce"]
    assert names[first : first + 12] == block * 2
    assert (operations[first]["id"], len(block), 2) in repeats(operations)
