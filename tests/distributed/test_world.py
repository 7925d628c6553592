"""ttnn's distributed-context functions in one process: not initialized until a device opens or
``init_distributed_context()`` runs (then every call answers for one rank); ``Rank`` and ``Size``
as ttnn's value types.  (Across MPI ranks: ``scripts/round_trip.py``.)"""

from __future__ import annotations

import subprocess
import sys

import pytest

import meshnn as ttnn

FRESH = """
import meshnn as ttnn
assert not ttnn.distributed_context_is_initialized()
try:
    ttnn.distributed_context_get_rank()
except ttnn.MeshnnError as e:
    assert "init_distributed_context() first" in str(e)
else:
    raise SystemExit("get_rank before the context exists must raise")
ttnn.init_distributed_context()
assert ttnn.distributed_context_is_initialized()
print(int(ttnn.distributed_context_get_rank()), int(ttnn.distributed_context_get_size()))
"""


def test_the_context_exists_only_once_made():
    done = subprocess.run([sys.executable, "-c", FRESH], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["0", "1"]


def test_one_process_answers_as_rank_0_of_1(open_mesh):
    open_mesh((1, 1), system="n150")
    assert ttnn.distributed_context_is_initialized()
    assert ttnn.distributed_context_get_rank() == ttnn.Rank(0) and ttnn.distributed_context_world_rank() == ttnn.Rank(0)
    assert ttnn.distributed_context_get_size() == ttnn.Size(1) and repr(ttnn.Size(1)) == "Size(1)"
    assert ttnn.distributed_context_allgather_int(7) == [7]
    ttnn.distributed_context_barrier()


def test_rank_and_size_are_ttnns_value_types():
    assert ttnn.Rank(1) < ttnn.Rank(2) and ttnn.Rank(2) >= ttnn.Rank(2) and str(ttnn.Rank(3)) == "3"
    assert ttnn.Rank(1) != ttnn.Size(1)  # distinct kinds, as ttnn's
    assert [10, 20][ttnn.Rank(1)] == 20
    with pytest.raises(ttnn.MeshnnTypeError, match="value must be an int"):
        ttnn.Rank(1.5)
    with pytest.raises(ttnn.MeshnnTypeError, match="value must be an int"):
        ttnn.distributed_context_allgather_int("7")
