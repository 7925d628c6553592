"""ttnn.embedding into a tiled output runs tt-metal's fused program (meshnn.perf.embedding_program): blocks of 32 ids,
a core's ids read and waited for, its 32 table rows read back to back and waited for once, tilized, written."""

from __future__ import annotations

import numpy as np
import pytest

import meshnn as ttnn
from meshnn.perf import BufferType, Layout, MemoryLayout, OpDesc, OpFamily, TensorDesc, predict
from meshnn.perf.embedding_program import embedding_cycles, is_fused_embedding
from meshnn.perf.latency import WORMHOLE_B0
from meshnn.perf.page_programs import PAGE_FIGURES
from meshnn.perf.systems import machine

GALAXY = machine("galaxy", (1, 1))
TRIP = WORMHOLE_B0.tile_round_trip_cycles
IDS_READ = TRIP + 32 * 4 / 30  # the block's 32 uint32 ids, from DRAM, waited for
TILIZE = 2 * 2048 / GALAXY.system.arch.operand_bytes_per_cycle  # a bfloat16 tile unpacked and packed


def lookup(n: int, width: int, out: TensorDesc, grid=None) -> OpDesc:
    ids = TensorDesc((1, 1, n), "UINT32", Layout.ROW_MAJOR)
    table = TensorDesc((1, 1, 129280, width), "BFLOAT16", Layout.ROW_MAJOR)
    return OpDesc(OpFamily.EMBEDDING, (ids, table), (out,), op_code="EmbeddingsDeviceOperation", core_grid=grid)


def test_blocks_of_32_ids_split_over_the_cores_each_waited_twice_then_tilized_and_written():
    out = TensorDesc((1, 128, 224), "BFLOAT16", Layout.TILE, BufferType.DRAM)
    desc = lookup(128, 224, out)
    assert is_fused_embedding(desc)
    rows = 32 * 448 / 30  # 32 rows of 224 bfloat16 values, back to back
    writes = 7 * (PAGE_FIGURES.write_issue_cycles + 2048 / 30) + WORMHOLE_B0.noc_write_latency_cycles
    assert embedding_cycles(desc, GALAXY) == (pytest.approx(IDS_READ + rows + TRIP + 7 * TILIZE + writes), 4)
    decode = TensorDesc((1, 32, 224), "BFLOAT16", Layout.TILE, BufferType.DRAM)
    assert embedding_cycles(lookup(32, 224, decode), GALAXY) == (embedding_cycles(desc, GALAXY)[0], 1)  # one block
    p = predict(desc, "galaxy", mesh_shape=(1, 1), traced=True)
    assert p.fixed_ns == GALAXY.system.arch.op_launch_ns  # it has a compute kernel (the tilize)


def test_a_width_sharded_output_reads_its_shards_columns_and_writes_nothing():
    out = TensorDesc((1, 1, 32, 2048), "BFLOAT16", Layout.TILE, BufferType.L1, MemoryLayout.WIDTH_SHARDED)
    desc = lookup(32, 2048, out, grid=(8, 2))
    rows = 32 * 256 / 30  # a 128-column shard of each row
    assert embedding_cycles(desc, GALAXY) == (pytest.approx(IDS_READ + rows + TRIP + 4 * TILIZE), 16)


def test_row_major_outputs_and_tiled_ids_keep_their_other_programs():
    rm = TensorDesc((1, 32, 224), "BFLOAT16", Layout.ROW_MAJOR)
    assert not is_fused_embedding(lookup(32, 224, rm))
    tiled_ids = TensorDesc((1, 1, 32, 32), "UINT32", Layout.TILE)
    table = TensorDesc((1, 1, 129280, 224), "BFLOAT16", Layout.ROW_MAJOR)
    out = TensorDesc((1, 32, 224), "BFLOAT16", Layout.TILE)
    assert not is_fused_embedding(OpDesc(OpFamily.EMBEDDING, (tiled_ids, table), (out,)))


def test_the_capture_of_an_embedding_into_tiles_times_the_fused_program(open_mesh, rng):
    mesh = open_mesh((1, 1))
    ids = ttnn.from_torch(
        rng.integers(0, 1000, (1, 32)).astype(np.uint32), dtype=ttnn.uint32, layout=ttnn.ROW_MAJOR_LAYOUT, device=mesh
    )
    table = ttnn.from_torch(
        rng.standard_normal((1000, 224)).astype(np.float32), dtype=ttnn.bfloat16, layout=ttnn.ROW_MAJOR_LAYOUT,
        device=mesh,
    )  # fmt: skip
    with ttnn.perf_capture() as capture:
        ttnn.embedding(ids, table, layout=ttnn.TILE_LAYOUT)
    (record,) = capture.recorder(mesh).records
    assert is_fused_embedding(record.desc)
    assert record.prediction.kernel_ns > record.prediction.fixed_ns > 0
