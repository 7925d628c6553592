"""A sharded page table (UINT16, height-sharded: the ``[users, max_blocks]`` table repeated on every
core of its grid, as llama3_70b_galaxy's ``prepare_inputs_decode`` lays it out) is each core's own
table: ``experimental.paged_update_cache`` and ``transformer.paged_scaled_dot_product_attention_decode``
give, bit for bit, what they give with the same table interleaved (INT32).  Before stop 47 meshnn
read the repeated rows as one ``[users, cores x max_blocks]`` table, so user ``u`` took the row of
user ``u x cores mod users`` (with 2 cores, user 2 took user 0's pages): in the 70B Galaxy's decode,
where each mesh column holds 8 users' rows on an even number of cores, user 4 read and wrote user
0's pages."""

from __future__ import annotations

import pytest
import torch

import meshnn as ttnn

from .test_kv_cache import dev, host, users_sharded

USERS, H, D, BLOCK, MAX_BLOCKS, BLOCKS, CORES = 4, 1, 64, 32, 16, 64, 2


@pytest.fixture(scope="module")
def mesh():
    m = ttnn.open_mesh_device(ttnn.MeshShape(1, 1), system="n150")
    yield m
    m.close()


def _table() -> torch.Tensor:
    """Each user's own blocks: a permutation of the cache's blocks, ``MAX_BLOCKS`` a user."""
    order = torch.randperm(BLOCKS, generator=torch.Generator().manual_seed(3))
    return order[: USERS * MAX_BLOCKS].reshape(USERS, MAX_BLOCKS).to(torch.int32)


def _tables(mesh):
    """(the table interleaved INT32, the table repeated on CORES cores, UINT16 height-sharded)."""
    table = _table()
    cores = ttnn.CoreRangeSet([ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(CORES - 1, 0))])
    spec = ttnn.ShardSpec(cores, (USERS, MAX_BLOCKS), ttnn.ShardOrientation.ROW_MAJOR)
    sharded = ttnn.MemoryConfig(ttnn.TensorMemoryLayout.HEIGHT_SHARDED, ttnn.BufferType.L1, spec)
    plain = dev(mesh, table, ttnn.int32, ttnn.ROW_MAJOR_LAYOUT)
    return plain, dev(mesh, table.repeat(CORES, 1), ttnn.uint16, ttnn.ROW_MAJOR_LAYOUT, sharded)


def _positions(mesh, pos):
    return dev(mesh, torch.tensor(pos, dtype=torch.int32), ttnn.int32, ttnn.ROW_MAJOR_LAYOUT)


def test_update_writes_each_users_own_pages(mesh):
    pos = [5, 40, 70, 100]  # a block 0, 1, 2 and 3 of each user
    x = torch.randn(1, USERS, 32, D, generator=torch.Generator().manual_seed(4))
    caches = []
    for table in _tables(mesh):
        cache = dev(mesh, torch.zeros(BLOCKS, H, BLOCK, D))
        ttnn.experimental.paged_update_cache(
            cache, dev(mesh, x, mc=users_sharded(USERS)), update_idxs_tensor=_positions(mesh, pos), page_table=table
        )
        caches.append(host(cache))
    want = torch.zeros(BLOCKS, H, BLOCK, D)
    for u, p in enumerate(pos):
        want[_table()[u, p // BLOCK], :, p % BLOCK] = x[0, u, :H].bfloat16().float()
    assert torch.equal(caches[0], want)
    assert torch.equal(caches[1], want)


def test_decode_reads_each_users_own_pages(mesh):
    g = torch.Generator().manual_seed(5)
    k, v = torch.randn(BLOCKS, H, BLOCK, D, generator=g), torch.randn(BLOCKS, H, BLOCK, D, generator=g)
    q = torch.randn(1, USERS, 32, D, generator=g)
    outs = [
        ttnn.to_torch(
            ttnn.transformer.paged_scaled_dot_product_attention_decode(
                dev(mesh, q), dev(mesh, k), dev(mesh, v), table, cur_pos_tensor=_positions(mesh, [70, 100, 5, 40])
            )
        )
        for table in _tables(mesh)
    ]
    assert torch.equal(outs[0], outs[1])
    # and the users differ (each its own pages and position), so a user given another's row would show
    assert not torch.equal(outs[0][:, 0], outs[0][:, 2])
