"""A tiled embedding timed as tt-metal's fused embedding program runs it (meshnn.perf.embedding): one
block of 32 ids a core, its rows read in flight behind one round trip, tilized, written."""

from __future__ import annotations

from meshnn.perf import BufferType, Layout, MemoryLayout, OpDesc, OpFamily, TensorDesc, predict
from meshnn.perf.embedding import is_tilized_embedding, shards
from meshnn.perf.systems import machine

IDS = TensorDesc((1, 1, 128), "UINT32", layout=Layout.ROW_MAJOR)
TABLE = TensorDesc((1, 1, 129280, 224), layout=Layout.ROW_MAJOR)


def embedding(ids: TensorDesc, out: TensorDesc, grid: tuple[int, int] | None = None) -> OpDesc:
    return OpDesc(OpFamily.EMBEDDING, (ids, TABLE), (out,), core_grid=grid)


def kernel_ns(d: OpDesc) -> float:
    return predict(d, "galaxy", mesh_shape=(1, 1), traced=True).kernel_ns


def test_blocks_of_32_ids_go_one_a_core():
    d = embedding(IDS, TensorDesc((1, 128, 224)))
    assert is_tilized_embedding(d)
    cores, per_core, columns = shards(d, machine("galaxy"))
    assert (cores, per_core, columns) == (4, 1, 224)
    ids32 = TensorDesc((1, 1, 32), "UINT32", layout=Layout.ROW_MAJOR)
    assert kernel_ns(embedding(ids32, TensorDesc((1, 32, 224)))) == kernel_ns(d)  # one block a core either way


def test_a_core_with_more_blocks_reads_each_one():
    many = TensorDesc((1, 1, 32 * 200), "UINT32", layout=Layout.ROW_MAJOR)
    assert kernel_ns(embedding(many, TensorDesc((1, 32 * 200, 224)))) > kernel_ns(
        embedding(IDS, TensorDesc((1, 128, 224)))
    )


def test_a_sharded_output_splits_the_columns_and_has_no_writer():
    ids = TensorDesc((1, 1, 32), "UINT32", layout=Layout.ROW_MAJOR)
    interleaved = embedding(ids, TensorDesc((1, 32, 224), buffer=BufferType.L1))  # one core: 7 tiles, written
    width = TensorDesc((1, 32, 224), buffer=BufferType.L1, memory=MemoryLayout.WIDTH_SHARDED)
    sharded = embedding(ids, width, grid=(7, 1))  # seven cores: a tile each, the shard is the output
    assert shards(sharded, machine("galaxy")) == (7, 1, 32)
    assert kernel_ns(sharded) < kernel_ns(interleaved)


def test_a_row_major_output_is_not_the_fused_program():
    rm = embedding(IDS, TensorDesc((1, 128, 224), layout=Layout.ROW_MAJOR))
    assert not is_tilized_embedding(rm)
    assert kernel_ns(rm) > 0
