"""conv2d's device kernel times: tt-metal tests/ttnn/perf_tests/operations/conv/test_conv2d_device_perf.py
(2026-06; CONV_PERF_CONFIGS: four convolutions of SDXL's VAE, a UNet, SDXL and Segformer, each one
``ttnn.conv2d`` call measured by the device profiler, DEVICE KERNEL DURATION; targets in us for a
Wormhole 8x8 grid and a P150, +-5%), beside meshnn's conv2d run under a perf capture on a planning
mesh of the N150 and the P150 with the test's arguments (``Conv2dL1FullSliceConfig``, the test's
Conv2dConfig and compute config).  All checks: nothing here is fitted.
"""

from __future__ import annotations

import numpy as np

from .figure import Figure

SOURCE = "tt-metal: tests/ttnn/perf_tests/operations/conv/test_conv2d_device_perf.py"


CONFIGS = (
    # name, (batch, in ch, out ch, height, width), kernel, stride, padding, groups, weights dtype, output dtype,
    # fidelity, shard layout, (activation reuse, act double buffer, weights double buffer, fp32 accumulation),
    # (Wormhole us, P150 us)
    ("vae_sdxl_hs", (1, 4, 512, 128, 128), 3, 1, 1, 1, "bfloat8_b", "bfloat16", "LoFi", "HEIGHT_SHARDED",
     (False, False, False, False), (67.0, 28.0)),
    ("unet_hs", (1, 4, 16, 1056, 160), 3, 1, 1, 1, "bfloat8_b", "bfloat8_b", "LoFi", "HEIGHT_SHARDED",
     (True, True, False, False), (87.0, 32.0)),
    ("sdxl_bs", (1, 640, 640, 64, 64), 3, 2, 1, 1, "bfloat8_b", "bfloat16", "HiFi2", "BLOCK_SHARDED",
     (False, True, True, True), (115.0, 53.0)),
    ("segformer_ws", (1, 576, 576, 8, 8), 3, 1, 0, 576, "bfloat16", "bfloat16", "LoFi", "WIDTH_SHARDED",
     (False, False, False, False), (74.0, 37.0)),
)  # fmt: skip

MISSES = {
    "vae_sdxl_hs": "4 input channels into 512, height-sharded over 64 cores: the model times the flat input "
    "[16384, 32] by the prepared weight [64, 512] as a matmul, whose 2 K tiles a core's 8 x 16 output tiles need "
    "(a few us); conv2d's program (conv2d_op_sharded_program_factory) also gathers each output row's 3x3 window "
    "from the halo'd shard (9 sticks of 4 channels a row, a NoC read each) and tilizes the gathered block on the "
    "compute core before its multiplies, and packs 256 KiB of bfloat16 output a core: the model has no im2col "
    "gather or tilize for a conv (its time is 25% of Wormhole's, 37% of Blackhole's)",
    "unet_hs": "4 input channels into 16 over 168,960 positions (1056 x 160), height-sharded, activation reuse: "
    "the model's matmul of [168960, 32] by [64, 32] is bound by its multiplies (+41% on Wormhole), where "
    "conv2d's program with enable_activation_reuse reads each input row once for the 3 kernel rows and is bound "
    "by its data movement (the test calls it dm bound); on Blackhole the same model is within 4%, by the clock and "
    "operand rates alone, not by what the program does",
    "sdxl_bs": "640 into 640 channels, stride 2, block-sharded on 8x8 (Wormhole): the model's matmul of the "
    "1024 output rows by the [5760, 640] weight at HiFi2 with float32 accumulation (97 us) falls 15.5% short of "
    "115; on Blackhole 42% short: the im2col gather of 9 windows of 640 channels a row and its tilize are not "
    "timed, nor the block-sharded program's activation multicast across each row of cores",
    "segformer_ws": "a depthwise 3x3 (576 groups), width-sharded: the model times it as a matmul of [64, 576] by "
    "meshnn's prepared [32, 576] weight (each channel's 9 taps, padded to a tile) on 18 cores, 15 us on Wormhole "
    "and 10 on Blackhole, where the program takes 74 and 37; how tt-metal's depthwise program spends that time "
    "(its per-channel window gather and grouped weights) was not traced: the model has no program of its own for it",
}
COVERED = {("unet_hs", "p150")}
"""Rows the model meets (checks)."""


def conv_us(system: str, config: tuple) -> float:
    """meshnn's predicted kernel time (us) of ``config``'s conv2d on one chip of ``system``."""
    import meshnn as ttnn

    _, (batch, ci, co, h, w), k, s, p, groups, wdt, odt, fidelity, layout, flags, _targets = config
    reuse, act_double, weights_double, fp32 = flags
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 1), system=system, execute=False)
    try:
        x = ttnn.empty((1, 1, h * w * batch, ci), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh)
        host_dtype = ttnn.float32 if wdt == "bfloat8_b" else getattr(ttnn, wdt)
        weight = ttnn.from_torch(np.ones((co, ci // groups, k, k), np.float32), host_dtype)
        bias = ttnn.from_torch(np.ones((1, 1, 1, co), np.float32), host_dtype)
        conv_config = ttnn.Conv2dConfig(
            weights_dtype=getattr(ttnn, wdt),
            shard_layout=getattr(ttnn.TensorMemoryLayout, layout),
            deallocate_activation=False,
            reshard_if_not_optimal=False,
            enable_act_double_buffer=act_double,
            enable_weights_double_buffer=weights_double,
            enable_activation_reuse=reuse,
            config_tensors_in_dram=True,
        )
        compute = ttnn.init_device_compute_kernel_config(
            mesh.arch(),
            math_fidelity=getattr(ttnn.MathFidelity, fidelity),
            math_approx_mode=True,
            fp32_dest_acc_en=fp32,
            packer_l1_acc=False,
        )
        with ttnn.perf_capture() as capture:
            ttnn.conv2d(
                input_tensor=x,
                weight_tensor=weight,
                device=mesh,
                in_channels=ci,
                out_channels=co,
                bias_tensor=bias,
                kernel_size=(k, k),
                stride=(s, s),
                padding=(p, p),
                batch_size=batch,
                input_height=h,
                input_width=w,
                conv_config=conv_config,
                compute_config=compute,
                groups=groups,
                dtype=getattr(ttnn, odt),
                slice_config=ttnn.Conv2dL1FullSliceConfig,
            )
        (record,) = [r for r in capture.recorder(mesh).records if r.desc.op_code == "Conv2dDeviceOperation"]
        return record.prediction.kernel_ns / 1e3
    finally:
        mesh.close()


def figures() -> list[Figure]:
    """Each configuration on the N150 (Wormhole's 8x8 grid) and the P150."""
    out = []
    for config in CONFIGS:
        name, targets = config[0], config[-1]
        for system, us in zip(("n150", "p150"), targets, strict=True):
            covered = (name, system) in COVERED
            why = "" if covered else MISSES[name]

            def model(s=system, c=config) -> float:
                return conv_us(s, c)

            label = f"conv2d {name} on {system.upper()} (device kernel)"
            out.append(Figure(label, SOURCE, us, us, "us", model, covered, why, group="conv"))
    return out
