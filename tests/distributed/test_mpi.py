"""Meshes that span processes: the normal test run starts `mpiexec -n 2` (and `-n 4`) on this
machine, bounded by timeouts.  Needs the mpi extra (`pip install 'meshnn[mpi]'`), which CI installs."""

from __future__ import annotations

import os
import pathlib
import shutil
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
    command = [MPIEXEC, "-n", str(ranks), *runner, str(SCRIPTS / script), *args]
    environment = os.environ | {"MESHNN_DEBUG_LOCKSTEP": "1", "PYTHONUNBUFFERED": "1"} | (env or {})
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=environment)


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
