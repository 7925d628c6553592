"""conv2d's device time (meshnn.perf.conv): a conv2d run under a perf capture carries its window to the
model; the model shares the im2col matmul as tt-metal's conv2d program does (cores, blocks, reads) and
times the busiest core's streams through their circular buffers at tt-metal's own conv transfer rates.
Several of these fail on the costing before it (conv2d as its flat input by its prepared weight: M the
input's rows, K its channels), marked so."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

import meshnn as ttnn
from meshnn.device.arch import Arch
from meshnn.device.buffer import TensorMemoryLayout as L
from meshnn.perf import OpFamily, TensorDesc, predict
from meshnn.perf.conv import conv_blocks, l1_tiles, padded_divisor
from meshnn.perf.conv_cycles import ConvCycles
from meshnn.perf.conv_desc import ConvConfig
from meshnn.perf.conv_rates import CONV_BLACKHOLE_LOCAL_L1, NPE_BLACKHOLE_TRANSFER, RATES
from meshnn.perf.desc import OpDesc

from . import published_conv


def run_conv(system="n150", *, h=32, w=32, ci=64, co=64, k=3, stride=1, groups=1, layout=None, bias=True):
    """One conv2d under a perf capture; returns its record."""
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 1), system=system, execute=False)
    try:
        x = ttnn.empty((1, 1, h * w, ci), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh)
        weight = ttnn.from_torch(np.ones((co, ci // groups, k, k), np.float32), ttnn.bfloat16)
        b = ttnn.from_torch(np.ones((1, 1, 1, co), np.float32), ttnn.bfloat16) if bias else None
        config = ttnn.Conv2dConfig(weights_dtype=ttnn.bfloat16, shard_layout=layout)
        with ttnn.perf_capture() as capture:
            ttnn.conv2d(
                input_tensor=x,
                weight_tensor=weight,
                device=mesh,
                in_channels=ci,
                out_channels=co,
                bias_tensor=b,
                kernel_size=(k, k),
                stride=(stride, stride),
                padding=(k // 2, k // 2),
                batch_size=1,
                input_height=h,
                input_width=w,
                conv_config=config,
                groups=groups,
            )
        (record,) = capture.recorder(mesh).records
        return record
    finally:
        mesh.close()


def test_a_captured_conv2d_carries_its_window_and_gets_a_positive_time():
    record = run_conv(h=16, w=24, ci=32, co=96, k=3, stride=2, layout=ttnn.TensorMemoryLayout.HEIGHT_SHARDED)
    conv = record.desc.conv
    assert conv == ConvConfig(
        1, (8, 12), (3, 3), (2, 2), 32, 96, 1, L.HEIGHT_SHARDED, False, False, False, (1, 1, 1, 1), (1, 1)
    )
    assert record.desc.op_code == "Conv2dDeviceOperation"
    assert record.prediction.kernel_ns > 0
    assert any(note.startswith("conv2d:") for note in record.prediction.notes)


def test_a_1x1_conv_is_the_matmul_ttnn_runs_it_as():
    """ttnn runs a 1x1 conv at stride 1 without padding as ttnn.linear (use_matmul_for_1x1_conv): recorded
    and timed as a MatmulDeviceOperation of its implicit matmul; width-sharded it stays a conv program."""
    record = run_conv(k=1, ci=64, co=128)
    assert record.desc.conv.runs_as_matmul and record.desc.op_code == "MatmulDeviceOperation"
    assert not any(note.startswith("conv2d:") for note in record.prediction.notes)
    assert record.prediction.flops == 2.0 * 1024 * 64 * 128
    width = run_conv(k=1, ci=64, co=128, layout=ttnn.TensorMemoryLayout.WIDTH_SHARDED)
    assert width.desc.op_code == "Conv2dDeviceOperation"
    assert any(note.startswith("conv2d:") for note in width.prediction.notes)


def test_stride_shrinks_the_matmul_to_the_output_positions():
    """Fails on the old costing: its M was the input's rows, the same at any stride."""
    hs = ttnn.TensorMemoryLayout.HEIGHT_SHARDED
    one, two = run_conv(h=64, w=64, stride=1, layout=hs), run_conv(h=64, w=64, stride=2, layout=hs)
    assert one.prediction.flops == pytest.approx(4 * two.prediction.flops)
    assert two.prediction.kernel_ns < one.prediction.kernel_ns


def test_the_kernel_window_is_the_matmuls_k():
    """A 3x3 conv multiplies K = 9 x channels (tt-metal's im2col), a 1x1 one K = channels."""
    three, one = run_conv(k=3, ci=64), run_conv(k=1, ci=64)
    assert three.prediction.flops == pytest.approx(9 * one.prediction.flops)


def test_a_grouped_conv_multiplies_tt_metals_zero_padded_weight():
    """Fails on the old costing (K = 9 x channels a group): tt-metal pads a grouped conv's weight with zeros
    to every input channel (prepare_conv2d_weights.cpp), so a depthwise conv multiplies as a dense one."""
    depthwise = run_conv(ci=64, co=64, groups=64, layout=ttnn.TensorMemoryLayout.WIDTH_SHARDED)
    dense = run_conv(ci=64, co=64, groups=1, layout=ttnn.TensorMemoryLayout.WIDTH_SHARDED)
    assert depthwise.prediction.flops == dense.prediction.flops
    assert depthwise.prediction.flops == 2.0 * 32 * 32 * (9 * 64) * 64


@pytest.mark.parametrize(
    ("n", "most", "cores"),
    [(512, 64, 64), (512, 110, 103), (20, 8, 7), (32, 10, 8), (20, 11, 10), (18, 64, 18), (5280, 64, 64), (7, 64, 7)],
)
def test_cores_as_tt_metal_shares_tiles(n, most, cores):
    """find_closest_largest_divisor_with_num_padding: the most cores whose padding is under one share."""
    assert padded_divisor(n, most) == cores


def test_the_perf_tests_convs_share_out_as_tt_metals_program():
    """The four convs of tt-metal's conv2d device perf test on Wormhole's 8x8 grid."""
    vae = conv_blocks(ConvConfig(1, (128, 128), (3, 3), (1, 1), 4, 512, 1, L.HEIGHT_SHARDED), (8, 8), True)
    assert (vae.cores, vae.rows, vae.cols, vae.k_blocks, vae.block_w) == (64, 8, 16, 3, 3)  # 4 channels padded to 32
    assert (vae.reads, vae.read_bytes) == (8 * 32 * 3, 3 * 32 * 2)  # kw sticks a kernel row of each output row
    reuse = ConvConfig(1, (1056, 160), (3, 3), (1, 1), 4, 16, 1, L.HEIGHT_SHARDED, True, False, True)
    unet = conv_blocks(reuse, (8, 8), True)
    assert (unet.cores, unet.rows, unet.k_blocks, unet.block_w) == (64, 83, 1, 9)  # reuse: all of K in one block
    # one kernel row a position; each split reader's first image width all three
    assert unet.reads == 83 * 32 + 2 * 160 * 2
    sdxl = conv_blocks(ConvConfig(1, (32, 32), (3, 3), (2, 2), 640, 640, 1, L.BLOCK_SHARDED), (8, 8), True)
    assert (sdxl.cores, sdxl.rows, sdxl.cols, sdxl.k_blocks, sdxl.block_w, sdxl.share) == (56, 4, 3, 21, 9, 7)
    seg = conv_blocks(ConvConfig(1, (6, 6), (3, 3), (1, 1), 576, 576, 576, L.WIDTH_SHARDED), (8, 8), True)
    assert (seg.cores, seg.rows, seg.cols, seg.k_blocks, seg.block_w) == (18, 2, 1, 18, 9)
    assert seg.weight_tiles == 18 * 9 * 1  # its [5184, 32] share of the zero-padded [5184, 576] weight
    assert (seg.reads, seg.read_bytes) == (36 * 9, 64)  # width-sharded: one stick of its 32 channels a tap


def test_blackhole_local_reads_take_tt_npes_transfer_table():
    """Blackhole's local-L1 reads at tt-npe's per-transfer bytes a cycle (linear between its points, flat beyond
    16 KB); tt-metal's own line kept for the record gives a 192 B read fewer bytes a cycle than Wormhole's."""
    bh, wh = RATES[Arch.BLACKHOLE].local_l1, RATES[Arch.WORMHOLE_B0].local_l1
    assert bh is NPE_BLACKHOLE_TRANSFER
    assert bh.bytes_per_cycle(128) == 6.0
    assert bh.bytes_per_cycle(192) == pytest.approx((6.0 + 12.1) / 2)
    assert bh.bytes_per_cycle(64) == pytest.approx(3.0)  # from 0 at 0 B
    assert bh.bytes_per_cycle(1 << 20) == 60.9
    assert bh.cycles(192 * 100, 192, 1.35e9) == pytest.approx(100 * 192 / 9.05)
    line = CONV_BLACKHOLE_LOCAL_L1.gbps(192) / 1.35  # bytes a cycle at 1.35 GHz
    assert line < wh.gbps(192) / 1.0 < bh.bytes_per_cycle(192)


def test_one_block_single_buffered_is_tt_metals_split_reader_sum():
    """With one block and no double buffer the core's time is what is_split_reader_viable compares:
    max(act + tilize, weights) with one reader, act / 2 + max(tilize, weights) with two; then the matmul."""
    act, weights, tilize, matmul = 1000.0, 700.0, 300.0, 2000.0
    one = ConvCycles(act, weights, tilize, matmul, 1, False)
    assert one.total(False, False) == max(act + tilize, weights) + matmul
    two = ConvCycles(act, weights, tilize, matmul, 1, True)
    assert two.total(False, False) == act / 2 + max(tilize, weights) + matmul


def test_double_buffers_hide_the_readers_behind_the_compute():
    parts = ConvCycles(reader=9000.0, weights=9000.0, tilize=1000.0, matmul=9000.0, blocks=30, split=False)
    single, double = parts.total(False, False), parts.total(True, True)
    assert double < single
    assert double == pytest.approx(10000.0 + 9000.0 / 30 * 2, rel=0.05)  # the compute, plus the first block's reads


def test_width_sharded_rounds_wait_for_the_matmul_that_frees_the_act_buffer():
    """Width-sharded (rounds): the own block read and tilized once, then every block a round of handshake and
    multicast, which single-buffered waits for the block before's matmul; double-buffered it overlaps it."""
    reader, tilize, cast, mm, hs, n = 5000.0, 500.0, 2000.0, 600.0, 200.0, 10
    parts = ConvCycles(reader, 100.0 * n, tilize, mm * n, n, False, cast * n, True, hs)
    assert parts.total(False, False) == pytest.approx(reader + tilize + n * (hs + cast + mm))
    assert parts.total(True, False) == pytest.approx(reader + tilize + n * (hs + cast) + mm)
    slower = ConvCycles(reader, 100.0 * n, tilize, mm * n, n, False, cast * n, True, 2 * hs)
    assert slower.total(False, False) == pytest.approx(parts.total(False, False) + n * hs)


def test_block_sharded_height_blocks_read_the_weights_again():
    """act_block_h_override splits a block-sharded core's rows into height blocks (tt-metal's largest divisor of
    them not over the override); the weights' writer reads its column's weights for each."""
    base = ConvConfig(1, (32, 32), (3, 3), (1, 1), 2560, 1280, 1, L.BLOCK_SHARDED)
    one = conv_blocks(base, (8, 8), True)
    two = conv_blocks(replace(base, act_block_h=64), (8, 8), True)
    odd = conv_blocks(replace(base, act_block_h=96), (8, 8), True)  # 3 tile rows: 4 rows run as 2 blocks of 2
    assert (one.rows, one.height_blocks, two.height_blocks, odd.height_blocks) == (4, 1, 2, 2)
    assert two.weight_tiles == 2 * one.weight_tiles
    assert l1_tiles(two) == l1_tiles(one)  # what a core holds does not change


def test_the_conv_rates_are_tt_metals_lines():
    wh = RATES[Arch.WORMHOLE_B0]
    assert wh.local_l1.gbps(16) == pytest.approx(0.868)
    assert wh.local_l1.gbps(8) == pytest.approx(0.868)  # clamped below
    assert wh.local_l1.gbps(4096) == pytest.approx(27.84)  # flat beyond the threshold
    assert wh.local_l1.gbps(520) == pytest.approx((0.868 + 27.84) / 2)
    assert wh.tilize(False, "BFLOAT8_B", False) == 40
    assert RATES[Arch.BLACKHOLE].tilize(True, "BFLOAT16", True) == 80


def test_a_description_without_its_window_is_timed_as_its_implicit_matmul():
    """An OpDesc with conv2d's name and no window (hand-made, or a conv_transpose2d) keeps the matmul model
    on the matmul its program computes (meshnn.perf.conv.implicit_matmul)."""
    desc = OpDesc(
        OpFamily.MATMUL,
        (TensorDesc((1, 1, 1024, 64)), TensorDesc((1, 1, 576, 64))),
        (TensorDesc((1, 1, 1024, 64)),),
        op_code="Conv2dDeviceOperation",
    )
    prediction = predict(desc, "n150")
    assert not any(note.startswith("conv2d:") for note in prediction.notes)
    assert prediction.flops == 2.0 * 1024 * 576 * 64


def test_the_published_conv_rows_against_the_implicit_matmul():
    """Before (conv2d as its implicit matmul): 1 of the 8 rows within 15%; now all 8.  Every row is nearer its
    target but unet_hs on the P150 (30.8 us before, -3.7%; 33.7 now, +5.3%)."""
    within_before = within_now = 0
    for config in published_conv.CONFIGS:
        name, targets = config[0], config[-1]
        for system, target, before in zip(("n150", "p150"), targets, published_conv.BEFORE[name], strict=True):
            now = published_conv.conv_us(system, config)
            within_before += abs(before / target - 1) <= 0.15
            within_now += abs(now / target - 1) <= 0.15
            assert (abs(now / target - 1) < abs(before / target - 1)) is ((name, system) != ("unet_hs", "p150"))
    assert (within_before, within_now) == (1, 8)


def test_activation_reuse_tilizes_the_whole_block_before_its_matmul():
    """Activation reuse: two readers of 3 tile rows each (100 cycles a row), image widths of 2 tile rows; the
    compute tilizes their rows by turns (10 cycles a row), a reader's third row waits for its second's tilize
    (the buffer holds one image width), and the one matmul (1000) starts after the last tilize."""
    parts = ConvCycles(600.0, 0.0, 60.0, 1000.0, 6, True, reuse_width=2)
    # rows read by 100 and 200 (both readers), tilized at 110, 120, 210, 220; the third rows wait for 210 and
    # 220 (read by 310 and 320, tilized at 320 and 330), then the matmul
    assert parts.total(True, False) == 330.0 + 1000.0
    first = ConvCycles(600.0, 0.0, 20.0, 1000.0, 2, True, reuse_width=1, reuse_taps=3)
    assert first.total(True, False) == 300.0 + 2 * 10.0 + 1000.0  # the first width reads all three kernel rows


def test_block_sharded_multicasts_wait_for_the_receivers_matmul():
    """Block-sharded (a multicast each K block): a group's own rows read and tilized once, then each block of the
    group multicast once every receiver's activation buffer is free (single-buffered: after the matmul of the
    block before), so handshake, multicast and matmul follow one another; double-buffered the multicast of
    the next block overlaps the matmul."""
    reader, tilize, cast, mm, hs, n, group = 800.0, 400.0, 300.0, 500.0, 50.0, 8, 4
    parts = ConvCycles(reader, 0.0, tilize, mm * n, n, False, cast * n, False, hs, group)
    per_group = reader / 2 + tilize / 2  # two groups: each reads and tilizes its half
    single = parts.total(False, False)
    # the second group's read follows the reader's last multicast of the first, behind the last matmul
    assert single == pytest.approx(reader / 2 + tilize + n * (hs + cast + mm))
    double = parts.total(True, False)
    assert double < single
    assert double == pytest.approx(per_group + hs + cast + n * mm + per_group, rel=0.2)
    # the tilize of a group waits for the matmul before it: the compute core does both in turn
    assert parts.total(False, False) > ConvCycles(reader, 0.0, 0.0, mm * n, n, False, cast * n, False, hs, group).total(
        False, False
    )
