"""The DRAM prefetcher's pieces: ``ttnn.create_global_circular_buffer`` (its L1 allocation at one
address on every device, its config words, freed when dropped), ``ttnn.dram_prefetcher`` (ttnn's
checks, recorded, its placeholder output) and the matmuls that read through a global CB
(``ttnn.matmul(global_cb=, sub_device_id=)``, ``ttnn.matmul_batched_weights``): the product is
the weights' values, bounded against float64 numpy of the inputs as the device holds them (the
weights' bfloat4_b / bfloat8_b quantization is in the reference; the bound is the float32 dot
product's plus the bfloat16 output's rounding).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import meshnn as ttnn
from meshnn.device.allocator import align_up
from meshnn.mesh.observers import OBSERVERS, MeshObserver
from meshnn.ops.costs import op_desc
from meshnn.ops.registry import lookup
from meshnn.perf import predict
from meshnn.perf.desc import OpFamily
from tests.ops.reference import BF16, Approx, a_matmul, a_stored, assert_within, exceeds, quantized

C = ttnn.CoreCoord
SENDERS = [C(0, 0), C(0, 1)]
RECEIVERS = [
    ttnn.CoreRangeSet([ttnn.CoreRange(C(1, 0), C(2, 0))]),
    ttnn.CoreRangeSet([ttnn.CoreRange(C(1, 1), C(2, 1))]),
]
RING = [C(1, 0), C(2, 0), C(1, 1), C(2, 1)]  # the matmul's cores: every receiver, in ring order
MAPPING = list(zip(SENDERS, RECEIVERS, strict=True))
M, K, N = 32, 256, 512


class Recorder(MeshObserver):
    def __init__(self):
        self.ops = []

    def on_op_begin(self, event):
        self.ops.append(event)


def l1_per_bank(mesh):
    return mesh.get_memory_view(ttnn.BufferType.L1).total_bytes_allocated_per_bank


def cores(coords):
    return ttnn.CoreRangeSet([ttnn.CoreRange(c, c) for c in coords])


def test_a_global_cb_is_two_sharded_l1_buffers_over_its_cores_on_every_device(open_mesh):
    mesh = open_mesh((2, 4))
    before, size = l1_per_bank(mesh), 10 * 1088
    gcb = ttnn.create_global_circular_buffer(mesh, MAPPING, size)
    alignment = mesh.system.arch_spec.l1_alignment
    page = align_up(4 * (7 + 2 * 2), alignment) + 2 * 2 * alignment  # 7 words, 2 receivers' x/y, their slots
    bank = mesh.allocator.managers[ttnn.BufferType.L1].free_list.alignment  # the allocator's unit (32 B)
    assert l1_per_bank(mesh) - before == align_up(size, bank) + align_up(page, bank)
    assert gcb.size() == size and gcb.config_address() < gcb.buffer_address()  # L1 allocates top-down
    assert gcb.cb.size() == size * 6 and gcb.config.size() == page * 6  # a page on each of the 6 cores
    assert gcb.sender_cores().num_cores() == 2 and gcb.receiver_cores().num_cores() == 4
    assert gcb.all_cores().num_cores() == 6
    # the config pages, as tt-metal writes them: sender (0, 0) is core 0 of the row-major order, its
    # first receiver (1, 0) core 1; both on every device
    mesh.mesh_command_queue(0).finish()
    words = gcb.config.slab()[:, : 6 * page].view(np.uint32).reshape(mesh.get_num_devices(), 6, page // 4)
    fifo, noc_xy = gcb.buffer_address(), gcb.config_address() + 28
    pages_sent = align_up(noc_xy + 16, alignment)
    for device in words:
        np.testing.assert_array_equal(device[0, :7], [1, 2, fifo, size, fifo, noc_xy, pages_sent])
        np.testing.assert_array_equal(device[1, :7], [0, 2, fifo, size, fifo, noc_xy, pages_sent])
        np.testing.assert_array_equal(device[2, :7], [0, 2, fifo, size, fifo, noc_xy, pages_sent + 2 * alignment])
    del gcb  # dropping it frees both buffers on every device
    assert l1_per_bank(mesh) == before


def test_a_second_global_cb_sits_below_the_first_and_deallocate_frees_it(open_mesh):
    mesh = open_mesh((1, 2))
    first = ttnn.create_global_circular_buffer(mesh, MAPPING, 4096)
    second = ttnn.create_global_circular_buffer(mesh, MAPPING, 4096)
    assert second.buffer_address() < first.config_address()
    held = l1_per_bank(mesh)
    second.deallocate()
    second.deallocate()  # safe to repeat
    assert not second.is_allocated() and l1_per_bank(mesh) < held
    third = ttnn.create_global_circular_buffer(mesh, MAPPING, 4096)
    assert third.buffer_address() == second.buffer_address()  # the freed range is reused


BAD_MAPPINGS = [
    ([(C(0, 0), RECEIVERS[0]), (C(0, 0), RECEIVERS[1])], "duplicate cores"),
    ([(C(1, 0), RECEIVERS[0])], "duplicate cores"),  # the sender is also a receiver
    ([(C(0, 0), cores([C(8, 0)]))], r"outside the 8x8 compute grid"),
    ([], "non-empty"),
    ([(C(0, 0), ttnn.CoreRangeSet([]))], "no receiver cores"),
]


@pytest.mark.parametrize("mapping, message", BAD_MAPPINGS)
def test_a_bad_mapping_is_refused_before_anything_is_allocated(open_mesh, mapping, message):
    mesh = open_mesh((1, 2))
    before = l1_per_bank(mesh)
    with pytest.raises(ttnn.MeshnnValueError, match=message):
        ttnn.create_global_circular_buffer(mesh, mapping, 4096)
    assert l1_per_bank(mesh) == before


def test_bad_sizes_and_buffer_types_are_refused(open_mesh):
    mesh = open_mesh((1, 2))
    with pytest.raises(ttnn.MeshnnValueError, match="positive"):
        ttnn.create_global_circular_buffer(mesh, MAPPING, 0)
    with pytest.raises(ttnn.MeshnnTypeError, match="size must be an int"):
        ttnn.create_global_circular_buffer(mesh, MAPPING, 4096.0)
    with pytest.raises(ttnn.MeshnnValueError, match="L1 buffer types"):
        ttnn.create_global_circular_buffer(mesh, MAPPING, 4096, ttnn.BufferType.DRAM)
    with pytest.raises(ttnn.OutOfMemoryError):  # more than L1 holds: out of memory, nothing kept
        ttnn.create_global_circular_buffer(mesh, MAPPING, 1 << 30)
    assert l1_per_bank(mesh) == 0
    room = mesh.get_memory_view(ttnn.BufferType.L1).largest_contiguous_bytes_free_per_bank
    with pytest.raises(ttnn.OutOfMemoryError) as held:  # the FIFO fits, its 128 B config pages do not
        ttnn.create_global_circular_buffer(mesh, MAPPING, room - 64)
    assert l1_per_bank(mesh) == 0 and held.traceback  # the FIFO is freed though the traceback is still held
    assert ttnn.create_global_circular_buffer(mesh, MAPPING, room - 128).sender_core_type() == "worker"  # both fit


# ----------------------------------------------------------------------------- prefetch + matmul


def weights_in_dram(mesh, values, dtype):
    """A [K, N] weight WIDTH_SHARDED over DRAM banks 0 and 1, as the prefetcher reads it."""
    config = ttnn.MemoryConfig(
        ttnn.TensorMemoryLayout.WIDTH_SHARDED,
        ttnn.BufferType.DRAM,
        ttnn.ShardSpec(
            cores([C(0, 0), C(1, 0)]), [values.shape[0], values.shape[1] // 2], ttnn.ShardOrientation.ROW_MAJOR
        ),
    )
    return ttnn.as_tensor(
        torch.from_numpy(values), device=mesh, dtype=dtype, layout=ttnn.TILE_LAYOUT, memory_config=config
    )


def addresses(mesh, weights):
    table = torch.tensor([[w.buffer_address() for w in weights]] * 2)
    config = ttnn.MemoryConfig(
        ttnn.TensorMemoryLayout.HEIGHT_SHARDED,
        ttnn.BufferType.L1,
        ttnn.ShardSpec(cores(SENDERS), [1, len(weights)], ttnn.ShardOrientation.ROW_MAJOR),
    )
    return ttnn.as_tensor(table, device=mesh, dtype=ttnn.uint32, memory_config=config)


def width_sharded(rows, width):
    spec = ttnn.ShardSpec(cores(RING), [rows, width], ttnn.ShardOrientation.ROW_MAJOR)
    return ttnn.MemoryConfig(ttnn.TensorMemoryLayout.WIDTH_SHARDED, ttnn.BufferType.L1, spec)


def gather_config(n):
    return ttnn.MatmulMultiCoreReuseMultiCast1DProgramConfig(
        compute_with_storage_grid_size=(4, 1), in0_block_w=K // 4 // 32, out_subblock_h=1, out_subblock_w=n // 4 // 32,
        per_core_M=1, per_core_N=n // 4 // 32, fuse_batch=True, fused_activation=None, mcast_in0=False,
        gather_in0=True, num_global_cb_receivers=2,
    )  # fmt: skip


@pytest.fixture
def setup(open_mesh, rng):
    mesh = open_mesh((1, 2))
    gcb = ttnn.create_global_circular_buffer(mesh, MAPPING, 600 * 1088)
    x = rng.standard_normal((1, 1, M, K)).astype(np.float32)
    w = [rng.standard_normal((K, N)).astype(np.float32) for _ in range(2)]
    dtypes = [ttnn.bfloat4_b, ttnn.bfloat8_b]
    weights = [weights_in_dram(mesh, v, d) for v, d in zip(w, dtypes, strict=True)]
    x_t = ttnn.from_torch(
        torch.from_numpy(x), device=mesh, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT,
        memory_config=width_sharded(M, K // 4),
    )  # fmt: skip
    manager = mesh.create_sub_device_manager([ttnn.SubDevice([cores(SENDERS)]), ttnn.SubDevice([cores(RING)])], 0)
    mesh.load_sub_device_manager(manager)
    yield mesh, gcb, x, w, dtypes, weights, x_t
    mesh.clear_loaded_sub_device_manager()
    mesh.remove_sub_device_manager(manager)


def every_device(out, mesh):
    """The [M, N] result of each device (the inputs are replicated: each computes the product)."""
    whole = ttnn.to_torch(out, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0)).float().numpy()
    return whole.reshape(mesh.get_num_devices(), M, N)


def reference(x, w, dtype):
    """x @ w of the values the device holds, and the bound of a float32 product stored as bfloat16."""
    a = Approx.exact(quantized(x, BF16))
    b = Approx.exact(quantized(w, dtype))
    return a_stored(a_matmul(a, b), BF16)


def prefetched_products(mesh, gcb, x_t, weights):
    """x_t @ each weight, read through the global CB on the ring's sub-device."""
    mesh.set_sub_device_stall_group([ttnn.SubDeviceId(1)])
    outs = [
        ttnn.matmul(
            x_t, wt, program_config=gather_config(N), memory_config=width_sharded(M, N // 4),
            global_cb=gcb, sub_device_id=ttnn.SubDeviceId(1),
        )
        for wt in weights
    ]  # fmt: skip
    mesh.reset_sub_device_stall_group()
    return outs


def test_prefetched_matmuls_compute_the_weights_products(setup):
    mesh, gcb, x, w, dtypes, weights, x_t = setup
    recorder = Recorder()
    OBSERVERS.add(recorder)
    try:
        placeholder = ttnn.dram_prefetcher([*weights, addresses(mesh, weights)], 1, global_cb=gcb)
        outs = prefetched_products(mesh, gcb, x_t, weights)
    finally:
        OBSERVERS.remove(recorder)
    assert tuple(placeholder.shape) == (32, 32) and placeholder.dtype == ttnn.bfloat4_b
    assert placeholder.memory_config() == ttnn.DRAM_MEMORY_CONFIG
    prefetch, *matmuls = recorder.ops
    assert prefetch.op == "dram_prefetcher" and prefetch.attrs["num_layers"] == 1 and prefetch.attrs["global_cb"] is gcb
    assert all(m.attrs["global_cb"] is gcb and m.attrs["sub_device_id"] == 1 for m in matmuls)
    for out, values, dtype in zip(outs, w, dtypes, strict=True):
        ref = reference(x, values, dtype)
        for got in every_device(out, mesh):
            assert_within(got, ref.ref.reshape(M, N), ref.err.reshape(M, N), f"x @ {dtype} weight")
        # the bound would catch the weight read unquantized (bfloat4_b's error is far beyond it)
        assert dtype is not ttnn.bfloat4_b or exceeds(
            x.reshape(M, K) @ values, ref.ref.reshape(M, N), ref.err.reshape(M, N)
        )


def test_the_prefetch_reads_no_weight_bytes_a_memo_stands_for(setup):
    """A weight whose bytes were let go (its decoded memo stands for them once a product read it)
    keeps them let go through ``dram_prefetcher``, which reads no weight's bytes (the 70B Galaxy's
    decode step made every prefetched weight's bytes again, a layer's 0.86 G values re-encoded),
    and the products after it are the same bytes."""
    mesh, gcb, _, _, _, weights, x_t = setup
    first = [every_device(out, mesh) for out in prefetched_products(mesh, gcb, x_t, weights)]
    let_go = [wt.storage.mesh_buffer.has_deferred_write() for wt in weights]
    assert any(let_go), "the product's memo stands for the weight's bytes"
    ttnn.dram_prefetcher([*weights, addresses(mesh, weights)], 1, global_cb=gcb)
    assert [wt.storage.mesh_buffer.has_deferred_write() for wt in weights] == let_go
    again = [every_device(out, mesh) for out in prefetched_products(mesh, gcb, x_t, weights)]
    assert all(np.array_equal(a, b) for a, b in zip(first, again, strict=True))


def test_matmul_batched_weights_is_one_product_per_weight(setup, rng):
    mesh, gcb, x, _, _, _, x_t = setup
    w = [rng.standard_normal((K, N)).astype(np.float32) for _ in range(2)]
    weights = [weights_in_dram(mesh, v, ttnn.bfloat8_b) for v in w]
    outs = ttnn.matmul_batched_weights(
        x_t, weights, program_config=gather_config(N), memory_config=width_sharded(M, N // 4),
        global_cb=gcb, sub_device_id=ttnn.SubDeviceId(1),
    )  # fmt: skip
    assert len(outs) == 2
    for out, values in zip(outs, w, strict=True):
        ref = reference(x, values, ttnn.bfloat8_b)
        for got in every_device(out, mesh):
            assert_within(got, ref.ref.reshape(M, N), ref.err.reshape(M, N), "batched x @ bfloat8_b weight")
    other = weights_in_dram(mesh, rng.standard_normal((K, N // 2)).astype(np.float32), ttnn.bfloat8_b)
    with pytest.raises(ttnn.MeshnnValueError, match="same logical_shape"):
        ttnn.matmul_batched_weights(x_t, [weights[0], other], program_config=gather_config(N), global_cb=gcb)


def test_the_prefetcher_checks_its_call_as_ttnn_does(setup):
    mesh, gcb, _, _, _, weights, x_t = setup
    table = addresses(mesh, weights)
    with pytest.raises(ttnn.MeshnnValueError, match="at least 1 layer"):
        ttnn.dram_prefetcher([*weights, table], 0, global_cb=gcb)
    with pytest.raises(ttnn.MeshnnValueError, match="global circular buffer must be provided"):
        ttnn.dram_prefetcher([*weights, table], 1, global_cb=None)
    with pytest.raises(ttnn.MeshnnValueError, match="width sharded"):
        ttnn.dram_prefetcher([ttnn.to_memory_config(weights[0], ttnn.DRAM_MEMORY_CONFIG), table], 1, global_cb=gcb)
    with pytest.raises(ttnn.MeshnnValueError, match="addresses must be row major"):
        ttnn.dram_prefetcher([*weights, weights[0]], 1, global_cb=gcb)
    small = ttnn.create_global_circular_buffer(mesh, MAPPING, 1088)
    with pytest.raises(ttnn.MeshnnValueError, match="must fit in global cb"):
        ttnn.dram_prefetcher([*weights, table], 1, global_cb=small)
    uneven = ttnn.create_global_circular_buffer(
        mesh, [(C(3, 0), cores([C(4, 0)])), (C(3, 1), cores([C(4, 1), C(5, 1)]))], 600 * 1088
    )
    with pytest.raises(ttnn.MeshnnValueError, match="same number of receivers"):
        ttnn.dram_prefetcher([*weights, table], 1, global_cb=uneven)
    small.deallocate()
    with pytest.raises(ttnn.MeshnnValueError, match="deallocated"):
        ttnn.dram_prefetcher([*weights, table], 1, global_cb=small)
    with pytest.raises(ttnn.MeshnnTypeError, match="global_cb must be a GlobalCircularBuffer"):
        ttnn.matmul(x_t, weights[0], global_cb="cb")
    with pytest.raises(ttnn.MeshnnValueError, match="out of bounds 2"):
        ttnn.matmul(x_t, weights[0], sub_device_id=ttnn.SubDeviceId(2))
    no_cb = gather_config(N)
    with pytest.raises(ttnn.MeshnnValueError, match="must be 1 when global CB is not provided"):
        ttnn.matmul(x_t, weights[0], program_config=no_cb, memory_config=width_sharded(M, N // 4))


def test_the_registry_records_the_prefetcher_as_dram_reads():
    entry = lookup("dram_prefetcher")
    assert entry.family is OpFamily.COPY
    assert entry.device_operation == "DramPrefetcher"
    assert lookup("matmul_batched_weights").family.name == "MATMUL"


def test_the_perf_model_times_the_dram_reads_of_every_layer_s_weights(setup):
    """The prefetcher's description reads each given weight once per layer (the addresses once)."""
    mesh, gcb, _, _, _, weights, _ = setup

    class Last(MeshObserver):
        def on_op_end(self, event, outputs):
            self.desc = op_desc(event, outputs)

    last, table = Last(), addresses(mesh, weights)
    OBSERVERS.add(last)
    try:
        ttnn.dram_prefetcher([*weights, table], 1, global_cb=gcb)
        one = last.desc
        ttnn.dram_prefetcher([*weights, table], 4, global_cb=gcb)
        four = last.desc
    finally:
        OBSERVERS.remove(last)
    assert one.op_code == "DramPrefetcher" and len(one.inputs) == 3 and len(four.inputs) == 9
    assert four.inputs[:2] * 4 == four.inputs[:8] and four.inputs[-1] == one.inputs[-1]
    assert predict(four, "t3k").kernel_ns > predict(one, "t3k").kernel_ns
