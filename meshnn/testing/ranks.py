"""The test plugin under MPI: a test that fails on one rank ends every rank.

Every rank of ``mpiexec -n N python -m pytest -p meshnn.testing`` runs the same tests (SPMD); a
test that fails on one rank leaves the others waiting in its collectives, or running the next
tests out of step.  So, as an uncaught error does under ``meshnn run`` or plain ``python``, a
failed test (or fixture) on any rank prints its report and ends the whole job at once.  In one
process this does nothing.

May import: the public root (``meshnn``).
"""

from __future__ import annotations

import sys

import pytest

import meshnn


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if not report.failed or not meshnn.launched_under_mpi():
        return
    print(report.longreprtext, file=sys.stderr, flush=True)
    meshnn.end_all_ranks(f"test {report.nodeid} failed ({report.when})")
