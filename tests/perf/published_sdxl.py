"""Stable Diffusion XL's op-level kernel times and the model's value for each.

Source: tt-metal (2026-06) models/demos/stable_diffusion_xl_base/tests/test_sdxl_op_unit_test_perf.py: six
ops of SDXL's UNet and VAE, each run alone on one chip of a Wormhole N300 (tests/pipeline_reorg/
ops_sanity_tests.yaml: ``wh_n300_civ2``; the ``device`` fixture opens chip 0, an 8x8 grid as the N150's),
the mean DEVICE KERNEL duration expected within 1.5% (``MARGIN``).  The shapes and configs are the unit
tests' it calls (tests/ttnn/nightly/unit_tests/operations/matmul/test_matmul.py::test_sdxl_matmul,
.../conv/test_conv2d.py::test_conv2d_sdxl / test_conv2d_vae_sdxl, tests/ttnn/unit_tests/operations/fused/
test_group_norm.py and test_group_norm_DRAM.py).

A conv is described as a capture records it (the input as given, the prepared weight, the output, and for
the block-sharded one its window: :mod:`meshnn.perf.conv` times its program); the DRAM-sliced VAE conv is run by
meshnn's conv2d under a capture (its slices: :mod:`meshnn.perf.conv_slices`), its figure one slice's conv2d
program: the perf test keeps the ops whose OP CODE is Conv2dDeviceOperation and reports their mean DEVICE KERNEL
(models/perf/device_perf_utils.py: post_process_ops_log_detailed, AVG), so the slices' reads, halos and
write-backs (other ops) are left out.
"""

from __future__ import annotations

import math

from meshnn.perf import (
    BufferType,
    Layout,
    MatmulConfig,
    MatmulProgram,
    MemoryLayout,
    OpDesc,
    OpFamily,
    TensorDesc,
    predict,
)
from meshnn.perf.conv_desc import ConvConfig

from .figure import Figure

SOURCE = "tt-metal models/demos/stable_diffusion_xl_base/tests/test_sdxl_op_unit_test_perf.py (WH N300, 1 chip)"
BS = dict(buffer=BufferType.L1, memory=MemoryLayout.BLOCK_SHARDED)


def kernel_us(desc: OpDesc) -> float:
    return predict(desc, "n300", mesh_shape=(1, 1), traced=True).kernel_ns / 1e3


def ff_matmul() -> OpDesc:
    """The UNet's feed-forward linear with GELU: [1024, 1280] bfloat16 block-sharded over 5x8 cores, a
    [1280, 5120] bfloat8_b weight and bias in DRAM, a 2-D program of 4 x 32-tile blocks, in0_block_w 4,
    HiFi2, packer_l1_acc on, the output block-sharded in L1."""
    a, out = TensorDesc((1, 1, 1024, 1280), **BS), TensorDesc((1, 1, 1024, 5120), **BS)
    w, bias = TensorDesc((1, 1, 1280, 5120), "BFLOAT8_B"), TensorDesc((1, 1, 32, 5120), "BFLOAT8_B")
    config = MatmulConfig(MatmulProgram.MULTICAST_2D, (5, 8), 4, 32, in0_block_w=4, packer_l1_acc=True, fp32_acc=False)
    return OpDesc(OpFamily.MATMUL, (a, w, bias), (out,), fidelity="HiFi2", matmul=config, unary_ops=("gelu",))


def conv_block_sharded() -> OpDesc:
    """The UNet's 3x3 conv 2560 -> 1280 channels at 32x32 as a capture records it: the input
    [1, 1, 1024, 2560] bfloat16 block-sharded over 8x8 cores, the prepared [1, 1, 23040, 1280] bfloat8_b
    weight, the output block-sharded; HiFi2, packer_l1_acc on, both double buffers, act_block_h_override 64
    (the test's configs),
    with its window as a capture records it (the conv program's model, :mod:`meshnn.perf.conv`)."""
    x, out = TensorDesc((1, 1, 1024, 2560), **BS), TensorDesc((1, 1, 1024, 1280), **BS)
    w = TensorDesc((1, 1, 2560 * 9, 1280), "BFLOAT8_B")
    config = MatmulConfig(packer_l1_acc=True, fp32_acc=False)
    window = ConvConfig(
        1, (32, 32), (3, 3), (1, 1), 2560, 1280, 1, MemoryLayout.BLOCK_SHARDED, True, True, False, act_block_h=64
    )
    return OpDesc(
        OpFamily.MATMUL, (x, w), (out,), op_code="Conv2dDeviceOperation", fidelity="HiFi2", matmul=config, conv=window
    )


def conv_vae_us() -> float:
    """The VAE's 3x3 conv 512 -> 512 channels at 256x256 run by meshnn's conv2d under a perf capture with the unit
    test's arguments (test_conv2d_vae_sdxl: the bfloat16 TILE input [1, 256, 256, 512] in DRAM, no slice config
    (auto_slice), block-sharded, act_block_h_override 256, bfloat8_b weights with a bias, LoFi, no packer L1
    accumulation, no double buffers, a bfloat16 TILE output; the device opened with l1_small_size 27 KiB), on one
    chip of the N300: the conv's time over the DRAM slices it runs in (meshnn.perf.conv_slices: 2 by width here),
    the mean of its slices' conv2d programs, as the perf test averages the Conv2dDeviceOperation rows."""
    import numpy as np

    import meshnn as ttnn

    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 1), system="n300", execute=False, l1_small_size=27 * 1024)
    try:
        x = ttnn.empty((1, 256, 256, 512), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh)
        weight = ttnn.from_torch(np.ones((512, 512, 3, 3), np.float32), ttnn.float32)
        bias = ttnn.from_torch(np.ones((1, 1, 1, 512), np.float32), ttnn.float32)
        config = ttnn.Conv2dConfig(
            weights_dtype=ttnn.bfloat8_b,
            shard_layout=ttnn.TensorMemoryLayout.BLOCK_SHARDED,
            deallocate_activation=False,
            output_layout=ttnn.TILE_LAYOUT,
            act_block_h_override=256,
        )
        compute = ttnn.init_device_compute_kernel_config(
            mesh.arch(), math_fidelity=ttnn.MathFidelity.LoFi, fp32_dest_acc_en=False, packer_l1_acc=False
        )
        with ttnn.perf_capture() as capture:
            ttnn.conv2d(
                input_tensor=x,
                weight_tensor=weight,
                in_channels=512,
                out_channels=512,
                device=mesh,
                bias_tensor=bias,
                kernel_size=(3, 3),
                stride=(1, 1),
                padding=(1, 1, 1, 1),
                batch_size=1,
                input_height=256,
                input_width=256,
                conv_config=config,
                compute_config=compute,
                dtype=ttnn.bfloat16,
                slice_config=None,
            )
        (record,) = [r for r in capture.recorder(mesh).records if r.desc.op_code == "Conv2dDeviceOperation"]
        return record.prediction.kernel_ns / 1e3 / record.desc.conv.slices
    finally:
        mesh.close()


def group_norm(rows: int, channels: int) -> OpDesc:
    """``group_norm`` of [1, 1, rows, channels] (N x H x W rows) in 32 groups on the 8x8 grid with Welford
    reciprocals, as the DRAM test gives it and a capture records it: the tiled bfloat16 input in DRAM, gamma
    and beta row-major [1, 1, channels / 32, 32] in DRAM (``dram_group_norm_params_from_torch``), the
    bfloat16 input mask [1, 32, 32, 32], the float32 reciprocals height-sharded over the 64 cores."""
    x = TensorDesc((1, 1, rows, channels))
    weight = TensorDesc((1, 1, channels // 32, 32), layout=Layout.ROW_MAJOR)
    mask = TensorDesc((1, 32, 32, 32))
    count = channels // 32 * rows // 32 // 64
    recips = TensorDesc((64, count), "FLOAT32", layout=Layout.ROW_MAJOR, buffer=BufferType.L1,
                        memory=MemoryLayout.HEIGHT_SHARDED)  # fmt: skip
    attributes = (("num_groups", "32"), ("use_welford", "True"))
    return OpDesc(OpFamily.NORM, (x, weight, weight, mask, recips), (x,), op_code="GroupNormDeviceOperation",
                  core_grid=(8, 8), attributes=attributes)  # fmt: skip


def sharded_group_norm(rows: int, channels: int, negative_mask: bool) -> OpDesc:
    """``group_norm`` of a row-major [1, 1, rows, channels] bfloat16 input block-sharded over the 8x8 grid
    in 32 groups, as a capture records it: the input (in place, row-major out), its bfloat8_b input mask
    ``[1, 32, 32, 32 x max tile span]`` in DRAM (``create_group_norm_input_mask``); with ``negative_mask``
    the negative mask of the same shape and the row-major gamma and beta ``[1, 1, rows, 32]`` in DRAM
    (``create_group_norm_weight_bias_rm``), as test_sdxl_base_group_norm_negative_mask gives them."""
    from meshnn.perf.group_norm import max_tile_span

    x = TensorDesc((1, 1, rows, channels), layout=Layout.ROW_MAJOR, **BS)
    span = max_tile_span(channels // 8, channels // 32)
    mask = TensorDesc((1, 32, 32, 32 * span), "BFLOAT8_B")
    inputs = [x, mask]
    if negative_mask:
        weight = TensorDesc((1, 1, math.ceil(channels / 8 / 32) * 8, 32), layout=Layout.ROW_MAJOR)
        inputs = [x, weight, weight, mask, mask]
    attributes = (("num_groups", "32"),)
    return OpDesc(OpFamily.NORM, tuple(inputs), (x,), op_code="GroupNormDeviceOperation", core_grid=(8, 8),
                  attributes=attributes)  # fmt: skip


GN_NEGATIVE_MISS = (
    "timed as tt-metal's sharded group norm program (meshnn.perf.group_norm, groupnorm_sharded_v2.cpp): 4 groups a "
    "core of 64 x 2 tiles, nine passes a group over its block (mask, sum, centre, mask, square-sum, scale, the "
    "negative mask and the add into the input), the input and output rows repacked one 160 B local read each "
    "(2 x 69 us at conv2d's measured local-L1 rate), gamma and beta, 8 cross-core gathers: 417 us against "
    "549.2; the passes' 4,608 tile operations would need ~75 cycles each where the model's unpack and FPU give "
    "47 (the 1920-channel row, 12-tile blocks, is met at the same costs); what a 128-tile block adds per "
    "operation (its in-place cb_x waits, HiFi4 on bfloat16 in L1) has no figure of its own.  Checked for stop 56 in "
    "the kernel at the figure's date (groupnorm_sharded_v2.cpp at 6df3b4f4fd, 2026-03-25, when 549,179 was set): "
    "the negative-mask path runs its last two passes (the input times the negative mask, then the block added in) "
    "and gamma's and beta's passes a tile at a time, each tile its own acquire / commit / wait / release of the "
    "destination registers (gamma and beta in place in cb_in, a pop, reserve and push a tile), where the other "
    "passes take a subblock at a time: about 1,400 such single-tile rounds a core (2 x 128 a group x 4 groups, 2 x "
    "192 for gamma and beta); the 132k missing cycles would be ~94 a round, and what a single-tile round costs "
    "beyond its unpack, FPU and pack has no figure"
)
GN_DRAM_MISS = (
    "timed as tt-metal's multi-core DRAM program with Welford statistics (meshnn.perf.group_norm_dram, "
    "groupnorm_mcast_program_factory.cpp, welford_groupnorm.cpp): 64 cores of 256 tiles (one tile wide, 4 groups "
    "of 8 channels), the input read twice a tile at a time, each read waited for (553 cycles); the statistics "
    "pass's transpose and SFPU Welford rows (455 cycles a tile, from tt-llk's instruction counts) under its "
    "reads; the normalise pass's 16 handed-on tile operations (4 a group) and gamma, beta and the copy out, "
    "each unpacked, computed and packed in turn (1,517 cycles a tile): 537 us against 1,516.5 (it was 315 us, "
    "a layer norm's reads).  Measured ~5,900 cycles a tile: each of the normalise pass's operations is preceded "
    "by its own init and data-format reconfiguration (sub_tiles_bcast_scalar_init_short, "
    "reconfig_data_format_srcb, ...), whose cost has no figure in the model.  Checked for stop 56 at the figure's "
    "date (8df382a3a6, 2025-12-30, when 1,516,464 was set; test_group_norm_DRAM(1, 256, 256, 256, 32, 4, 8, 8)): "
    "groupnorm_mcast_program_factory.cpp's virtual columns then and in 2026-06 are the same rule (the most columns, "
    "at most the grid's 8 and the 32 groups, whose channels are whole tiles and divide the groups): 8 columns of "
    "32 channels, 8 virtual rows of 256 tile rows, as modelled, so the grid is not the miss; the test's "
    "num_out_blocks 4 cuts each pass into 4 blocks of 64 tile rows (welford_groupnorm.cpp) without changing any "
    "tile's work.  The one published cost of such sites found, tt-metal #56692 (Blackhole, the SDPA streaming "
    "kernel: 139,214 cycles for 12 reconfig / re-init sites a step over ~167 steps), is ~70 cycles a site; the "
    "normalise pass's 19 sites a tile at that cost would add ~1.3k cycles to the model's 1,517, still half of the "
    "5,900 measured, so not taken: another arch and kernel, and the rest (each operation's serial hand-off "
    "through its circular buffer and the destination registers) would still have no figure"
)


def figures() -> list[Figure]:
    """SDXL's op figures (group "SDXL ops"): the matmul and the 1920-channel sharded group norm are met; the
    negative-mask group norm, the DRAM group norm and the convs are outside, each with why."""
    g = "SDXL ops"
    out = [Figure("matmul 1024x1280x5120 + GELU, 2-D block-sharded 5x8", SOURCE, 238.419, 238.419, "us",
                  lambda: kernel_us(ff_matmul()), group=g)]  # fmt: skip
    out.append(Figure("group_norm 1920 ch x 32x32, block-sharded", SOURCE, 73.722, 73.722, "us",
                      lambda: kernel_us(sharded_group_norm(1024, 1920, False)), group=g))  # fmt: skip
    out.append(Figure("group_norm 640 ch x 128x128 (negative mask), block-sharded", SOURCE, 549.179, 549.179, "us",
                      lambda: kernel_us(sharded_group_norm(16384, 640, True)), False, GN_NEGATIVE_MISS,
                      group=g))  # fmt: skip
    out.append(Figure("group_norm 256 ch x 256x256, DRAM, welford reciprocal", SOURCE, 1516.464, 1516.464, "us",
                      lambda: kernel_us(group_norm(65536, 256)), False, GN_DRAM_MISS, group=g))  # fmt: skip
    block = (
        "timed as tt-metal's block-sharded conv2d program (meshnn.perf.conv): 8x8 cores, 4 x 5 output tiles a core "
        "in two height blocks (the test's act_block_h_override 64: 2 tile rows a block), 720 K tiles in 24 blocks "
        "each.  The weights' writer reads its column's weights again for each height block "
        "(writer_tiled_out_2d_mcast_sender_conv_weights_tiled_col_to_rm_blocks.cpp: the weight loop inside "
        "out_num_blocks_h; stop 55, was one read: 664 us, -35%): 7,200 bfloat8_b tiles from DRAM and multicast "
        "down the column, 825k cycles, beside the multiplies' 623k (14,400 a core at 43 cycles) and the "
        "activations' multicast (233k), all double-buffered: 851k cycles, 853 us, -17% of 1025.5.  Checked for "
        "stop 56 in the program at the figure's date (a4ecf6783c, 2026-05-07): each activation block's multicast "
        "waits for every receiver's activation buffer (cb_act reserve, then the semaphore handshake) and follows "
        "the group's one tilize of the core's own rows (conv_bmm_tilize.cpp: in0_nblocks_w_tilize), now modelled "
        "(meshnn.perf.conv_cycles): no change here, the weights bind; the weight writer reads the split reader's "
        "half of each group's activations before the group's 8 weight blocks (13k cycles, modelled) and "
        "handshakes with its 7 receivers each block (two NoC flights, 190 cycles, 9k in all: not modelled).  The "
        "rest (~170k cycles, 3.5k a block of 150 weight tiles) is not found.  Tried: each weight block's reads end "
        "in a read barrier, so a block's last read's DRAM round trip (445 cycles, meshnn.perf.latency) could be "
        "counted on top of the reads' rate: 48 blocks, 21k cycles, 874 us (-14.8%), but the same count takes "
        "sdxl_bs on the P150 (tests/perf/published_conv.py) from +0.8% to +15.7% (stop 57; from +10% to +25% before "
        "Blackhole's local reads took tt-npe's table): not taken"
    )
    out.append(Figure("conv2d 3x3 2560->1280 at 32x32, block-sharded", SOURCE, 1025.5, 1025.5, "us",
                      lambda: kernel_us(conv_block_sharded()), False, block, group=g))  # fmt: skip
    out.append(Figure("conv2d 3x3 512->512 at 256x256, DRAM, width-sliced in 2 (a slice's program)", SOURCE, 3082.972,
                      3082.972, "us", conv_vae_us, group=g))  # fmt: skip
    return out


if __name__ == "__main__":
    for f in figures():
        print(f"{f.name:<62} {f.low:>9g} {f.value():9.1f} {100 * f.error():+6.1f}%")
