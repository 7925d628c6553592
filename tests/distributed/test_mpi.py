"""Meshes that span processes: the normal test run starts `mpiexec -n 2` (and `-n 4`) on this
machine, bounded by timeouts.  Needs the mpi extra (`pip install 'meshnn[mpi]'`), which CI installs."""

from __future__ import annotations

import os
import pathlib
import shutil
import signal
import subprocess
import sys
import time

import pytest

SCRIPTS = pathlib.Path(__file__).parent / "scripts"
MPIEXEC = shutil.which("mpiexec", path=os.path.dirname(sys.executable)) or shutil.which("mpiexec")

try:
    import mpi4py
except ImportError:
    mpi4py = None

pytestmark = pytest.mark.skipif(
    MPIEXEC is None or mpi4py is None, reason="the mpi extra is not installed (pip install 'meshnn[mpi]')"
)


def mpirun(
    ranks: int,
    script: str,
    *args: str,
    timeout: float = 120,
    via_meshnn_run: bool = False,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess:
    runner = [sys.executable, "-m", "meshnn", "run"] if via_meshnn_run else [sys.executable]
    return launch([MPIEXEC, "-n", str(ranks), *runner, str(SCRIPTS / script), *args], timeout, env)


def launch(command: list[str], timeout: float, env: dict[str, str] | None) -> subprocess.CompletedProcess:
    """Run ``command`` in a session of its own; past ``timeout`` every process of it is killed
    (the launcher and its ranks alike: none is left behind) and the test fails."""
    environment = os.environ | {"MESHNN_DEBUG_LOCKSTEP": "1", "PYTHONUNBUFFERED": "1"} | (env or {})
    child = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment, start_new_session=True
    )
    try:
        stdout, stderr = child.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(child.pid, signal.SIGKILL)
        child.communicate()
        raise
    return subprocess.CompletedProcess(command, child.returncode, stdout, stderr)


def ok(result: subprocess.CompletedProcess, ranks: int) -> None:
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count("OK rank") == ranks, result.stdout  # ranks may interleave their lines


@pytest.mark.parametrize(("ranks", "mesh"), [(2, "2x4"), (2, "8x4"), (4, "8x4")])
def test_lockstep_addresses_agree_on_every_rank(ranks, mesh):
    ok(mpirun(ranks, "lockstep.py", mesh), ranks)


@pytest.mark.parametrize(("ranks", "mesh"), [(2, "2x4"), (2, "8x4"), (4, "8x4")])
def test_shard_round_trips_across_ranks(ranks, mesh):
    ok(mpirun(ranks, "round_trip.py", mesh), ranks)


@pytest.mark.parametrize(("ranks", "mesh"), [(2, "2x4"), (2, "8x4"), (4, "8x4")])
def test_collectives_across_ranks_match_numpy(ranks, mesh):
    """all_gather, all_reduce and reduce_scatter over the whole mesh, its rows and its columns."""
    ok(mpirun(ranks, "collectives.py", mesh), ranks)


def test_tensor_parallel_mlp_across_two_ranks():
    ok(mpirun(2, "tp_mlp.py"), 2)


def test_a_rank_that_raises_stops_every_rank_naming_it():
    start = time.monotonic()
    result = mpirun(2, "fault.py", "raise", timeout=90)
    assert result.returncode != 0 and time.monotonic() - start < 60
    assert "meshnn: rank 1: raised ValueError: a deliberate failure on rank 1" in result.stderr
    assert "UNREACHABLE" not in result.stdout


def test_a_killed_rank_stops_every_rank_naming_it():
    """`mpiexec -n 2 meshnn run script.py`: each rank runs under a supervisor that names a rank
    killed by a signal; the launcher then stops the others."""
    start = time.monotonic()
    result = mpirun(2, "fault.py", "kill", timeout=90, via_meshnn_run=True)
    assert result.returncode != 0 and time.monotonic() - start < 60
    assert "meshnn: rank 1 (pid" in result.stderr and "was killed by SIGKILL" in result.stderr, result.stderr
    assert "UNREACHABLE" not in result.stdout
    bare = mpirun(2, "fault.py", "kill", timeout=90)  # without meshnn run: the launcher alone, still bounded
    assert bare.returncode != 0 and "UNREACHABLE" not in bare.stdout


def test_a_rank_that_raises_under_meshnn_run():
    result = mpirun(2, "fault.py", "raise", timeout=90, via_meshnn_run=True)
    assert result.returncode != 0
    assert "meshnn: rank 1: raised ValueError" in result.stderr


def test_more_ranks_than_mesh_rows_is_refused_at_open():
    result = mpirun(4, "too_many_ranks.py", env={"MESHNN_DEBUG_LOCKSTEP": "0"}, timeout=90)
    assert result.returncode != 0
    assert "4 ranks cannot share a mesh of 2 row(s)" in result.stderr
    assert "UNREACHABLE" not in result.stdout


FAULTS = [  # (what rank 1 does while the others run an all_gather, ranks, runner, the line that names it)
    ("bad_dim", 2, "meshnn run", "meshnn: rank 1: raised MeshnnValueError: ttnn.all_gather: dim 9 is out of range"),
    ("bad_dim", 4, "meshnn run", "meshnn: rank 1: raised MeshnnValueError: ttnn.all_gather: dim 9 is out of range"),
    ("exit0", 2, "python", "rank(s) 1 ended (returned or called sys.exit) after 0 collective(s)"),
    ("exit0", 4, "meshnn run", "rank(s) 1 ended (returned or called sys.exit) after 0 collective(s)"),
    ("thread", 2, "python", "meshnn: rank 1: raised ValueError in thread worker: a deliberate failure"),
    ("sleep", 4, "python", "rank(s) 1 never arrived at ttnn.all_gather (device order) (collective #1 on the data"),
    ("mismatch", 2, "python", "rank 1: ttnn.all_reduce (float32 sum), 8192 B"),
]


@pytest.mark.parametrize(("mode", "ranks", "runner", "named"), FAULTS, ids=[f"{f[0]}-{f[1]}-{f[2]}" for f in FAULTS])
def test_a_rank_that_goes_wrong_ends_the_job_within_seconds_naming_it(mode, ranks, runner, named):
    """Each way a rank can leave the others waiting ends the whole job (aborting the
    communicator), the cause printed once; the sleep waits out a MESHNN_WAIT_TIMEOUT of 3 s."""
    start = time.monotonic()
    result = mpirun(
        ranks,
        "hang.py",
        mode,
        timeout=60,
        via_meshnn_run=runner == "meshnn run",
        env={"MESHNN_WAIT_TIMEOUT": "3", "MESHNN_DEBUG_LOCKSTEP": "0"},
    )
    elapsed = time.monotonic() - start
    assert result.returncode != 0, result.stdout + result.stderr
    assert result.stderr.count(named) == 1, result.stderr
    assert "UNREACHABLE" not in result.stdout
    print(f"{mode} on {ranks} ranks under {runner}: the job ended {elapsed:.1f} s after it started")


def test_the_fault_script_runs_clean_without_a_fault():
    ok(mpirun(4, "hang.py", "ok", timeout=60, env={"MESHNN_WAIT_TIMEOUT": "3"}), 4)


def test_a_test_failing_on_one_rank_ends_every_rank_under_the_plugin():
    command = [
        MPIEXEC,
        "-n",
        "2",
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "meshnn.testing",
        "-p",
        "no:cacheprovider",
        "--system",
        "galaxy",
        str(SCRIPTS / "plugin" / "fails_on_rank_1.py"),
    ]
    result = launch(command, 90, {"MESHNN_WAIT_TIMEOUT": "3"})
    assert result.returncode != 0
    assert result.stderr.count("meshnn: rank 1: test ") == 1, result.stderr
    assert "fails_on_rank_1.py::test_fails_on_rank_1[wormhole_b0-mesh_device0] failed (call)" in result.stderr
    assert "UNREACHABLE" not in result.stdout


def test_weight_caches_written_by_two_ranks_load_on_four_ranks_and_on_one_process(tmp_path):
    """as_tensor's cache file and dump_tensor's file, written on 2 ranks, hold every shard (rank 0
    writes what every rank holds): 4 ranks read the cache without converting again, and so does
    one process; every rank checks the values against numpy."""
    ok(mpirun(2, "caches.py", str(tmp_path), "write", timeout=90), 2)
    ok(mpirun(4, "caches.py", str(tmp_path), "read", timeout=90), 4)
    alone = subprocess.run(
        [sys.executable, str(SCRIPTS / "caches.py"), str(tmp_path), "read"], capture_output=True, text=True, timeout=90
    )
    ok(alone, 1)
