"""Bad calls of the tensor prefetcher (``ttnn.experimental.*tensor_prefetcher*``, the DRAM-sender
global circular buffers and tt-metal's test validator / consumer) on the table's mesh, which has
no programmable DRAM cores: refused there, and each argument's type and range checked first."""

from __future__ import annotations

import meshnn as ttnn

from ..cases import DEAD, TYPE, VALUE, Case

X = "experimental."


def _one(x, y):
    return ttnn.CoreRangeSet([ttnn.CoreRange(ttnn.CoreCoord(x, y), ttnn.CoreCoord(x, y))])


def rows() -> list[Case]:
    ex = ttnn.experimental
    banks = [(0, _one(0, 0))]
    return [
        Case(
            X + "is_tensor_prefetcher_supported",
            "not a mesh",
            lambda e: ex.is_tensor_prefetcher_supported("m"),
            TYPE,
            "mesh_device",
        ),
        Case(
            X + "start_tensor_prefetcher",
            "no DRAM cores",
            lambda e: ex.start_tensor_prefetcher(e.mesh),
            VALUE,
            "programmable DRAM cores",
        ),
        Case(
            X + "start_tensor_prefetcher",
            "dual_senders_per_bank a string",
            lambda e: ex.start_tensor_prefetcher(e.mesh, dual_senders_per_bank="yes"),
            TYPE,
            "dual_senders_per_bank",
        ),
        Case(
            X + "queue_tensor_prefetcher_request",
            "before start",
            lambda e: ex.queue_tensor_prefetcher_request(e.mesh, [(e.a, 1)], None),
            VALUE,
            "StartTensorPrefetcher",
        ),
        Case(
            X + "wait_for_cq_on_tensor_prefetcher",
            "before start",
            lambda e: ex.wait_for_cq_on_tensor_prefetcher(e.mesh, 0),
            VALUE,
            "StartTensorPrefetcher",
        ),
        Case(
            X + "stop_tensor_prefetcher", "not a mesh", lambda e: ex.stop_tensor_prefetcher(None), TYPE, "mesh_device"
        ),
        Case(
            X + "create_global_circular_buffer_with_dram_senders",
            "no DRAM cores",
            lambda e: ex.create_global_circular_buffer_with_dram_senders(e.mesh, banks, 2048),
            VALUE,
            "programmable DRAM cores",
        ),
        Case(
            X + "create_global_circular_buffer_for_matmul_1d",
            "no program config",
            lambda e: ex.create_global_circular_buffer_for_matmul_1d(e.mesh, [], [], banks, 2048),
            VALUE,
            "program config",
        ),
        Case(
            X + "create_global_circular_buffer_for_matmul_1d_recv_contig",
            "a config that is not 1-D",
            lambda e: ex.create_global_circular_buffer_for_matmul_1d_recv_contig(e.mesh, [None], [e.w], banks, 2048),
            TYPE,
            r"program_configs\[0\]",
        ),
        Case(
            X + "tensor_prefetcher_block_count_for_matmul_1d",
            "program_config None",
            lambda e: ex.tensor_prefetcher_block_count_for_matmul_1d(None, e.w, None),
            TYPE,
            "program_config",
        ),
        Case(
            X + "test_dram_prefetcher_validator",
            "source deallocated",
            lambda e: ex.test_dram_prefetcher_validator(e.mesh, e.freed, 1, 0, global_cb=None),
            DEAD,
            "source_tensor",
        ),
        Case(
            X + "test_dram_prefetcher_validator",
            "no layers",
            lambda e: ex.test_dram_prefetcher_validator(e.mesh, e.a, 0, 0, global_cb=None),
            VALUE,
            "num_layers",
        ),
        Case(
            X + "test_dram_prefetcher_consumer",
            "num_iters a string",
            lambda e: ex.test_dram_prefetcher_consumer(e.mesh, "4", 2048, global_cb=None),
            TYPE,
            "num_iters",
        ),
        Case(
            X + "test_dram_prefetcher_consumer",
            "global_cb not a buffer",
            lambda e: ex.test_dram_prefetcher_consumer(e.mesh, 4, 2048, global_cb="cb"),
            TYPE,
            "global_cb",
        ),
    ]
