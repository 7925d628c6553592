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


# -- branch misc41: tt-run's sub-contexts (TT_RUN_SUBCONTEXT_ID / _SIZES), tt-metal's checks
def test_subcontext_layout_from_tt_runs_variables():
    from meshnn.distributed.subcontexts import layout_from_env

    layout = layout_from_env(5, {"TT_RUN_SUBCONTEXT_ID": "1", "TT_RUN_SUBCONTEXT_SIZES": "4,1"})
    assert (layout.this_id, layout.sizes, layout.count) == (1, (4, 1), 2)
    assert layout.local_to_world_rank(1, 0) == 4 and layout.local_to_world_rank(0, 3) == 3
    assert layout_from_env(3, {}).sizes == (3,) and layout_from_env(3, {}).this_id is None
    bad = [
        ({"TT_RUN_SUBCONTEXT_ID": "0"}, "TT_RUN_SUBCONTEXT_SIZES is missing"),
        ({"TT_RUN_SUBCONTEXT_ID": "x", "TT_RUN_SUBCONTEXT_SIZES": "5"}, "expected integer"),
        ({"TT_RUN_SUBCONTEXT_ID": "-1", "TT_RUN_SUBCONTEXT_SIZES": "5"}, "non-negative"),
        ({"TT_RUN_SUBCONTEXT_ID": "2", "TT_RUN_SUBCONTEXT_SIZES": "4,1"}, "out of range for 2 sub-contexts"),
        ({"TT_RUN_SUBCONTEXT_ID": "0", "TT_RUN_SUBCONTEXT_SIZES": "4,0"}, "sizes must be positive"),
        ({"TT_RUN_SUBCONTEXT_ID": "0", "TT_RUN_SUBCONTEXT_SIZES": "2,2"}, "sum 4 does not match MPI_COMM_WORLD size 5"),
    ]
    for environ, message in bad:
        with pytest.raises(ttnn.DistributedError, match=message):
            layout_from_env(5, environ)
    with pytest.raises(IndexError, match="local_rank out of range for subcontext 1"):
        layout.local_to_world_rank(1, 1)


def test_a_job_that_is_not_split_is_one_subcontext():
    ttnn.init_distributed_context()
    assert ttnn.distributed_context_subcontext_id() is None
    assert ttnn.distributed_context_subcontext_count() == 1
    assert ttnn.distributed_context_subcontext_sizes() == [int(ttnn.distributed_context_get_size())]
    assert ttnn.distributed_context_local_to_world_rank(0, 0) == ttnn.Rank(0)
    assert ttnn.distributed_context_world_size() == ttnn.distributed_context_get_size()
    assert int(ttnn.SubcontextId(2)) == 2 and repr(ttnn.SubcontextId(2)) == "SubcontextId(2)"
