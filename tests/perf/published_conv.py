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

_DESCRIBED = (
    "meshnn describes conv2d to the model as a matmul of its flat input by its prepared weight "
    "(meshnn.ops.costs): M is the input's rows, not the output positions, and in0's K its channels, not the "
    "im2col rows (kh x kw x channels) that conv2d's program multiplies (conv2d_op_sharded_program_factory.cpp). "
)
_READER = (
    "; described as that im2col matmul on the sharded program instead (im2col_us below: M the output positions, "
    "K the weight's rows, tt-metal's zero-padded grouped weight for groups > 1) the model gives {im2col}: the rest "
    "is conv2d's activation reader (reader_conv_activations_padded_with_halo_3x3_weights_v2.cpp: a NoC read of kw "
    "sticks for each kernel row of each output row, from the halo'd shard, then tilized on the compute core), "
    "which the model has no figure for"
)
MISSES = {
    "vae_sdxl_hs": _DESCRIBED
    + "4 channels into 512 over 128 x 128 positions, height-sharded on 64 cores: [16384, 32] by [64, 512], 16.7 us "
    "on Wormhole (25% of 67) and 10.3 on Blackhole (37% of 28)" + _READER.format(im2col="17.8 and 11.8 us"),
    "unet_hs": _DESCRIBED
    + "4 channels into 16 over 1056 x 160 positions, height-sharded, activation reuse: [168960, 32] by [64, 32], "
    "bound by its multiplies, 123 us on Wormhole (+41% over 87), 30.8 on Blackhole (met, -4%, by the clock and "
    "operand rates, not by what the program does)" + _READER.format(im2col="22.2 and 13.2 us (Blackhole's then -59%)"),
    "sdxl_bs": _DESCRIBED
    + "640 into 640 channels at stride 2, block-sharded on 8x8: [4096, 640] by [5760, 640] into [1024, 640] at "
    "HiFi2 with float32 accumulation, 97.2 us on Wormhole (-15.5% of 115), 30.6 on Blackhole (-42% of 53)"
    + _READER.format(im2col="85.7 and 55.9 us (Blackhole's then met, +5%)"),
    "segformer_ws": _DESCRIBED
    + "a depthwise 3x3 (576 groups) over 8 x 8 positions, width-sharded: [64, 576] by meshnn's prepared [32, 576] "
    "weight (each channel's 9 taps), 15.1 us on Wormhole (-80% of 74), 9.7 on Blackhole (-74% of 37), where "
    "tt-metal pads a grouped 2-D conv's weight with zeros to every input channel "
    "(prepare_conv2d_weights.cpp: convert_conv_weight_tensor_to_grouped_layout), a [5184, 576] weight"
    + _READER.format(im2col="35.8 and 20.6 us"),
}
COVERED = {("unet_hs", "p150")}
"""Rows the model meets (checks)."""

IM2COL = {  # name: (output positions, weight rows (K), output channels, grid of the sharded program)
    "vae_sdxl_hs": (16384, 64, 512, (8, 8)),
    "unet_hs": (168960, 64, 32, (8, 8)),
    "sdxl_bs": (1024, 5760, 640, (8, 8)),
    "segformer_ws": (64, 5184, 576, (18, 1)),
}


def im2col_us(system: str, config: tuple) -> float:
    """The model's kernel time (us) of ``config`` described as conv2d's program multiplies: the im2col
    activation [output positions, K] in L1 by the weight [K, out channels] on the sharded program (height:
    the 1-D program multicasting the weight; block: the 2-D one; width: the 1-D one multicasting the
    activation).  Not a figure: what the model's matmul alone gives, for the misses' reasons."""
    from meshnn.perf import MatmulConfig, MatmulProgram, MemoryLayout, OpDesc, OpFamily, TensorDesc, predict
    from meshnn.perf.desc import BufferType

    name, _, _, _, _, _, wdt, odt, fidelity, layout, flags, _targets = config
    m, k, n, grid = IM2COL[name]
    memory = getattr(MemoryLayout, layout)
    l1 = BufferType.L1
    program, mcast_in0 = {
        "HEIGHT_SHARDED": (MatmulProgram.MULTICAST_1D, False),
        "BLOCK_SHARDED": (MatmulProgram.MULTICAST_2D, True),
        "WIDTH_SHARDED": (MatmulProgram.MULTICAST_1D, True),
    }[layout]
    act = TensorDesc((1, 1, m, k), "BFLOAT16", buffer=l1, memory=memory)
    out = TensorDesc((1, 1, m, n), odt.upper(), buffer=l1, memory=memory)
    config_ = MatmulConfig(program, grid, mcast_in0=mcast_in0, packer_l1_acc=False, fp32_acc=flags[3])
    weight = TensorDesc((1, 1, k, n), wdt.upper())
    desc = OpDesc(OpFamily.MATMUL, (act, weight), (out,), fidelity=fidelity, matmul=config_)
    return predict(desc, system).kernel_ns / 1e3


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
