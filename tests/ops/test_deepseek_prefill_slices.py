"""``ttnn.experimental.deepseek_prefill.extract`` / ``insert`` against numpy: on a 1x2 mesh whose
devices hold different tables (so each moves its own expert's slice), the moved tiles are compared
byte for byte (bfloat8_b tiles keep their shared exponents, so the values are the source's exactly),
the rest of an insert's destination is unchanged, and a slice that runs past a tensor is refused
when the kernel reads the tables."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import meshnn as ttnn

DRAM = ttnn.DRAM_MEMORY_CONFIG
ds = None  # the namespace, bound after the catalog loads


@pytest.fixture(scope="module")
def mesh():
    global ds
    m = ttnn.open_mesh_device(ttnn.MeshShape(1, 2))
    ds = ttnn.experimental.deepseek_prefill
    yield m
    ttnn.close_mesh_device(m)


def table(mesh, per_device: list[list[int]]):
    """A uint32 [1, N] table per device (row d of ``per_device`` on device d)."""
    t = torch.tensor(per_device, dtype=torch.int32)
    mapper = ttnn.ShardTensorToMesh(mesh, dim=0)
    return ttnn.from_torch(t, dtype=ttnn.uint32, layout=ttnn.ROW_MAJOR_LAYOUT, device=mesh, memory_config=DRAM,
                           mesh_mapper=mapper)  # fmt: skip


def data(mesh, values: np.ndarray, dtype=ttnn.bfloat8_b):
    return ttnn.from_torch(torch.tensor(values), dtype=dtype, layout=ttnn.TILE_LAYOUT, device=mesh, memory_config=DRAM)


def per_device(mesh, t) -> list[np.ndarray]:
    return [ttnn.to_torch(x).float().numpy() for x in ttnn.get_device_tensors(t)]


STARTS = [[0, 32, 96, 160], [0, 64, 128, 160]]
COUNTS = [[32, 50, 33, 1], [64, 64, 17, 31]]
IDS = [[2, 1], [3, 0]]  # local expert 0 is global expert 2 on device 0, 3 on device 1


@pytest.mark.parametrize("dtype", [ttnn.bfloat8_b, ttnn.bfloat16])
def test_extract_moves_each_devices_expert_tiles(mesh, dtype):
    rng = np.random.default_rng(1)
    g = data(mesh, rng.standard_normal((192, 96)).astype(np.float32), dtype)
    s, c, ids = table(mesh, STARTS), table(mesh, COUNTS), table(mesh, IDS)
    out = ds.extract(g, s, c, ids, local_expert_id=0, max_dispatched_tokens_per_expert=96)
    assert tuple(out.shape) == (96, 96) and out.dtype == dtype and out.layout == ttnn.TILE_LAYOUT
    source = per_device(mesh, g)
    for d, got in enumerate(per_device(mesh, out)):
        expert = IDS[d][0]
        rows = -(-COUNTS[d][expert] // 32) * 32
        first = STARTS[d][expert] // 32 * 32
        np.testing.assert_array_equal(got[:rows], source[d][first : first + rows])


def test_extract_refuses_a_slice_past_its_output(mesh):
    g = data(mesh, np.zeros((192, 64), np.float32))
    s, c, ids = table(mesh, STARTS), table(mesh, COUNTS), table(mesh, IDS)
    with pytest.raises(ttnn.MeshnnValueError, match="exceed the output's 32 rows"):
        ttnn.to_torch(ds.extract(g, s, c, ids, local_expert_id=0, max_dispatched_tokens_per_expert=32))
        ttnn.synchronize_device(mesh)


def test_insert_writes_in_place_and_keeps_the_rest(mesh):
    rng = np.random.default_rng(2)
    before = rng.standard_normal((192, 64)).astype(np.float32)
    g = data(mesh, before)
    address = g.buffer_address()
    x = data(mesh, rng.standard_normal((96, 64)).astype(np.float32) * 5)
    s, c, ids = table(mesh, STARTS), table(mesh, COUNTS), table(mesh, IDS)
    old, local = per_device(mesh, g), per_device(mesh, x)
    result = ds.insert(g, x, s, c, ids, local_expert_id=1)
    assert result is g and g.buffer_address() == address
    for d, got in enumerate(per_device(mesh, g)):
        expert = IDS[d][1]
        rows = -(-COUNTS[d][expert] // 32) * 32
        first = STARTS[d][expert] // 32 * 32
        want = old[d].copy()
        want[first : first + rows] = local[d][:rows]
        np.testing.assert_array_equal(got, want)


def test_insert_refuses_a_table_entry_past_start(mesh):
    g, x = data(mesh, np.zeros((192, 64), np.float32)), data(mesh, np.zeros((64, 64), np.float32))
    s, c, ids = table(mesh, STARTS), table(mesh, COUNTS), table(mesh, [[9, 0], [1, 0]])
    with pytest.raises(ttnn.MeshnnValueError, match=r"global_expert_idx_table\[0\] = 9 is past start's 4"):
        ds.insert(g, x, s, c, ids, local_expert_id=0)
        ttnn.synchronize_device(mesh)


def test_checks_of_the_arguments(mesh):
    g = data(mesh, np.zeros((192, 64), np.float32))
    s, c, ids = table(mesh, STARTS), table(mesh, COUNTS), table(mesh, IDS)
    with pytest.raises(ttnn.MeshnnValueError, match=r"max_dispatched_tokens_per_expert .*multiple of TILE_HEIGHT"):
        ds.extract(g, s, c, ids, local_expert_id=0, max_dispatched_tokens_per_expert=48)
    with pytest.raises(ttnn.MeshnnValueError, match="local_tensor hidden_dim"):
        ds.insert(g, data(mesh, np.zeros((32, 32), np.float32)), s, c, ids, local_expert_id=0)
    with pytest.raises(ttnn.MeshnnValueError, match="same dtype"):
        ds.insert(g, data(mesh, np.zeros((32, 64), np.float32), ttnn.bfloat16), s, c, ids, local_expert_id=0)


def test_registered_with_a_perf_family():
    from meshnn.ops.registry import family_of
    from meshnn.perf.desc import OpFamily

    assert family_of("experimental.deepseek_prefill.extract").family is OpFamily.SLICE
    assert family_of("experimental.deepseek_prefill.insert").family is OpFamily.KV_FILL
