"""``ttnn.experimental.llama_rs_matmul`` against float64 numpy: the product bounded as a float32
dot product stored in bfloat16 (the weight's bfloat8_b quantization in the reference); the
reduce-scatter of ``rs_tensor`` (or of the first product) bounded as a float32 sum of the row
group's members rounded once into the output dtype; on 1x2, 2x4 and 8x4 meshes (groups of 2 and 4
along cluster_axis 1); one program-cache entry per call shape; ttnn's refusals before anything is
allocated.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import meshnn as ttnn
from meshnn.perf.desc import OpFamily
from tests.ops.reference import BF16, BFP8, Approx, a_matmul, a_stored, assert_within, gamma, output_bound, quantized
from tests.ops.test_llama_ccl import grid, on_mesh, per_device, setup, width_sharded
from tests.ops.test_prefetcher import MAPPING, RING, SENDERS, cores, gather_config, weights_in_dram

K, N = 256, 512


def replicated(mesh, values, dtype, memory_config=ttnn.DRAM_MEMORY_CONFIG):
    return ttnn.from_torch(torch.from_numpy(values), dtype=dtype, layout=ttnn.TILE_LAYOUT, device=mesh,
                           memory_config=memory_config)  # fmt: skip


def product_ref(x, w, dtype):
    return a_stored(a_matmul(Approx.exact(quantized(x, BF16)), Approx.exact(quantized(w, dtype))), BF16)


def check_scatter(got, values, mesh, dtype):
    """Device (row, col) holds slice col of its row's sum over the columns (``values``: (rows,
    cols, 32, W) as the devices hold them)."""
    total = values.sum(axis=1)
    bound = output_bound(total, gamma(mesh.shape[1]) * np.abs(values).sum(axis=1), dtype)
    cols = mesh.shape[1]
    width = total.shape[-1] // cols
    for index, out in enumerate(per_device(got)):
        row, col = divmod(index, cols)
        part = np.s_[row, :, col * width : (col + 1) * width]
        assert_within(out.reshape(32, width), total[part], bound[part], f"device {index}")


@pytest.mark.parametrize("shape", [(1, 2), (2, 4), (8, 4)], ids=["1x2", "2x4", "8x4"])
def test_rs_tensor_form_returns_the_product_and_the_scatter_of_rs_tensor(open_mesh, shape, rng):
    mesh = open_mesh(shape)
    x_rs, held, buffer, sem = setup(mesh, BF16, ttnn.TILE_LAYOUT)
    x = rng.standard_normal((1, 1, 32, K)).astype(np.float32)
    w = rng.standard_normal((K, N)).astype(np.float32)
    x_t, w_t = replicated(mesh, x, BF16), replicated(mesh, w, BFP8)
    before = mesh.num_program_cache_entries()
    for _ in range(2):  # the second call is the same program
        product, scattered = ttnn.experimental.llama_rs_matmul(
            x_t, w_t, buffer, 3, sem, 1, mesh, 1, ttnn.SubDeviceId(0), rs_tensor=x_rs,
            memory_config_rs=width_sharded(grid(0, 0, 1, 0), 512 // shape[1] // 2),
        )  # fmt: skip
    assert mesh.num_program_cache_entries() - before == 1
    assert tuple(product.shape) == (1, 1, 32, N) and product.dtype == BF16
    assert product.memory_config() == ttnn.DRAM_MEMORY_CONFIG  # the input's, as ttnn defaults it
    ref = product_ref(x, w, BFP8)
    for got in per_device(product):
        assert_within(got.reshape(32, N), ref.ref.reshape(32, N), ref.err.reshape(32, N), "x @ w")
    assert tuple(scattered.shape) == (1, 1, 32, 512 // shape[1])
    check_scatter(scattered, held, mesh, BF16)


@pytest.fixture
def prefetched(open_mesh, rng):
    """A 1x2 mesh with a global CB, two DRAM-sharded bfloat8_b weights and a width-sharded input
    on the ring's cores (tests/ops/test_prefetcher.py's setting)."""
    mesh = open_mesh((1, 2))
    gcb = ttnn.create_global_circular_buffer(mesh, MAPPING, 600 * 1088)
    x = rng.standard_normal((1, 1, 32, K)).astype(np.float32)
    w = [rng.standard_normal((K, N)).astype(np.float32) for _ in range(2)]
    weights = [weights_in_dram(mesh, v, BFP8) for v in w]
    ring = ttnn.MemoryConfig(ttnn.TensorMemoryLayout.WIDTH_SHARDED, ttnn.BufferType.L1,
                             ttnn.ShardSpec(cores(RING), [32, K // 4], ttnn.ShardOrientation.ROW_MAJOR))  # fmt: skip
    x_t = replicated(mesh, x, BF16, ring)
    manager = mesh.create_sub_device_manager([ttnn.SubDevice([cores(SENDERS)]), ttnn.SubDevice([cores(RING)])], 0)
    mesh.load_sub_device_manager(manager)
    buffer = on_mesh(mesh, np.zeros((1, 2, 32, 512), np.float32), BF16, ttnn.TILE_LAYOUT,
                     width_sharded(grid(0, 0, 7, 0), 64))  # fmt: skip
    sem = ttnn.create_global_semaphore(mesh, grid(0, 0, 3, 1), 0)
    yield mesh, gcb, x, w, weights, x_t, buffer, sem
    mesh.clear_loaded_sub_device_manager()
    mesh.remove_sub_device_manager(manager)


def _out_config():
    spec = ttnn.ShardSpec(cores(RING), [32, N // 4], ttnn.ShardOrientation.ROW_MAJOR)
    return ttnn.MemoryConfig(ttnn.TensorMemoryLayout.WIDTH_SHARDED, ttnn.BufferType.L1, spec)


def test_second_weight_form_scatters_the_first_product(prefetched):
    mesh, gcb, x, w, weights, x_t, buffer, sem = prefetched
    first, second, scattered = ttnn.experimental.llama_rs_matmul(
        x_t, weights[0], buffer, 3, sem, 1, mesh, 1, ttnn.SubDeviceId(1), second_weight_tensor=weights[1],
        program_config=gather_config(N), memory_config_mm=_out_config(), global_cb=gcb, dtype=BF16,
    )  # fmt: skip
    refs = [product_ref(x, v, BFP8) for v in w]
    for out, ref in zip((first, second), refs, strict=True):
        for got in per_device(out):
            assert_within(got.reshape(32, N), ref.ref.reshape(32, N), ref.err.reshape(32, N), "x @ w")
    # the scatter sums the two devices' first products (the same here: x and w are replicated)
    held = np.stack([d.reshape(32, N) for d in per_device(first)]).reshape(1, 2, 32, N)
    check_scatter(scattered, held, mesh, BF16)
    assert tuple(scattered.shape) == (1, 1, 32, N // 2)


def test_refusals_come_before_any_allocation(prefetched):
    mesh, gcb, x, w, weights, x_t, buffer, sem = prefetched
    call = ttnn.experimental.llama_rs_matmul
    base = (x_t, weights[0], buffer, 3, sem, 1, mesh, 1, ttnn.SubDeviceId(1))
    kw = dict(program_config=gather_config(N), memory_config_mm=_out_config(), global_cb=gcb)
    used = [
        ttnn.get_memory_view(mesh, t).total_bytes_allocated_per_bank for t in (ttnn.BufferType.L1, ttnn.BufferType.DRAM)
    ]
    with pytest.raises(ttnn.MeshnnValueError, match="exactly one of rs_tensor or second_weight_tensor"):
        call(*base, **kw)
    with pytest.raises(ttnn.MeshnnValueError, match="exactly one of rs_tensor or second_weight_tensor"):
        call(*base, rs_tensor=x_t, second_weight_tensor=weights[1], **kw)
    with pytest.raises(ttnn.MeshnnValueError, match="global CB"):
        call(*base, second_weight_tensor=weights[1], **{**kw, "global_cb": None})
    other = weights_in_dram(mesh, w[0][:, : N // 2].copy(), BFP8)
    with pytest.raises(ttnn.MeshnnValueError, match="one tensor spec"):
        call(*base, second_weight_tensor=other, **kw)
    interleaved = replicated(mesh, x, BF16)
    with pytest.raises(ttnn.MeshnnValueError, match="shard spec"):  # the scatter takes width shards
        call(*base, rs_tensor=interleaved, **kw)
    ttnn.deallocate(other)
    ttnn.deallocate(interleaved)
    after = [
        ttnn.get_memory_view(mesh, t).total_bytes_allocated_per_bank for t in (ttnn.BufferType.L1, ttnn.BufferType.DRAM)
    ]
    assert after == used


def test_the_perf_model_times_one_row_for_the_products_and_the_scatter(prefetched):
    """One Matmul_RS row (tt-metal's one program): the input, both weights and the scattered first product in,
    both products and the scattered slice out, the products' ring config, the scatter's collective config."""
    mesh, gcb, _, _, weights, x_t, buffer, sem = prefetched
    with ttnn.perf_capture() as capture:
        products = ttnn.experimental.llama_rs_matmul(
            x_t, weights[0], buffer, 3, sem, 1, mesh, 1, ttnn.SubDeviceId(1), second_weight_tensor=weights[1],
            program_config=gather_config(N), memory_config_mm=_out_config(), global_cb=gcb,
        )  # fmt: skip
    records = capture.recorder(mesh).records
    assert len(records) == 1
    desc = records[0].desc
    assert desc.family is OpFamily.REDUCE_SCATTER and desc.op_code == "Matmul_RS"
    assert [t.shape for t in desc.inputs] == [tuple(t.shape) for t in (x_t, *weights, products[0])]
    assert [t.shape for t in desc.outputs] == [tuple(t.shape) for t in products]
    assert desc.inputs[-1].nbytes == 32 * N * 2  # the scatter's input: the first product, bfloat16
    assert desc.matmul is not None and desc.matmul.gather_in0 and desc.collective is not None
    assert records[0].prediction.link_bytes > 0
