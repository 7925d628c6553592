"""Bad calls of the smaller families: matmul relatives, losses, random tensors, example ops, SSM ops."""

from __future__ import annotations

import meshnn as ttnn

from ..cases import DEAD, TYPE, VALUE, Case


def _config():
    return ttnn.MatmulMultiCoreReuseMultiCast1DProgramConfig(
        compute_with_storage_grid_size=ttnn.CoreCoord(1, 1), in0_block_w=1, out_subblock_h=1, out_subblock_w=1,
        per_core_M=1, per_core_N=1, fuse_batch=False, fused_activation=None, mcast_in0=True,
    )  # fmt: skip


def rows() -> list[Case]:
    return [
        Case("addmm", "alpha is 0", lambda e: ttnn.addmm(e.a, e.a, e.a, alpha=0.0), VALUE, "alpha"),
        Case("addmm", "mat1 is 3-D", lambda e: ttnn.addmm(e.a, e.a, e.a), VALUE, "mat1_tensor"),
        Case("addmm", "mat2 deallocated", lambda e: ttnn.addmm(e.a, e.a, e.freed), DEAD, "mat2_tensor"),
        Case(
            "addmm",
            "output_tile given",
            lambda e: ttnn.addmm(e.w, e.w, e.w, output_tile=ttnn.Tile((16, 32))),
            VALUE,
            "output_tile",
        ),
        Case(
            "sparse_matmul",
            "config of another kind",
            lambda e: ttnn.sparse_matmul(e.a, e.a, sparsity=e.rm, program_config=None),
            TYPE,
            "program_config",
        ),
        Case(
            "sparse_matmul",
            "shapes of no mode",
            lambda e: ttnn.sparse_matmul(e.a, e.a, sparsity=e.a_bf16, program_config=_config()),
            VALUE,
            "sparsity",
        ),
        Case(
            "mse_loss", "reduction is a string", lambda e: ttnn.mse_loss(e.a, e.a2, reduction="mean"), TYPE, "reduction"
        ),
        Case(
            "l1_loss",
            "prediction is numpy",
            lambda e: ttnn.l1_loss(e.a, e.a.cpu().to_torch().numpy()),
            TYPE,
            "input_prediction",
        ),
        Case("rand", "shape is an int", lambda e: ttnn.rand(5, e.mesh), TYPE, "shape"),
        Case("rand", "low not below high", lambda e: ttnn.rand([2, 2], e.mesh, low=1.0, high=1.0), VALUE, "low"),
        Case("rand", "device is a string", lambda e: ttnn.rand([2, 2], "WORMHOLE"), TYPE, "device"),
        Case("uniform", "seed negative", lambda e: ttnn.uniform(e.a_bf16, 0.0, 1.0, -1), TYPE, "seed"),
        Case("uniform", "input is row-major", lambda e: ttnn.uniform(e.rm), VALUE, "tilized"),
        Case("bernoulli", "input is int", lambda e: ttnn.bernoulli(e.ids), VALUE, "tilized"),
        Case("bernoulli", "dtype is int", lambda e: ttnn.bernoulli(e.a, dtype=ttnn.uint32), TYPE, "dtype"),
        Case("composite_example", "input deallocated", lambda e: ttnn.composite_example(e.freed), DEAD, "input_tensor"),
        Case(
            "composite_example_multiple_return",
            "flag is an int",
            lambda e: ttnn.composite_example_multiple_return(e.a, 1, True),
            TYPE,
            "return_output1",
        ),
        Case("prim.example", "input on host", lambda e: ttnn.prim.example(e.host), VALUE, "input_tensor"),
        *core_rows(),
    ]


def core_rows() -> list[Case]:
    grids = ttnn.CoreRangeSet([ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(1, 1))])
    name = "num_cores_to_corerangeset_in_subcoregrids"
    f = ttnn.num_cores_to_corerangeset_in_subcoregrids
    return [
        Case(name, "too many cores", lambda e: f(ttnn.CoreCoord(0, 0), 5, grids), VALUE, "Target number of cores"),
        Case(name, "start outside", lambda e: f(ttnn.CoreCoord(3, 3), 1, grids), VALUE, "Start core"),
        Case(name, "grids is a list", lambda e: f(ttnn.CoreCoord(0, 0), 1, [grids]), TYPE, "sub_core_grids"),
    ]
