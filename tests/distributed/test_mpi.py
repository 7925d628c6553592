"""Meshes that span processes: the normal test run starts `mpiexec -n 2` (and `-n 4`) on this
machine, bounded by timeouts.  Needs the mpi extra (`pip install 'meshnn[mpi]'`), which CI installs."""

from __future__ import annotations

import contextlib
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid

import numpy as np
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
    ("sleep", 4, "python", "rank(s) 1 never arrived at ttnn.all_gather of DRAM MeshBuffer 0x"),
    ("mismatch", 2, "python", "; rank 1: ttnn.all_reduce of DRAM MeshBuffer 0x"),
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


# ---------------------------------------------------------------------------- issue 32 (round 3)


def stamped(stdout: str, word: str) -> float:
    """The wall clock a rank printed as ``WORD t``."""
    return float(next(line for line in stdout.splitlines() if line.startswith(word)).split()[1])


def addresses(stdout: str) -> dict[str, str]:
    """The tensors' addresses rank 0 printed (``TENSORS a=0x.. b=0x.. c=0x..``)."""
    line = next(line for line in stdout.splitlines() if line.startswith("TENSORS"))
    return dict(item.split("=") for item in line.split()[1:])


def naming(mode: str, at: dict[str, str]) -> list[str]:
    """What the one abort line must name, ranks and tensors, for each mismatch mode."""
    read, gather, dump = "composed read of DRAM MeshBuffer", "ttnn.all_gather of DRAM MeshBuffer", "ttnn.dump_tensor"
    return {
        "compose": [f"rank 0: {read} {at['a']} [1, 32, 64]", f"rank 1: {read} {at['b']} [1, 32, 64]"],
        "gather": [f"rank 0: {gather} {at['a']}", f"rank 1: {gather} {at['b']}"],
        "cross": [f"rank 0: {gather} {at['a']}", f"rank 1: {read} {at['a']}"],
        # checked lock-step, rank 0 waits in the check of the all_gather's output allocation
        "cross-checked": ["rank 0: lock-step check of ttnn.all_gather's", f"rank 1: {read} {at['a']}"],
        "sizes": [f"rank 0: {gather} {at['a']} [1, 32, 64]", f"rank 1: {gather} {at['c']} [1, 64, 64]"],
        "dump": [f"rank 0: {dump} of DRAM MeshBuffer {at['a']}", f"rank 1: {dump} of DRAM MeshBuffer {at['b']}"],
    }[mode]


MISMATCHES = [(m, r) for m in ("compose", "gather", "cross", "cross-checked", "sizes", "dump") for r in (2, 4)]


@pytest.mark.parametrize(("mode", "ranks"), MISMATCHES, ids=[f"{m}-{r}" for m, r in MISMATCHES])
def test_ranks_exchanging_different_tensors_are_named_never_given_the_data(mode, ranks):
    """Swapped read orders (composers, all_gather, tensor files), a composer against an all_gather
    (with allocations checked lock-step too: then rank 0 waits in the check of its output's
    allocation), and the same collective on tensors of different sizes: the job ends at the first such exchange,
    one line naming both ranks and both tensors (address and spec), well before the 60 s
    MESHNN_WAIT_TIMEOUT (timed from rank 0's stamp just before the exchanges to the job's end),
    never with MPICH's "Message truncated" and never with data."""
    checked = "1" if mode.endswith("-checked") else "0"  # MESHNN_DEBUG_LOCKSTEP: allocations checked too
    env = {"MESHNN_WAIT_TIMEOUT": "60", "MESHNN_DEBUG_LOCKSTEP": checked}
    result = mpirun(ranks, "mismatch.py", mode.removesuffix("-checked"), timeout=180, env=env)
    elapsed = time.time() - stamped(result.stdout, "STAMP")
    assert result.returncode != 0 and "UNREACHABLE" not in result.stdout, result.stdout + result.stderr
    lines = [line for line in result.stderr.splitlines() if "ranks called different collectives" in line]
    assert len(lines) == 1, result.stderr
    for name in naming(mode, addresses(result.stdout)):
        assert name in lines[0], (name, lines[0])
    assert "Message truncated" not in result.stderr and elapsed < 30, (elapsed, result.stderr)
    print(f"{mode} on {ranks} ranks: named, and the job ended {elapsed:.1f} s after the exchange began")


@pytest.mark.parametrize("ranks", [2, 4])
def test_ranks_exchanging_the_same_tensors_in_the_same_order_run_clean(ranks):
    ok(mpirun(ranks, "mismatch.py", "ok", timeout=180), ranks)


def processes_with(token: str) -> list[int]:
    """The pids of processes whose command line holds ``token`` (this one excepted)."""
    found = []
    for entry in pathlib.Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                if token.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def left_alive(token: str, ended: float, within: float = 10.0) -> list[int]:
    """The job's processes still alive ``within`` seconds after it ended (then killed, so that
    none outlives the test)."""
    while processes_with(token) and time.monotonic() < ended + within:
        time.sleep(0.2)
    left = processes_with(token)
    for pid in left:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    return left


RUNNERS = {"python": [sys.executable], "meshnn run": [sys.executable, "-m", "meshnn", "run"]}
OUTLIVE = [(mode, ranks, runner) for mode in ("kill", "exit1") for ranks in (2, 4) for runner in RUNNERS]


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="finds the job's processes in /proc")
@pytest.mark.parametrize(("mode", "ranks", "runner"), OUTLIVE, ids=["-".join(map(str, o)) for o in OUTLIVE])
def test_a_rank_that_goes_away_while_the_others_compute_ends_the_job_and_no_rank_outlives_it(mode, ranks, runner):
    """Rank 1 SIGKILLed (under `-disable-auto-cleanup`: the launcher leaves the others to meshnn)
    or calling sys.exit(1) while the others compute for 60 s, far from any collective: the job
    ends within seconds of it (timed from rank 1's stamp), and no process of it is alive 10 s
    after."""
    token = f"meshnn-job-{uuid.uuid4().hex}"
    command = [MPIEXEC, "-disable-auto-cleanup", "-n", str(ranks), *RUNNERS[runner]]
    try:
        result = launch([*command, str(SCRIPTS / "outlive.py"), mode, token], 180, None)
    finally:
        ended = time.monotonic()
        left = left_alive(token, ended)
    took = time.time() - (time.monotonic() - ended) - stamped(result.stdout, "GOING")
    assert result.returncode != 0 and "UNREACHABLE" not in result.stdout, result.stdout + result.stderr
    assert took < 30, (took, result.stderr)
    assert not left, f"alive 10 s after the job ended: {left}"
    if mode == "exit1" and runner == "python":
        assert "meshnn: rank 1: exited with status 1; aborting every rank" in result.stderr, result.stderr
    print(f"{mode} on {ranks} ranks under {runner}: the job ended {took:.1f} s after rank 1 went")


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="finds the job's processes in /proc")
@pytest.mark.parametrize("runner", list(RUNNERS))
def test_ctrl_c_ends_an_mpi_job_at_once_with_one_traceback_and_status_130(runner):
    """Ctrl-C (SIGINT to the job's process group, as a terminal sends it) while every rank
    computes: the job ends within seconds with python's 130, one traceback, nothing left alive."""
    token = f"meshnn-job-{uuid.uuid4().hex}"
    command = [MPIEXEC, "-n", "2", *RUNNERS[runner], str(SCRIPTS / "outlive.py"), "interrupt", token]
    environment = os.environ | {"PYTHONUNBUFFERED": "1"}
    child = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment, start_new_session=True
    )
    guard = threading.Timer(180, lambda: os.killpg(child.pid, signal.SIGKILL))  # bounds the reads below
    guard.start()
    try:
        ready = 0
        while ready < 2:
            line = child.stdout.readline()
            assert line, f"the job ended before it was ready: {child.stderr.read()}"
            ready += line.count("READY")  # (the ranks' lines may run together)
        time.sleep(1.0)
        interrupted = time.monotonic()
        os.killpg(child.pid, signal.SIGINT)
        stdout, stderr = child.communicate(timeout=60)
    finally:
        ended = time.monotonic()
        guard.cancel()
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGKILL)
        left = left_alive(token, ended)
    assert child.returncode == 130 and ended - interrupted < 15, (child.returncode, ended - interrupted, stderr)
    assert stderr.count("Traceback (most recent call last)") == 1 and "KeyboardInterrupt" in stderr, stderr
    assert "UNREACHABLE" not in stdout and not left, left
    print(f"Ctrl-C under {runner}: the job ended {ended - interrupted:.2f} s after it")


def test_float32_sums_have_the_same_bits_on_one_process_and_on_2_and_4_ranks(tmp_path):
    """all_reduce and reduce_scatter of float32 values spanning 16 binades, on 8x4, every axis:
    the members are added in one fixed order, so every device's result is equal bit for bit
    whatever the number of ranks (and within float32 rounding of a float64 sum)."""
    alone = subprocess.run(
        [sys.executable, str(SCRIPTS / "reduce_bits.py"), str(tmp_path / "one.npz")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    ok(alone, 1)
    ok(mpirun(2, "reduce_bits.py", str(tmp_path / "two.npz"), timeout=120), 2)
    ok(mpirun(4, "reduce_bits.py", str(tmp_path / "four.npz"), timeout=120), 4)
    one, two, four = (np.load(tmp_path / f"{n}.npz") for n in ("one", "two", "four"))
    assert sorted(one.files) == sorted(two.files) == sorted(four.files) and len(one.files) == 6
    for name in one.files:
        assert np.array_equal(one[name], two[name]), name
        assert np.array_equal(one[name], four[name]), name
        assert np.count_nonzero(one[name]) > one[name].size // 2, name


@pytest.mark.parametrize("ranks", [2, 4])
def test_each_part_of_get_device_tensors_reads_back_on_every_rank(ranks):
    ok(mpirun(ranks, "parts.py", timeout=90), ranks)


def test_the_tensor_parallel_example_runs_and_plans_on_two_ranks():
    example = str(SCRIPTS.parent.parent.parent / "examples" / "tensor_parallel_mlp.py")
    ran = launch([MPIEXEC, "-n", "2", sys.executable, "-m", "meshnn", "run", example], 120, None)
    assert ran.returncode == 0 and ran.stdout.count("PCC > 0.999") == 2, ran.stdout + ran.stderr
    planned = launch([MPIEXEC, "-n", "2", sys.executable, "-m", "meshnn", "plan", example], 120, None)
    assert planned.returncode == 0, planned.stdout + planned.stderr
    assert planned.stdout.count("mesh 2x4 on t3k (8 devices in lock-step") == 2, planned.stdout
    assert "no mesh allocated anything" not in planned.stdout and "PCC" not in planned.stdout, planned.stdout


# ------------------------------------------------------------- the adversarial pass after issue 32


def test_ranks_opening_different_meshes_are_named_at_open():
    """Rank 0 opens a 2x4 mesh of the galaxy, rank 1 a 4x2 one: open_mesh_device names both
    (it had opened both, and the all_gather after it exited 0 on data of two layouts)."""
    result = mpirun(2, "open_shapes.py", "differ", timeout=90, env={"MESHNN_DEBUG_LOCKSTEP": "0"})
    assert result.returncode != 0 and "OK rank" not in result.stdout, result.stdout + result.stderr
    assert "ranks called ttnn.open_mesh_device differently (rank 0: 2x4 on galaxy" in result.stderr, result.stderr
    assert "rank 1: 4x2 on galaxy" in result.stderr, result.stderr
    ok(mpirun(2, "open_shapes.py", "same", timeout=90), 2)


@pytest.mark.parametrize("ranks", [2, 4])
def test_a_rank_that_exits_1_while_the_others_compute_without_any_collective_ends_the_job(ranks):
    """Finding 2's second case with allocations not checked lock-step (MESHNN_DEBUG_LOCKSTEP=0,
    the default outside these tests), so that the others meet no collective at all while they
    compute for 60 s: the job still ends within seconds of rank 1's sys.exit(1), naming it."""
    token = f"meshnn-job-{uuid.uuid4().hex}"
    command = [MPIEXEC, "-n", str(ranks), sys.executable, str(SCRIPTS / "outlive.py"), "exit1", token]
    try:
        result = launch(command, 180, {"MESHNN_DEBUG_LOCKSTEP": "0"})
    finally:
        ended = time.monotonic()
        left = left_alive(token, ended)
    took = time.time() - (time.monotonic() - ended) - stamped(result.stdout, "GOING")
    assert result.returncode != 0 and "UNREACHABLE" not in result.stdout, result.stdout + result.stderr
    assert took < 30 and not left, (took, left, result.stderr)
    assert "meshnn: rank 1: exited with status 1; aborting every rank" in result.stderr, result.stderr


def test_graph_report_files_of_every_rank_merge_into_one_database(tmp_path):
    """Each rank writes its graph report (rank and world size in its metadata); rank 0 merges the
    folder into one database whose rows carry each rank (branch misc41: tt-metal's multi-host test)."""
    ok(mpirun(2, "graph_report_ranks.py", str(tmp_path), timeout=180), 2)


def test_a_rank_that_exits_before_mpi_init_ends_the_job_under_meshnn_run():
    """MPICH's launcher does not end the other ranks when one exits non-zero before MPI_Init
    (they wait in theirs for it): the failing rank joins MPI and aborts, so the job ends."""
    start = time.monotonic()
    result = mpirun(2, "exit_before_mesh.py", timeout=60, via_meshnn_run=True, env={"MESHNN_DEBUG_LOCKSTEP": "0"})
    assert result.returncode != 0, result.stdout + result.stderr
    assert "exit_before_mesh.py exited with code 3" in result.stderr, result.stderr
    assert "UNREACHABLE" not in result.stdout
    assert time.monotonic() - start < 45
